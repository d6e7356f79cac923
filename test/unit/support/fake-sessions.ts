/**
 * Sessions for the Pulumi handlers' tests with a fake operations layer: real
 * Session objects (so the handlers' code paths are the real ones) over a client
 * that is never used, with the options each was opened with.
 */
import type { KubeClient } from "../../../provider/kube/index.js";
import { Session, type SessionOptions } from "../../../provider/session.js";
import type { LoadedSpec } from "../../../provider/dsl/loaded.js";
import type { Operations } from "../../../provider/pulumi/handlers.js";
import type { RecordOwner } from "../../../provider/pulumi/record-owner/owner.js";

/** Stands in for a connected client: the fake operations never send a request. */
const UNUSED_CLIENT = {
  close(): void {
    throw new Error("a session closes only the client it connected");
  },
} as unknown as KubeClient;

export interface FakeSessions {
  openSession(spec: LoadedSpec | undefined, opts: SessionOptions): Promise<Session>;
  /** The options `session` was opened with. */
  optionsOf(session: Session): SessionOptions;
  /** Every session opened, in order. */
  readonly opened: { readonly options: SessionOptions; readonly session: Session }[];
}

export function fakeSessions(): FakeSessions {
  const opened: { options: SessionOptions; session: Session }[] = [];
  const byObject = new Map<Session, SessionOptions>();
  return {
    opened,
    async openSession(spec, opts) {
      const session = await Session.open(spec, { ...opts, client: UNUSED_CLIENT });
      opened.push({ options: opts, session });
      byObject.set(session, opts);
      return session;
    },
    optionsOf(session) {
      const options = byObject.get(session);
      if (options === undefined) throw new Error("not a session these fakes opened");
      return options;
    },
  };
}

/** What the fake record operations were asked to do with the records an owner left. */
export interface MovedRecordCalls {
  readonly released: { places: readonly string[]; token: string; movedTo: string }[];
  readonly dropped: { places: readonly string[]; token: string }[];
}

/**
 * The record operations of a fake operations layer: the record is held by `owner()` and holds the
 * steps `sameInputSteps()` names with this spec's inputs; releases and drops are recorded in `calls`
 * (`places`: the `locations` each call was given) and report every one as done.
 */
export function fakeRecordOperations(
  owner: () => RecordOwner | undefined = () => undefined,
  sameInputSteps: () => ReadonlySet<string> = () => new Set(),
): Pick<
  Operations,
  "ownerOperation" | "heldRecordOperation" | "releaseRecordsOperation" | "dropReleasedRecordsOperation"
> & { calls: MovedRecordCalls } {
  const calls: MovedRecordCalls = { released: [], dropped: [] };
  return {
    calls,
    ownerOperation: async () => owner(),
    heldRecordOperation: async () => ({ owner: owner(), sameInputSteps: sameInputSteps() }),
    releaseRecordsOperation: async (_spec, o) => (
      calls.released.push({ places: o.locations, token: o.token, movedTo: o.movedTo }),
      [...o.locations]
    ),
    dropReleasedRecordsOperation: async (_spec, o) => (
      calls.dropped.push({ places: o.locations, token: o.token }),
      [...o.locations]
    ),
  };
}
