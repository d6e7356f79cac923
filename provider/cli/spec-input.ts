/** Turns the common flags into a loaded spec. */
import { invalidInput } from "../errors.js";
import type { LoadedSpec } from "../dsl/loaded.js";
import { loadSpec } from "../load-spec.js";
import { decodeUtf8 } from "../dsl/source.js";
import { parseSetFlags } from "./args.js";
import type { Output } from "./output.js";

export interface SpecFlags {
  filename?: string | undefined;
  set?: string[] | undefined;
  "var-file"?: string[] | undefined;
  "var-prefix"?: string | undefined;
  "secret-prefix"?: string | undefined;
}

export async function loadFromFlags(command: string, flags: SpecFlags, out: Output): Promise<LoadedSpec> {
  const file = flags.filename;
  if (file === undefined)
    throw invalidInput(`khook ${command}: no spec given; pass -f FILE (or -f - to read stdin)`, []);
  const common = {
    set: parseSetFlags(flags.set, command),
    varFiles: flags["var-file"] ?? [],
    env: out.streams.env,
    varPrefix: flags["var-prefix"],
    secretPrefix: flags["secret-prefix"],
  };
  const spec =
    file === "-"
      ? loadSpec({
          ...common,
          text: decodeUtf8(await readAll(out.streams.stdin ?? process.stdin), "<stdin>", "the spec"),
          baseDir: process.cwd(),
        })
      : loadSpec({ ...common, file });
  out.redactor = spec.redactor;
  return spec;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}
