/**
 * Where a record lives. The journal only ever needs these three calls; the
 * Secret-backed store is the real one (the memory store the unit tests use is
 * test/unit/support/memory-record-store.ts).
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

/** How many conflicts in a row one claim, write or delete resolves before giving up. */
export const MAX_CONFLICTS = 5;

/** A store failure as a sentence naming the verb and the record. */
export function storeErrorText(verb: "read" | "write" | "delete", store: RecordStore, e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  // Store errors that are already sentences for people carry their own context.
  if (e instanceof StoreError) return msg;
  return `cannot ${verb} the state record (${store.description}): ${msg}`;
}
