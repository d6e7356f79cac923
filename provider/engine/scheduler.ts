/**
 * The run's scheduling state and its transitions, with no I/O: which steps are
 * ready, which run, which resolved and how, and when the run is over. The
 * engine (run.ts) drives it: it asks `advance()` what to resolve and what to
 * start, executes the started steps, reports each end with `complete()`, and
 * once `done` asks `finish()` for the steps that never got to run.
 *
 * - A step becomes ready the moment every step before it in this mode's
 *   direction (apply: its needs; destroy: the steps that need it) has resolved.
 * - A ready step resolves without running when it is excluded by `when:`,
 *   blocked by a failed dependency, or (apply) resumable from the state record.
 * - Ready steps start in document order while a slot is free (BoundedConcurrency).
 * - `stop(reason)` starts nothing more: running steps finish, the rest are
 *   reported skipped with the reason.
 *
 * Also here: the bounded concurrency the run's steps and the planner's assess
 * calls share (one rule for what `parallelism` means).
 */
import type { LoadedSpec, LoadedStep } from "../dsl/loaded.js";
import { blockedReason, excludedReason, notStartedReason, RESUME_REASON } from "./reasons.js";
import { DEFAULT_PARALLELISM, type RunMode, type StepResult } from "./run-types.js";

// ---------------------------------------------------------------- bounded concurrency

/**
 * At most `limit` pieces of work at once: the one meaning of `parallelism`. The
 * scheduler takes a slot for each step it starts and gives it back when the
 * step completes; the planner runs its assess calls through `forEach`.
 */
export class BoundedConcurrency {
  /** The `parallelism` option as a count of slots: default DEFAULT_PARALLELISM, at least 1, whole. */
  readonly limit: number;
  private taken = 0;

  constructor(parallelism: number | undefined) {
    this.limit = Math.max(1, Math.floor(parallelism ?? DEFAULT_PARALLELISM));
  }

  /** Slots in use. */
  get inUse(): number {
    return this.taken;
  }

  /** Takes a slot when one is free. */
  tryTake(): boolean {
    if (this.taken >= this.limit) return false;
    this.taken++;
    return true;
  }

  release(): void {
    if (this.taken === 0) throw new Error("BoundedConcurrency.release without a slot taken");
    this.taken--;
  }

  /**
   * Runs `work` over `items` in order, at most `limit` at once, and settles once
   * all have. `work` should not reject: a rejection stops starting more items,
   * and the first one is rethrown once the running ones have settled.
   */
  forEach<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    let failure: { error: unknown } | undefined;
    return new Promise<void>((resolve, reject) => {
      const settled = (): void => {
        this.release();
        pump();
      };
      const pump = (): void => {
        while (failure === undefined && next < items.length && this.tryTake()) {
          const item = items[next++]!;
          Promise.resolve()
            .then(() => work(item))
            .then(settled, (error: unknown) => {
              failure ??= { error };
              settled();
            });
        }
        if (this.taken > 0) return;
        if (failure !== undefined) reject(failure.error as Error);
        else resolve();
      };
      pump();
    });
  }
}

// ---------------------------------------------------------------- the scheduler

/** How a step resolved, and what that means for the steps waiting on it. */
export interface Resolution {
  readonly result: StepResult;
  /** Whether it satisfies its dependents (apply: needs; destroy: the steps it needs). */
  readonly satisfies: boolean;
  /** The failed step at the root of a block. */
  readonly rootFailure?: string;
}

/** One transition's output: a step resolved, and whether it ran (the journal records the two differently). */
export interface Resolved {
  readonly step: LoadedStep;
  readonly resolution: Resolution;
  readonly executed: boolean;
}

export interface SchedulerOptions {
  readonly mode: RunMode;
  /** Steps running at once (BoundedConcurrency's rule). */
  readonly parallelism?: number;
  /** Apply: whether the state record lets the step resume without running. */
  readonly isResumable?: (step: LoadedStep) => boolean;
  /** Steps to leave as they are, by name, with the reason (RunOptions.leave). */
  readonly leave?: ReadonlyMap<string, string>;
  /** Masks secrets in the reasons the scheduler writes (a `when:` expression may hold one). */
  readonly redact: (s: string) => string;
}

/** What `advance` decided: steps resolved without running (in the order they resolved), then steps to start. */
export interface Advance {
  readonly resolved: readonly Resolved[];
  readonly started: readonly LoadedStep[];
}

export class Scheduler {
  private readonly steps: readonly LoadedStep[];
  /** The DAG in this mode's direction: `deps` must resolve before a step; `dependents` wait on it. */
  private readonly deps = new Map<string, LoadedStep[]>();
  private readonly dependents = new Map<string, LoadedStep[]>();
  private readonly remaining = new Map<string, number>();
  private readonly resolutions = new Map<string, Resolution>();
  /** Steps whose deps have all resolved, not yet resolved or started; kept in document order. */
  private readonly ready: LoadedStep[];
  private readonly slots: BoundedConcurrency;
  private stopReason: string | undefined;
  private finished = false;

  constructor(
    spec: Pick<LoadedSpec, "steps" | "stepsByName">,
    private readonly opts: SchedulerOptions,
  ) {
    this.steps = spec.steps;
    this.slots = new BoundedConcurrency(opts.parallelism);
    const known = new Set(this.steps.map((s) => s.name));
    for (const s of this.steps) {
      this.deps.set(s.name, []);
      this.dependents.set(s.name, []);
    }
    for (const step of this.steps) {
      for (const need of new Set(step.needs)) {
        if (!known.has(need) || need === step.name) continue;
        const needed = spec.stepsByName.get(need)!;
        const [before, after] = opts.mode === "apply" ? [needed, step] : [step, needed];
        this.deps.get(after.name)!.push(before);
        this.dependents.get(before.name)!.push(after);
      }
    }
    for (const list of this.deps.values()) list.sort((a, b) => a.index - b.index);
    for (const s of this.steps) this.remaining.set(s.name, this.deps.get(s.name)!.length);
    this.ready = this.steps.filter((s) => this.remaining.get(s.name) === 0);
  }

  /** How each step resolved so far. */
  get byName(): ReadonlyMap<string, Resolution> {
    return this.resolutions;
  }

  /** Steps running now. */
  get running(): number {
    return this.slots.inUse;
  }

  /** Whether stop() was called (a failure under onError: fail, or cancellation). */
  get stopped(): boolean {
    return this.stopReason !== undefined;
  }

  /** Nothing runs and nothing more will start: call finish(). */
  get done(): boolean {
    return this.slots.inUse === 0 && (this.stopReason !== undefined || this.ready.length === 0);
  }

  /**
   * Resolves every ready step that needs no executor, to a fixpoint, then
   * takes ready steps in document order while a slot is free and marks them
   * running. After stop(), nothing.
   */
  advance(): Advance {
    const resolved: Resolved[] = [];
    const started: LoadedStep[] = [];
    if (this.finished || this.stopReason !== undefined) return { resolved, started };
    let changed = true;
    while (changed) {
      changed = false;
      for (let i = 0; i < this.ready.length;) {
        const step = this.ready[i]!;
        const resolution = this.resolutionWithoutRunning(step);
        if (resolution) {
          this.ready.splice(i, 1);
          resolved.push(this.resolve(step, resolution, false));
          changed = true;
        } else i++;
      }
    }
    while (this.ready.length > 0 && this.slots.tryTake()) started.push(this.ready.shift()!);
    return { resolved, started };
  }

  /** A running step ended with `result`. A failure blocks its dependents; under `onError: fail` it stops the run. */
  complete(step: LoadedStep, result: StepResult): Resolved {
    this.slots.release();
    const failed = result.status === "failed";
    const resolved = this.resolve(
      step,
      { result, satisfies: !failed, ...(failed ? { rootFailure: step.name } : {}) },
      true,
    );
    if (failed && step.onError === "fail") this.stop(notStartedReason(step.name));
    return resolved;
  }

  /** Starts nothing more; the first reason given is the one the unstarted steps report. */
  stop(reason: string): void {
    this.stopReason ??= reason;
  }

  /** Once `done`: every step not yet resolved, skipped with why, in document order. Only the first call returns any. */
  finish(): Resolved[] {
    if (this.finished) return [];
    this.finished = true;
    const out: Resolved[] = [];
    for (const step of this.steps) {
      if (this.resolutions.has(step.name)) continue;
      const reason = !step.whenHolds
        ? excludedReason(step, this.opts.redact)
        : (this.stopReason ?? "not started: its dependencies never resolved");
      out.push(this.resolve(step, { result: skippedResult(step, reason), satisfies: false }, false));
    }
    return out;
  }

  private resolve(step: LoadedStep, resolution: Resolution, executed: boolean): Resolved {
    this.resolutions.set(step.name, resolution);
    for (const d of this.dependents.get(step.name)!) {
      const left = this.remaining.get(d.name)! - 1;
      this.remaining.set(d.name, left);
      if (left === 0) insertInOrder(this.ready, d);
    }
    return { step, resolution, executed };
  }

  /** A resolution that needs no executor, or undefined when the step must run. */
  private resolutionWithoutRunning(step: LoadedStep): Resolution | undefined {
    // Apply: a step left as it is (a repair leaves every step it does not re-run) resolves first, whatever its record says.
    const kept = this.opts.mode === "apply" ? this.opts.leave?.get(step.name) : undefined;
    if (kept !== undefined) return { result: skippedResult(step, this.opts.redact(kept)), satisfies: true };
    const blocker = this.deps
      .get(step.name)!
      .map((d) => [d, this.resolutions.get(d.name)!] as const)
      .find(([, r]) => !r.satisfies);
    const root = blocker ? (blocker[1].rootFailure ?? blocker[0].name) : undefined;
    if (!step.whenHolds) {
      return {
        result: skippedResult(step, excludedReason(step, this.opts.redact)),
        satisfies: blocker === undefined,
        ...(root !== undefined ? { rootFailure: root } : {}),
      };
    }
    if (blocker && root !== undefined) {
      return {
        result: skippedResult(step, blockedReason(this.opts.mode, root, blocker[0].name)),
        satisfies: false,
        rootFailure: root,
      };
    }
    if (this.opts.mode === "apply" && this.opts.isResumable?.(step) === true) {
      return { result: skippedResult(step, RESUME_REASON), satisfies: true };
    }
    const left = this.opts.mode === "destroy" ? this.opts.leave?.get(step.name) : undefined;
    if (left !== undefined) return { result: skippedResult(step, this.opts.redact(left)), satisfies: true };
    return undefined;
  }
}

export function skippedResult(step: LoadedStep, reason: string): StepResult {
  return {
    name: step.name,
    type: step.type,
    status: "skipped",
    reason,
    attempts: 0,
    durationMs: 0,
    inputHash: step.inputHash,
  };
}

function insertInOrder(list: LoadedStep[], step: LoadedStep): void {
  let i = list.length;
  while (i > 0 && list[i - 1]!.index > step.index) i--;
  list.splice(i, 0, step);
}
