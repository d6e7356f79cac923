/**
 * The Khook resource's property bags, as the dynamic provider sees them.
 *
 * Inputs are what the SDK sends (plus `plan`, which `check` adds); outputs
 * are the inputs echoed back (destroy and refresh run from outputs alone, so
 * they must carry the spec, its files and the credentials) plus what a run
 * produced. Everything here is plain JSON: the dynamic provider protocol
 * carries nothing else.
 */

/** The dynamic provider protocol's marker for a value that is not known yet (preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The property the dynamic provider keeps its serialized code in. */
export const PROVIDER_KEY = "__provider";

export interface VarFileInput {
  /** The path as given to the SDK; for messages only. */
  file: string;
  values: Record<string, string>;
}

export interface KhookInputs {
  /** The Pulumi resource name; prefixes the progress lines. Not an effective input. */
  resourceName?: string;
  /** The spec text. */
  spec: string;
  /** The spec file as given to the SDK, for messages; the text is in `spec`. */
  specFile?: string;
  /**
   * Where the spec's relative paths resolve, relative to the root of the file
   * bundle ("." when the spec references no local file).
   */
  baseDir?: string;
  /** Referenced local files that are valid UTF-8 text, by path relative to the bundle root. */
  files?: Record<string, string>;
  /** The other referenced local files, base64. */
  binaryFiles?: Record<string, string>;
  /** Keys of `files`/`binaryFiles` that are executable (hook functions), sorted. */
  executables?: string[];
  /** Like `--set` (highest precedence). */
  vars?: Record<string, string>;
  /** Like `--var-file`, already parsed, in order. */
  varFiles?: VarFileInput[];
  /** Secret variables (also KHOOK_SECRET_* read by the SDK when opted in). Redacted like KHOOK_SECRET_*. */
  secretVars?: Record<string, string>;
  /** KHOOK_VAR_* read by the SDK when opted in, prefix stripped (lowest precedence). */
  envVars?: Record<string, string>;
  /**
   * Kubeconfig content (YAML or JSON), or a path to one. An object (e.g.
   * @pulumi/eks's `cluster.kubeconfig`) is normalized to its JSON text.
   */
  kubeconfig?: string;
  context?: string;
  parallelism?: number;
  /** Overall bound on one apply or destroy, a Go duration (`30m`). */
  timeout?: string;
  /** First wait up to this long (a Go duration, `10m`) for the API server's /readyz (`khook apply --wait-for-cluster`). */
  waitForCluster?: string;
  /** `online` makes preview consult the cluster read-only (default: the stack config `khook:previewMode`, else `offline`). */
  previewMode?: PreviewMode;
  /** Added by `check`: one line per step from the offline plan. */
  plan?: string[];
  /** The Pulumi project and stack of the program (the SDK passes them): who owns the record. */
  pulumiProject?: string;
  pulumiStack?: string;
}

export type StepOutputStatus = "ok" | "failed" | "skipped" | "pending" | "destroying" | "destroyed" | "destroy-failed";

export interface StepOutput {
  name: string;
  type: string;
  status: StepOutputStatus;
  reason: string;
  attempts: number;
  /** Transient failures retried within the step's deadline (spending none of `retries:`); 0 when none. */
  transientRetries: number;
  durationMs: number;
  inputHash: string;
  /** The `when:` outcome decided at load. */
  when: "included" | "excluded";
  /** The last error, redacted; failed steps only. */
  error?: string;
}

export interface KhookOutputs extends KhookInputs {
  /** metadata.name of the spec. */
  specName: string;
  steps: StepOutput[];
  /** The last run's status: succeeded | failed | cancelled, or the record's status after a refresh. */
  runStatus: string;
  /** Where the state record lives; absent when the journal is off. */
  recordNamespace?: string;
  recordName?: string;
  /** When the record was last written, after a refresh. */
  recordUpdatedAt?: string;
  /** The khook version that last applied (or refreshed). */
  engineVersion: string;
  /** Minted by `create`, kept by every update: tells this resource's claim on the record from a successor's (provider/pulumi/owner.ts). */
  ownerToken?: string;
  /** The key of keyed step hashes (spec/keyed-hash.ts), for a spec with secret-bearing steps; a Pulumi secret (the SDK's additionalSecretOutputs). */
  hashKey?: string;
}

/** Whether a value (from the provider protocol) contains an unknown anywhere. */
export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

export type PreviewMode = "offline" | "online";
export const PREVIEW_MODES: readonly PreviewMode[] = ["offline", "online"];

/**
 * The properties that only say where and how a run goes: an unknown value in
 * one of them (a kubeconfig from a cluster being created) hides nothing from
 * validation and the plan.
 */
export const TARGETING_KEYS = ["resourceName", "kubeconfig", "context", "parallelism", "timeout", "waitForCluster", "previewMode"] as const;

/** The properties that decide the loaded spec; everything else is presentation or targeting. */
export const SPEC_INPUT_KEYS = ["spec", "specFile", "baseDir", "files", "binaryFiles", "executables", "vars", "varFiles", "secretVars", "envVars"] as const;

export interface InputProblem {
  property: string;
  reason: string;
}

/**
 * Normalizes the raw property bag: drops empty maps and lists (absent and
 * empty mean the same) and stringifies scalar variable values. Reports
 * wrongly-typed fields instead of throwing.
 */
export function normalizeInputs(raw: Record<string, unknown>): { inputs: KhookInputs; problems: InputProblem[] } {
  const problems: InputProblem[] = [];
  const out: Record<string, unknown> = {};
  const str = (key: keyof KhookInputs, required = false): void => {
    const v = raw[key];
    if (v === undefined || v === null) {
      if (required) problems.push({ property: key, reason: `${key} is required` });
      return;
    }
    if (typeof v !== "string") problems.push({ property: key, reason: `${key} must be a string` });
    else out[key] = v;
  };
  const map = (key: keyof KhookInputs, secret = false): void => {
    const v = raw[key];
    if (v === undefined || v === null) return;
    if (typeof v !== "object" || Array.isArray(v)) {
      problems.push({ property: secret ? "" : key, reason: `${key} must be a map of NAME: value` });
      return;
    }
    const m: Record<string, string> = {};
    for (const [k, val] of Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (val === null || val === undefined) continue;
      if (typeof val === "object") problems.push({ property: `${key}.${k}`, reason: `${key}.${k} must be a string` });
      else m[k] = String(val);
    }
    if (Object.keys(m).length > 0) out[key] = m;
  };
  str("resourceName");
  str("spec", true);
  str("specFile");
  str("baseDir");
  map("files");
  map("binaryFiles");
  const executables = raw.executables;
  if (executables !== undefined && executables !== null) {
    if (!Array.isArray(executables) || executables.some((x) => typeof x !== "string")) problems.push({ property: "executables", reason: "executables must be a list of file keys" });
    else if (executables.length > 0) out.executables = [...(executables as string[])].sort();
  }
  map("vars");
  map("secretVars", true);
  map("envVars");
  const kc = raw.kubeconfig;
  if (kc !== null && typeof kc === "object" && !Array.isArray(kc)) out.kubeconfig = JSON.stringify(kc);
  else str("kubeconfig");
  str("context");
  const mode = raw.previewMode;
  if (mode !== undefined && mode !== null) {
    if (typeof mode === "string" && (PREVIEW_MODES as readonly string[]).includes(mode)) out.previewMode = mode;
    else problems.push({ property: "previewMode", reason: `previewMode must be one of ${PREVIEW_MODES.join(", ")}` });
  }
  str("timeout");
  str("waitForCluster");
  str("pulumiProject");
  str("pulumiStack");
  const varFiles = raw.varFiles;
  if (varFiles !== undefined && varFiles !== null) {
    if (!Array.isArray(varFiles)) problems.push({ property: "varFiles", reason: "varFiles must be a list" });
    else {
      const list: VarFileInput[] = [];
      varFiles.forEach((vf: unknown, i) => {
        const o = vf as { file?: unknown; values?: unknown } | null;
        if (o === null || typeof o !== "object" || typeof o.values !== "object" || o.values === null) {
          problems.push({ property: `varFiles[${i}]`, reason: "each var file must be { file, values }" });
          return;
        }
        const values: Record<string, string> = {};
        for (const [k, val] of Object.entries(o.values as Record<string, unknown>)) values[k] = val === null ? "" : String(val);
        list.push({ file: typeof o.file === "string" ? o.file : `varFiles[${i}]`, values });
      });
      if (list.length > 0) out.varFiles = list;
    }
  }
  const p = raw.parallelism;
  if (p !== undefined && p !== null) {
    if (typeof p !== "number" || !Number.isInteger(p) || p < 1) problems.push({ property: "parallelism", reason: "parallelism must be a whole number of at least 1" });
    else out.parallelism = p;
  }
  const plan = raw.plan;
  if (Array.isArray(plan) && plan.every((l) => typeof l === "string")) out.plan = plan;
  return { inputs: out as unknown as KhookInputs, problems };
}

/** Whether the kubeconfig input is content (YAML or JSON) rather than a path. */
export function isKubeconfigContent(value: string): boolean {
  return value.includes("\n") || /^\s*[{[]/.test(value) || /^\s*(apiVersion|clusters|contexts|current-context|kind|users)\s*:/.test(value);
}
