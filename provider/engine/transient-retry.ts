/**
 * Transient failures are retried inside the attempt, within the step's
 * deadline, without spending any of its `retries:`.
 *
 * Why here, around the executor call, and not in the HTTP client: one policy
 * for every step type, helm included (its failures come back as helm's text);
 * an executor re-run gathers its facts again, which a conflict on update, a
 * CRD that became Established or a refreshed discovery catalog need (a resent
 * request would not); and the deadline and the step's log lines are the
 * engine's. Executors are idempotent by contract (gather facts → decide →
 * act), so running one again after a refused request is what a person's
 * retry loop does, minus the guesswork. What counts as transient is
 * provider/kube/transient.ts's call.
 *
 * Backoff with jitter: the first retry within 250 ms, doubling, capped at 1 s
 * between the starts of two tries (each is one cheap request the API server
 * answers at once, or one helm run, so the run goes on within a second of the
 * cause clearing); a 429 keeps the server's pace. Said once: a line when khook starts waiting on a cause (and on each
 * new one), a line when it clears, and the last error when the deadline comes.
 */
import { formatDuration } from "../dsl/duration.js";
import { describeCause, transientCause, type TransientCause } from "../kube/transient.js";
import type { SleepFn } from "./run-types.js";

/** The first retry comes within this long. */
export const FIRST_RETRY_MS = 250;
/** No pause between tries is longer (unless the server asks for one with 429). */
export const MAX_RETRY_MS = 1000;

/** The pause before transient retry `n` (1-based): exponential from FIRST_RETRY_MS, capped, with jitter in its upper half. */
export function transientDelayMs(
  n: number,
  cause: Pick<TransientCause, "retryAfterMs">,
  random: () => number = Math.random,
): number {
  const base = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, n - 1));
  const jittered = Math.round(base * (0.5 + 0.5 * random()));
  return cause.retryAfterMs !== undefined ? Math.max(jittered, cause.retryAfterMs) : jittered;
}

/** `14:03:12`: the deadline, in the machine's local time, as people read a log line. */
export function clockTime(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 8);
}

/** The transient cause still failed when the step's deadline came: its last error, saying so. */
export class TransientDeadlineError extends Error {
  constructor(
    readonly lastError: unknown,
    readonly transient: TransientCause,
    retries: number,
    waitedMs: number,
  ) {
    const message = lastError instanceof Error ? lastError.message : String(lastError);
    const tries = `${retries} transient ${retries === 1 ? "retry" : "retries"}`;
    super(
      `${message} — still failing at the step's deadline after waiting ${formatDuration(waitedMs)} for ${describeCause(transient)} (${tries}); raise the step's timeout if it needs longer`,
    );
    this.name = "TransientDeadlineError";
  }
}

export interface TransientTry {
  readonly signal: AbortSignal;
  /** When the attempt's timer fires (epoch ms). */
  readonly deadlineAt: number;
}

/**
 * One step's transient retries, across its attempts: `count` is what the record keeps.
 */
export class TransientRetries {
  /** Transient retries made so far, over every attempt of the step. */
  count = 0;
  /** The last transient failure's text, for an attempt that times out mid-try. */
  lastErrorText: string | undefined;
  /** Between a transient failure and the end of the wait: the executor's lines are its tries'. */
  private retrying = false;
  /** The executor's lines in earlier tries of this wait, and in this one; digits blanked (`revision 3` and `revision 4` are one line). */
  private readonly earlier = new Set<string>();
  private readonly current = new Set<string>();

  constructor(
    private readonly io: {
      readonly now: () => number;
      readonly sleep: SleepFn;
      /** One line for people (already going to the step's log). */
      readonly log: (line: string) => void;
      readonly classify?: (e: unknown) => TransientCause | undefined;
      readonly random?: () => number;
    },
  ) {}

  /**
   * Whether an executor's progress line repeats one an earlier try of this wait already said
   * (`upgrading release x: revision 3 -> ...` once, not once per try). New lines, and a try's
   * own repeated progress lines, always pass.
   */
  repeats(line: string): boolean {
    const key = line.replace(/\d+/g, "#");
    this.current.add(key);
    return this.retrying && this.earlier.has(key);
  }

  /** Runs `work` until it succeeds, fails for a reason that is not transient, or the deadline comes. */
  async run<T>(at: TransientTry, work: () => Promise<T>): Promise<T> {
    try {
      return await this.tries(at, work);
    } finally {
      this.retrying = false;
    }
  }

  private async tries<T>(at: TransientTry, work: () => Promise<T>): Promise<T> {
    const classify = this.io.classify ?? transientCause;
    const announced = new Set<string>();
    let waitingSince: number | undefined;
    let current: TransientCause | undefined;
    let n = 0;
    for (;;) {
      const tryStartedAt = this.io.now();
      for (const key of this.current) this.earlier.add(key);
      this.current.clear();
      try {
        const out = await work();
        if (current !== undefined && waitingSince !== undefined) {
          const s = n === 1 ? "retry" : "retries";
          this.io.log(
            `${current.subject} cleared after ${formatDuration(this.io.now() - waitingSince)} (${n} transient ${s}); going on`,
          );
        }
        return out;
      } catch (e) {
        const cause = at.signal.aborted ? undefined : classify(e);
        if (cause === undefined) throw e;
        this.lastErrorText = e instanceof Error ? e.message : String(e);
        const now = this.io.now();
        waitingSince ??= now;
        current = cause;
        // The backoff spaces the starts of tries: a slow try (a helm process) waits less after it.
        const delay = Math.max(0, transientDelayMs(n + 1, cause, this.io.random) - (now - tryStartedAt));
        // No time left for another try before the timer: fail now with the error itself.
        if (now + delay >= at.deadlineAt) throw new TransientDeadlineError(e, cause, n, now - waitingSince);
        const line = describeCause(cause);
        if (!announced.has(line)) {
          announced.add(line);
          this.io.log(`waiting for ${line}; retrying until ${clockTime(at.deadlineAt)}`);
        }
        n++;
        this.count++;
        this.retrying = true;
        await this.io.sleep(delay, at.signal);
      }
    }
  }
}
