/**
 * The Khook resource's property bags, as the dynamic provider sees them.
 *
 * Inputs are what the SDK sends (plus `plan`, which `check` adds); outputs
 * are the inputs echoed back (destroy and refresh run from outputs alone, so
 * they must carry the spec, its files and the credentials) plus what a run
 * produced. Everything here is plain JSON: the dynamic provider protocol
 * carries nothing else.
 */
import path from "node:path";
import { parallelismProblem } from "../inputs.js";

/** The dynamic provider protocol's marker for a value that is not known yet (preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The property the dynamic provider keeps its serialized code in. */
export const PROVIDER_KEY = "__provider";

/**
 * The property the file bundle travels in. Pulumi hides properties whose name starts with `__`
 * from `pulumi preview --diff` and the update display (as it hides `__provider`): the bundle is
 * the referenced files' whole content, which belongs in the state but not on a reviewer's screen.
 */
export const BUNDLE_KEY = "__bundle";

/** The properties earlier khook versions kept the bundle in (keys relative to the bundle's top, not the spec's directory). */
export const LEGACY_BUNDLE_KEYS = ["baseDir", "files", "binaryFiles", "executables"] as const;

/**
 * Every local file a spec references, read where the program runs (provider/pulumi/bundle.ts).
 * Keys are POSIX paths relative to the spec's directory (`manifests/app.yaml`, `../shared/ns.yaml`):
 * what the spec's own paths say, never a machine's.
 */
export interface Bundle {
  /**
   * The names of the directories from the bundle's top down to the spec's directory, "." when no
   * referenced path leaves it: the names the spec's relative paths walk through (`../spec/x.yaml`)
   * or that a directory's hash covers. The bundle is written out in that layout.
   */
  baseDir: string;
  /** The files that are valid UTF-8 text. */
  files: Record<string, string>;
  /** The other files, base64. */
  binaryFiles: Record<string, string>;
  /** Keys of files that are executable (hook functions): written back with their executable bit. Sorted. */
  executables?: string[];
}

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
  /** The local files the spec references (absent when it references none). A stack written by an earlier khook holds them in LEGACY_BUNDLE_KEYS. */
  [BUNDLE_KEY]?: Bundle;
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
  /**
   * What `pulumi refresh` reads: `journal` (the default) the state record's per-step outcomes;
   * `live` also compares every completed step with the cluster and writes the drifted ones into
   * the `drift` output, which the next preview shows as changes and `up` repairs.
   */
  refresh?: RefreshMode;
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
  /** Minted by `create`, kept by every update: tells this resource's claim on the record from its replacement's (provider/pulumi/record-owner/owner.ts). */
  ownerToken?: string;
  /** The key of keyed step hashes (dsl/keyed-hash.ts), for a spec with secret-bearing steps; a Pulumi secret (the SDK's additionalSecretOutputs). */
  hashKey?: string;
  /**
   * After a refresh with `refresh: live`: the completed steps whose objects or releases drifted
   * in the cluster (empty when none did). The next `up` re-runs them; absent otherwise.
   */
  drift?: DriftOutput[];
}

/** One drifted step, as a live refresh found it. */
export interface DriftOutput {
  name: string;
  type: string;
  /** What drifted, for people: objects and fields, never a value. Redacted. */
  reason: string;
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

export type RefreshMode = "journal" | "live";
export const REFRESH_MODES: readonly RefreshMode[] = ["journal", "live"];

/**
 * The properties that only say where and how a run goes: an unknown value in
 * one of them (a kubeconfig from a cluster being created) hides nothing from
 * validation and the plan.
 */
export const TARGETING_KEYS = [
  "resourceName",
  "kubeconfig",
  "context",
  "parallelism",
  "timeout",
  "waitForCluster",
  "previewMode",
  "refresh",
] as const;

/** The properties that decide the loaded spec; everything else is presentation or targeting. */
export const SPEC_INPUT_KEYS = ["spec", "specFile", BUNDLE_KEY, "vars", "varFiles", "secretVars", "envVars"] as const;

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
    for (const [k, val] of Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    )) {
      if (val === null || val === undefined) continue;
      if (typeof val === "object") problems.push({ property: `${key}.${k}`, reason: `${key}.${k} must be a string` });
      else m[k] = String(val);
    }
    if (Object.keys(m).length > 0) out[key] = m;
  };
  str("resourceName");
  str("spec", true);
  str("specFile");
  const bundle = bundleInput(raw, problems);
  if (bundle !== undefined) out[BUNDLE_KEY] = bundle;
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
  const refresh = raw.refresh;
  if (refresh !== undefined && refresh !== null) {
    if (typeof refresh === "string" && (REFRESH_MODES as readonly string[]).includes(refresh)) out.refresh = refresh;
    else problems.push({ property: "refresh", reason: `refresh must be one of ${REFRESH_MODES.join(", ")}` });
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
        for (const [k, val] of Object.entries(o.values as Record<string, unknown>))
          values[k] = val === null ? "" : String(val);
        list.push({ file: typeof o.file === "string" ? o.file : `varFiles[${i}]`, values });
      });
      if (list.length > 0) out.varFiles = list;
    }
  }
  const p = raw.parallelism;
  if (p !== undefined && p !== null) {
    const problem = parallelismProblem(p, "parallelism");
    if (problem !== undefined) problems.push({ property: "parallelism", reason: problem });
    else out.parallelism = p;
  }
  const plan = raw.plan;
  if (Array.isArray(plan) && plan.every((l) => typeof l === "string")) out.plan = plan;
  return { inputs: out as unknown as KhookInputs, problems };
}

/**
 * The bundle from `__bundle`, or from the properties an earlier khook kept it in (keys relative to
 * the bundle's top: they are re-keyed relative to the spec's directory, so the bundle is written out
 * in the same layout and every step hashes as before: no spurious change on the first preview).
 * Absent when the spec references no file.
 */
function bundleInput(raw: Record<string, unknown>, problems: InputProblem[]): Bundle | undefined {
  const given = raw[BUNDLE_KEY];
  const legacy = given === undefined || given === null;
  const source = (legacy ? raw : given) as Record<string, unknown>;
  const where = (k: string): string => (legacy ? k : `${BUNDLE_KEY}.${k}`);
  if (source === null || typeof source !== "object" || Array.isArray(source)) {
    problems.push({
      property: BUNDLE_KEY,
      reason: `${BUNDLE_KEY} must be { baseDir, files, binaryFiles, executables }`,
    });
    return undefined;
  }
  const textMap = (k: "files" | "binaryFiles"): Record<string, string> => {
    const v = source[k];
    if (v === undefined || v === null) return {};
    if (typeof v !== "object" || Array.isArray(v) || Object.values(v).some((x) => typeof x !== "string")) {
      problems.push({ property: where(k), reason: `${where(k)} must be a map of path: content` });
      return {};
    }
    return Object.fromEntries(
      Object.entries(v as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  };
  const files = textMap("files");
  const binaryFiles = textMap("binaryFiles");
  let executables: string[] = [];
  const x = source.executables;
  if (x !== undefined && x !== null) {
    if (!Array.isArray(x) || x.some((e) => typeof e !== "string"))
      problems.push({ property: where("executables"), reason: `${where("executables")} must be a list of file keys` });
    else executables = [...(x as string[])].sort();
  }
  let baseDir = ".";
  if (source.baseDir !== undefined && source.baseDir !== null) {
    if (typeof source.baseDir !== "string")
      problems.push({ property: where("baseDir"), reason: `${where("baseDir")} must be a string` });
    else baseDir = source.baseDir === "" ? "." : source.baseDir;
  }
  if (Object.keys(files).length + Object.keys(binaryFiles).length === 0) return undefined;
  if (!legacy) return { baseDir, files, binaryFiles, ...(executables.length > 0 ? { executables } : {}) };
  // Written by an earlier khook: keys relative to the bundle's top, where baseDir is the spec's directory.
  const rekey = (k: string): string => path.posix.relative(baseDir, k) || ".";
  const rekeyed = (m: Record<string, string>): Record<string, string> =>
    Object.fromEntries(
      Object.entries(m)
        .map(([k, v]): [string, string] => [rekey(k), v])
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  return {
    baseDir,
    files: rekeyed(files),
    binaryFiles: rekeyed(binaryFiles),
    ...(executables.length > 0 ? { executables: executables.map(rekey).sort() } : {}),
  };
}

/** Whether the kubeconfig input is content (YAML or JSON) rather than a path. */
export function isKubeconfigContent(value: string): boolean {
  return (
    value.includes("\n") ||
    /^\s*[{[]/.test(value) ||
    /^\s*(apiVersion|clusters|contexts|current-context|kind|users)\s*:/.test(value)
  );
}
