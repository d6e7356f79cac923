/**
 * A Session is what one command holds while it works on a cluster: the loaded
 * cluster target, the client connected to it, where the spec's state record
 * lives, and the run's redactor. It is opened once per CLI command and once per
 * Pulumi handler call and handed to every operation of that command
 * (provider/operations.ts), so the kubeconfig is read once, the client is built
 * once, and an exec-plugin kubeconfig (EKS, GKE) runs its plugin once.
 *
 * Any shell opens one the same way: `openSession(spec, { target })` (or
 * `withSession`, which closes it), then passes `{ session }` to the operations.
 *
 * The redactor is a child of the spec's: it also masks the credentials of the
 * kubeconfig the session loaded (kube/kubeconfig.ts says which), and what the
 * run's executors learn is secret; the loaded spec stays as it was.
 */
import { KubeClient, loadClusterTarget, type ClusterTarget } from "./kube/index.js";
import { credentialsToMask } from "./kube/kubeconfig.js";
import { Redactor } from "./redact.js";
import type { LoadedSpec } from "./dsl/loaded.js";
import { recordLocation, type JournalPolicy, type RecordLocation } from "./state/location.js";

export interface SessionOptions {
  /** Which cluster. Loaded once here (unless already loaded); the client and helm share that read. */
  readonly target: ClusterTarget;
  /** Where the spec's record lives (recordLocation); default "spec". */
  readonly journal?: JournalPolicy;
  /** The record to work on when it is not the spec's (`khook unlock --record NAMESPACE/NAME`). */
  readonly record?: RecordLocation;
  /** An already-connected client to use, and leave open, instead of connecting to `target` (tests, benchmarks). */
  readonly client?: KubeClient;
}

export class Session {
  private closed = false;

  private constructor(
    /** The spec the session was opened for; undefined for a record-only command (`khook unlock --record`). */
    readonly spec: LoadedSpec | undefined,
    /** The cluster target, its kubeconfig loaded: helm gets the same one the client connected with. */
    readonly target: ClusterTarget,
    readonly kube: KubeClient,
    /** The state record's location; undefined when this spec keeps none under the session's policy. */
    readonly record: RecordLocation | undefined,
    /** The run's redactor (see the module comment). */
    readonly redactor: Redactor,
    private readonly ownsClient: boolean,
  ) {}

  /**
   * Loads the target's kubeconfig and connects (an exec plugin runs now, so a
   * broken one fails here). Does not contact the API server.
   */
  static async open(spec: LoadedSpec | undefined, opts: SessionOptions): Promise<Session> {
    // A caller's own client needs no kubeconfig: the target then only goes to helm, as given.
    const target = opts.client !== undefined ? opts.target : loadClusterTarget(opts.target);
    const redactor = (spec?.redactor ?? new Redactor()).child();
    if (target.loaded !== undefined)
      for (const credential of credentialsToMask(target.loaded.config)) redactor.add(credential);
    const record = opts.record ?? (spec !== undefined ? recordLocation(spec, opts.journal) : undefined);
    const kube = opts.client ?? (await KubeClient.connect(target));
    return new Session(spec, target, kube, record, redactor, opts.client === undefined);
  }

  /** Closes the client the session connected (a caller's own client stays open). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsClient) this.kube.close();
  }
}

export function openSession(spec: LoadedSpec | undefined, opts: SessionOptions): Promise<Session> {
  return Session.open(spec, opts);
}

/** Opens a session for `fn` and closes it after. */
export async function withSession<T>(
  spec: LoadedSpec | undefined,
  opts: SessionOptions,
  fn: (session: Session) => Promise<T>,
): Promise<T> {
  const session = await Session.open(spec, opts);
  try {
    return await fn(session);
  } finally {
    session.close();
  }
}
