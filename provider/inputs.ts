/**
 * The inputs of a khook run, defined once for every shell: the CLI's flags, the dynamic
 * resource's `KhookArgs` (sdk/), the native provider's schema (`khook:index:Khook`,
 * pulumi/native-schema.ts) and the inputs table of docs/pulumi.md all come from this table, and
 * the values that two shells share are judged by the same functions here. Tests hold each shell
 * to it: an input one shell has and another lacks fails them (test/unit/inputs.test.ts).
 *
 * Not here: the spec's own schema (generated from the step kinds) and the stack config
 * (`khook:*`), which belongs to the native provider alone.
 */
import { parseDuration } from "./dsl/duration.js";

/** What a Pulumi program gives (both shells), by name. */
export type InputName =
  | "spec"
  | "specFile"
  | "baseDir"
  | "allowFunctionsOutsideSpecDir"
  | "maxBundleBytes"
  | "vars"
  | "varFiles"
  | "secretVars"
  | "fromEnvironment"
  | "varPrefix"
  | "secretPrefix"
  | "kubeconfig"
  | "context"
  | "parallelism"
  | "timeout"
  | "waitForCluster"
  | "previewMode"
  | "refresh";

export interface InputDefinition {
  readonly name: InputName;
  /** Its type in the native provider's schema (the TypeScript SDK may take more, e.g. a kubeconfig object). */
  readonly type: "string" | "integer" | "boolean" | "string-map" | "string-list";
  /** A Pulumi secret in both directions. */
  readonly secret?: true;
  /** The schema's description: what generated SDKs (Python, Go, .NET) and Pulumi YAML show. */
  readonly description: string;
  /**
   * What the handlers do with it: `run` inputs only say where and how a run goes (the cluster, how
   * many at once, how long), and both shells hand them to the handlers as given; `spec` inputs
   * decide the loaded spec and are read (files) or folded into the spec's inputs by each shell.
   */
  readonly role: "spec" | "run";
  /** The CLI's way to give the same thing: its flags, or why the CLI has none. */
  readonly cli: { readonly flags: readonly string[] } | { readonly none: string };
}

export const INPUTS: readonly InputDefinition[] = [
  {
    name: "spec",
    type: "string",
    role: "spec",
    description: "The spec text (apiVersion: khook.io/v1, kind: Khook). Exactly one of `spec` and `specFile`.",
    cli: { flags: ["-f -"] },
  },
  {
    name: "specFile",
    type: "string",
    role: "spec",
    description:
      "The spec file, relative to the program's directory. The provider reads it and every local file it references; editing any of them shows in `pulumi preview`.",
    cli: { flags: ["--filename"] },
  },
  {
    name: "baseDir",
    type: "string",
    role: "spec",
    description:
      "Where relative paths in an inline `spec` resolve, relative to the program's directory (default: the program's directory).",
    cli: { none: "a spec read from stdin (`-f -`) resolves relative paths against the working directory" },
  },
  {
    name: "allowFunctionsOutsideSpecDir",
    type: "boolean",
    role: "spec",
    description:
      "Bundle hook functions (`function.exec`) from outside the spec's directory tree, reached through `../` or a symlink. Off by default: the referenced files are copied into the Pulumi state.",
    cli: { none: "the CLI runs hook functions where they are; nothing is copied into a state" },
  },
  {
    name: "maxBundleBytes",
    type: "integer",
    role: "spec",
    description:
      "The limit on the local files the spec references, which travel in the Pulumi state (default 4 MiB); over it, preview fails naming the largest files.",
    cli: { none: "the CLI reads the files where they are; nothing travels in a state" },
  },
  {
    name: "vars",
    type: "string-map",
    role: "spec",
    description: "Variables, like `khook apply --set` (highest precedence).",
    cli: { flags: ["--set"] },
  },
  {
    name: "varFiles",
    type: "string-list",
    role: "spec",
    description:
      "Var files (flat `NAME: value` YAML maps), relative to the program's directory, like `--var-file`. Later files win.",
    cli: { flags: ["--var-file"] },
  },
  {
    name: "secretVars",
    type: "string-map",
    secret: true,
    role: "spec",
    description:
      "Secret variables: stored as Pulumi secrets and redacted from every line khook prints and every output.",
    cli: {
      none: "the CLI reads secret variables from the environment (KHOOK_SECRET_<NAME>), never from its arguments",
    },
  },
  {
    name: "fromEnvironment",
    type: "boolean",
    role: "spec",
    description:
      "Read KHOOK_VAR_* and KHOOK_SECRET_* (or the prefixes below) from the environment of the pulumi command, like the CLI does. Off unless set (or a prefix is given).",
    cli: { none: "the CLI always reads its prefixed environment variables" },
  },
  {
    name: "varPrefix",
    type: "string",
    role: "spec",
    description: "Environment prefix for variables (default KHOOK_VAR_); giving it opts into `fromEnvironment`.",
    cli: { flags: ["--var-prefix"] },
  },
  {
    name: "secretPrefix",
    type: "string",
    role: "spec",
    description:
      "Environment prefix for secret variables (default KHOOK_SECRET_); giving it opts into `fromEnvironment`.",
    cli: { flags: ["--secret-prefix"] },
  },
  {
    name: "kubeconfig",
    type: "string",
    secret: true,
    role: "run",
    description:
      "Kubeconfig content (YAML or JSON) or a path to a kubeconfig file. Default: the stack config `khook:kubeconfig`, else the ambient kubeconfig. For destroy and refresh, `khook:kubeconfig` wins over this stored value.",
    cli: { flags: ["--kubeconfig"] },
  },
  {
    name: "context",
    type: "string",
    role: "run",
    description: "The kubeconfig context (default: stack config `khook:context`, else the current context).",
    cli: { flags: ["--context"] },
  },
  {
    name: "parallelism",
    type: "integer",
    role: "run",
    description: "Steps to run at once (default 8).",
    cli: { flags: ["--parallelism"] },
  },
  {
    name: "timeout",
    type: "string",
    role: "run",
    description:
      "An overall bound on one apply or destroy, as a duration (`30m`): when it runs out, running steps are cancelled and the journal keeps what completed.",
    cli: {
      none: "a CI job's own timeout bounds a CLI run: its SIGTERM stops the run as Ctrl-C does, and the record keeps what completed",
    },
  },
  {
    name: "waitForCluster",
    type: "string",
    role: "run",
    description:
      "First wait up to this long (a duration: `10m`) for the cluster's API server to answer `/readyz`, saying so in one line, like `khook apply --wait-for-cluster 10m`; `0s`, like leaving it out, does not wait. For a cluster created just before, in the same program. Without it, an API server that is not up yet fails the update at once, naming it.",
    cli: { flags: ["--wait-for-cluster"] },
  },
  {
    name: "previewMode",
    type: "string",
    role: "run",
    description:
      "`online`: preview also asks the cluster, read-only, what each step would do. Default: the stack config `khook:previewMode`, else `offline`.",
    cli: { none: "the CLI's `khook plan` is online, `khook plan --offline` offline: the command says it" },
  },
  {
    name: "refresh",
    type: "string",
    role: "run",
    description:
      "What `pulumi refresh` reads: `journal` (the default) the state record; `live` also compares every completed step with the cluster and writes the drifted ones into `drift`, which the next `up` re-runs.",
    cli: { none: "the CLI's live check is `khook plan --live`, and `khook apply --repair` re-runs what drifted" },
  },
];

/** The CLI's flags that no input matches, and why: they shape the command's own output. */
export const CLI_ONLY_FLAGS: Readonly<Record<string, string>> = {
  "--output": "Pulumi shows a resource's outputs its own way",
  "--help": "the usage text",
};

/**
 * The inputs table of docs/pulumi.md, row by row: inputs that go together share a row. The SDK
 * also sends `pulumiProject` and `pulumiStack` (not inputs a program gives; the table says so).
 */
export const DOCS_ROWS: readonly {
  readonly names: readonly string[];
  readonly joiner?: string;
  readonly text: string;
}[] = [
  {
    names: ["specFile", "spec"],
    joiner: " / ",
    text: "Exactly one: the spec file (read at program time, relative to the program) or its text.",
  },
  { names: ["baseDir"], text: "Where relative paths in an inline `spec` resolve (default: the program's directory)." },
  {
    names: ["allowFunctionsOutsideSpecDir"],
    text: "Bundle hook functions (`function.exec`) from outside the spec's directory tree (through `../` or a symlink). Off by default: the program fails, naming the function, because bundled files are copied into the state.",
  },
  {
    names: ["maxBundleBytes"],
    text: "The limit on the referenced local files (default 4 MiB); over it the program fails, naming the five largest files.",
  },
  { names: ["vars"], text: "Variables, like `--set` (highest precedence). Values may be `Output`s." },
  { names: ["varFiles"], text: "Var files (flat `NAME: value` maps), like `--var-file`; later files win." },
  {
    names: ["secretVars"],
    text: "Secret variables: stored as Pulumi secrets and masked in every line khook prints, like `KHOOK_SECRET_*`.",
  },
  {
    names: ["fromEnvironment", "varPrefix", "secretPrefix"],
    text: "Read `KHOOK_VAR_*` / `KHOOK_SECRET_*` (or other prefixes) from the program's environment. Off unless set.",
  },
  {
    names: ["kubeconfig"],
    text: "Kubeconfig content (YAML or JSON), a path, or an object such as `@pulumi/eks`'s `cluster.kubeconfig`. Stored as a secret. See [Credentials](#credentials).",
  },
  { names: ["context"], text: "The kubeconfig context (default: `khook:context`, else the current context)." },
  { names: ["parallelism"], text: "Steps run at once (default 8), like `--parallelism`." },
  {
    names: ["timeout"],
    text: "An overall bound on one apply or destroy (`30m`). See [`customTimeouts` vs `timeout`](#customtimeouts-vs-the-timeout-input).",
  },
  {
    names: ["waitForCluster"],
    text: "First wait up to this long (`10m`) for the API server to answer, like `--wait-for-cluster`; `0s` (or leaving it out) does not wait, and an API server that is not up fails the update at once, naming the server and this input. See [While the cluster does not exist yet](#while-the-cluster-does-not-exist-yet).",
  },
  { names: ["previewMode"], text: "`offline` (default) or `online`. See [Preview](#preview)." },
  {
    names: ["refresh"],
    text: "`journal` (default) or `live`: what `pulumi refresh` reads. See [Refresh and drift](#refresh-and-drift).",
  },
  {
    names: ["pulumiProject", "pulumiStack"],
    text: "Set by the SDK (`pulumi.getProject()`, `pulumi.getStack()`): the stack that owns the record. See [Ownership](#ownership-renames-replaces-and-other-stacks).",
  },
];

/** The Markdown table docs/pulumi.md shows under "Inputs". */
export function inputsTable(): string {
  const rows = DOCS_ROWS.map((r) => `| ${r.names.map((n) => `\`${n}\``).join(r.joiner ?? ", ")} | ${r.text} |`);
  return ["| input | what |", "| --- | --- |", ...rows].join("\n");
}

/** The native provider schema's inputProperties. */
export function schemaInputProperties(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const i of INPUTS) {
    const type =
      i.type === "string-map"
        ? { type: "object", additionalProperties: { type: "string" } }
        : i.type === "string-list"
          ? { type: "array", items: { type: "string" } }
          : { type: i.type };
    out[i.name] = { ...type, description: i.description, ...(i.secret ? { secret: true } : {}) };
  }
  return out;
}

/** The inputs both shells pass to the handlers as the program gave them. */
export const RUN_INPUTS: readonly InputName[] = INPUTS.filter((i) => i.role === "run").map((i) => i.name);

// ---- values, judged the same in every shell ----

/**
 * `--wait-for-cluster D` / `waitForCluster: "D"`: how long to wait for the API server, in ms;
 * 0 (`0s`) means do not wait, as when it is not given. One reading for both shells: `0s` is how
 * a template turns the wait off without dropping the flag (kubectl's `--timeout=0s` does not wait
 * either), so neither shell refuses it. `name` is how the shell spells it, for the problem.
 */
export function waitForClusterMs(value: string, name: string): { ms: number } | { problem: string } {
  const ms = parseDuration(value);
  if (ms === undefined)
    return {
      problem: `${name} expects a duration such as 10m, 90s or 1h30m (0s: do not wait), got "${value}"`,
    };
  return { ms };
}

/** The `timeout` input: an overall bound, a duration above 0. */
export function timeoutMs(value: string, name: string): { ms: number } | { problem: string } {
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0)
    return { problem: `${name} must be a positive duration such as 30m or 1h30m, not "${value}"` };
  return { ms };
}

/** `--parallelism N` / `parallelism: N`: a whole number of at least 1. */
export function parallelismProblem(value: unknown, name: string): string | undefined {
  if (typeof value === "number" && Number.isInteger(value) && value >= 1) return undefined;
  return `${name} must be a whole number of at least 1, got ${JSON.stringify(value)}`;
}

/**
 * How a person asked for the wait, for the error that says it ran out: `--wait-for-cluster 2s`
 * from the CLI, `the Khook input waitForCluster "2s"` from Pulumi.
 */
export function waitSetting(shell: "cli" | "pulumi", value: string): string {
  return shell === "cli" ? `--wait-for-cluster ${value}` : `the Khook input waitForCluster "${value}"`;
}
