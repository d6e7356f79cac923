/**
 * One bounded attempt: the executor gets an AbortSignal that fires on timeout
 * or cancellation, and the engine additionally races the executor's promise so
 * an executor that ignores its signal cannot hang the run.
 */
import type { Redactor } from "../redact.js";
import type { LoadedSpec, LoadedStep } from "../dsl/loaded.js";
import type { ExecutorRegistry, StepContext, StepExecutor } from "../steps/contract.js";
import { formatDuration } from "../dsl/duration.js";
import type { StepHooks } from "../hooks/step-hooks.js";
import type { StepRecord } from "../state/journal.js";
import type { StepContextExtras } from "./run-types.js";

/** setTimeout fires immediately above this; longer timeouts are clamped (24.8 days is "forever" here). */
const MAX_TIMER_MS = 2_147_483_647;

export class AttemptTimeoutError extends Error {
  /** `detail`: what the attempt was still failing on (its last transient error), when it was. */
  constructor(
    readonly timeoutMs: number,
    detail?: string,
  ) {
    super(
      `timed out after ${formatDuration(timeoutMs)}${detail !== undefined ? `; the last transient error: ${detail}` : ""}`,
    );
    this.name = "AttemptTimeoutError";
  }
}

export class CancelledError extends Error {
  constructor(message = "cancelled") {
    super(message);
    this.name = "CancelledError";
  }
}

export function isCancelled(e: unknown): e is CancelledError {
  return e instanceof CancelledError;
}

export interface AttemptBounds {
  readonly timeoutMs: number;
  /** The run's signal (Ctrl-C). */
  readonly runSignal: AbortSignal;
  readonly now: () => number;
  /** Read when the timer fires: the transient error the attempt was retrying, if any (engine/transient-retry.ts). */
  readonly timeoutDetail?: () => string | undefined;
}

/**
 * Runs `work` with a fresh AbortSignal. Rejects with AttemptTimeoutError after
 * `timeoutMs`, with CancelledError when the run signal aborts — immediately,
 * whether or not `work` honours its signal (its late settlement is swallowed).
 */
export async function boundedAttempt<T>(
  bounds: AttemptBounds,
  work: (signal: AbortSignal, deadlineAt: number) => Promise<T>,
): Promise<T> {
  if (bounds.runSignal.aborted) throw new CancelledError();
  const ctl = new AbortController();
  const timeoutMs = Math.max(0, Math.min(bounds.timeoutMs, MAX_TIMER_MS));
  const deadlineAt = bounds.now() + timeoutMs;
  let fail!: (e: Error) => void;
  const stopped = new Promise<never>((_, reject) => {
    fail = reject;
  });
  stopped.catch(() => undefined);
  // Settle the race first, then abort: the engine's reason wins over whatever
  // the executor rejects with in reaction to the abort.
  const stop = (e: Error): void => {
    fail(e);
    ctl.abort(e);
  };
  const onRunAbort = (): void => stop(new CancelledError());
  bounds.runSignal.addEventListener("abort", onRunAbort, { once: true });
  const timer = setTimeout(() => stop(new AttemptTimeoutError(bounds.timeoutMs, bounds.timeoutDetail?.())), timeoutMs);
  try {
    const running = Promise.resolve().then(() => work(ctl.signal, deadlineAt));
    running.catch(() => undefined);
    return await Promise.race([running, stopped]);
  } catch (err) {
    if (ctl.signal.aborted && ctl.signal.reason instanceof Error) throw ctl.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    bounds.runSignal.removeEventListener("abort", onRunAbort);
  }
}

/** The executor of a step's kind (the registry holds one per kind, each for its own kind's steps). */
export function executorFor(registry: ExecutorRegistry, step: LoadedStep): StepExecutor {
  const executor = registry[step.type];
  if (executor === undefined) throw new Error(`khook: no executor for ${step.type} steps`);
  return executor;
}

/** The context an executor sees for one attempt (or one assess call). */
export function makeStepContext(args: {
  spec: LoadedSpec;
  extras: StepContextExtras;
  signal: AbortSignal;
  deadlineAt: number;
  now: () => number;
  log: (message: string) => void;
  /** The run's redactor: a child of the spec's (Redactor.child), so what an executor adds stays in the run. */
  redactor: Redactor;
  /** The step's hooks (stepHooksFor), bound to this attempt's signal and log. */
  hooks?: StepHooks | undefined;
  /** The step's view of the state record (Journal.stepRecord), when there is one. */
  record?: StepRecord | undefined;
}): StepContext {
  const { spec, extras, signal, deadlineAt, now, log, redactor } = args;
  const redactedLog = (message: string): void => log(redactor.redact(String(message)));
  const ctx = {
    ...extras,
    ...(args.hooks !== undefined
      ? {
          hooks: args.hooks.bind({
            signal,
            log: redactedLog,
            isNamespaced: (apiVersion, kind) => namespacedKind(extras, apiVersion, kind, signal),
          }),
        }
      : {}),
    ...(args.record !== undefined ? { record: args.record } : {}),
    spec,
    signal,
    redactor,
    /** Milliseconds left in this attempt, read live. */
    get deadline(): number {
      return Math.max(0, deadlineAt - now());
    },
    log: redactedLog,
  };
  return ctx as StepContext;
}

/** Error text for people, redacted. */
export function errorText(e: unknown, redact: (s: string) => string): string {
  let text: string;
  if (e instanceof Error) text = e.message || e.name;
  else if (typeof e === "string") text = e;
  else {
    try {
      text = JSON.stringify(e) ?? String(e);
    } catch {
      text = String(e);
    }
  }
  return redact(text);
}

/** Discovery's scope of `kind`, for hooks that judge what a webhook added; undefined when the cluster does not serve it. */
async function namespacedKind(
  extras: StepContextExtras,
  apiVersion: string,
  kind: string,
  signal: AbortSignal,
): Promise<boolean | undefined> {
  try {
    return (await extras.kube.resolveKind(apiVersion, kind, { signal })).namespaced;
  } catch {
    return undefined;
  }
}
