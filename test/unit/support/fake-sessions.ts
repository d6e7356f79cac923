/**
 * Sessions for the Pulumi handlers' tests with a fake operations layer: real
 * Session objects (so the handlers' code paths are the real ones) over a client
 * that is never used, with the options each was opened with.
 */
import type { KubeClient } from "../../../provider/kube/index.js";
import { Session, type SessionOptions } from "../../../provider/session.js";
import type { LoadedSpec } from "../../../provider/spec/loaded.js";

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
