/**
 * Everything the CLI prints goes through here, and so through the redactor.
 * Before a spec is loaded there is no redactor yet; URL credentials are still stripped.
 */
import { Redactor } from "../redact.js";

export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin?: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

export class Output {
  redactor: Redactor = new Redactor();

  constructor(readonly streams: Streams) {}

  out(text: string): void {
    this.streams.stdout.write(`${this.redactor.redact(text)}${text.endsWith("\n") ? "" : "\n"}`);
  }

  err(text: string): void {
    this.streams.stderr.write(`${this.redactor.redact(text)}${text.endsWith("\n") ? "" : "\n"}`);
  }

  /**
   * Committed project files (the JSON Schema) printed byte for byte. They hold no secrets and
   * no spec is loaded, while the pre-spec redactor would rewrite the example URLs in them.
   */
  verbatim(text: string): void {
    this.streams.stdout.write(text);
  }

  json(value: unknown): void {
    this.out(JSON.stringify(this.redactor.redactValue(value), null, 2));
  }

  get color(): boolean {
    return Boolean(this.streams.stdout.isTTY) && this.streams.env.NO_COLOR === undefined && this.streams.env.TERM !== "dumb";
  }
}

/** Left-aligned columns, like kubectl's tables. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("   ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
