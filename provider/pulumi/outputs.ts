/**
 * What create, update and read return: the inputs echoed (destroy and refresh
 * run from outputs alone) plus what the run or the record says. Plain JSON,
 * every text redacted with the spec's redactor.
 */
import type { RunResult, StepResult } from "../engine/run-types.js";
import type { StatusReport } from "../operations.js";
import type { DriftReport } from "../engine/drift.js";
import type { LoadedSpec } from "../dsl/loaded.js";
import { KHOOK_VERSION } from "../version.js";
import type { DriftOutput, KhookInputs, KhookOutputs, StepOutput, StepOutputStatus } from "./wire.js";

export type RecordLocation = { namespace: string; name: string } | undefined;

function echo(inputs: KhookInputs): KhookInputs {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(inputs)) if (v !== undefined) out[k] = v;
  return out as unknown as KhookInputs;
}

function withLocation(o: KhookOutputs, location: RecordLocation): KhookOutputs {
  delete o.recordNamespace;
  delete o.recordName;
  if (location) {
    o.recordNamespace = location.namespace;
    o.recordName = location.name;
  }
  return o;
}

export function stepOutput(spec: LoadedSpec, r: StepResult): StepOutput {
  const step = spec.stepsByName.get(r.name);
  const redact = (s: string): string => spec.redactor.redact(s);
  return {
    name: r.name,
    type: r.type,
    status: r.status,
    reason: redact(r.reason),
    attempts: r.attempts,
    transientRetries: r.transientRetries ?? 0,
    durationMs: Math.round(r.durationMs),
    inputHash: r.inputHash,
    when: step === undefined || step.whenHolds ? "included" : "excluded",
    ...(r.error !== undefined ? { error: redact(r.error) } : {}),
  };
}

/** Outputs after an apply (whatever its status). */
export function runOutputs(
  inputs: KhookInputs,
  spec: LoadedSpec,
  result: RunResult,
  location: RecordLocation,
): KhookOutputs {
  const o: KhookOutputs = {
    ...echo(inputs),
    specName: spec.name,
    steps: result.steps.map((s) => stepOutput(spec, s)),
    runStatus: result.status,
    engineVersion: KHOOK_VERSION,
  };
  return withLocation(o, location);
}

const RECORD_STATUSES = new Set<StepOutputStatus>([
  "ok",
  "failed",
  "skipped",
  "destroying",
  "destroyed",
  "destroy-failed",
]);

/**
 * Outputs after a refresh: the previous outputs with `steps` and `runStatus`
 * taken from the record. A step without an entry is `pending`; with no record
 * at all (deleted out of band: the next run re-converges everything) every
 * step is. A step recorded with other inputs than the spec's keeps its
 * recorded status but not the spec's hash, so the next diff sees it.
 */
export function refreshedOutputs(
  previous: KhookOutputs,
  spec: LoadedSpec,
  report: StatusReport | undefined,
  location: RecordLocation,
): KhookOutputs {
  const redact = (s: string): string => spec.redactor.redact(s);
  const entries = new Map((report?.summary.steps ?? []).filter((s) => s.inSpec !== false).map((s) => [s.name, s]));
  const steps: StepOutput[] = spec.steps.map((step) => {
    const when = step.whenHolds ? ("included" as const) : ("excluded" as const);
    const e = entries.get(step.name);
    if (e === undefined) {
      return {
        name: step.name,
        type: step.type,
        status: "pending",
        reason:
          report === undefined
            ? "no state record in the cluster: the next apply runs it"
            : "not in the state record: the next apply runs it",
        attempts: 0,
        transientRetries: 0,
        durationMs: 0,
        inputHash: step.inputHash,
        when,
      };
    }
    const status = RECORD_STATUSES.has(e.status as StepOutputStatus) ? (e.status as StepOutputStatus) : "pending";
    return {
      name: step.name,
      type: step.type,
      status,
      reason: redact(e.reason),
      attempts: e.attempts,
      transientRetries: e.transientRetries,
      durationMs: Math.round(e.durationMs),
      inputHash: e.inputHash,
      when,
      ...(e.error !== undefined ? { error: redact(e.error) } : {}),
    };
  });
  const o: KhookOutputs = {
    ...previous,
    specName: spec.name,
    steps,
    runStatus: report?.summary.runStatus ?? "unknown",
    engineVersion: previous.engineVersion ?? KHOOK_VERSION,
  };
  delete o.recordUpdatedAt;
  if (report !== undefined) o.recordUpdatedAt = report.summary.updatedAt;
  return withLocation(o, location);
}

/** The one-line error a failed run rejects with; redacted. */
export function failureMessage(
  resourceName: string,
  spec: LoadedSpec,
  result: RunResult,
  verb: "apply" | "destroy",
): string {
  const failed = result.steps.filter((s) => s.status === "failed");
  const lines = failed.map((s) => `step "${s.name}" failed: ${s.error ?? s.reason}`);
  if (result.journalError !== undefined) lines.push(`the state record: ${result.journalError}`);
  const head =
    result.status === "cancelled"
      ? `khook ${verb} of ${resourceName} was cancelled`
      : `khook ${verb} of ${resourceName} failed (${failed.length} step${failed.length === 1 ? "" : "s"} failed)`;
  return spec.redactor.redact([head, ...lines].join("\n"));
}

/** The `drift` output of a live refresh: the drifted steps, in document order, redacted. */
export function driftOutputs(spec: LoadedSpec, report: DriftReport): DriftOutput[] {
  return report.steps
    .filter((s) => s.state === "drifted")
    .map((s) => ({ name: s.name, type: s.type, reason: spec.redactor.redact(s.reason) }));
}

/** The steps an update re-runs after a live refresh: the `drift` output's, still included in the spec. */
export function driftedToRepair(spec: LoadedSpec, drift: unknown): Set<string> {
  if (!Array.isArray(drift)) return new Set();
  const names = drift
    .map((d: unknown) => (d !== null && typeof d === "object" ? (d as { name?: unknown }).name : undefined))
    .filter((n): n is string => typeof n === "string");
  return new Set(names.filter((n) => spec.stepsByName.get(n)?.whenHolds === true));
}
