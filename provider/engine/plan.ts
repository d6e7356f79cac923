/**
 * Plans never change the cluster. The offline plan is a pure function of the
 * loaded spec (`when:` is decided at load); the online plan additionally asks
 * each executor's read-only `assess` and consults the state record.
 */
import { setMaxListeners } from "node:events";
import type { Redactor } from "../redact.js";
import type { LoadedSpec, LoadedStep } from "../dsl/loaded.js";
import type { Journal } from "../state/journal.js";
import type { ExecutorRegistry, PlanAction } from "../steps/contract.js";
import { stepHooksFor } from "../hooks/step-hooks.js";
import { describeHook, firesIn, hooksFor } from "../dsl/hooks.js";
import { HOOK_EVENTS } from "../dsl/hook-events.js";
import { hasKeyedSteps, keyedSpec } from "../dsl/keyed-hash.js";
import { boundedAttempt, errorText, executorFor, makeStepContext } from "./attempt.js";
import { excludedReason, RESUME_REASON } from "./reasons.js";
import { transientCause, describeCause } from "../kube/transient.js";
import { BoundedConcurrency } from "./scheduler.js";
import type { StepContextExtras } from "./run-types.js";

export interface OfflinePlanStep {
  readonly name: string;
  /** The step kind. */
  readonly type: string;
  readonly level: number;
  /** One line describing the target, safe to print. */
  readonly summary: string;
  readonly when: "included" | "excluded";
  readonly inputHash: string;
  readonly action: "run" | "skip";
  readonly reason: string;
  /** The step's hooks in run order, event by event: `post-render require-limits (function ./fn/require-limits)`. */
  readonly hooks: readonly string[];
}

/** The hooks a step runs, event by event, each event's in run order. */
export function planHooks(step: LoadedStep): string[] {
  return HOOK_EVENTS.flatMap((event) => hooksFor(step, event).map((h) => describeHook(h, [event])));
}

/**
 * Plan's note on a step with hooks the planner does not fire (webhooks: it never calls them),
 * and which of them may reshape what the step applies (pre-apply: change its objects, and add
 * some where `allow.add` says so).
 */
export function webhookNote(step: LoadedStep): string | undefined {
  const names = [...new Set(step.hooks.filter((h) => !firesIn(h, "plan")).map((h) => h.name))];
  if (names.length === 0) return undefined;
  const reshaping = hooksFor(step, "pre-apply").map((h) => (h.allow.add ? `${h.name} (may add objects)` : h.name));
  return `webhook hooks not called by plan: ${names.join(", ")}${reshaping.length > 0 ? `; what is applied may be reshaped by pre-apply ${reshaping.join(", ")}` : ""}`;
}

/** Per step, in document order. Pure and deterministic. */
export function planOffline(spec: LoadedSpec): OfflinePlanStep[] {
  const redact = (s: string): string => spec.redactor.redact(s);
  return spec.steps.map((step) => {
    const base = {
      name: step.name,
      type: step.type,
      level: step.level,
      summary: step.summary,
      when: step.whenHolds ? ("included" as const) : ("excluded" as const),
      inputHash: step.inputHash,
      hooks: planHooks(step),
    };
    if (!step.whenHolds) return { ...base, action: "skip" as const, reason: excludedReason(step, redact) };
    const note = webhookNote(step);
    return {
      ...base,
      action: "run" as const,
      reason: runReason(step, redact) + (note !== undefined ? `; ${note}` : ""),
    };
  });
}

function runReason(step: LoadedStep, redact: (s: string) => string): string {
  const why = step.when !== undefined ? `when: ${redact(step.when)} holds` : "always runs";
  return step.needs.length > 0 ? `${why}; after ${step.needs.join(", ")}` : why;
}

export interface OnlinePlanStep extends Omit<OfflinePlanStep, "action"> {
  /** From assess, or `skip` for excluded and resumable steps. */
  readonly action: PlanAction;
  /** What decided the action. */
  readonly decidedBy: "when" | "state" | "assess" | "error";
  /** Set when assess failed (redacted); the action is then `run`. */
  readonly error?: string;
  /**
   * Only with `diff: true`, for a step whose executor diffs and that will change
   * something: the unified diff from assess's own dry run (redacted), or
   * `# cannot compute the diff: ...`. Steps decided by when: or the state record get none.
   */
  readonly diff?: string;
}

export interface PlanOnlineOptions {
  /** Concurrent assess calls (default DEFAULT_PARALLELISM). */
  readonly parallelism?: number;
  /** The run's redactor (default: a new child of the spec's). */
  readonly redactor?: Redactor;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  /** Ask assess for each step's diff (`plan --diff`): it comes from the same dry runs, in the same pass. */
  readonly diff?: boolean;
}

/**
 * Asks each included, non-resumable step's executor to assess live state, at
 * most `parallelism` at once, each bounded by the step's timeout. A failing
 * assess is reported on its step (decidedBy "error", action "run") rather
 * than failing the plan. With `diff`, each assess also returns its diff.
 */
export async function planOnline(
  loadedSpec: LoadedSpec,
  executors: ExecutorRegistry,
  context: StepContextExtras,
  journal?: Journal,
  opts: PlanOnlineOptions = {},
): Promise<OnlinePlanStep[]> {
  const redactor = opts.redactor ?? loadedSpec.redactor.child();
  const redact = (s: string): string => redactor.redact(s);
  const now = opts.now ?? Date.now;
  const runAbort = new AbortController();
  setMaxListeners(0, runAbort.signal);
  const runSignal = runAbort.signal;
  const onAbort = (): void => runAbort.abort(opts.signal?.reason);
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (journal) await journal.open();
  // Keyed step hashes are computed under the record's key; a plan never makes one (without it they show as unkeyed and do not resume).
  const key = journal?.previousRecord?.hashKey;
  const spec = key !== undefined && hasKeyedSteps(loadedSpec) ? keyedSpec(loadedSpec, key) : loadedSpec;
  const offline = planOffline(spec);

  const out: OnlinePlanStep[] = new Array(spec.steps.length);
  /** Per step, its diff as assess made it; redacted once every assess is done (see below). */
  const diffs: (string | undefined)[] = new Array(spec.steps.length);
  const toAssess: number[] = [];
  spec.steps.forEach((step, i) => {
    const base = offline[i]!;
    if (!step.whenHolds) out[i] = { ...base, action: "skip", decidedBy: "when" };
    else if (journal?.isResumable(step))
      out[i] = { ...base, action: "skip", reason: RESUME_REASON, decidedBy: "state" };
    else toAssess.push(i);
  });

  const assess = async (i: number): Promise<void> => {
    const step = spec.steps[i]!;
    const base = offline[i]!;
    const executor = executorFor(executors, step);
    try {
      // post-render functions run (side-effect free), so the dry runs, and the diff, see the transformed objects; webhooks never do.
      const a = await boundedAttempt({ timeoutMs: step.timeoutMs, runSignal, now }, (signal, deadlineAt) =>
        executor.assess(
          step,
          makeStepContext({
            spec,
            extras: context,
            signal,
            deadlineAt,
            now,
            log: () => undefined,
            redactor,
            hooks: stepHooksFor(spec, step, "plan", redactor),
          }),
          { diff: opts.diff === true },
        ),
      );
      const note = webhookNote(step);
      out[i] = {
        ...base,
        action: a.action,
        reason: redact(a.reason) + (note !== undefined ? `; ${note}` : ""),
        decidedBy: "assess",
      };
      // A step that will change nothing shows no diff.
      if (opts.diff === true && a.diff !== undefined && a.action !== "skip" && a.action !== "no-op")
        diffs[i] = typeof a.diff === "string" ? a.diff : cannotDiff(a.diff.message);
    } catch (e) {
      const error = errorText(e, redact);
      // A server-side dry run calls webhooks too. Plan never waits; it says which failures apply would wait out
      // (provider/kube/transient.ts, the classification apply uses) and which would fail the step.
      const cause = transientCause(e);
      const why =
        cause !== undefined
          ? `${error} (transient: apply waits for ${redact(describeCause(cause))} until the step's timeout)`
          : error;
      out[i] = { ...base, action: "run", reason: `cannot assess live state: ${why}`, decidedBy: "error", error };
      if (opts.diff === true && executor.diffs === true) diffs[i] = cannotDiff(why);
    }
  };
  try {
    await new BoundedConcurrency(opts.parallelism).forEach(toAssess, assess);
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
  // Redacted after every assess: a secret one step registers (a chart password, a rotated value) is masked in every diff.
  return out.map((p, i) => (diffs[i] !== undefined ? { ...p, diff: redact(diffs[i]) } : p));
}

/** What a step's diff says when there is none to show. */
function cannotDiff(why: string): string {
  return `# cannot compute the diff: ${why}`;
}
