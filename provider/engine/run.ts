/**
 * The run engine: a ready-queue scheduler over the step DAG. The scheduling
 * state and its transitions are the Scheduler (scheduler.ts); this module
 * drives it, executes the steps it starts, and writes the events and journal.
 *
 * - A step starts the moment every step it needs has resolved (no level
 *   barriers), at most `parallelism` at once; among ready steps, document
 *   order decides.
 * - `needs` is satisfied by `ok`, by `skipped` through skipIf, by exclusion
 *   through `when:`, and by resuming from the state record. Those last two are
 *   decided without running anything, but only once the step's own needs have
 *   resolved, so ordering stays transitive: with c → b → a and b excluded, c
 *   still waits for a. An excluded step whose dependency failed is still
 *   reported as excluded, but passes the block on to its dependents.
 * - A failed step blocks its dependents (reported skipped, naming it). With
 *   `onError: fail` nothing new starts, running steps finish, and every
 *   not-yet-run step is reported skipped; with `continue`, independent
 *   branches go on.
 * - Each attempt is bounded by the step's timeout (the executor's signal fires
 *   and the engine stops waiting), retried `retries` times with `retryDelay`
 *   between attempts.
 * - Cancellation (the run signal) stops starting steps, aborts running
 *   attempts (those steps fail with "cancelled"), reports the rest skipped
 *   (`cancelled`), writes the journal, and returns status "cancelled". A
 *   journal that lost its lease does the same, but the run fails.
 * - Destroy walks the same DAG reversed (a step is torn down after every step
 *   that needs it) and calls `executor.destroy`.
 *
 * Every error text is redacted with the run's redactor (a child of the spec's: the session's,
 * see provider/session.ts, or a new one) before it goes into an event, the result, or the journal.
 */
import type { Redactor } from "../redact.js";
import type { LoadedSpec, LoadedStep } from "../dsl/loaded.js";
import type { DestroyOutcome, StepOutcome } from "../steps/contract.js";
import { setMaxListeners } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { afterStepFailedReason, isPermanent, stepHooksFor, type StepHooks } from "../hooks/step-hooks.js";
import { hasKeyedSteps, keyedSpec } from "../dsl/keyed-hash.js";
import { boundedAttempt, errorText, executorFor, isCancelled, makeStepContext } from "./attempt.js";
import { CANCELLED_REASON, CANCELLED_WHILE_RUNNING_REASON, failedReason, LEASE_LOST_REASON } from "./reasons.js";
import { Scheduler, skippedResult, type Resolution, type Resolved } from "./scheduler.js";
import { TransientRetries } from "./transient-retry.js";
import {
  type RunEvent,
  type RunOptions,
  type RunResult,
  type RunStatus,
  type SleepFn,
  type StepResult,
} from "./run-types.js";

export * from "./run-types.js";

export const defaultSleep: SleepFn = (ms, signal) => delay(ms, undefined, { signal });

export async function runSpec(loadedSpec: LoadedSpec, opts: RunOptions): Promise<RunResult> {
  // Re-bound to the keyed spec once the record (and its hash key) is read.
  let spec = loadedSpec;
  const now = opts.now ?? Date.now;
  const mode = opts.mode;
  const journal = opts.journal;
  // This run's redactor: what executors learn is secret is masked in everything the run produces.
  const redactor = opts.redactor ?? spec.redactor.child();
  const redact = (s: string): string => redactor.redact(s);
  const emit = (e: RunEvent): void => {
    try {
      opts.onEvent?.(e);
    } catch {
      // A listener's bug must not break the run.
    }
  };
  const t0 = now();
  emit({ type: "run-started", spec: spec.name, mode, steps: spec.steps.length });

  const finishWith = (steps: StepResult[], status: RunStatus, journalError?: string): RunResult => {
    const result: RunResult = {
      mode,
      status,
      cancelled: status === "cancelled",
      steps,
      durationMs: Math.max(0, now() - t0),
      ...(journalError !== undefined ? { journalError } : {}),
    };
    emit({ type: "run-finished", result });
    return result;
  };

  /** Before anything runs: every step skipped, run failed, the journal's problem reported. */
  const refuse = (journalError: string, why: string): RunResult => {
    const steps = spec.steps.map((step) => skippedResult(step, `not started: ${why}`));
    for (const result of steps) emit({ type: "step-finished", result });
    return finishWith(steps, "failed", journalError);
  };
  if (opts.refusal !== undefined) return refuse(redact(opts.refusal.message), opts.refusal.why);

  if (!journal && opts.hashKey !== undefined && hasKeyedSteps(spec)) spec = keyedSpec(spec, opts.hashKey);
  if (journal) {
    try {
      await journal.open();
    } catch (e) {
      return refuse(errorText(e, redact), "the state record could not be read");
    }
    // Steps whose hash digests a secret are hashed under the record's key (dsl/keyed-hash.ts).
    if (hasKeyedSteps(spec)) spec = keyedSpec(spec, journal.hashKey());
    try {
      if (mode === "destroy") await journal.beginDestroy(spec.steps.filter((s) => s.whenHolds).map((s) => s.name));
      else {
        const rerun = opts.rerun ?? new Set<string>();
        const repairs = spec.steps.filter((s) => s.whenHolds && rerun.has(s.name)).map((s) => s.name);
        await journal.beginRun({
          stepsToExecute: spec.steps.some(
            (s) => s.whenHolds && !opts.leave?.has(s.name) && (rerun.has(s.name) || !journal.isResumable(s)),
          ),
          ...(repairs.length > 0 ? { repairs } : {}),
        });
      }
    } catch (e) {
      for (const message of journal.takeWarnings()) emit({ type: "journal-warning", message: redact(message) });
      return refuse(
        errorText(e, redact),
        mode === "destroy"
          ? "the state record could not be claimed and updated before teardown"
          : "the state record could not be claimed",
      );
    }
    for (const message of journal.takeWarnings()) emit({ type: "journal-warning", message: redact(message) });
  }

  // A run that lost its lease stops as if cancelled, but fails (exit 1): the journal error names the holder.
  const signal =
    journal === undefined ? opts.signal : AbortSignal.any([...(opts.signal ? [opts.signal] : []), journal.leaseLost]);
  const resolutions = await schedule(spec, { ...opts, ...(signal ? { signal } : {}) }, emit, redactor, now);
  const steps = spec.steps.map((s) => resolutions.byName.get(s.name)!.result);
  const anyFailed = steps.some((s) => s.status === "failed");
  let status: RunStatus = resolutions.cancelled ? "cancelled" : anyFailed ? "failed" : "succeeded";

  let journalError: string | undefined;
  if (journal) {
    if (mode === "destroy" && status === "succeeded" && journal.hadRecord) {
      try {
        await journal.deleteRecord();
      } catch (e) {
        journalError = errorText(e, redact);
      }
    } else {
      journalError = await journal.finish(status);
      if (journalError !== undefined) journalError = redact(journalError);
    }
    // Warnings that arose during the run (e.g. the record deleted under it).
    for (const message of journal.takeWarnings()) emit({ type: "journal-warning", message: redact(message) });
    if (journalError !== undefined && status === "succeeded") status = "failed";
  }
  return finishWith(steps, status, journalError);
}

interface Scheduled {
  readonly byName: ReadonlyMap<string, Resolution>;
  readonly cancelled: boolean;
}

/** What every step's execution in one run shares. */
interface RunScope {
  readonly spec: LoadedSpec;
  readonly opts: RunOptions;
  /** The run's journal, when there is one: each step's context gets its view of the record. */
  readonly journal: RunOptions["journal"];
  readonly emit: (e: RunEvent) => void;
  readonly redactor: Redactor;
  readonly redact: (s: string) => string;
  readonly now: () => number;
  readonly sleep: SleepFn;
  /** The run's signal: the caller's, and aborted on cancellation; every attempt and retry pause listens to it. */
  readonly runSignal: AbortSignal;
  /** helm revisions made by the last attempt of each step, for post-apply hooks. */
  readonly revisions: Map<string, number>;
  /** Each executed step's transient retries (engine/transient-retry.ts), for its result. */
  readonly transients: Map<string, TransientRetries>;
}

/** Drives the Scheduler: resolves, starts and completes steps until it is done, writing each resolution to the events and the journal. */
function schedule(
  spec: LoadedSpec,
  opts: RunOptions,
  emit: (e: RunEvent) => void,
  redactor: Redactor,
  now: () => number,
): Promise<Scheduled> {
  const redact = (s: string): string => redactor.redact(s);
  const journal = opts.journal;
  // One run-scoped signal, linked to the caller's: every attempt and retry pause
  // listens to it, so it may have more listeners than Node's default warns about.
  const runAbort = new AbortController();
  setMaxListeners(0, runAbort.signal);
  const callerSignal = opts.signal;
  const scope: RunScope = {
    spec,
    opts,
    journal,
    emit,
    redactor,
    redact,
    now,
    sleep: opts.sleep ?? defaultSleep,
    runSignal: runAbort.signal,
    revisions: new Map(),
    transients: new Map(),
  };
  const scheduler = new Scheduler(spec, {
    mode: opts.mode,
    ...(opts.parallelism !== undefined ? { parallelism: opts.parallelism } : {}),
    ...(journal ? { isResumable: (step: LoadedStep) => !opts.rerun?.has(step.name) && journal.isResumable(step) } : {}),
    ...(opts.leave !== undefined ? { leave: opts.leave } : {}),
    redact,
  });
  let cancelled = false;
  let finished = false;

  const record = ({ step, resolution, executed }: Resolved): void => {
    emit({ type: "step-finished", result: resolution.result });
    if (executed) journal?.recordStep(step, resolution.result);
    // A step left as it is keeps its record entry (RunOptions.leave).
    else if (!(opts.leave?.has(step.name) ?? false)) journal?.recordNotStarted(step, resolution.result.reason);
  };

  return new Promise<Scheduled>((resolveRun) => {
    const pump = (): void => {
      if (finished) return;
      const { resolved, started } = scheduler.advance();
      for (const r of resolved) record(r);
      for (const step of started) {
        emit({ type: "step-started", step: step.name, stepType: step.type });
        void execute(scope, step).then((executed) => {
          const retried = scope.transients.get(step.name)?.count ?? 0;
          const result = retried > 0 ? { ...executed, transientRetries: retried } : executed;
          record(scheduler.complete(step, result));
          pump();
        });
      }
      if (!scheduler.done) return;
      finished = true;
      callerSignal?.removeEventListener("abort", onAbort);
      // Whatever never got to run, in document order.
      for (const r of scheduler.finish()) record(r);
      resolveRun({ byName: scheduler.byName, cancelled });
    };
    const onAbort = (): void => {
      if (!runAbort.signal.aborted) runAbort.abort(callerSignal?.reason);
      // A journal that lost its lease stops the run as cancellation does, but the run fails.
      const leaseLost = journal?.leaseLost.aborted === true;
      cancelled ||= !leaseLost;
      scheduler.stop(leaseLost ? LEASE_LOST_REASON : CANCELLED_REASON);
      pump();
    };
    if (callerSignal?.aborted) onAbort();
    else {
      callerSignal?.addEventListener("abort", onAbort, { once: true });
      pump();
    }
  });
}

/** Runs the step's attempts, then tells its after-step hooks how it ended. */
async function execute(scope: RunScope, step: LoadedStep): Promise<StepResult> {
  const { spec, opts, emit, redactor, redact, sleep, runSignal } = scope;
  const mode = opts.mode;
  const hooks = stepHooksFor(spec, step, mode, redactor);
  const result = await attempts(scope, step, hooks);
  if (hooks === undefined || result.reason === CANCELLED_WHILE_RUNNING_REASON) return result;
  try {
    await hooks.afterStep(
      { status: result.status, reason: result.error ?? result.reason, revision: scope.revisions.get(step.name) },
      { signal: runSignal, log: (message) => emit({ type: "step-log", step: step.name, message: redact(message) }) },
      sleep,
    );
    return result;
  } catch (e) {
    if (result.status === "failed") return result;
    const error = errorText(e, redact);
    return { ...result, status: "failed", reason: afterStepFailedReason(mode), error };
  }
}

/** Each attempt bounded by the step's timeout, retried `retries` times with `retryDelay` between attempts. */
async function attempts(scope: RunScope, step: LoadedStep, hooks: StepHooks | undefined): Promise<StepResult> {
  const { spec, opts, journal, emit, redactor, redact, now, sleep, runSignal } = scope;
  const mode = opts.mode;
  const t = now();
  const base = { name: step.name, type: step.type, inputHash: step.inputHash };
  const elapsed = (): number => Math.max(0, now() - t);
  const cancelledResult = (attempts: number): StepResult => ({
    ...base,
    status: "failed",
    reason: CANCELLED_WHILE_RUNNING_REASON,
    attempts,
    durationMs: elapsed(),
    error: CANCELLED_REASON,
  });
  const executor = executorFor(opts.executors, step);
  const of = 1 + Math.max(0, Math.floor(step.retries));
  const say = (message: string): void => emit({ type: "step-log", step: step.name, message });
  const transient = new TransientRetries({ now, sleep, log: (line) => say(redact(line)) });
  // An executor's line is said once, not once per transient try.
  const log = (message: string): void => {
    if (!transient.repeats(message)) say(message);
  };
  scope.transients.set(step.name, transient);
  let lastError = "";
  for (let attempt = 1; attempt <= of; attempt++) {
    if (runSignal.aborted) return cancelledResult(attempt - 1);
    emit({ type: "attempt-started", step: step.name, attempt, of });
    try {
      const bounds = { timeoutMs: step.timeoutMs, runSignal, now, timeoutDetail: () => transient.lastErrorText };
      const outcome = await boundedAttempt(bounds, (signal, deadlineAt): Promise<StepOutcome | DestroyOutcome> => {
        const recordedAdditions = mode === "destroy" ? journal?.previousRecord?.steps[step.name]?.added : undefined;
        const extras = recordedAdditions !== undefined ? { ...opts.context, recordedAdditions } : opts.context;
        const ctx = makeStepContext({
          spec,
          extras,
          signal,
          deadlineAt,
          now,
          log,
          redactor,
          hooks,
          record: journal?.stepRecord(step.name),
        });
        // Transient failures are retried within this attempt's deadline (engine/transient-retry.ts).
        if (mode === "apply") return transient.run({ signal, deadlineAt }, () => executor.apply(step, ctx));
        // finalize: the teardown proceeds only once every before-teardown hook succeeded.
        return (hooks?.beforeTeardown({ signal, log: ctx.log }) ?? Promise.resolve()).then(() =>
          transient.run({ signal, deadlineAt }, () => executor.destroy(step, ctx)),
        );
      });
      if ("revision" in outcome && outcome.revision !== undefined) scope.revisions.set(step.name, outcome.revision);
      const added = "added" in outcome ? outcome.added : undefined;
      const baseline = "baseline" in outcome ? outcome.baseline : undefined;
      return {
        ...base,
        status: outcome.status === "skipped" ? "skipped" : "ok",
        reason: redact(outcome.reason),
        attempts: attempt,
        durationMs: elapsed(),
        ...(added !== undefined && added.length > 0 ? { added } : {}),
        ...(baseline !== undefined ? { baseline } : {}),
      };
    } catch (e) {
      if (isCancelled(e)) {
        emit({
          type: "attempt-failed",
          step: step.name,
          attempt,
          of,
          error: CANCELLED_REASON,
          willRetry: false,
          retryInMs: 0,
        });
        return cancelledResult(attempt);
      }
      lastError = errorText(e, redact);
      // A failure retrying cannot fix (a function's verdict, a hook's permanent error) ends the step.
      const willRetry = attempt < of && !runSignal.aborted && !isPermanent(e);
      const retryInMs = willRetry ? Math.max(0, step.retryDelayMs) : 0;
      emit({ type: "attempt-failed", step: step.name, attempt, of, error: lastError, willRetry, retryInMs });
      if (!willRetry) {
        if (attempt < of && runSignal.aborted) return cancelledResult(attempt);
        return {
          ...base,
          status: "failed",
          reason: failedReason(attempt),
          attempts: attempt,
          durationMs: elapsed(),
          error: lastError,
        };
      }
      if (retryInMs > 0) {
        try {
          await sleep(retryInMs, runSignal);
        } catch {
          // Only cancellation interrupts the pause.
        }
      }
    }
  }
  // Unreachable: the last attempt returns above.
  return { ...base, status: "failed", reason: failedReason(of), attempts: of, durationMs: elapsed(), error: lastError };
}
