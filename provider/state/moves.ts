/**
 * Moves of a spec's state record. When `state:` names another record than the last run's, the new
 * record remembers the ones the spec left (`movedFrom`); each left record is marked (`movedTo`)
 * once a run on the new one succeeds, and a destroy from the new one removes them. A left record
 * never resumes a step (record.ts isResumable): the objects moved on with the spec, and a destroy
 * from the new record may have removed them.
 *
 * Both shells move records. The Pulumi resource knows the record its last run used from its
 * outputs; the CLI finds the spec's other records by their label (spec-records.ts) and decides here
 * what to do with them. The writes are conditional, like the journal's: a record someone changed
 * meanwhile is read and judged again, never overwritten.
 */
import { KhookError } from "../errors.js";
import { assessLease, type IsAlive, type LeaseSelf } from "./lease.js";
import { locationText, type RecordLocation } from "./location.js";
import { movedFromAfter, parseRecord, serializeRecord, type StateRecord } from "./record.js";
import { MAX_CONFLICTS, RecordConflictError, storeErrorText, type RecordStore, type StoredRecord } from "./store.js";

/** A record of the spec that lives elsewhere than the run's, as read. */
export interface FoundRecord {
  readonly location: RecordLocation;
  readonly record: StateRecord;
}

/**
 * Why the CLI may not carry a move over a record: a shell holds it (the Pulumi resource, whose
 * own bookkeeping releases and removes it), or a run holds its lease right now.
 */
export interface MoveBlocker {
  readonly location: RecordLocation;
  readonly why: "owned" | "locked";
  readonly record: StateRecord;
}

/** What an apply on `here` does about the spec's other records (planApplyMove). */
export type ApplyMovePlan =
  | { readonly kind: "blocked"; readonly blockers: readonly MoveBlocker[] }
  /**
   * `movedFrom`: the claim the run takes `here` up with (undefined: the record stays as it is).
   * `release`: the records to mark as left once the run succeeds.
   */
  | { readonly kind: "go"; readonly movedFrom?: readonly string[]; readonly release: readonly string[] };

/** Whether anything looks for the spec's other records before an apply: only when `here` is new, unreadable or left. */
export function needsSearch(previous: StateRecord | undefined): boolean {
  return previous === undefined || previous.movedTo !== undefined;
}

/**
 * An apply on `here`, whose record read as `previous` (undefined: none, or unreadable), with the
 * spec's records found elsewhere (`found`, read when needsSearch said so). The spec's other current
 * records (not left) are what it moves from; one a shell owns, or a live run has locked, blocks the
 * run. The records the spec left before stay remembered, and are released after every success
 * until a destroy removes them.
 */
export function planApplyMove(
  here: RecordLocation,
  previous: StateRecord | undefined,
  found: readonly FoundRecord[],
  lock: LockCheck,
): ApplyMovePlan {
  const current = found.filter((r) => r.record.movedTo === undefined && !sameLocation(r.location, here));
  const blockers = blockersOf(current, lock);
  if (blockers.length > 0) return { kind: "blocked", blockers };
  const carried = previous?.movedFrom ?? [];
  if (current.length === 0 && previous?.movedTo === undefined) return { kind: "go", release: carried };
  const movedFrom = movedFromAfter(
    [...carried, ...current.flatMap((r) => r.record.movedFrom ?? [])],
    current.map((r) => locationText(r.location)),
    locationText(here),
  );
  return { kind: "go", movedFrom, release: movedFrom };
}

/**
 * A destroy from `here` (undefined: the spec keeps no record) tears down objects every other record
 * of the spec describes too: those no shell owns are released before the teardown (so a teardown
 * that stops half-way leaves nothing to resume from) and removed after it succeeds. A current record
 * a shell owns, or any record a live run has locked, blocks the destroy.
 */
export function planDestroyMove(
  here: RecordLocation | undefined,
  found: readonly FoundRecord[],
  lock: LockCheck,
):
  | { readonly kind: "blocked"; readonly blockers: readonly MoveBlocker[] }
  | { readonly kind: "go"; readonly release: readonly string[]; readonly remove: readonly string[] } {
  const others = found.filter((r) => here === undefined || !sameLocation(r.location, here));
  const blockers = blockersOf(
    others.filter((r) => r.record.movedTo === undefined || r.record.owner === undefined),
    lock,
  );
  if (blockers.length > 0) return { kind: "blocked", blockers };
  const ours = others.filter((r) => r.record.owner === undefined);
  return {
    kind: "go",
    release: ours.filter((r) => r.record.movedTo === undefined).map((r) => locationText(r.location)),
    remove: ours.map((r) => locationText(r.location)),
  };
}

/** Whether a lease belongs to a run that is still going (lease.ts assessLease: `held`). */
export interface LockCheck {
  readonly self: LeaseSelf;
  readonly now: Date;
  readonly isAlive: IsAlive;
}

function isLocked(record: StateRecord, lock: LockCheck): boolean {
  return assessLease(record.lease, lock.self, lock.now, lock.isAlive).kind === "held";
}

function blockersOf(records: readonly FoundRecord[], lock: LockCheck): MoveBlocker[] {
  return records.flatMap((r): MoveBlocker[] => {
    if (r.record.owner !== undefined && r.record.movedTo === undefined)
      return [{ location: r.location, why: "owned", record: r.record }];
    if (isLocked(r.record, lock)) return [{ location: r.location, why: "locked", record: r.record }];
    return [];
  });
}

function sameLocation(a: RecordLocation, b: RecordLocation): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

/**
 * Marks the record as left for `movedTo` (a description for people): a conditional write that
 * changes nothing else, made only while the record is not left already and `may` allows it. A run
 * that holds the lease meanwhile keeps its own record (it treats a write that left its lease alone
 * as noise), so a run that takes the record up wins. True when this call marked it.
 */
export async function releaseRecord(
  store: RecordStore,
  movedTo: string,
  may: (record: StateRecord) => boolean,
  signal?: AbortSignal,
): Promise<boolean> {
  for (let i = 0; i < MAX_CONFLICTS; i++) {
    const seen = await readParsed(store, signal);
    if (seen === undefined || seen.record.movedTo !== undefined || !may(seen.record)) return false;
    try {
      await store.write(serializeRecord({ ...seen.record, movedTo }), seen.version, signal);
      return true;
    } catch (e) {
      if (e instanceof RecordConflictError) continue;
      throw new KhookError("execution", storeErrorText("write", store, e));
    }
  }
  throw new KhookError(
    "execution",
    `could not release the state record (${store.description}): it changed ${MAX_CONFLICTS} times in a row while khook tried`,
  );
}

/** Removes the record while `may` allows it, as read just before (a conditional delete). True when this call removed it. */
export async function removeRecord(
  store: RecordStore,
  may: (record: StateRecord) => boolean,
  signal?: AbortSignal,
): Promise<boolean> {
  for (let i = 0; i < MAX_CONFLICTS; i++) {
    const seen = await readParsed(store, signal);
    if (seen === undefined || !may(seen.record)) return false;
    try {
      await store.delete(seen.version, signal);
      return true;
    } catch (e) {
      if (e instanceof RecordConflictError) continue;
      throw new KhookError("execution", storeErrorText("delete", store, e));
    }
  }
  throw new KhookError(
    "execution",
    `could not remove the state record (${store.description}): it changed ${MAX_CONFLICTS} times in a row while khook tried`,
  );
}

/** The record and its version; undefined when there is none or it cannot be parsed (nothing to release or remove). */
async function readParsed(
  store: RecordStore,
  signal?: AbortSignal,
): Promise<{ record: StateRecord; version: string } | undefined> {
  let stored: StoredRecord | undefined;
  try {
    stored = await store.read(signal);
  } catch (e) {
    throw new KhookError("execution", storeErrorText("read", store, e));
  }
  const parsed = stored?.json === undefined ? undefined : parseRecord(stored.json);
  return parsed?.ok ? { record: parsed.record, version: stored!.version } : undefined;
}
