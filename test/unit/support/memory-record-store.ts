/** The record store of the engine's and the journal's unit tests: in memory, counting its calls. */
import { RecordConflictError, type RecordStore, type StoredRecord } from "../../../provider/state/store.js";

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
    if (version === undefined && this.exists)
      throw new RecordConflictError(`${this.description} already exists`, "exists");
    if (version !== undefined && !this.exists) throw new RecordConflictError(`${this.description} was deleted`, "gone");
    if (version !== undefined && version !== this.version)
      throw new RecordConflictError(`${this.description} was changed`, "changed");
    this.put(json);
    this.history.push(json);
    return this.version;
  }

  async delete(version: string | undefined): Promise<void> {
    this.calls.delete++;
    if (this.failDeletes) throw this.failDeletes;
    if (!this.exists) return;
    if (version !== undefined && version !== this.version)
      throw new RecordConflictError(`${this.description} was changed`, "changed");
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
