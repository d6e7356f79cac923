/**
 * Where a record lives. The journal only ever needs these three calls; the
 * Secret-backed store is the real one, the memory store serves tests and the
 * engine's unit tests.
 */

export interface StoredRecord {
  /** The record JSON, or undefined when the object exists but carries no record (yet). */
  readonly json: string | undefined;
}

export interface RecordStore {
  /** For messages, e.g. `Secret "khook-state-x" in namespace "default"`. */
  readonly description: string;
  /** undefined when there is no record object. Throws (a KhookError) when the object is not khook's. */
  read(signal?: AbortSignal): Promise<StoredRecord | undefined>;
  /** Creates or replaces the record. Last write wins. */
  write(json: string, signal?: AbortSignal): Promise<void>;
  /** Removes the record; absent is fine. */
  delete(signal?: AbortSignal): Promise<void>;
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

/** An in-memory store that counts its calls. */
export class MemoryRecordStore implements RecordStore {
  readonly description: string;
  json: string | undefined;
  exists: boolean;
  readonly calls = { read: 0, write: 0, delete: 0 };
  /** Every JSON written, in order. */
  readonly history: string[] = [];
  /** Set to make the next calls fail (e.g. a PermanentStoreError for RBAC). */
  failWrites: Error | undefined;
  failReads: Error | undefined;
  failDeletes: Error | undefined;
  /** Called before each write resolves; tests use it to hold a write in flight. */
  beforeWrite: ((json: string) => Promise<void> | void) | undefined;

  constructor(initial?: string, description = "memory record") {
    this.description = description;
    this.json = initial;
    this.exists = initial !== undefined;
  }

  async read(): Promise<StoredRecord | undefined> {
    this.calls.read++;
    if (this.failReads) throw this.failReads;
    return this.exists ? { json: this.json } : undefined;
  }

  async write(json: string): Promise<void> {
    this.calls.write++;
    if (this.beforeWrite) await this.beforeWrite(json);
    if (this.failWrites) throw this.failWrites;
    this.json = json;
    this.exists = true;
    this.history.push(json);
  }

  async delete(): Promise<void> {
    this.calls.delete++;
    if (this.failDeletes) throw this.failDeletes;
    this.json = undefined;
    this.exists = false;
  }
}
