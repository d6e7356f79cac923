/**
 * The run engine: a ready-queue scheduler over the step DAG.
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
 * Every error text is redacted with the run's redactor (a child of the spec's) before it goes into
 * an event, the result, or the journal.
 */
import type { Redactor } from "../redact.js";
import type { LoadedSpec, LoadedStep } from "../spec/loaded.js";
import { setMaxListeners } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { afterStepFailedReason, isPermanent, stepHooksFor, type StepHooks } from "../hooks/run.js";
import { hasKeyedSteps, keyedSpec } from "../spec/keyed-hash.js";
import { boundedAttempt, errorText, executorFor, isCancelled, makeStepContext } from "./attempt.js";
import { TransientRetries } from "./transient.js";
import {
  blockedReason,
  CANCELLED_REASON,
  CANCELLED_WHILE_RUNNING_REASON,
  excludedReason,
  failedReason,
  LEASE_LOST_REASON,
  notStartedReason,
  RESUME_REASON,
} from "./reasons.js";
import { DEFAULT_PARALLELISM, type RunEvent, type RunOptions, type RunResult, type RunStatus, type SleepFn, type StepResult } from "./types.js";

export * from "./types.js";

interface Resolution {
  readonly result: StepResult;
  /** Whether it satisfies its dependents (apply: needs; destroy: the steps it needs). */
  readonly satisfies: boolean;
  /** The failed step at the root of a block. */
  readonly rootFailure?: string;
}

export const defaultSleep: SleepFn = (ms, signal) => delay(ms, undefined, { signal });

export async function runSpec(loadedSpec: LoadedSpec, opts: RunOptions): Promise<RunResult> {
  // Re-bound to the keyed spec once the record (and its hash key) is read.
  let spec = loadedSpec;
  const now = opts.now ?? Date.now;
  const mode = opts.mode;
  const journal = opts.journal;
  // This run's redactor: what executors learn is secret is masked in everything the run produces.
  const redactor = spec.redactor.child();
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

  if (!journal && opts.hashKey !== undefined && hasKeyedSteps(spec)) spec = keyedSpec(spec, opts.hashKey);
  if (journal) {
    try {
      await journal.open();
    } catch (e) {
      return refuse(errorText(e, redact), "the state record could not be read");
    }
    // Steps whose hash digests a secret are hashed under the record's key (spec/keyed-hash.ts).
    if (hasKeyedSteps(spec)) spec = keyedSpec(spec, journal.hashKey());
    try {
      if (mode === "destroy") await journal.beginDestroy(spec.steps.filter((s) => s.included).map((s) => s.name));
      else await journal.beginRun({ stepsToExecute: spec.steps.some((s) => s.included && !journal.isResumable(s)) });
    } catch (e) {
      for (const message of journal.takeWarnings()) emit({ type: "journal-warning", message: redact(message) });
      return refuse(errorText(e, redact), mode === "destroy" ? "the state record could not be claimed and updated before teardown" : "the state record could not be claimed");
    }
    for (const message of journal.takeWarnings()) emit({ type: "journal-warning", message: redact(message) });
  }

  // A run that lost its lease stops as if cancelled, but fails (exit 1): the journal error names the holder.
  const signal = journal === undefined ? opts.signal : AbortSignal.any([...(opts.signal ? [opts.signal] : []), journal.leaseLost]);
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

function skippedResult(step: LoadedStep, reason: string): StepResult {
  return { name: step.name, type: step.type, status: "skipped", reason, attempts: 0, durationMs: 0, inputHash: step.inputHash };
}

interface Scheduled {
  readonly byName: ReadonlyMap<string, Resolution>;
  readonly cancelled: boolean;
}

function schedule(
  spec: LoadedSpec,
  opts: RunOptions,
  emit: (e: RunEvent) => void,
  redactor: Redactor,
  now: () => number,
): Promise<Scheduled> {
  const redact = (s: string): string => redactor.redact(s);
  const mode = opts.mode;
  const journal = opts.journal;
  const sleep = opts.sleep ?? defaultSleep;
  const parallelism = Math.max(1, Math.floor(opts.parallelism ?? DEFAULT_PARALLELISM));
  // One run-scoped signal, linked to the caller's: every attempt and retry pause
  // listens to it, so it may have more listeners than Node's default warns about.
  const runAbort = new AbortController();
  setMaxListeners(0, runAbort.signal);
  const runSignal = runAbort.signal;
  const callerSignal = opts.signal;

  // The DAG in this mode's direction: `deps` must resolve before a step; `dependents` wait on it.
  const steps = spec.steps;
  const known = new Set(steps.map((s) => s.name));
  const deps = new Map<string, LoadedStep[]>(steps.map((s) => [s.name, []]));
  const dependents = new Map<string, LoadedStep[]>(steps.map((s) => [s.name, []]));
  for (const step of steps) {
    for (const need of new Set(step.needs)) {
      if (!known.has(need) || need === step.name) continue;
      const needed = spec.stepsByName.get(need)!;
      const [before, after] = mode === "apply" ? [needed, step] : [step, needed];
      deps.get(after.name)!.push(before);
      dependents.get(before.name)!.push(after);
    }
  }
  for (const list of deps.values()) list.sort((a, b) => a.index - b.index);

  const remaining = new Map<string, number>(steps.map((s) => [s.name, deps.get(s.name)!.length]));
  const resolved = new Map<string, Resolution>();
  const running = new Set<string>();
  /** Steps whose deps have all resolved, not yet resolved or started; kept in document order. */
  const ready: LoadedStep[] = steps.filter((s) => remaining.get(s.name) === 0);

  /** helm revisions made by the last attempt of each step, for post-apply hooks. */
  const revisions = new Map<string, number>();
  /** Each executed step's transient retries (engine/transient.ts), for its result. */
  const transients = new Map<string, TransientRetries>();
  let stopReason: string | undefined;
  let cancelled = false;
  let finished = false;

  return new Promise<Scheduled>((resolveRun) => {
    const onAbort = (): void => {
      if (!runAbort.signal.aborted) runAbort.abort(callerSignal?.reason);
      const leaseLost = journal?.leaseLost.aborted === true;
      cancelled ||= !leaseLost;
      stopReason ??= leaseLost ? LEASE_LOST_REASON : CANCELLED_REASON;
      pump();
    };

    const resolve = (step: LoadedStep, res: Resolution, executed: boolean): void => {
      resolved.set(step.name, res);
      emit({ type: "step-finished", result: res.result });
      if (executed) journal?.recordStep(step, res.result);
      else journal?.recordNotStarted(step, res.result.reason);
      for (const d of dependents.get(step.name)!) {
        const left = remaining.get(d.name)! - 1;
        remaining.set(d.name, left);
        if (left === 0) insertInOrder(ready, d);
      }
    };

    /** A resolution that needs no executor, or undefined when the step must run. */
    const instant = (step: LoadedStep): Resolution | undefined => {
      const blocker = deps
        .get(step.name)!
        .map((d) => [d, resolved.get(d.name)!] as const)
        .find(([, r]) => !r.satisfies);
      const root = blocker ? (blocker[1].rootFailure ?? blocker[0].name) : undefined;
      if (!step.included) {
        return {
          result: skippedResult(step, excludedReason(step, redact)),
          satisfies: blocker === undefined,
          ...(root !== undefined ? { rootFailure: root } : {}),
        };
      }
      if (blocker && root !== undefined) {
        return { result: skippedResult(step, blockedReason(mode, root, blocker[0].name)), satisfies: false, rootFailure: root };
      }
      if (mode === "apply" && journal?.isResumable(step)) {
        return { result: skippedResult(step, RESUME_REASON), satisfies: true };
      }
      return undefined;
    };

    const start = (step: LoadedStep): void => {
      running.add(step.name);
      emit({ type: "step-started", step: step.name, stepType: step.type });
      void execute(step).then((executed) => {
        running.delete(step.name);
        const retried = transients.get(step.name)?.count ?? 0;
        const result = retried > 0 ? { ...executed, transientRetries: retried } : executed;
        const failed = result.status === "failed";
        resolve(step, { result, satisfies: !failed, ...(failed ? { rootFailure: step.name } : {}) }, true);
        if (failed && step.onError === "fail") stopReason ??= notStartedReason(step.name);
        pump();
      });
    };

    const finish = (): void => {
      if (finished) return;
      finished = true;
      callerSignal?.removeEventListener("abort", onAbort);
      // Whatever never got to run, in document order.
      for (const step of steps) {
        if (resolved.has(step.name)) continue;
        const reason = !step.included
          ? excludedReason(step, redact)
          : (stopReason ?? "not started: its dependencies never resolved");
        resolve(step, { result: skippedResult(step, reason), satisfies: false }, false);
      }
      resolveRun({ byName: resolved, cancelled });
    };

    function pump(): void {
      if (finished) return;
      if (stopReason === undefined) {
        // Phase 1: everything decidable without an executor, to a fixpoint.
        let changed = true;
        while (changed) {
          changed = false;
          for (let i = 0; i < ready.length; ) {
            const step = ready[i]!;
            const res = instant(step);
            if (res) {
              ready.splice(i, 1);
              resolve(step, res, false);
              changed = true;
            } else i++;
          }
        }
        // Phase 2: start ready steps in document order, up to the cap.
        while (running.size < parallelism && ready.length > 0) start(ready.shift()!);
      }
      if (running.size === 0 && (stopReason !== undefined || ready.length === 0)) finish();
    }

    /** Runs the step's attempts, then tells its post-apply hooks how it ended. */
    async function execute(step: LoadedStep): Promise<StepResult> {
      const hooks = stepHooksFor(spec, step, mode, redactor);
      const result = await attempts(step, hooks);
      if (hooks === undefined || result.reason === CANCELLED_WHILE_RUNNING_REASON) return result;
      try {
        await hooks.afterStep(
          { status: result.status, reason: result.error ?? result.reason, revision: revisions.get(step.name) },
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

    async function attempts(step: LoadedStep, hooks: StepHooks | undefined): Promise<StepResult> {
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
      transients.set(step.name, transient);
      let lastError = "";
      for (let attempt = 1; attempt <= of; attempt++) {
        if (runSignal.aborted) return cancelledResult(attempt - 1);
        emit({ type: "attempt-started", step: step.name, attempt, of });
        try {
          const bounds = { timeoutMs: step.timeoutMs, runSignal, now, timeoutDetail: () => transient.lastErrorText };
          const outcome = await boundedAttempt(bounds, (signal, deadlineAt) => {
            const recordedAdditions = mode === "destroy" ? journal?.previousRecord?.steps[step.name]?.added : undefined;
            const extras = recordedAdditions !== undefined ? { ...opts.context, recordedAdditions } : opts.context;
            const ctx = makeStepContext({ spec, extras, signal, deadlineAt, now, log, redactor, hooks, record: journal?.stepRecord(step.name) });
            // Transient failures are retried within this attempt's deadline (engine/transient.ts).
            if (mode === "apply") return transient.run({ signal, deadlineAt }, () => executor.apply(step, ctx));
            // finalize: the teardown proceeds only once every before-teardown hook succeeded.
            return (hooks?.beforeTeardown({ signal, log: ctx.log }) ?? Promise.resolve()).then(() => transient.run({ signal, deadlineAt }, () => executor.destroy(step, ctx)));
          });
          const revision = (outcome as { revision?: unknown } | undefined)?.revision;
          if (typeof revision === "number") revisions.set(step.name, revision);
          const status = (outcome as { status?: unknown } | undefined)?.status === "skipped" ? "skipped" : "ok";
          const reason = redact(String((outcome as { reason?: unknown } | undefined)?.reason ?? ""));
          const added = (outcome as { added?: StepResult["added"] } | undefined)?.added;
          return { ...base, status, reason, attempts: attempt, durationMs: elapsed(), ...(added !== undefined && added.length > 0 ? { added } : {}) };
        } catch (e) {
          if (isCancelled(e)) {
            emit({ type: "attempt-failed", step: step.name, attempt, of, error: CANCELLED_REASON, willRetry: false, retryInMs: 0 });
            return cancelledResult(attempt);
          }
          lastError = errorText(e, redact);
          // A failure retrying cannot fix (a function's verdict, a hook's permanent error) ends the step.
          const willRetry = attempt < of && !runSignal.aborted && !isPermanent(e);
          const retryInMs = willRetry ? Math.max(0, step.retryDelayMs) : 0;
          emit({ type: "attempt-failed", step: step.name, attempt, of, error: lastError, willRetry, retryInMs });
          if (!willRetry) {
            if (attempt < of && runSignal.aborted) return cancelledResult(attempt);
            return { ...base, status: "failed", reason: failedReason(attempt), attempts: attempt, durationMs: elapsed(), error: lastError };
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

    if (callerSignal?.aborted) onAbort();
    else {
      callerSignal?.addEventListener("abort", onAbort, { once: true });
      pump();
    }
  });
}

function insertInOrder(list: LoadedStep[], step: LoadedStep): void {
  let i = list.length;
  while (i > 0 && list[i - 1]!.index > step.index) i--;
  list.splice(i, 0, step);
}
