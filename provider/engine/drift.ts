/**
 * The live check (`khook plan --live`, a Pulumi refresh with `refresh: live`): for every step
 * the state record calls completed, does what it made still hold in the cluster? Each step's
 * executor answers for its kind (StepExecutor.drift); this module decides which steps are asked,
 * gives them one shared look at the cluster (kube/live.ts: a list per kind and namespace, not a
 * GET per object), bounds each by its step's timeout, and reports one line per step:
 * in sync, drifted (naming what), or not checkable (and why). It never changes the cluster.
 *
 * Steps the record does not call completed (never run, failed, or changed since) are not
 * checked: a plain `apply` runs them anyway.
 */
import { setMaxListeners } from "node:events";
import type { Redactor } from "../redact.js";
import type { LoadedSpec } from "../dsl/loaded.js";
import type { Journal } from "../state/journal.js";
import type { StateRecord, StepEntry } from "../state/record.js";
import { LiveReads } from "../kube/live.js";
import type { DriftContext, DriftedThing, DriftState, ExecutorRegistry } from "../steps/contract.js";
import { stepHooksFor } from "../hooks/step-hooks.js";
import { hasKeyedSteps, keyedSpec } from "../dsl/keyed-hash.js";
import { boundedAttempt, errorText, executorFor, makeStepContext } from "./attempt.js";
import { excludedReason } from "./reasons.js";
import { BoundedConcurrency } from "./scheduler.js";
import type { StepContextExtras } from "./run-types.js";

export interface DriftStep {
  readonly name: string;
  /** The step kind. */
  readonly type: string;
  readonly level: number;
  readonly state: DriftState;
  /** One line for people, redacted: names objects and fields, never a value. */
  readonly reason: string;
  /** What drifted (state "drifted"), redacted. */
  readonly drifted?: readonly DriftedThing[];
  /** What decided: `when:` (excluded), the record (not completed), the step's check, or an error in it. */
  readonly decidedBy: "when" | "record" | "check" | "error";
}

export interface DriftReport {
  readonly steps: readonly DriftStep[];
  /** List requests the look at the cluster made (one per kind, namespace and selector). */
  readonly lists: number;
}

export interface DriftCheckOptions {
  /** Concurrent checks (default DEFAULT_PARALLELISM). */
  readonly parallelism?: number;
  /** The run's redactor (default: a new child of the spec's). */
  readonly redactor?: Redactor;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

/** Why a step the record holds is not checked: apply runs it anyway. */
export function notCompletedReason(entry: StepEntry | undefined, inputHash: string): string {
  if (entry === undefined) return "not in the state record: apply has not run it yet";
  if (entry.status === "ok" && entry.inputHash !== inputHash)
    return "its inputs changed since it ran: apply runs it again (plan shows what it will do)";
  if (entry.status === "skipped" && entry.attempts > 0)
    return "its skipIf found what it asks for when it last ran, so khook applied nothing to compare; apply checks the skipIf again";
  return `the state record has it ${entry.status}, not completed: apply runs it`;
}

export async function checkDrift(
  loadedSpec: LoadedSpec,
  executors: ExecutorRegistry,
  context: StepContextExtras,
  journal: Journal,
  opts: DriftCheckOptions = {},
): Promise<DriftReport> {
  const redactor = opts.redactor ?? loadedSpec.redactor.child();
  const redact = (s: string): string => redactor.redact(s);
  const now = opts.now ?? Date.now;
  const runAbort = new AbortController();
  setMaxListeners(0, runAbort.signal);
  const onAbort = (): void => runAbort.abort(opts.signal?.reason);
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener("abort", onAbort, { once: true });
  const record = await journal.open();
  // Keyed step hashes compare under the record's key, as resume does.
  const key = record?.hashKey;
  const spec = key !== undefined && hasKeyedSteps(loadedSpec) ? keyedSpec(loadedSpec, key) : loadedSpec;
  const live = new LiveReads(context.kube, runAbort.signal);

  const out: DriftStep[] = new Array(spec.steps.length);
  const toCheck: number[] = [];
  spec.steps.forEach((step, i) => {
    const base = { name: step.name, type: step.type, level: step.level };
    if (!step.whenHolds)
      out[i] = { ...base, state: "not-checkable", reason: excludedReason(step, redact), decidedBy: "when" };
    else if (!journal.isResumable(step))
      out[i] = {
        ...base,
        state: "not-checkable",
        reason: notCompletedReason(entryOf(record, step.name), step.inputHash),
        decidedBy: "record",
      };
    else toCheck.push(i);
  });

  const check = async (i: number): Promise<void> => {
    const step = spec.steps[i]!;
    const base = { name: step.name, type: step.type, level: step.level };
    const entry = entryOf(record, step.name)!;
    try {
      const finding = await boundedAttempt(
        { timeoutMs: step.timeoutMs, runSignal: runAbort.signal, now },
        (signal, deadlineAt) => {
          // Object.assign, not a spread: the context's `deadline` is a getter, read live.
          const ctx: DriftContext = Object.assign(
            makeStepContext({
              spec,
              extras: context,
              signal,
              deadlineAt,
              now,
              log: () => undefined,
              redactor,
              // post-render functions run (side-effect free), so what is compared is what apply sends; webhooks never do.
              hooks: stepHooksFor(spec, step, "plan", redactor),
            }),
            {
              live,
              recorded: {
                finishedAt: entry.finishedAt,
                ...(entry.baseline !== undefined ? { baseline: entry.baseline } : {}),
              },
            },
          );
          return executorFor(executors, step).drift(step, ctx);
        },
      );
      out[i] = {
        ...base,
        state: finding.state,
        reason: redact(finding.reason),
        ...(finding.drifted !== undefined && finding.drifted.length > 0
          ? { drifted: finding.drifted.map((d) => redactThing(d, redact)) }
          : {}),
        decidedBy: "check",
      };
    } catch (e) {
      out[i] = {
        ...base,
        state: "not-checkable",
        reason: `cannot check it: ${errorText(e, redact)}`,
        decidedBy: "error",
      };
    }
  };
  try {
    await new BoundedConcurrency(opts.parallelism).forEach(toCheck, check);
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
  return { steps: out, lists: live.requests };
}

function entryOf(record: StateRecord | undefined, name: string): StepEntry | undefined {
  return record !== undefined && Object.prototype.hasOwnProperty.call(record.steps, name)
    ? record.steps[name]
    : undefined;
}

function redactThing(d: DriftedThing, redact: (s: string) => string): DriftedThing {
  return {
    ref: redact(d.ref),
    change: d.change,
    ...(d.fields !== undefined ? { fields: d.fields.map(redact) } : {}),
    ...(d.note !== undefined ? { note: redact(d.note) } : {}),
  };
}

/** The steps a repair re-runs: the drifted ones, in document order. */
export function driftedSteps(report: DriftReport): string[] {
  return report.steps.filter((s) => s.state === "drifted").map((s) => s.name);
}
