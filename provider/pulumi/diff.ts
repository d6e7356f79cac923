/**
 * `diff`: does `pulumi up` have anything to do?
 *
 * Compares the new inputs (as `check` returned them) with the old outputs,
 * effect by effect — never text against text:
 *  - the step set (names key the journal; a renamed step is a new step),
 *  - each step's input hash (action block after substitution + local file contents;
 *    a step whose inputs hold a secret compares its keyed hash under the key in `olds`),
 *  - each step's `when:` outcome,
 *  - steps the last run (or the record, after a refresh) did not complete,
 *  - steps a live refresh (`refresh: live`) found drifted in the cluster (the `drift` output),
 *  - the variables given as plain values,
 *  - where the state record lives, and the cluster the resource targets,
 *  - the `refresh` mode (read runs from the outputs, so a new mode takes an update to reach them).
 * Ignored on purpose: `__provider` (the loader's code), the spec's formatting,
 * scheduling fields (`needs`, `timeout`, `retries`, ...: the spec says they never
 * re-run a step), `parallelism`, `timeout`, the resource name, and
 * `engineVersion`: a new khook alone has nothing to apply (step hashes are
 * versioned, so a hash-format change shows up as changed steps anyway), and the
 * version output is refreshed by the next real update.
 *
 * It never asks for a replacement: an update applies with the journal, which
 * re-runs exactly the changed steps.
 */
import { createHash } from "node:crypto";
import { RESUME_REASON } from "../state/record.js";
import { UNKEYED_HASH } from "../dsl/keyed-hash.js";
import { keyedStepHashes, summaryFor, type SpecSummary } from "./summary.js";
import { classifyUnknowns, rawSteps, withoutUnknownTargeting, KNOWN_AFTER } from "./unknowns.js";
import { isKubeconfigContent, normalizeInputs, PROVIDER_KEY, type KhookInputs, type StepOutput } from "./wire.js";
import type * as KubeconfigModule from "../kube/kubeconfig.js";

export interface DiffResult {
  changes: boolean;
  replaces: string[];
  deleteBeforeReplace: boolean;
  /** Why, for people and tests (the protocol has no place for it). */
  reasons: string[];
}

const NO_REPLACE = { replaces: [] as string[], deleteBeforeReplace: false };

export function diff(olds: Record<string, unknown>, news: Record<string, unknown>): DiffResult {
  const raw: Record<string, unknown> = { ...news };
  delete raw[PROVIDER_KEY];
  const unknown = classifyUnknowns(raw);
  if (unknown.opaque.length > 0)
    return { changes: true, ...NO_REPLACE, reasons: [`${unknown.opaque.join(", ")} not known until apply`] };
  const { inputs } = normalizeInputs(withoutUnknownTargeting(raw, unknown));
  const waiting = unknown.variables.length > 0 ? rawSteps(inputs.spec ?? "", unknown.variables) : [];
  if (waiting === undefined)
    return {
      changes: true,
      ...NO_REPLACE,
      reasons: [`variables not known until apply: ${unknown.variables.join(", ")}`],
    };
  const loaded = inputs.spec === undefined ? undefined : summaryFor(inputs);
  if (loaded === undefined || !loaded.ok) {
    const reason =
      unknown.variables.length > 0
        ? `variables not known until apply: ${unknown.variables.join(", ")}`
        : "the new spec does not load";
    return { changes: true, ...NO_REPLACE, reasons: [reason] };
  }
  // Steps whose inputs hold a secret carry keyed hashes: compare them under the key the resource keeps.
  const oldKey = typeof olds.hashKey === "string" ? olds.hashKey : undefined;
  const keyed =
    oldKey !== undefined && loaded.summary.steps.some((s) => s.inputHash === UNKEYED_HASH)
      ? keyedStepHashes(inputs, oldKey)
      : undefined;
  const spec =
    keyed === undefined
      ? loaded.summary
      : {
          ...loaded.summary,
          steps: loaded.summary.steps.map((s) => ({ ...s, inputHash: keyed.get(s.name) ?? s.inputHash })),
        };

  const reasons: string[] = [];
  const oldSteps = Array.isArray(olds.steps) ? (olds.steps as StepOutput[]) : undefined;
  const waitingNames = new Set(waiting.filter((w) => w.unknown.length > 0).map((w) => w.name));
  if (oldSteps === undefined) {
    reasons.push("the state holds no step outcomes");
  } else {
    reasons.push(
      ...stepChanges(
        { steps: spec.steps.filter((s) => !waitingNames.has(s.name)) },
        oldSteps.filter((o) => !waitingNames.has(o.name)),
      ),
    );
  }
  for (const w of waiting)
    if (w.unknown.length > 0) reasons.push(`step ${w.name}: ${KNOWN_AFTER} (unknown: ${w.unknown.join(", ")})`);
  reasons.push(...driftChanges(spec, olds.drift, reasons));

  const { inputs: oldInputs } = normalizeInputs(withoutProvider(olds));
  if (plainVariables(oldInputs) !== plainVariables(inputs)) reasons.push("variables changed");

  // read() runs from the outputs, which echo the inputs of the last update: a new refresh mode needs one to take effect.
  if ((oldInputs.refresh ?? "journal") !== (inputs.refresh ?? "journal"))
    reasons.push(
      `refresh: ${oldInputs.refresh ?? "journal"} -> ${inputs.refresh ?? "journal"} (the next pulumi refresh reads ${inputs.refresh === "live" ? "the cluster" : "the state record only"})`,
    );
  const location = spec.location;
  const oldLocation = typeof olds.recordName === "string" ? `${String(olds.recordNamespace)}/${olds.recordName}` : "";
  const newLocation = location ? `${location.namespace}/${location.name}` : "";
  if (oldLocation !== newLocation)
    reasons.push(`the state record moved: ${oldLocation || "(none)"} -> ${newLocation || "(none)"}`);

  if (unknown.targeting.includes("kubeconfig") || unknown.targeting.includes("context"))
    reasons.push(`the target cluster is ${KNOWN_AFTER}`);
  else if (!sameTarget(oldInputs, inputs)) reasons.push("the target cluster changed");
  // The record names its owning stack: a renamed stack (or a resource from before owners existed) re-stamps it.
  if (
    (oldInputs.pulumiProject ?? "") !== (inputs.pulumiProject ?? "") ||
    (oldInputs.pulumiStack ?? "") !== (inputs.pulumiStack ?? "")
  )
    reasons.push("the owning stack changed");

  return { changes: reasons.length > 0, ...NO_REPLACE, reasons };
}

/**
 * The steps a live refresh found drifted (the `drift` output): `up` re-runs them, so each is a
 * change, unless the step already changes for another reason (named once) or left the spec.
 */
export function driftChanges(spec: Pick<SpecSummary, "steps">, drift: unknown, already: readonly string[]): string[] {
  if (!Array.isArray(drift)) return [];
  const out: string[] = [];
  for (const d of drift as unknown[]) {
    if (d === null || typeof d !== "object") continue;
    const { name, reason } = d as { name?: unknown; reason?: unknown };
    if (typeof name !== "string") continue;
    const step = spec.steps.find((s) => s.name === name);
    if (step === undefined || !step.included || already.some((r) => r.startsWith(`step ${name}: `))) continue;
    out.push(
      `step ${name}: drifted in the cluster${typeof reason === "string" && reason !== "" ? ` (${reason})` : ""}`,
    );
  }
  return out;
}

function withoutProvider(o: Record<string, unknown>): Record<string, unknown> {
  const c = { ...o };
  delete c[PROVIDER_KEY];
  return c;
}

/** Step-level differences between the new spec and the old outcomes, one line per step. */
export function stepChanges(spec: Pick<SpecSummary, "steps">, oldSteps: readonly StepOutput[]): string[] {
  const out: string[] = [];
  const old = new Map(oldSteps.map((s) => [s.name, s]));
  for (const step of spec.steps) {
    const o = old.get(step.name);
    const when = step.included ? "included" : "excluded";
    if (o === undefined) {
      out.push(`step ${step.name}: new`);
      continue;
    }
    if (o.when !== when) {
      out.push(`step ${step.name}: when: now ${when}`);
      continue;
    }
    if (!step.included) continue;
    if (o.inputHash !== step.inputHash) out.push(`step ${step.name}: inputs changed`);
    else if (!isDone(o)) out.push(`step ${step.name}: not completed (${o.status}${o.reason ? `: ${o.reason}` : ""})`);
  }
  const current = new Set(spec.steps.map((s) => s.name));
  for (const o of oldSteps) if (!current.has(o.name)) out.push(`step ${o.name}: removed`);
  return out;
}

/**
 * Whether an outcome needs no further work: ok; skipped by its skipIf (it
 * ran: attempts > 0) or resumed from the record; or excluded by `when:`.
 * Failed steps, and steps blocked, not started or cancelled, are not done.
 */
export function isDone(o: StepOutput): boolean {
  if (o.when === "excluded") return true;
  if (o.status === "ok") return true;
  if (o.status === "skipped") return o.attempts > 0 || o.reason === RESUME_REASON;
  return false;
}

/** The variables given in plain text (secret ones only matter through the steps they change). */
function plainVariables(i: KhookInputs): string {
  return stable({ vars: i.vars ?? {}, varFiles: (i.varFiles ?? []).map((f) => f.values), envVars: i.envVars ?? {} });
}

/** Whether two inputs target the same cluster; the same kubeconfig and context need no reading. */
function sameTarget(a: KhookInputs, b: KhookInputs): boolean {
  if (a.kubeconfig === b.kubeconfig && (a.context ?? "") === (b.context ?? "")) return true;
  return targetIdentity(a) === targetIdentity(b);
}

/**
 * Which cluster: the context name and the selected cluster's server URL when
 * the kubeconfig is inline content (credentials rotating inside it are not a
 * change), read as the session reads it (kube/kubeconfig.ts); the path otherwise.
 * Ambient credentials cannot be compared.
 */
export function targetIdentity(i: KhookInputs): string {
  const context = i.context ?? "";
  const kc = i.kubeconfig;
  if (kc === undefined) return stable({ context, kubeconfig: null });
  if (!isKubeconfigContent(kc)) return stable({ context, path: kc });
  try {
    const { parseKubeconfig } = require("../kube/kubeconfig.js") as typeof KubeconfigModule;
    const config = parseKubeconfig(kc, undefined);
    const ctxName = context || config.currentContext;
    const ctx = config.contexts.get(ctxName);
    const server = ctx === undefined ? undefined : config.clusters.get(ctx.cluster)?.server;
    if (server !== undefined && server !== "") return stable({ context: ctxName, server });
  } catch {
    // not a kubeconfig: fall through
  }
  return stable({ context, content: createHash("sha256").update(kc).digest("hex") });
}

/** JSON with sorted keys: equal data, equal text. */
function stable(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stable).join(",")}]`;
  return `{${Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stable((value as Record<string, unknown>)[k])}`)
    .join(",")}}`;
}
