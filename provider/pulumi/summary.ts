/**
 * What check and diff need from a spec — per step its name, type, input hash
 * and `when:` outcome, the journal's location, and the plan lines — and a
 * memo of it on local disk.
 *
 * Why a memo: `pulumi up` runs the program and the provider twice (the
 * preview pass, then the update), and every `pulumi preview` starts a fresh
 * provider process; each would load the spec machinery and the spec again
 * for the same inputs. The summary is a pure function of the inputs and
 * khook's code, so it is keyed by both: the spec inputs (text, files,
 * variables) and a fingerprint of the loader's code (version, and the size
 * and mtime of every file under provider/dsl, the planner and this
 * directory). It holds nothing secret: hashes, names, outcomes and the
 * redacted plan. Only successful loads are memoized, and never for a spec that
 * reads files live (absolute paths), whose content the key cannot see.
 *
 * A memo that cannot be read or written is simply not used; KHOOK_PULUMI_MEMO=off
 * turns it off.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { LoadedSpec, StateSettings } from "../dsl/loaded.js";
import type { Kind } from "../steps/contract.js";
import type * as StepsModule from "../steps/index.js";

import { KHOOK_VERSION } from "../version.js";
import { BUNDLE_KEY, type InputProblem, type KhookInputs } from "./wire.js";
import type * as LoadModule from "./load.js";
import type * as PlanLinesModule from "./plan-lines.js";
import type * as LocationModule from "../state/location.js";
import type * as KeyedHashModule from "../dsl/keyed-hash.js";

// The step kinds are required when a summary is made from a loaded spec: a check or diff that the
// memo answers never loads them.
const stepKinds = (): Readonly<Record<string, Kind>> => (require("../steps/index.js") as typeof StepsModule).KINDS;

export interface StepSummary {
  name: string;
  type: string;
  inputHash: string;
  included: boolean;
}

export interface SpecSummary {
  name: string;
  steps: StepSummary[];
  /** Where the journal lives; absent when `state.enabled: false`. */
  location?: StateSettings;
  plan: string[];
  /** The external tools apply will need, each with the first included step that needs it. */
  tools: RequiredTool[];
}

export interface RequiredTool {
  tool: "helm" | "kustomize";
  step: string;
  index: number;
}

export type SummaryOutcome =
  | { readonly ok: true; readonly summary: SpecSummary; readonly fromMemo: boolean }
  | { readonly ok: false; readonly problems: InputProblem[]; readonly message: string };

const MEMO_FORMAT = "khook-pulumi-summary v2";
const MAX_ENTRIES = 256;

/** The summary of the spec the inputs describe, from the memo or by loading it. */
export function summaryFor(inputs: KhookInputs): SummaryOutcome {
  const key = memoKey(inputs);
  const hit = key === undefined ? undefined : readMemo(key);
  if (hit !== undefined) return { ok: true, summary: hit, fromMemo: true };
  // Loaded only on a miss: a warm preview never loads the spec machinery.
  const { loadFromInputs } = require("./load.js") as typeof LoadModule;
  const loaded = loadFromInputs(inputs);
  if (!loaded.ok) return loaded;
  const summary = summarize(loaded.spec);
  if (key !== undefined && !readsLiveFiles(loaded.spec)) writeMemo(key, summary);
  return { ok: true, summary, fromMemo: false };
}

/**
 * The hashes of the spec's steps with keyed ones computed under `key` (dsl/keyed-hash.ts).
 * Always a fresh load: a summary, and so the memo, never holds a key's output.
 */
export function keyedStepHashes(inputs: KhookInputs, key: string): Map<string, string> | undefined {
  const { loadFromInputs } = require("./load.js") as typeof LoadModule;
  const { keyedSpec } = require("../dsl/keyed-hash.js") as typeof KeyedHashModule;
  const loaded = loadFromInputs(inputs);
  if (!loaded.ok) return undefined;
  return new Map(keyedSpec(loaded.spec, key).steps.map((s) => [s.name, s.inputHash]));
}

export function summarize(spec: LoadedSpec): SpecSummary {
  const { planLines } = require("./plan-lines.js") as typeof PlanLinesModule;
  const { recordLocation } = require("../state/location.js") as typeof LocationModule;
  const location = recordLocation(spec, "default-on");
  return {
    name: spec.name,
    steps: spec.steps.map((s) => ({ name: s.name, type: s.type, inputHash: s.inputHash, included: s.whenHolds })),
    ...(location !== undefined ? { location: { namespace: location.namespace, name: location.name } } : {}),
    plan: planLines(spec),
    tools: requiredTools(spec),
  };
}

/** helm for an included helm step; kustomize for an included step with a `kustomize:` source. Steps `when:` excludes need nothing. */
export function requiredTools(spec: Pick<LoadedSpec, "steps">): RequiredTool[] {
  const out = new Map<RequiredTool["tool"], RequiredTool>();
  for (const s of spec.steps) {
    if (!s.whenHolds) continue;
    const need = (tool: RequiredTool["tool"]): void => {
      if (!out.has(tool)) out.set(tool, { tool, step: s.name, index: s.index });
    };
    for (const tool of stepKinds()[s.type]?.tools ?? []) need(tool);
    const manifests = (s.action as { manifests?: unknown }).manifests;
    if (Array.isArray(manifests) && manifests.some((m) => m !== null && typeof m === "object" && "kustomize" in m))
      need("kustomize");
  }
  return [...out.values()];
}

function readsLiveFiles(spec: LoadedSpec): boolean {
  const kinds = stepKinds();
  return spec.steps.some((s) =>
    (kinds[s.type]?.files(s.action, spec.baseDir) ?? []).some((r) => path.isAbsolute(r.written)),
  );
}

// ---- the memo ----

let fingerprint: string | undefined;

/** khook's version plus the size and mtime of every file whose code decides a summary. */
function codeFingerprint(): string {
  if (fingerprint !== undefined) return fingerprint;
  const h = createHash("sha256");
  h.update(`${MEMO_FORMAT}\n${KHOOK_VERSION}\n`);
  const visit = (p: string): void => {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      h.update(`${p} missing\n`);
      return;
    }
    if (st.isDirectory()) {
      for (const e of fs.readdirSync(p).sort()) if (!e.endsWith(".map") && !e.endsWith(".d.ts")) visit(path.join(p, e));
    } else h.update(`${p} ${st.size} ${st.mtimeMs}\n`);
  };
  for (const p of [
    path.join(__dirname, "..", "dsl"),
    path.join(__dirname, "..", "engine", "plan.js"),
    path.join(__dirname, "..", "engine", "reasons.js"),
    __dirname,
    path.join(__dirname, "..", "..", "..", "schema"),
  ])
    visit(p);
  fingerprint = h.digest("hex");
  return fingerprint;
}

function memoDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  return path.join(os.tmpdir(), `khook-pulumi-memo-${uid}`);
}

export function memoKey(inputs: KhookInputs): string | undefined {
  if (process.env.KHOOK_PULUMI_MEMO === "off") return undefined;
  try {
    const h = createHash("sha256");
    h.update(codeFingerprint());
    // Stable field order; maps are sorted by normalizeInputs.
    h.update(
      JSON.stringify([
        inputs.spec,
        inputs.specFile ?? null,
        inputs[BUNDLE_KEY]?.baseDir ?? ".",
        sorted(inputs[BUNDLE_KEY]?.files),
        sorted(inputs[BUNDLE_KEY]?.binaryFiles),
        inputs[BUNDLE_KEY]?.executables ?? [],
        sorted(inputs.vars),
        (inputs.varFiles ?? []).map((f) => sorted(f.values)),
        sorted(inputs.secretVars),
        sorted(inputs.envVars),
      ]),
    );
    return h.digest("hex");
  } catch {
    return undefined;
  }
}

function sorted(m: Record<string, string> | undefined): [string, string][] {
  return Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function readMemo(key: string): SpecSummary | undefined {
  try {
    const doc = JSON.parse(fs.readFileSync(path.join(memoDir(), `${key}.json`), "utf8")) as {
      format?: string;
      summary?: SpecSummary;
    };
    if (
      doc.format !== MEMO_FORMAT ||
      doc.summary === undefined ||
      !Array.isArray(doc.summary.steps) ||
      !Array.isArray(doc.summary.plan) ||
      !Array.isArray(doc.summary.tools)
    )
      return undefined;
    return doc.summary;
  } catch {
    return undefined;
  }
}

function writeMemo(key: string, summary: SpecSummary): void {
  try {
    const dir = memoDir();
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${key}.json`);
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ format: MEMO_FORMAT, summary }), { mode: 0o600 });
    fs.renameSync(tmp, file);
    prune(dir);
  } catch {
    // no memo then
  }
}

function prune(dir: string): void {
  const entries = fs.readdirSync(dir).filter((e) => e.endsWith(".json"));
  if (entries.length <= MAX_ENTRIES) return;
  const aged = entries
    .map((e) => {
      try {
        return { e, t: fs.statSync(path.join(dir, e)).mtimeMs };
      } catch {
        return { e, t: 0 };
      }
    })
    .sort((a, b) => a.t - b.t);
  for (const { e } of aged.slice(0, entries.length - MAX_ENTRIES)) fs.rmSync(path.join(dir, e), { force: true });
}
