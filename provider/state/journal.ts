/**
 * The journal: reads the record once at the start of a run, decides resume,
 * and writes the record incrementally — `running` at the start, after every
 * executed step, and the final status at the end.
 *
 * Writes are serialized and coalesced: at most one is in flight, and whatever
 * changed meanwhile goes out as one write of the latest state when it returns.
 * A resumed re-run of an unchanged spec therefore costs one read and a couple
 * of writes, whatever the number of steps.
 *
 * Which entries a run changes: only those of steps that executed in it (ok,
 * skipped by skipIf, failed — including a failure by cancellation while
 * running). Steps that did not execute — resumed, excluded by `when:`,
 * blocked by a failed dependency, not started after onError: fail, not
 * started after Ctrl-C — keep their previous entry: nothing happened to their
 * objects in this run, so a still-valid `ok` stays valid.
 *
 * Failure policy: a record that cannot be read (or belongs to someone else)
 * stops the run before it starts; a record that cannot be written does not
 * stop the run, but the run ends with a journalError (exit 1). Errors that
 * retrying cannot fix (RBAC) stop further write attempts.
 */
import { KhookError } from "../errors.js";
import type { LoadedSpec } from "../spec/loaded.js";
import { KHOOK_VERSION } from "../version.js";
import {
  beginRecord,
  entryFromOutcome,
  finishRecord,
  isResumable,
  markDestroying,
  parseRecord,
  serializeRecord,
  withEntry,
  type OutcomeInput,
  type Redacting,
  type RunIdentity,
  type StateRecord,
  type StepKey,
} from "./record.js";
import { PermanentStoreError, StoreError, type RecordStore } from "./store.js";

/** Bound on any one store call, so a hung API server cannot hang the end of a run. */
const STORE_CALL_TIMEOUT_MS = 30_000;

export interface JournalOptions {
  readonly spec: string;
  readonly specHash: string;
  /** The current spec's step names (stale entries are compacted only when the record grows too big). */
  readonly stepNames: Iterable<string>;
  readonly redactor: Redacting;
  readonly khookVersion?: string;
  readonly now?: () => Date;
  readonly storeCallTimeoutMs?: number;
}

export class Journal {
  private readonly id: RunIdentity;
  private readonly stepNames: ReadonlySet<string>;
  private readonly redactor: Redacting;
  private readonly now: () => Date;
  private readonly callTimeoutMs: number;

  private opened = false;
  private previous: StateRecord | undefined;
  private existed = false;
  private current: StateRecord | undefined;
  private closed = false;

  private dirty = false;
  private writing = false;
  private idle: (() => void)[] = [];
  private lastError: unknown;
  private permanentError: unknown;
  /** Store writes made by this journal; for tests and diagnostics. */
  writes = 0;
  /** Things worth telling people, e.g. an unreadable record that will be replaced. */
  readonly warnings: string[] = [];

  constructor(
    readonly store: RecordStore,
    opts: JournalOptions,
  ) {
    this.id = { spec: opts.spec, specHash: opts.specHash, khookVersion: opts.khookVersion ?? KHOOK_VERSION };
    this.stepNames = new Set(opts.stepNames);
    this.redactor = opts.redactor;
    this.now = opts.now ?? (() => new Date());
    this.callTimeoutMs = opts.storeCallTimeoutMs ?? STORE_CALL_TIMEOUT_MS;
  }

  static forSpec(spec: LoadedSpec, store: RecordStore, opts: Partial<JournalOptions> = {}): Journal {
    return new Journal(store, {
      spec: spec.name,
      specHash: spec.specHash,
      stepNames: spec.steps.map((s) => s.name),
      redactor: spec.redactor,
      ...opts,
    });
  }

  get description(): string {
    return this.store.description;
  }

  /** The record as read at the start of this run (undefined when there was none, or it was unreadable). */
  get previousRecord(): StateRecord | undefined {
    return this.previous;
  }

  /** Whether a record object existed when the run started. */
  get hadRecord(): boolean {
    return this.existed;
  }

  /** The record as this run will leave it (in memory; may be ahead of the cluster). */
  get currentRecord(): StateRecord | undefined {
    return this.current;
  }

  /**
   * One read, once. Throws a KhookError (execution) when the record cannot be
   * read or is not khook's — the run must not start then.
   */
  async open(): Promise<StateRecord | undefined> {
    if (this.opened) return this.previous;
    let stored;
    try {
      stored = await this.store.read(this.callSignal());
    } catch (e) {
      throw new KhookError("execution", storeErrorText("read", this.store, e));
    }
    this.opened = true;
    this.existed = stored !== undefined;
    if (stored?.json !== undefined) {
      const parsed = parseRecord(stored.json);
      if (parsed.ok) this.previous = parsed.record;
      else this.warnings.push(`the state record in ${this.store.description} is unreadable (${parsed.problem}); it will be replaced and every step re-runs`);
    }
    return this.previous;
  }

  /** The resume rule, against the record as read at the start. */
  isResumable(step: StepKey): boolean {
    return isResumable(this.previous, step);
  }

  /** Marks the record `running` (written in the background, coalesced with what follows). */
  beginRun(): void {
    this.current = beginRecord(this.previous, this.id, "apply", this.now());
    this.schedule();
  }

  /**
   * Starts a teardown: every step in `names` loses its `ok`, and that write
   * must land before anything is destroyed (throws a KhookError otherwise).
   * Without a record there is nothing to protect and nothing is written.
   */
  async beginDestroy(names: Iterable<string>): Promise<void> {
    if (!this.existed || this.previous === undefined) {
      if (this.existed) {
        // An unreadable record: replace it with one that resumes nothing.
        this.current = beginRecord(undefined, this.id, "destroy", this.now());
        this.schedule();
        const err = await this.flush();
        if (err !== undefined) throw new KhookError("execution", `${err}; nothing was destroyed`);
      }
      return;
    }
    this.current = markDestroying(beginRecord(this.previous, this.id, "destroy", this.now()), names, this.now());
    this.schedule();
    const err = await this.flush();
    if (err !== undefined) throw new KhookError("execution", `${err}; nothing was destroyed`);
  }

  /** Records a step that executed in this run (apply or destroy). */
  recordStep(step: StepKey, outcome: Omit<OutcomeInput, "inputHash">): void {
    if (this.current === undefined || this.closed) return;
    const now = this.now();
    const status =
      this.current.command === "destroy" ? (outcome.status === "failed" ? "destroy-failed" : "destroyed") : outcome.status;
    const entry = entryFromOutcome({ ...outcome, inputHash: step.inputHash }, this.redactor, now, status);
    this.current = withEntry(this.current, step.name, entry, now);
    this.schedule();
  }

  /**
   * Writes the final status and waits for every write to land. Returns the
   * error text when the record could not be written, else undefined.
   */
  async finish(status: "succeeded" | "failed" | "cancelled"): Promise<string | undefined> {
    if (this.current === undefined || this.closed) return this.flush();
    this.current = finishRecord(this.current, status, this.now());
    this.schedule();
    const err = await this.flush();
    this.closed = true;
    return err;
  }

  /**
   * Deletes the record (after a fully successful destroy). Waits for writes in
   * flight first, so none lands after the delete. Throws a KhookError.
   */
  async deleteRecord(): Promise<void> {
    this.closed = true;
    await this.flush();
    try {
      await this.store.delete(this.callSignal());
    } catch (e) {
      throw new KhookError("execution", storeErrorText("delete", this.store, e));
    }
    this.previous = undefined;
    this.current = undefined;
    this.existed = false;
  }

  /** A fresh read for `khook status` / Pulumi read. Unreadable records are an error here. */
  async readRecord(): Promise<StateRecord | undefined> {
    let stored;
    try {
      stored = await this.store.read(this.callSignal());
    } catch (e) {
      throw new KhookError("execution", storeErrorText("read", this.store, e));
    }
    if (stored?.json === undefined) return undefined;
    const parsed = parseRecord(stored.json);
    if (!parsed.ok) throw new KhookError("execution", `the state record in ${this.store.description} is unreadable: ${parsed.problem}`);
    return parsed.record;
  }

  /** Waits until no write is in flight or pending; returns the last write's error text, if any. */
  async flush(): Promise<string | undefined> {
    if (this.writing) await new Promise<void>((resolve) => this.idle.push(resolve));
    const err = this.permanentError ?? this.lastError;
    return err === undefined ? undefined : storeErrorText("write", this.store, err);
  }

  private schedule(): void {
    this.dirty = true;
    if (this.writing) return;
    this.writing = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.dirty && this.permanentError === undefined && this.current !== undefined) {
        this.dirty = false;
        const json = serializeRecord(this.current, this.stepNames);
        try {
          this.writes++;
          await this.store.write(json, this.callSignal());
          this.lastError = undefined;
        } catch (e) {
          this.lastError = e;
          if (e instanceof PermanentStoreError) this.permanentError = e;
        }
      }
    } finally {
      this.dirty = false;
      this.writing = false;
      const waiters = this.idle;
      this.idle = [];
      for (const w of waiters) w();
    }
  }

  private callSignal(): AbortSignal {
    return AbortSignal.timeout(this.callTimeoutMs);
  }
}

function storeErrorText(verb: "read" | "write" | "delete", store: RecordStore, e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  // Store errors that are already sentences for people carry their own context.
  if (e instanceof StoreError) return msg;
  return `cannot ${verb} the state record (${store.description}): ${msg}`;
}
