/** Flag parsing for every command, kubectl/helm style. Bad flags are invalid input (exit 2). */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { invalidInput } from "../errors.js";
import { variableNameProblem } from "../dsl/vars.js";
import { parallelismProblem } from "../inputs.js";

export const COMMON_OPTIONS = {
  filename: { type: "string", short: "f" },
  set: { type: "string", multiple: true },
  "var-file": { type: "string", multiple: true },
  "var-prefix": { type: "string" },
  "secret-prefix": { type: "string" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

/** The flags of every command that talks to a cluster (plan, apply, destroy, status, unlock). */
export const CLUSTER_OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  parallelism: { type: "string" },
  "wait-for-cluster": { type: "string" },
} as const satisfies ParseArgsConfig["options"];

export type OutputFormat = "text" | "json";

/** What parseCommandArgs returns for a command's options. */
export type ParsedCommand<O extends NonNullable<ParseArgsConfig["options"]>> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/** Parses a command's flags; no command takes positional arguments (the spec comes with -f). */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  argv: string[],
  options: O,
): ParsedCommand<O> {
  let parsed: ParsedCommand<O>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw invalidInput(
      `khook ${command}: ${(e as Error).message.replace(/\. To specify a positional.*$/s, "")}\nRun 'khook ${command} --help' for usage.`,
      [],
    );
  }
  const stray = parsed.positionals[0];
  if (stray !== undefined) {
    const hint = "filename" in options ? "; pass the spec with -f FILE" : "";
    throw invalidInput(
      `khook ${command}: unexpected argument "${stray}"${hint}\nRun 'khook ${command} --help' for usage.`,
      [],
    );
  }
  return parsed;
}

export function outputFormat(value: string | undefined, command: string): OutputFormat {
  if (value === undefined || value === "text" || value === "table" || value === "wide") return "text";
  if (value === "json") return "json";
  throw invalidInput(`khook ${command}: unknown output format "${value}"; use -o text or -o json`, []);
}

/** `--set A=b` (repeatable) to ordered pairs; the value may contain '='. */
export function parseSetFlags(values: readonly string[] | undefined, command: string): [string, string][] {
  return (values ?? []).map((kv) => {
    const eq = kv.indexOf("=");
    if (eq <= 0)
      throw invalidInput(
        `khook ${command}: --set expects NAME=value, got "${kv.length > 40 ? `${kv.slice(0, 40)}...` : kv}"`,
        [],
      );
    const name = kv.slice(0, eq);
    const problem = variableNameProblem(name);
    if (problem !== undefined) throw invalidInput(`khook ${command}: --set ${name}=...: ${problem}`, []);
    return [name, kv.slice(eq + 1)];
  });
}

/** `--parallelism N`: judged as the Pulumi input `parallelism` is (provider/inputs.ts). */
export function parsePositiveInt(value: string | undefined, flag: string, command: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = /^\s*$/.test(value) ? NaN : Number(value);
  const problem = parallelismProblem(n, flag);
  if (problem !== undefined)
    throw invalidInput(`khook ${command}: ${flag} must be a whole number of at least 1, got "${value}"`, []);
  return n;
}
