/**
 * The operations the Pulumi resource runs: the shared ones (provider/operations.ts), with its
 * owner's bookkeeping around them. Apply stamps the owner into the record (or, with the journal
 * off, into the owner marker) before anything runs; a destroy that fully succeeds removes the marker
 * along with the record; the owner and the steps a record holds are read for delete's decision
 * (owner.ts decideDelete); and the records a resource left are released and removed by its token.
 */
import {
  applyOperation as applySpec,
  destroyOperation as destroySpec,
  inSession,
  readRecordOperation,
  type ApplyOptions,
  type DestroyOptions,
  type RecordOptions,
} from "../../operations.js";
import type { RunResult } from "../../engine/run-types.js";
import type { LoadedSpec } from "../../dsl/loaded.js";
import { keyedSpec } from "../../dsl/keyed-hash.js";
import { parseLocationText } from "../../state/location.js";
import { releaseRecord, removeRecord } from "../../state/moves.js";
import { SecretRecordStore } from "../../state/secret-store.js";
import type { RecordStore } from "../../state/store.js";
import { OwnerMarkerStore } from "./marker.js";
import { heldBy, ownerData, ownerOf, type RecordOwner } from "./owner.js";

export {
  clusterReadyOperation,
  driftOperation,
  openSession,
  planOperation,
  reachOperation,
  statusOperation,
} from "../../operations.js";

/** The Pulumi resource that owns the record, for apply and destroy (see the header). */
type Owned = { readonly owner?: RecordOwner };

export function applyOperation(spec: LoadedSpec, opts: ApplyOptions & Owned): Promise<RunResult> {
  const { owner, ...rest } = opts;
  if (owner === undefined) return applySpec(spec, rest);
  return inSession(spec, opts, async (session) => {
    if (session.record === undefined) {
      await new OwnerMarkerStore(session.kube, spec.name).write(owner, opts.signal);
      return applySpec(spec, { ...rest, session });
    }
    return applySpec(spec, { ...rest, session, takeUp: { owner: ownerData(owner), movedFrom: owner.movedFrom ?? [] } });
  });
}

export function destroyOperation(spec: LoadedSpec, opts: DestroyOptions & Owned): Promise<RunResult> {
  const { owner, ...rest } = opts;
  if (owner === undefined || opts.withoutRecord !== undefined) return destroySpec(spec, rest);
  return inSession(spec, opts, async (session) => {
    const result = await destroySpec(spec, { ...rest, session });
    if (session.record === undefined && result.status === "succeeded")
      await new OwnerMarkerStore(session.kube, spec.name).delete(opts.signal);
    return result;
  });
}

/**
 * Who owns the spec's record: the record's owner, or with the journal off the owner marker's.
 * undefined when nobody claimed it (no record, a CLI-written one, one written before owners
 * existed, or an unreadable one).
 */
export function ownerOperation(spec: LoadedSpec, opts: RecordOptions): Promise<RecordOwner | undefined> {
  return inSession(spec, opts, async (session) => {
    if (session.record === undefined) return new OwnerMarkerStore(session.kube, spec.name).read(opts.signal);
    const record = await readRecordOperation(spec, { ...opts, session });
    return record === undefined ? undefined : ownerOf(record);
  });
}

/** Who holds the spec's record, and which of the spec's steps it holds with the same inputs: what a delete decides on, from one read. */
export interface HeldRecord {
  readonly owner: RecordOwner | undefined;
  /**
   * The steps of the spec that the record holds with the same input hash (keyed under the record's
   * key), by name: what another resource sharing the record applied exactly as this spec would.
   * Empty without a record (the journal off, or none written).
   */
  readonly sameInputSteps: ReadonlySet<string>;
}

export function heldRecordOperation(spec: LoadedSpec, opts: RecordOptions): Promise<HeldRecord> {
  return inSession(spec, opts, async (session) => {
    if (session.record === undefined)
      return {
        owner: await new OwnerMarkerStore(session.kube, spec.name).read(opts.signal),
        sameInputSteps: new Set<string>(),
      };
    const record = await readRecordOperation(spec, { ...opts, session });
    if (record === undefined) return { owner: undefined, sameInputSteps: new Set<string>() };
    const steps = record.hashKey !== undefined ? keyedSpec(spec, record.hashKey).steps : spec.steps;
    return {
      owner: ownerOf(record),
      sameInputSteps: new Set(steps.filter((s) => record.steps[s.name]?.inputHash === s.inputHash).map((s) => s.name)),
    };
  });
}

/** The records a resource left (RecordOwner.movedFrom), as location texts ("namespace/name"), and the resource's token. */
export type MovedRecordsOptions = RecordOptions & {
  readonly locations: readonly string[];
  readonly token: string;
};

/** Marks each record in `locations` that `token` still holds as left for `movedTo`; returns the ones released now. */
export function releaseRecordsOperation(
  spec: LoadedSpec,
  opts: MovedRecordsOptions & { readonly movedTo: string },
): Promise<string[]> {
  return onRecords(spec, opts, (store) => releaseOwnedRecord(store, opts.token, opts.movedTo, opts.signal));
}

/** Removes each record in `locations` that `token` left and nobody took up since (dropReleasedRecord); returns the ones removed. */
export function dropReleasedRecordsOperation(spec: LoadedSpec, opts: MovedRecordsOptions): Promise<string[]> {
  return onRecords(spec, opts, (store) => dropReleasedRecord(store, opts.token, opts.signal));
}

/** Marks the record as left for `movedTo` while the resource of `token` holds it and has not left it yet (state/moves.ts releaseRecord). */
export function releaseOwnedRecord(
  store: RecordStore,
  token: string,
  movedTo: string,
  signal?: AbortSignal,
): Promise<boolean> {
  return releaseRecord(store, movedTo, (r) => heldBy(r, token), signal);
}

/**
 * Removes a record the resource of `token` left, once that resource is destroyed: only while the
 * release stands and no run holds the lease, so a record another resource or a CLI run has taken up
 * since stays.
 */
export function dropReleasedRecord(store: RecordStore, token: string, signal?: AbortSignal): Promise<boolean> {
  return removeRecord(store, (r) => heldBy(r, token) && r.movedTo !== undefined && r.lease === undefined, signal);
}

function onRecords(
  spec: LoadedSpec,
  opts: MovedRecordsOptions,
  act: (store: SecretRecordStore) => Promise<boolean>,
): Promise<string[]> {
  return inSession(spec, opts, async ({ kube }) => {
    const done: string[] = [];
    for (const text of opts.locations) {
      const location = parseLocationText(text);
      if (location !== undefined && (await act(new SecretRecordStore(kube, location, spec.name)))) done.push(text);
    }
    return done;
  });
}
