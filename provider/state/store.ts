/**
 * Where a record lives. The journal only ever needs these three calls; the
 * Secret-backed store is the real one, the memory store serves tests and the
 * engine's unit tests.
 *
 * Every write and delete is conditional on the version the caller last saw
 * (the Secret's resourceVersion): a store never overwrites a record it has not
 * read. Losing that race is a RecordConflictError, which the journal resolves
 * by re-reading (never by writing blindly).
 */

export interface StoredRecord {
  /** The record JSON, or undefined when the object exists but carries no record (yet). */
  readonly json: string | undefined;
  /** The object's version (resourceVersion): the precondition of the next write. */
  readonly version: string;
}

export interface RecordStore {
  /** For messages, e.g. `Secret "khook-state-x" in namespace "default"`. */
  readonly description: string;
  /** undefined when there is no record object. Throws (a KhookError) when the object is not khook's. */
  read(signal?: AbortSignal): Promise<StoredRecord | undefined>;
  /**
   * Writes the record if it is still at `version` (undefined: creates it, if
   * it still does not exist). Returns the new version. Throws a
   * RecordConflictError when the record changed, appeared or disappeared since.
   */
  write(json: string, version: string | undefined, signal?: AbortSignal): Promise<string>;
  /** Removes the record if it is still at `version`; absent is fine. Throws a RecordConflictError when it changed. */
  delete(version: string | undefined, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: calls `onChange` with the record's JSON each time someone writes it, until `signal`
   * aborts (a watch, never polling). The journal learns from it at once that its lease was taken
   * or cleared, instead of at its next write. Best effort: a store may miss changes while it
   * re-connects; the next conditional write still finds them.
   */
  watch?(onChange: (json: string) => void, signal: AbortSignal): void;
}

/** A store failure already phrased for people (it names the object and the verb). Retrying may help. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreError";
  }
}

/** A store failure that retrying cannot fix (RBAC, a foreign object, a missing namespace). */
export class PermanentStoreError extends StoreError {
  constructor(message: string) {
    super(message);
    this.name = "PermanentStoreError";
  }
}

/**
 * The record is not at the version the write was conditional on: someone else
 * wrote it (`changed`), created it (`exists`) or deleted it (`gone`).
 */
export class RecordConflictError extends StoreError {
  constructor(
    message: string,
    readonly kind: "changed" | "exists" | "gone",
  ) {
    super(message);
    this.name = "RecordConflictError";
  }
}

/** An in-memory store that counts its calls, with the Secret store's version semantics. */
export class MemoryRecordStore implements RecordStore {
  readonly description: string;
  json: string | undefined;
  exists: boolean;
  /** The current version ("" when absent); every write bumps it. */
  version = "";
  readonly calls = { read: 0, write: 0, delete: 0 };
  /** Every JSON written, in order. */
  readonly history: string[] = [];
  /** Set to make the next calls fail (e.g. a PermanentStoreError for RBAC). */
  failWrites: Error | undefined;
  failReads: Error | undefined;
  failDeletes: Error | undefined;
  private readonly watchers = new Set<(json: string) => void>();
  /** Called before each write resolves; tests use it to hold a write in flight. */
  beforeWrite: ((json: string) => Promise<void> | void) | undefined;
  private counter = 0;

  constructor(initial?: string, description = "memory record") {
    this.description = description;
    this.json = initial;
    this.exists = initial !== undefined;
    if (this.exists) this.version = this.nextVersion();
  }

  async read(): Promise<StoredRecord | undefined> {
    this.calls.read++;
    if (this.failReads) throw this.failReads;
    return this.exists ? { json: this.json, version: this.version } : undefined;
  }

  async write(json: string, version: string | undefined): Promise<string> {
    this.calls.write++;
    if (this.beforeWrite) await this.beforeWrite(json);
    if (this.failWrites) throw this.failWrites;
    if (version === undefined && this.exists) throw new RecordConflictError(`${this.description} already exists`, "exists");
    if (version !== undefined && !this.exists) throw new RecordConflictError(`${this.description} was deleted`, "gone");
    if (version !== undefined && version !== this.version) throw new RecordConflictError(`${this.description} was changed`, "changed");
    this.put(json);
    this.history.push(json);
    return this.version;
  }

  async delete(version: string | undefined): Promise<void> {
    this.calls.delete++;
    if (this.failDeletes) throw this.failDeletes;
    if (!this.exists) return;
    if (version !== undefined && version !== this.version) throw new RecordConflictError(`${this.description} was changed`, "changed");
    this.remove();
  }

  /** false: watch() hears nothing, like a store that cannot watch (the journal then learns at its next write). */
  watchable = true;

  watch(onChange: (json: string) => void, signal: AbortSignal): void {
    if (!this.watchable) return;
    this.watchers.add(onChange);
    signal.addEventListener("abort", () => this.watchers.delete(onChange), { once: true });
  }

  /** Someone else writes the record (no precondition, not counted); watchers hear of it. */
  put(json: string): void {
    this.json = json;
    this.exists = true;
    this.version = this.nextVersion();
    for (const w of [...this.watchers]) w(json);
  }

  /** Someone else deletes the record (not counted). */
  remove(): void {
    this.json = undefined;
    this.exists = false;
    this.version = "";
  }

  private nextVersion(): string {
    return String(++this.counter);
  }
}
