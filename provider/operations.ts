/**
 * The operations the CLI and the Pulumi provider share: pick the journal, run
 * the engine, read the record. Both adapters stay thin.
 *
 * Each operation works in a Session (provider/session.ts): the caller opens one
 * per command and passes `{ session }` to each operation it runs, or passes the
 * session's options and the operation opens one for itself and closes it after.
 * Each operation takes its own options type.
 */
import { planOnline, type OnlinePlanStep } from "./engine/plan.js";
import type { DriftReport } from "./engine/drift.js";
import type * as DriftModule from "./engine/drift.js";
import { runSpec, type RunEvent, type RunResult } from "./engine/run.js";
import { transientDelayMs } from "./engine/transient-retry.js";
import { isKubeApiError, type KubeClient } from "./kube/index.js";
import { waitForCluster } from "./kube/ready.js";
import { withSession, type Session, type SessionOptions } from "./session.js";
import type { LoadedSpec } from "./dsl/loaded.js";
import { keyedSpec } from "./dsl/keyed-hash.js";
import {
  clearLease,
  currentRun,
  Journal,
  leaseHolderState,
  parseRecord,
  pidAlive,
  SecretRecordStore,
  summarizeRecord,
  type Lease,
  type LeaseHolderState,
  type RecordLocation,
  type RecordSummary,
  type StateRecord,
  type TakeUp,
} from "./state/index.js";
import { aroundApply, aroundDestroy } from "./state/spec-records.js";
import { EXECUTORS } from "./steps/index.js";
import type { ExecutorRegistry, ToolPaths } from "./steps/contract.js";

export { openSession, Session, withSession, type SessionOptions } from "./session.js";
export { recordLocation, type JournalPolicy } from "./state/location.js";

/** The session to work in (left open), or what to open one from (closed when the operation ends). */
export type SessionRef = { readonly session: Session } | (SessionOptions & { readonly session?: undefined });

/** How long to wait for the API server's /readyz, and where the one line saying so goes. */
export interface ClusterWait {
  readonly timeoutMs: number;
  readonly say: (line: string) => void;
  /** How the person asked for the wait, for the error when it runs out (inputs.ts waitSetting). */
  readonly setting: string;
}

/** What apply and destroy share. */
interface RunOperationOptions {
  readonly parallelism?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (e: RunEvent) => void;
  readonly tools?: ToolPaths;
  /** For tests: replace executors by type. */
  readonly executors?: ExecutorRegistry;
  /**
   * Apply takes the record up (state/record.ts TakeUp): with the owner data a
   * shell stamps (the Pulumi resource's), and the records the spec moved from.
   */
  readonly takeUp?: TakeUp;
  /**
   * The CLI's record moves (state/moves.ts): find the spec's other records by their label, carry
   * a move of `state:` to another record, and clear the records a destroy leaves stale. The Pulumi
   * resource keeps its own account of its records (pulumi/record-owner/).
   */
  readonly followMoves?: boolean;
  /**
   * `--wait-for-cluster` / `waitForCluster`: before anything else, wait this long at most for the
   * API server's /readyz, saying so in one line (kube/ready.ts).
   */
  readonly waitForCluster?: ClusterWait;
  /** The key of keyed step hashes the caller keeps (the Pulumi state); it wins over the record's. */
  readonly hashKey?: string;
}

export type ApplyOptions = SessionRef &
  RunOperationOptions & {
    /** Steps to run although the record would resume them: drifted steps (RunOptions.rerun). */
    readonly rerun?: ReadonlySet<string>;
    /** Steps to leave as they are (RunOptions.leave): a repair leaves every step it does not re-run. */
    readonly leave?: ReadonlyMap<string, string>;
  };
export type DestroyOptions = SessionRef &
  RunOperationOptions & {
    /**
     * A teardown that leaves the record alone (it belongs to another Pulumi resource of the stack that
     * shares it): no journal, no lease; `leave` names the steps not to tear down.
     */
    readonly withoutRecord?: { readonly leave: ReadonlyMap<string, string> };
  };
export type PlanOptions = SessionRef & {
  readonly parallelism?: number;
  readonly signal?: AbortSignal;
  readonly tools?: ToolPaths;
  readonly executors?: ExecutorRegistry;
  /** Also each step's diff (`plan --diff`). */
  readonly diff?: boolean;
};
export type RecordOptions = SessionRef & { readonly signal?: AbortSignal };
export type StatusOptions = SessionRef & { readonly signal?: AbortSignal };
export type UnlockOptions = SessionRef & { readonly signal?: AbortSignal };

/** Runs `fn` in the caller's session, or in one opened (and closed) for this operation. */
export function inSession<T>(
  spec: LoadedSpec | undefined,
  ref: SessionRef,
  fn: (session: Session) => Promise<T>,
): Promise<T> {
  if (ref.session === undefined) return withSession(spec, ref, fn);
  if (spec !== undefined && ref.session.spec !== undefined && ref.session.spec !== spec) {
    return Promise.reject(
      new Error(
        `internal error: an operation on spec "${spec.name}" was handed the session of spec "${ref.session.spec.name}"`,
      ),
    );
  }
  return fn(ref.session);
}

function journalFor(
  spec: LoadedSpec,
  session: Session,
  opts: Pick<RunOperationOptions, "takeUp" | "hashKey"> = {},
): Journal | undefined {
  const location = session.record;
  if (location === undefined) return undefined;
  return Journal.forSpec(spec, new SecretRecordStore(session.kube, location, spec.name), {
    unlockCommand: unlockCommand(spec, location),
    ...(opts.takeUp?.owner !== undefined ? { owner: opts.takeUp.owner } : {}),
    ...(opts.takeUp !== undefined ? { movedFrom: opts.takeUp.movedFrom } : {}),
    ...(opts.hashKey !== undefined ? { hashKey: opts.hashKey } : {}),
  });
}

/** How a person clears this record's lease: by the spec file when there is one, else by the record's name (Pulumi). */
export function unlockCommand(spec: Pick<LoadedSpec, "file">, location: RecordLocation): string {
  return spec.file !== undefined
    ? `khook unlock -f ${spec.file}`
    : `khook unlock --record ${location.namespace}/${location.name}`;
}

function run(spec: LoadedSpec, opts: ApplyOptions | DestroyOptions, mode: "apply" | "destroy"): Promise<RunResult> {
  return inSession(spec, opts, async (session) => {
    const kube = session.kube;
    if (opts.waitForCluster !== undefined) await clusterReadyOperation(session, opts.waitForCluster, opts.signal);
    kube.discovery.onWarning = (message) => opts.onEvent?.({ type: "cluster-warning", message });
    const withoutRecord = mode === "destroy" ? (opts as DestroyOptions).withoutRecord : undefined;
    const journal = withoutRecord !== undefined ? undefined : journalFor(spec, session, opts);
    const around =
      opts.followMoves === true && withoutRecord === undefined
        ? await (mode === "apply" ? aroundApply : aroundDestroy)({
            kube,
            specName: spec.name,
            here: session.record,
            journal,
            ...(opts.signal ? { signal: opts.signal } : {}),
            note: (message) => opts.onEvent?.({ type: "journal-note", message: session.redactor.redact(message) }),
          })
        : {};
    const result = await runSpec(spec, {
      mode,
      executors: opts.executors ?? EXECUTORS,
      context: { kube, connection: session.target, ...(opts.tools ? { tools: opts.tools } : {}) },
      redactor: session.redactor,
      ...(opts.parallelism !== undefined ? { parallelism: opts.parallelism } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(journal ? { journal } : {}),
      ...(opts.hashKey !== undefined ? { hashKey: opts.hashKey } : {}),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
      ...(withoutRecord !== undefined ? { leave: withoutRecord.leave } : {}),
      ...(mode === "apply" ? applyOnly(opts as ApplyOptions) : {}),
      ...(around.refusal !== undefined
        ? { refusal: { message: around.refusal, why: "the spec's other state records stop this run" } }
        : {}),
    });
    const error = await around.after?.(result.status === "succeeded");
    return error === undefined ? result : { ...result, status: "failed", journalError: session.redactor.redact(error) };
  });
}

/** What only an apply passes on to the engine: a repair's steps to re-run and to leave. */
function applyOnly(opts: ApplyOptions): { rerun?: ReadonlySet<string>; leave?: ReadonlyMap<string, string> } {
  return {
    ...(opts.rerun !== undefined && opts.rerun.size > 0 ? { rerun: opts.rerun } : {}),
    ...(opts.leave !== undefined ? { leave: opts.leave } : {}),
  };
}

export function applyOperation(spec: LoadedSpec, opts: ApplyOptions): Promise<RunResult> {
  return run(spec, opts, "apply");
}

export function destroyOperation(spec: LoadedSpec, opts: DestroyOptions): Promise<RunResult> {
  return run(spec, opts, "destroy");
}

export interface PlanReport {
  steps: OnlinePlanStep[];
  /** Per step name, its unified diff from the dry run assess made (only with `diff: true`; see OnlinePlanStep.diff). */
  diffs: Map<string, string>;
}

/** One cheap read that every API server answers: it tells "unreachable" from "answers". */
function probeServer(kube: KubeClient, signal?: AbortSignal): Promise<unknown> {
  return kube.request({ method: "GET", path: "/version", timeoutMs: 15_000, ...(signal ? { signal } : {}) });
}

/**
 * Never changes the cluster: assess and dry runs only. A cluster that cannot be reached (or
 * that rejects the credentials) fails the plan, as it fails apply, instead of every step
 * reporting "cannot assess live state".
 */
export function planOperation(spec: LoadedSpec, opts: PlanOptions): Promise<PlanReport> {
  return inSession(spec, opts, async (session) => {
    const kube = session.kube;
    try {
      await probeServer(kube, opts.signal);
    } catch (e) {
      // Any other answer (e.g. 403 on /version) still shows the server is there; assess decides per step.
      if (!isKubeApiError(e) || e.status === 401) throw e;
    }
    const executors = opts.executors ?? EXECUTORS;
    const context = { kube, connection: session.target, ...(opts.tools ? { tools: opts.tools } : {}) };
    const journal = journalFor(spec, session);
    const planned = await planOnline(spec, executors, context, journal, {
      diff: opts.diff === true,
      redactor: session.redactor,
      ...(opts.parallelism !== undefined ? { parallelism: opts.parallelism } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return {
      steps: planned.map(({ diff: _diff, ...step }) => step),
      diffs: new Map(planned.flatMap((s) => (s.diff !== undefined ? [[s.name, s.diff] as const] : []))),
    };
  });
}

export type DriftOptions = SessionRef & {
  readonly parallelism?: number;
  readonly signal?: AbortSignal;
  readonly tools?: ToolPaths;
  readonly executors?: ExecutorRegistry;
};

/**
 * The live check (`khook plan --live`): every step the record calls completed, compared with the
 * cluster (engine/drift.ts). Read-only. A cluster that cannot be reached fails it, as it fails
 * plan; a spec that keeps no record (the journal off) has nothing completed to compare.
 */
export function driftOperation(spec: LoadedSpec, opts: DriftOptions): Promise<DriftReport> {
  return inSession(spec, opts, (session) => liveCheck(spec, session, opts));
}

async function liveCheck(spec: LoadedSpec, session: Session, opts: DriftOptions): Promise<DriftReport> {
  const journal = journalFor(spec, session);
  if (journal === undefined)
    return {
      lists: 0,
      steps: spec.steps.map((s) => ({
        name: s.name,
        type: s.type,
        level: s.level,
        state: "not-checkable" as const,
        reason: "the spec keeps no state record (state: is off), so nothing is recorded as completed",
        decidedBy: "record" as const,
      })),
    };
  try {
    await probeServer(session.kube, opts.signal);
  } catch (e) {
    if (!isKubeApiError(e) || e.status === 401) throw e;
  }
  // Required here: only a live check pays for loading it (a refresh that reads the journal does not).
  const { checkDrift } = require("./engine/drift.js") as typeof DriftModule;
  return checkDrift(
    spec,
    opts.executors ?? EXECUTORS,
    { kube: session.kube, connection: session.target, ...(opts.tools ? { tools: opts.tools } : {}) },
    journal,
    {
      redactor: session.redactor,
      ...(opts.parallelism !== undefined ? { parallelism: opts.parallelism } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    },
  );
}

/** The reason a repair gives the steps it leaves as they are. */
export const LEFT_BY_REPAIR = "left as it is: not drifted (apply --repair re-runs only drifted steps)";

/**
 * What `khook apply --repair` passes to applyOperation after the live check: exactly the steps it
 * found drifted re-run (in the DAG's order, although the record would resume them), every other
 * step left as it is (not run, its record entry untouched). The record notes the repair.
 */
export function repairRun(
  spec: Pick<LoadedSpec, "steps">,
  drift: DriftReport,
): { rerun: ReadonlySet<string>; leave: ReadonlyMap<string, string> } {
  const rerun = new Set(drift.steps.filter((s) => s.state === "drifted").map((s) => s.name));
  return {
    rerun,
    leave: new Map(spec.steps.filter((s) => !rerun.has(s.name)).map((s) => [s.name, LEFT_BY_REPAIR])),
  };
}

/**
 * `--wait-for-cluster` / `waitForCluster`: waits until the session's API server answers /readyz,
 * at most `wait.timeoutMs`, with the engine's transient backoff (kube/ready.ts). A caller that
 * reads the cluster before its run (the Pulumi resource's owner check) waits with this first.
 */
export function clusterReadyOperation(session: Session, wait: ClusterWait, signal?: AbortSignal): Promise<void> {
  return waitForCluster(session.kube, {
    ...wait,
    where: session.kube.describeServer(),
    delayMs: (n) => transientDelayMs(n, {}),
    ...(signal ? { signal } : {}),
  });
}

/**
 * Whether the session's cluster answers: `undefined` when it does, else why not,
 * split into "unreachable" (no answer) and "rejected" (the API server answered
 * but refused the credentials). Reads nothing else. (A session that cannot be
 * opened, e.g. for want of a usable kubeconfig, is "unreachable" too: the caller
 * tells that from the error of opening it.)
 */
export async function reachOperation(
  session: Session,
): Promise<{ kind: "unreachable" | "rejected"; message: string } | undefined> {
  try {
    await probeServer(session.kube);
    return undefined;
  } catch (e) {
    const status = (e as { status?: unknown }).status;
    return { kind: status === 401 || status === 403 ? "rejected" : "unreachable", message: (e as Error).message };
  }
}

export interface StatusReport {
  namespace: string;
  name: string;
  summary: RecordSummary;
  /** Whether the recorded lease holder is still there (only with a lease). */
  leaseHolder?: LeaseHolderState;
}

/** The record of the last run, summarized against the current spec; undefined when there is none. */
export function statusOperation(spec: LoadedSpec, opts: StatusOptions): Promise<StatusReport | undefined> {
  return inSession(spec, opts, async ({ kube, record: location }) => {
    if (location === undefined) return undefined;
    const journal = Journal.forSpec(spec, new SecretRecordStore(kube, location, spec.name));
    const record = await journal.readRecord();
    if (record === undefined) return undefined;
    // Keyed step hashes compare under the record's key; without one, a keyed step reads as changed.
    const steps = record.hashKey !== undefined ? keyedSpec(spec, record.hashKey).steps : spec.steps;
    const summary = summarizeRecord(record, { specHash: spec.specHash, steps });
    return {
      ...location,
      summary,
      ...(record.lease !== undefined
        ? { leaseHolder: leaseHolderState(record.lease, currentRun(), new Date(), pidAlive) }
        : {}),
    };
  });
}

/** The spec's record as it is now; undefined when the spec keeps none, there is none, or it cannot be parsed. */
export function readRecordOperation(spec: LoadedSpec, opts: RecordOptions): Promise<StateRecord | undefined> {
  return inSession(spec, opts, async ({ kube, record: location }) => {
    if (location === undefined) return undefined;
    const stored = await new SecretRecordStore(kube, location, spec.name).read(opts.signal);
    const parsed = stored?.json === undefined ? undefined : parseRecord(stored.json);
    return parsed?.ok ? parsed.record : undefined;
  });
}

export interface UnlockReport {
  namespace: string;
  name: string;
  /** The lease that was cleared; undefined when none was held. */
  cleared: Lease | undefined;
}

/** Clears the lease on a record by hand (`khook unlock`). The record's steps are kept. */
export function unlockOperation(
  location: RecordLocation,
  specName: string | undefined,
  opts: UnlockOptions,
): Promise<UnlockReport> {
  return inSession(undefined, opts, async ({ kube }) => {
    const cleared = await clearLease(new SecretRecordStore(kube, location, specName), opts.signal);
    return { ...location, cleared };
  });
}

/**
 * Which cluster a run talked to, for a fan-out over many clusters to aggregate by: the API
 * server URL (as the kubeconfig names it) and the UID of the kube-system namespace, which
 * stays the same for the cluster's life when its URL or DNS name changes. Best effort: what
 * cannot be read is null (a kubeconfig that does not load, a cluster that does not answer).
 */
export interface ClusterIdentity {
  server: string | null;
  kubeSystemUid: string | null;
}

/** One read (GET the kube-system namespace) that a fleet summary can afford after a run. */
const IDENTITY_TIMEOUT_MS = 5_000;

export type IdentityOptions = SessionRef & { readonly signal?: AbortSignal };

export async function clusterIdentityOperation(opts: IdentityOptions): Promise<ClusterIdentity> {
  try {
    return await inSession(undefined, opts, async ({ kube }) => {
      try {
        const ns = await kube.requestJson<{ metadata?: { uid?: string } }>({
          method: "GET",
          path: "/api/v1/namespaces/kube-system",
          timeoutMs: IDENTITY_TIMEOUT_MS,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        return { server: kube.server, kubeSystemUid: ns.metadata?.uid ?? null };
      } catch {
        return { server: kube.server, kubeSystemUid: null };
      }
    });
  } catch {
    // No session could be opened (a kubeconfig that does not load, an exec plugin that fails).
    return { server: null, kubeSystemUid: null };
  }
}
