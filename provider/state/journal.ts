/**
 * A run's journal: reads the record once at the start, decides resume, and writes the record as
 * the run goes (`running`, every executed step, the final status), holding the record's lease
 * meanwhile so that two runs never write one record. Writes are coalesced and conditional: see
 * README.md for the discipline and the failure policy.
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import { KhookError } from "../errors.js";
import type { LoadedSpec } from "../dsl/loaded.js";
import { KHOOK_VERSION } from "../version.js";
import { newHashKey } from "../dsl/keyed-hash.js";
import {
  beginRecord,
  entryFromOutcome,
  mergeAdded,
  finishRecord,
  isResumable,
  markDestroying,
  parseRecord,
  serializeRecord,
  helmInFlightOf,
  withEntry,
  withHelmInFlight,
  withLease,
  type InFlightHelm,
  type OutcomeInput,
  type Redacting,
  type OwnerData,
  type TakeUp,
  type RunIdentity,
  type StateRecord,
  type StepKey,
} from "./record.js";
import {
  assessLease,
  LEASE_DURATION_MS,
  LEASE_RENEW_INTERVAL_MS,
  leaseHeldMessage,
  leaseLostMessage,
  leaseTakenOverWarning,
  newLease,
  renewLease,
  samePidSpace,
  type IsAlive,
  type Lease,
  type LeaseSelf,
} from "./lease.js";
import { currentPidSpace, pidAlive } from "./process-identity.js";
import {
  MAX_CONFLICTS,
  PermanentStoreError,
  RecordConflictError,
  storeErrorText,
  type RecordStore,
  type StoredRecord,
} from "./store.js";

/** Bound on any one store call, so a hung API server cannot hang the end of a run. */
const STORE_CALL_TIMEOUT_MS = 30_000;

/** This run lost the lease: nothing it writes may land any more. */
export class LeaseLostError extends PermanentStoreError {
  constructor(message: string) {
    super(message);
    this.name = "LeaseLostError";
  }
}

export interface JournalOptions {
  /** The key of keyed step hashes the caller keeps (the Pulumi resource's); it wins over the record's. */
  hashKey?: string;
  readonly spec: string;
  readonly specHash: string;
  /** The current spec's step names (stale entries are compacted only when the record grows too big). */
  readonly stepNames: Iterable<string>;
  readonly redactor: Redacting;
  readonly khookVersion?: string;
  readonly now?: () => Date;
  readonly storeCallTimeoutMs?: number;
  /** Who this run is, for the lease (default: this process, a fresh id). */
  readonly self?: LeaseSelf;
  /** Whether a lease holder's pid in this pid namespace still runs (default: signal 0 and its start time). */
  readonly isAlive?: IsAlive;
  readonly leaseDurationMs?: number;
  readonly renewIntervalMs?: number;
  /** The command that clears the lease by hand, quoted in the message of a second run. */
  readonly unlockCommand?: string;
  /** The owner a shell stamps on the record with this run (the Pulumi resource's); without one the recorded owner is kept. */
  readonly owner?: OwnerData;
  /**
   * The records the spec journaled on before this one (StateRecord.movedFrom). Given (or with an
   * owner), the run takes the record up: it is the spec's current record again. Without either, the
   * record's owner and moves are kept as they are.
   */
  readonly movedFrom?: readonly string[];
}

/** This process as a lease holder; each journal gets its own id. */
export function currentRun(): LeaseSelf {
  let holder = process.env["USER"] ?? "unknown user";
  try {
    holder = os.userInfo().username;
  } catch {
    // No passwd entry (e.g. an arbitrary uid in a container): keep $USER.
  }
  return { id: randomUUID(), holder, host: os.hostname(), pid: process.pid, ...currentPidSpace() };
}

export { pidAlive };

/**
 * What one step of this run sees of the record: the helm a previous run left in flight for it,
 * and how to record the helm it starts itself (StateRecord.helmInFlight).
 */
export interface StepRecord {
  /** This run, as its lease names it. */
  readonly run: { readonly id: string; readonly host: string; readonly pid: number };
  /** The helm a previous run recorded for this step and did not live to clear, with how that run ended as far as this run knows. */
  previousHelm():
    { readonly mark: InFlightHelm; readonly runEnded: "lease-expired" | "process-gone" | undefined } | undefined;
  /** Records that this step started helm; resolves once the write landed or failed (a failure is the run's journalError). */
  helmStarted(mark: Omit<InFlightHelm, "run">): Promise<void>;
}

export class Journal {
  private id: RunIdentity;
  private readonly givenHashKey: string | undefined;
  private readonly stepNames: ReadonlySet<string>;
  private readonly redactor: Redacting;
  private readonly now: () => Date;
  private readonly callTimeoutMs: number;
  private readonly self: LeaseSelf;
  private readonly isAlive: IsAlive;
  private readonly leaseDurationMs: number;
  private readonly renewIntervalMs: number;
  private readonly unlockCommand: string;
  /** What this run stamps when it takes the record up; undefined keeps the record's owner and moves. */
  private takeUp: TakeUp | undefined;

  private opened = false;
  /** Why the record could not be read, once it could not (see open). */
  private openFailure: KhookError | undefined;
  private previous: StateRecord | undefined;
  private existed = false;
  private current: StateRecord | undefined;
  private closed = false;
  /** The version of the record as last read or written (undefined: there is none). */
  private version: string | undefined;
  /** Steps that executed in this run: what survives the record being deleted under us. */
  private readonly executed = new Set<string>();
  private renewTimer: NodeJS.Timeout | undefined;
  private deletedWarned = false;
  private readonly lost = new AbortController();
  private watching: AbortController | undefined;
  /** The run whose lease this run took over when it claimed the record, and why it could. */
  private takenOver: { id: string; kind: "expired" | "abandoned" } | undefined;

  private dirty = false;
  private writing = false;
  private idle: (() => void)[] = [];
  private lastError: unknown;
  private permanentError: unknown;
  /** Store writes made by this journal; for tests and diagnostics. */
  writes = 0;
  /** Things worth telling people, e.g. an unreadable record that will be replaced. */
  readonly warnings: string[] = [];
  private warningsTaken = 0;

  constructor(
    readonly store: RecordStore,
    opts: JournalOptions,
  ) {
    this.id = { spec: opts.spec, specHash: opts.specHash, khookVersion: opts.khookVersion ?? KHOOK_VERSION };
    this.stepNames = new Set(opts.stepNames);
    this.redactor = opts.redactor;
    this.now = opts.now ?? (() => new Date());
    this.callTimeoutMs = opts.storeCallTimeoutMs ?? STORE_CALL_TIMEOUT_MS;
    this.takeUp =
      opts.owner !== undefined || opts.movedFrom !== undefined
        ? { ...(opts.owner !== undefined ? { owner: opts.owner } : {}), movedFrom: opts.movedFrom ?? [] }
        : undefined;
    this.self = opts.self ?? currentRun();
    this.isAlive = opts.isAlive ?? pidAlive;
    this.leaseDurationMs = opts.leaseDurationMs ?? LEASE_DURATION_MS;
    this.renewIntervalMs = opts.renewIntervalMs ?? LEASE_RENEW_INTERVAL_MS;
    this.unlockCommand = opts.unlockCommand ?? "khook unlock -f <the spec file>";
    this.givenHashKey = opts.hashKey;
  }

  /** The warnings not yet handed out (each is handed out once). */
  takeWarnings(): string[] {
    const fresh = this.warnings.slice(this.warningsTaken);
    this.warningsTaken = this.warnings.length;
    return fresh;
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

  /** The record as read at the start of this run (undefined when there was none, or it was unreadable): destroy reads what webhooks added. */
  get previousRecord(): StateRecord | undefined {
    return this.previous;
  }

  /**
   * Aborts, with the LeaseLostError as its reason, when another run took this run's lease or
   * `khook unlock` cleared it: the engine then starts nothing more (see the header).
   */
  get leaseLost(): AbortSignal {
    return this.lost.signal;
  }

  /** Whether a record object existed when the run started. */
  get hadRecord(): boolean {
    return this.existed;
  }

  /**
   * One read, once. Throws a KhookError (execution) when the record cannot be
   * read or is not khook's: the run must not start then.
   */
  async open(): Promise<StateRecord | undefined> {
    if (this.opened) return this.previous;
    // A read that failed is this run's answer: the run reports it without asking again (a server
    // that does not answer would cost a second connection's bound).
    if (this.openFailure !== undefined) throw this.openFailure;
    let stored;
    try {
      stored = await this.store.read(this.callSignal());
    } catch (e) {
      throw (this.openFailure = new KhookError("execution", storeErrorText("read", this.store, e)));
    }
    this.opened = true;
    this.existed = stored !== undefined;
    this.adopt(stored, true);
    return this.previous;
  }

  /** Takes a (re-)read as the record this run starts from. */
  private adopt(stored: StoredRecord | undefined, warn: boolean): void {
    this.version = stored?.version;
    this.previous = undefined;
    if (stored?.json === undefined) return;
    const parsed = parseRecord(stored.json);
    if (parsed.ok) this.previous = parsed.record;
    else if (warn)
      this.warnings.push(
        `the state record in ${this.store.description} is unreadable (${parsed.problem}); it will be replaced and every step re-runs`,
      );
  }

  /**
   * The key of keyed step hashes (dsl/keyed-hash.ts): the one the caller keeps (the Pulumi
   * resource's: its state is what its next diff compares against), else the record's, else
   * a new one. Every record this journal writes from now on carries it. Call after `open`, and only
   * for a spec that has keyed steps: a record of a spec without secrets gets no key.
   */
  hashKey(): string {
    if (this.id.hashKey === undefined)
      this.id = { ...this.id, hashKey: this.givenHashKey ?? this.previous?.hashKey ?? newHashKey() };
    return this.id.hashKey!;
  }

  /**
   * This run takes the record up with `movedFrom` (JournalOptions.movedFrom), once its caller has
   * seen the record `open` read: a record the spec left, or one a move starts on. Before beginRun.
   */
  moveHere(movedFrom: readonly string[]): void {
    this.takeUp = { ...(this.takeUp?.owner !== undefined ? { owner: this.takeUp.owner } : {}), movedFrom };
  }

  /** The resume rule, against the record as read at the start. */
  isResumable(step: StepKey): boolean {
    return isResumable(this.previous, step);
  }

  /**
   * Claims the lease and marks the record `running`, before anything runs.
   * Throws a KhookError naming the holder when another live run holds it.
   *
   * `repairs` names the drifted steps this run re-runs (`apply --repair`): the record notes them.
   *
   * When no step will execute (every step resumes), there is nothing to guard: no claim, and
   * the final write is the only one, conditional on the version read; a resumed re-run reads
   * the record once and writes it once. A lease another live run holds still stops it.
   */
  async beginRun(
    opts: { stepsToExecute: boolean; repairs?: readonly string[] } = { stepsToExecute: true },
  ): Promise<void> {
    const repairs = opts.repairs;
    if (!opts.stepsToExecute) {
      const assessment = assessLease(this.previous?.lease, this.self, this.now(), this.isAlive);
      if (assessment.kind === "held")
        throw new KhookError(
          "execution",
          leaseHeldMessage(assessment.lease, this.store.description, this.unlockCommand),
        );
      this.current = beginRecord(this.previous, this.id, "apply", this.now(), this.takeUp, repairs);
      return;
    }
    await this.claim("apply", (previous) => beginRecord(previous, this.id, "apply", this.now(), this.takeUp, repairs));
  }

  /**
   * One conditional write of `build(previous)` with this run's lease. A
   * conflict (another run claimed or wrote meanwhile) re-reads and decides
   * again. A write that fails otherwise (RBAC, the network) does not stop
   * the run: it ends with a journalError, as any unwritable record does.
   */
  private async claim(
    command: Lease["command"],
    build: (previous: StateRecord | undefined) => StateRecord,
  ): Promise<void> {
    for (let i = 0; i < MAX_CONFLICTS; i++) {
      const now = this.now();
      const assessment = assessLease(this.previous?.lease, this.self, now, this.isAlive);
      if (assessment.kind === "held") {
        throw new KhookError(
          "execution",
          leaseHeldMessage(assessment.lease, this.store.description, this.unlockCommand),
        );
      }
      this.current = withLease(build(this.previous), newLease(this.self, command, now, this.leaseDurationMs));
      // The claim is a write like any other: none may run beside it.
      this.writing = true;
      try {
        this.writes++;
        this.version = await this.store.write(
          serializeRecord(this.current, this.stepNames),
          this.version,
          this.callSignal(),
        );
        this.existed = true;
      } catch (e) {
        if (e instanceof RecordConflictError) {
          this.writing = false;
          await this.reread();
          continue;
        }
        // No lease, no run: a run that could not claim the record must not change the cluster unguarded.
        this.writing = false;
        this.wakeIdle();
        this.current = undefined;
        const text = storeErrorText("write", this.store, e);
        throw new KhookError(
          "execution",
          command === "destroy"
            ? `${text}; nothing was destroyed`
            : `${text}. Nothing was changed: khook claims the state record before the first step.`,
        );
      }
      this.writing = false;
      if (assessment.kind === "expired" || assessment.kind === "abandoned") {
        this.takenOver = { id: assessment.lease.id, kind: assessment.kind };
        this.warnings.push(leaseTakenOverWarning(assessment, this.store.description));
      }
      this.startRenewing();
      this.startWatching();
      if (this.dirty) this.schedule();
      else this.wakeIdle();
      return;
    }
    throw new KhookError(
      "execution",
      `could not claim the lease on the state record (${this.store.description}): it changed ${MAX_CONFLICTS} times in a row while khook tried; is another khook run starting? Nothing was changed.`,
    );
  }

  private async reread(): Promise<void> {
    let stored;
    try {
      stored = await this.store.read(this.callSignal());
    } catch (e) {
      throw new KhookError("execution", storeErrorText("read", this.store, e));
    }
    this.existed = stored !== undefined;
    this.adopt(stored, false);
  }

  /**
   * Learns at once that another run took the lease or `khook unlock` cleared it (a watch on the
   * record, where the store has one), so the engine stops starting steps now, not at the next write.
   */
  private startWatching(): void {
    if (this.store.watch === undefined || this.watching !== undefined) return;
    this.watching = new AbortController();
    this.store.watch((json) => {
      if (this.closed || this.permanentError !== undefined) return;
      const parsed = parseRecord(json);
      if (!parsed.ok) return;
      const lease = parsed.record.lease;
      if (lease?.id === this.self.id) return;
      this.loseLease(lease);
    }, this.watching.signal);
  }

  private stopWatching(): void {
    this.watching?.abort();
  }

  /** This run may write the record no more: it stops renewing and writing, and tells the engine. */
  private loseLease(holder: Lease | undefined): LeaseLostError {
    this.stopRenewing();
    this.stopWatching();
    const lost = new LeaseLostError(leaseLostMessage(holder, this.store.description));
    this.permanentError ??= lost;
    this.lost.abort(lost);
    return lost;
  }

  private startRenewing(): void {
    if (this.renewTimer !== undefined || this.permanentError !== undefined) return;
    // Every write renews the lease; the timer covers long steps with no write.
    this.renewTimer = setInterval(() => {
      if (!this.closed && this.current?.lease !== undefined) this.schedule();
    }, this.renewIntervalMs);
    this.renewTimer.unref();
  }

  private stopRenewing(): void {
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
    this.stopWatching();
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
        await this.claim("destroy", () => beginRecord(undefined, this.id, "destroy", this.now()));
        const err = await this.flush();
        if (err !== undefined) throw new KhookError("execution", `${err}; nothing was destroyed`);
      }
      return;
    }
    await this.claim("destroy", (previous) =>
      markDestroying(beginRecord(previous, this.id, "destroy", this.now()), names, this.now()),
    );
    const err = await this.flush();
    if (err !== undefined) throw new KhookError("execution", `${err}; nothing was destroyed`);
  }

  /** Records a step that executed in this run (apply or destroy); the helm it had in flight is done with. */
  recordStep(step: StepKey, outcome: Omit<OutcomeInput, "inputHash">): void {
    if (this.current === undefined || this.closed) return;
    this.current = withHelmInFlight(this.current, step.name, undefined);
    this.writeEntry(step, outcome);
  }

  /**
   * Records a step that never started in this apply (see the header); a still-resumable entry is kept,
   * and so is a helm a dead run left in flight for it (the next run that gets to the step needs it).
   */
  recordNotStarted(step: StepKey, reason: string): void {
    if (this.current?.command !== "apply" || this.isResumable(step)) return;
    this.writeEntry(step, { status: "skipped", reason, attempts: 0, durationMs: 0 });
  }

  private writeEntry(step: StepKey, outcome: Omit<OutcomeInput, "inputHash">): void {
    if (this.current === undefined || this.closed) return;
    const now = this.now();
    const status =
      this.current.command === "destroy"
        ? outcome.status === "failed"
          ? "destroy-failed"
          : "destroyed"
        : outcome.status;
    // Objects webhooks added stay listed until a destroy removed them: the spec cannot name them.
    const prior = this.current.steps[step.name]?.added;
    const added = status === "destroyed" ? [] : mergeAdded(prior, outcome.added);
    const entry = entryFromOutcome({ ...outcome, inputHash: step.inputHash, added }, this.redactor, now, status);
    this.current = withEntry(this.current, step.name, entry, now);
    this.executed.add(step.name);
    this.schedule();
  }

  /** Step `name`'s view of the record (StepRecord). */
  stepRecord(name: string): StepRecord {
    const { id, host, pid, pidNamespace, bootId } = this.self;
    const run = {
      id,
      host,
      pid,
      ...(pidNamespace !== undefined ? { pidNamespace } : {}),
      ...(bootId !== undefined ? { bootId } : {}),
    };
    return {
      run,
      previousHelm: () => {
        const mark = helmInFlightOf(this.previous, name);
        if (mark === undefined) return undefined;
        let runEnded: "lease-expired" | "process-gone" | undefined;
        if (this.takenOver?.id === mark.run.id)
          runEnded = this.takenOver.kind === "expired" ? "lease-expired" : "process-gone";
        // Judged by pid only where the pid means something: the lease's rule (lease.ts, samePidSpace).
        else if (
          mark.run.id !== run.id &&
          samePidSpace(mark.run, this.self) &&
          mark.run.pid !== run.pid &&
          !this.isAlive(mark.run.pid, undefined)
        )
          runEnded = "process-gone";
        return { mark, runEnded };
      },
      helmStarted: async (mark) => {
        if (this.current === undefined || this.closed) return;
        this.current = withHelmInFlight(this.current, name, { run, ...mark });
        this.schedule();
        await this.flush();
      },
    };
  }

  /**
   * Writes the final status and waits for every write to land. Returns the
   * error text when the record could not be written, else undefined.
   */
  async finish(status: "succeeded" | "failed" | "cancelled"): Promise<string | undefined> {
    if (this.current === undefined || this.closed) return this.flush();
    this.stopRenewing();
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
    this.stopRenewing();
    await this.flush();
    if (this.permanentError instanceof LeaseLostError) throw new KhookError("execution", this.permanentError.message);
    for (let i = 0; ; i++) {
      try {
        await this.store.delete(this.version, this.callSignal());
        break;
      } catch (e) {
        if (!(e instanceof RecordConflictError) || i >= MAX_CONFLICTS)
          throw new KhookError("execution", storeErrorText("delete", this.store, e));
        const lost = await this.resolveConflict();
        if (lost !== undefined) throw new KhookError("execution", lost.message);
      }
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
    if (!parsed.ok)
      throw new KhookError(
        "execution",
        `the state record in ${this.store.description} is unreadable: ${parsed.problem}`,
      );
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
    let conflicts = 0;
    try {
      while (this.dirty && this.permanentError === undefined && this.current !== undefined) {
        this.dirty = false;
        // Every write renews the lease it carries (the final one carries none: it releases it).
        if (this.current.lease !== undefined)
          this.current = withLease(this.current, renewLease(this.current.lease, this.now(), this.leaseDurationMs));
        const json = serializeRecord(this.current, this.stepNames);
        try {
          this.writes++;
          this.version = await this.store.write(json, this.version, this.callSignal());
          this.existed = true;
          this.lastError = undefined;
          conflicts = 0;
        } catch (e) {
          this.lastError = e;
          if (e instanceof RecordConflictError && conflicts++ < MAX_CONFLICTS) {
            const lost = await this.resolveConflict();
            if (lost === undefined) this.dirty = true;
            else this.permanentError = lost;
            continue;
          }
          if (e instanceof PermanentStoreError) this.permanentError = e;
        }
      }
    } finally {
      this.dirty = false;
      this.writing = false;
      this.wakeIdle();
    }
  }

  private wakeIdle(): void {
    const waiters = this.idle;
    this.idle = [];
    for (const w of waiters) w();
  }

  /**
   * After a conditional write or delete lost: re-read, and either go again
   * (the lease is still ours, or the record was deleted: recreated with this
   * run's own steps only) or return the LeaseLostError that stops this run's
   * writes. A failed re-read is left to the next write to retry.
   */
  private async resolveConflict(): Promise<LeaseLostError | undefined> {
    let stored: StoredRecord | undefined;
    try {
      stored = await this.store.read(this.callSignal());
    } catch (e) {
      this.lastError = e;
      return e instanceof PermanentStoreError ? new LeaseLostError(storeErrorText("read", this.store, e)) : undefined;
    }
    if (stored === undefined) {
      this.version = undefined;
      if (this.current !== undefined)
        this.current = { ...this.current, steps: pick(this.current.steps, this.executed) };
      if (!this.deletedWarned) {
        this.deletedWarned = true;
        this.warnings.push(
          `the state record (${this.store.description}) was deleted by someone else during this run; khook recreated it with only the steps this run executed, so the next run re-runs the steps the deleted record had let it resume`,
        );
      }
      return undefined;
    }
    const parsed = stored.json === undefined ? undefined : parseRecord(stored.json);
    const lease = parsed?.ok ? parsed.record.lease : undefined;
    if (lease !== undefined && lease.id === this.self.id) {
      // Someone touched the Secret but the lease is still ours: our record is the truth.
      this.version = stored.version;
      return undefined;
    }
    return this.loseLease(lease);
  }

  private callSignal(): AbortSignal {
    return AbortSignal.timeout(this.callTimeoutMs);
  }
}

function pick<T>(entries: Readonly<Record<string, T>>, names: ReadonlySet<string>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const name of names) if (Object.prototype.hasOwnProperty.call(entries, name)) out[name] = entries[name]!;
  return out;
}

/**
 * `khook unlock`: removes the lease from the record (a conditional write, like
 * every other) and returns the lease that was removed, or undefined when none
 * was held. The record's steps are kept.
 */
export async function clearLease(store: RecordStore, signal?: AbortSignal): Promise<Lease | undefined> {
  for (let i = 0; i < MAX_CONFLICTS; i++) {
    let stored: StoredRecord | undefined;
    try {
      stored = await store.read(signal);
    } catch (e) {
      throw new KhookError("execution", storeErrorText("read", store, e));
    }
    if (stored?.json === undefined) return undefined;
    const parsed = parseRecord(stored.json);
    if (!parsed.ok)
      throw new KhookError(
        "execution",
        `the state record in ${store.description} is unreadable (${parsed.problem}); delete it to start afresh`,
      );
    const lease = parsed.record.lease;
    if (lease === undefined) return undefined;
    try {
      await store.write(serializeRecord(withLease(parsed.record, undefined)), stored.version, signal);
      return lease;
    } catch (e) {
      if (e instanceof RecordConflictError) continue;
      throw new KhookError("execution", storeErrorText("write", store, e));
    }
  }
  throw new KhookError(
    "execution",
    `could not clear the lease on the state record (${store.description}): it changed ${MAX_CONFLICTS} times in a row while khook tried`,
  );
}
