/**
 * Everything the CLI prints goes through here, and so through the redactor.
 * Before a spec is loaded there is no redactor yet; URL credentials are still stripped.
 */
import { Redactor } from "../redact.js";
import type { OutputSink } from "./process-output.js";

export interface Streams {
  /** Node's streams, or the process's own through ProcessOutput (which makes them only when needed). */
  stdout: OutputSink;
  stderr: OutputSink;
  stdin?: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

export class Output {
  redactor: Redactor = new Redactor();
  /** Streams whose reader went away (EPIPE): what would go to them is dropped. */
  private readonly closed = new Set<OutputSink>();

  constructor(readonly streams: Streams) {
    // `khook plan | head -1`: the reader closing the pipe is the reader's choice, not an error.
    // kubectl and helm die of SIGPIPE without a word; Node ignores SIGPIPE, so the write fails
    // with EPIPE instead, which must not become an unhandled 'error' and its stack trace. The
    // command runs to its end (an apply is not cut short mid-step) and exits with its own code.
    for (const stream of [streams.stdout, streams.stderr]) {
      stream.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code !== "EPIPE" && e.code !== "ERR_STREAM_DESTROYED") throw e;
        this.closed.add(stream);
      });
    }
  }

  out(text: string): void {
    this.write(this.streams.stdout, `${this.redactor.redact(text)}${text.endsWith("\n") ? "" : "\n"}`);
  }

  err(text: string): void {
    this.write(this.streams.stderr, `${this.redactor.redact(text)}${text.endsWith("\n") ? "" : "\n"}`);
  }

  private write(stream: OutputSink, text: string): void {
    if (!this.closed.has(stream)) stream.write(text);
  }

  /**
   * Committed project files (the JSON Schema) printed byte for byte. They hold no secrets and
   * no spec is loaded, while the pre-spec redactor would rewrite the example URLs in them.
   */
  verbatim(text: string): void {
    this.write(this.streams.stdout, text);
  }

  json(value: unknown): void {
    this.out(JSON.stringify(this.redactor.redactValue(value), null, 2));
  }

  get color(): boolean {
    return (
      Boolean(this.streams.stdout.isTTY) && this.streams.env.NO_COLOR === undefined && this.streams.env.TERM !== "dumb"
    );
  }
}

/** Left-aligned columns, like kubectl's tables. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("   ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
