/**
 * The engine's public shapes: what a run is asked to do (RunOptions), what it
 * reports while it goes (RunEvent) and what it returns (RunResult). Nothing
 * here knows about terminals or Pulumi.
 */
import type { AddedObjectRef, ExecutorRegistry, StepContext } from "../steps/contract.js";
import type { StepBaseline } from "../state/record.js";
import type { Journal } from "../state/journal.js";
import type { Redactor } from "../redact.js";

export type RunMode = "apply" | "destroy";

/** Steps run (and assessed) at once unless `--parallelism` / the `parallelism` input says otherwise. */
export const DEFAULT_PARALLELISM = 8;

/**
 * The parts of a StepContext the engine does not make itself: the cluster
 * (`kube`), how subprocesses reach it (`connection`) and tool paths. Passed
 * through opaque.
 */
export type StepContextExtras = Omit<StepContext, "spec" | "signal" | "redactor" | "deadline" | "log" | "hooks">;

/** Sleeps `ms`, rejecting when `signal` aborts. Injectable so tests need no timed assertions. */
export type SleepFn = (ms: number, signal: AbortSignal) => Promise<void>;

export interface RunOptions {
  readonly mode: RunMode;
  readonly executors: ExecutorRegistry;
  /** Merged into every step's context (the cluster, tool paths). */
  readonly context: StepContextExtras;
  /** Max steps executing at once (default 8). Resumed and excluded steps take no slot. */
  readonly parallelism?: number;
  /**
   * The key of keyed step hashes when no record holds one (dsl/keyed-hash.ts): the Pulumi
   * resource keeps it in its state. With a journal, the journal's key wins.
   */
  readonly hashKey?: string;
  /** Ctrl-C: stop starting steps, abort running attempts, mark the rest skipped. */
  readonly signal?: AbortSignal;
  /** The state record; absent when the spec has no enabled `state:` block. */
  readonly journal?: Journal;
  readonly onEvent?: (e: RunEvent) => void;
  /**
   * The run's redactor, a child of the spec's (Redactor.child): what executors learn is secret is
   * added to it. Default: a new child. A session (provider/session.ts) passes its own, which also
   * masks the kubeconfig's credentials.
   */
  readonly redactor?: Redactor;
  /** Clock for durations (default Date.now). */
  readonly now?: () => number;
  /** Pause between attempts (default: an abortable timer). */
  readonly sleep?: SleepFn;
  /**
   * Steps left as they are, by name, with the reason their result carries (skipped, never run,
   * their record entries untouched; they satisfy the steps after them). Destroy: the Pulumi
   * resource that shares a record with another one leaves it the steps it applied with the same
   * inputs (pulumi/record-owner/). Apply: `apply --repair` leaves every step it does not repair.
   */
  readonly leave?: ReadonlyMap<string, string>;
  /**
   * Apply: steps to run although the record would resume them: the drifted steps a repair
   * re-runs (`apply --repair`, a Pulumi `up` after a live refresh). The record notes the repair.
   */
  readonly rerun?: ReadonlySet<string>;
  /**
   * The record's caller refuses the run before anything starts (a move of the record that cannot
   * be carried, state/moves.ts): every step is reported skipped with `not started: <why>`, and the
   * run fails with `message` as its journalError, as when the record cannot be claimed.
   */
  readonly refusal?: { readonly message: string; readonly why: string };
}

export type StepStatus = "ok" | "failed" | "skipped";

export interface StepResult {
  readonly name: string;
  /** The step kind. */
  readonly type: string;
  readonly status: StepStatus;
  /** Why, for people: the executor's reason, a skip reason, or `failed after N attempts`. Redacted. */
  readonly reason: string;
  /** Attempts made (0 when the step never ran). */
  readonly attempts: number;
  /**
   * Transient failures retried within the step's deadline (a webhook not serving yet, a CRD not
   * Established, 503s, conflicts: engine/transient-retry.ts), over all its attempts; absent when none.
   * They spend none of the step's `retries:`.
   */
  readonly transientRetries?: number;
  readonly durationMs: number;
  readonly inputHash: string;
  /** The last attempt's error, redacted. Only on `failed`. */
  readonly error?: string;
  /** Objects pre-apply webhooks added and the step applied (the record keeps them for destroy). */
  readonly added?: readonly AddedObjectRef[];
  /** What the record keeps of what the step made, for the drift check (StepOutcome.baseline). */
  readonly baseline?: StepBaseline;
}

export type RunStatus = "succeeded" | "failed" | "cancelled";

export interface RunResult {
  readonly mode: RunMode;
  readonly status: RunStatus;
  /** Same as `status === "cancelled"`. */
  readonly cancelled: boolean;
  /** Every step, in document order. */
  readonly steps: readonly StepResult[];
  readonly durationMs: number;
  /**
   * Set when the state record could not be read or written. A run with a
   * journalError never has status "succeeded": opting into state makes the
   * journal part of the contract (exit 1).
   */
  readonly journalError?: string;
}

export type RunEvent =
  | { readonly type: "run-started"; readonly spec: string; readonly mode: RunMode; readonly steps: number }
  | { readonly type: "step-started"; readonly step: string; readonly stepType: string }
  | { readonly type: "attempt-started"; readonly step: string; readonly attempt: number; readonly of: number }
  | {
      readonly type: "attempt-failed";
      readonly step: string;
      readonly attempt: number;
      readonly of: number;
      readonly error: string;
      readonly willRetry: boolean;
      /** The pause before the next attempt; 0 when there is none. */
      readonly retryInMs: number;
    }
  /** A progress line from an executor's `ctx.log`, already redacted. */
  | { readonly type: "step-log"; readonly step: string; readonly message: string }
  | { readonly type: "step-finished"; readonly result: StepResult }
  /** Something about the state record worth telling people, e.g. an unreadable record being replaced. */
  | { readonly type: "journal-warning"; readonly message: string }
  /** What a run did to the spec's other state records, in one line: one left for this run's, or removed (state/moves.ts). */
  | { readonly type: "journal-note"; readonly message: string }
  /** Something about the cluster worth telling once, e.g. an aggregated API that discovery could not read. */
  | { readonly type: "cluster-warning"; readonly message: string }
  | { readonly type: "run-finished"; readonly result: RunResult };
