/**
 * The operations the CLI and the Pulumi provider share: connect, pick the
 * journal, run the engine, read the record. Both adapters stay thin.
 */
import { planOnline, type OnlinePlanStep } from "./engine/plan.js";
import { runSpec, type RunEvent, type RunResult } from "./engine/run.js";
import { transientDelayMs } from "./engine/transient.js";
import { isKubeApiError, KubeClient, loadClusterTarget, type ClusterTarget } from "./kube/index.js";
import { waitForCluster } from "./kube/ready.js";
import type { LoadedSpec, StateSettings } from "./spec/loaded.js";
import { SPEC_DEFAULTS } from "./spec/defaults.js";
import { keyedSpec } from "./spec/keyed-hash.js";
import { clearLease, currentRun, Journal, leaseHolderState, OwnerMarkerStore, pidAlive, parseRecord, SecretRecordStore, summarizeRecord, type Lease, type LeaseHolderState, type RecordOwner, type RecordSummary } from "./state/index.js";
import { EXECUTORS } from "./steps/index.js";
import type { ExecutorRegistry, ToolPaths } from "./steps/types.js";


/**
 * "spec": journal only when the spec has an enabled `state:` block (the CLI).
 * "default-on": journal unless `state.enabled` is false (the Pulumi resource).
 */
export type JournalPolicy = "spec" | "default-on";

export interface OperationOptions {
  target: ClusterTarget;
  parallelism?: number;
  signal?: AbortSignal;
  onEvent?: (e: RunEvent) => void;
  journal?: JournalPolicy;
  tools?: ToolPaths;
  /** An already-connected client to use (and leave open) instead of connecting to `target`. */
  client?: KubeClient;
  /** For tests: replace executors by type. */
  executors?: ExecutorRegistry;
  /**
   * The Pulumi resource that owns the record. Apply stamps it into the record
   * (or, with the journal off, into the owner marker) before anything runs;
   * a destroy that fully succeeds removes the marker along with the record.
   */
  owner?: RecordOwner;
  /**
   * `--wait-for-cluster` / `waitForCluster`: before anything else, wait this long at most for the
   * API server's /readyz, saying so in one line (kube/ready.ts).
   */
  waitForCluster?: { readonly timeoutMs: number; readonly say: (line: string) => void };
  /** The key of keyed step hashes the caller keeps (the Pulumi state); it wins over the record's. */
  hashKey?: string;
}

/** Where the record lives under a policy; undefined when there is no journal. */
export function recordLocation(spec: LoadedSpec, policy: JournalPolicy = "spec"): StateSettings | undefined {
  if (spec.state !== undefined) return spec.state;
  if (policy === "default-on" && spec.stateDeclared === "absent") {
    return { namespace: SPEC_DEFAULTS.stateNamespace, name: `${SPEC_DEFAULTS.stateNamePrefix}${spec.name}` };
  }
  return undefined;
}

export async function connect(target: ClusterTarget): Promise<KubeClient> {
  return KubeClient.connect(target);
}

function journalFor(spec: LoadedSpec, kube: KubeClient, policy: JournalPolicy | undefined, opts: Pick<OperationOptions, "owner" | "hashKey"> = {}): Journal | undefined {
  const location = recordLocation(spec, policy);
  if (location === undefined) return undefined;
  return Journal.forSpec(spec, new SecretRecordStore(kube, location, spec.name), {
    unlockCommand: unlockCommand(spec, location),
    ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
    ...(opts.hashKey !== undefined ? { hashKey: opts.hashKey } : {}),
  });
}

/** How a person clears this record's lease: by the spec file when there is one, else by the record's name (Pulumi). */
export function unlockCommand(spec: Pick<LoadedSpec, "file">, location: StateSettings): string {
  return spec.file !== undefined ? `khook unlock -f ${spec.file}` : `khook unlock --record ${location.namespace}/${location.name}`;
}

/** Connects for one operation. The kubeconfig is read once; fn gets the loaded target for helm. */
async function withCluster<T>(opts: OperationOptions, fn: (kube: KubeClient, target: ClusterTarget) => Promise<T>): Promise<T> {
  if (opts.client !== undefined) return fn(opts.client, opts.target);
  const target = loadClusterTarget(opts.target);
  const kube = await connect(target);
  try {
    return await fn(kube, target);
  } finally {
    kube.close();
  }
}

function run(spec: LoadedSpec, opts: OperationOptions, mode: "apply" | "destroy"): Promise<RunResult> {
  return withCluster(opts, async (kube, target) => {
    if (opts.waitForCluster !== undefined) await waitForCluster(kube, { ...opts.waitForCluster, delayMs: (n) => transientDelayMs(n, {}), ...(opts.signal ? { signal: opts.signal } : {}) });
    kube.discovery.onWarning = (message) => opts.onEvent?.({ type: "cluster-warning", message });
    const journal = journalFor(spec, kube, opts.journal, opts);
    const marker = opts.owner !== undefined && journal === undefined ? new OwnerMarkerStore(kube, spec.name) : undefined;
    if (marker !== undefined && mode === "apply") await marker.write(opts.owner!, opts.signal);
    const result = await runSpec(spec, {
      mode,
      executors: opts.executors ?? EXECUTORS,
      context: { kube, connection: target, ...(opts.tools ? { tools: opts.tools } : {}) },
      ...(opts.parallelism !== undefined ? { parallelism: opts.parallelism } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(journal ? { journal } : {}),
      ...(opts.hashKey !== undefined ? { hashKey: opts.hashKey } : {}),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    });
    if (marker !== undefined && mode === "destroy" && result.status === "succeeded") await marker.delete(opts.signal);
    return result;
  });
}

/**
 * Who owns the spec's record: the record's owner, or with the journal off the
 * owner marker's. undefined when nobody claimed it (no record, a CLI-written
 * one, one written before owners existed, or an unreadable one).
 */
export function ownerOperation(spec: LoadedSpec, opts: OperationOptions): Promise<RecordOwner | undefined> {
  return withCluster(opts, async (kube) => {
    const location = recordLocation(spec, opts.journal);
    if (location === undefined) return new OwnerMarkerStore(kube, spec.name).read(opts.signal);
    const stored = await new SecretRecordStore(kube, location, spec.name).read(opts.signal);
    if (stored?.json === undefined) return undefined;
    const parsed = parseRecord(stored.json);
    return parsed.ok ? parsed.record.owner : undefined;
  });
}

export function applyOperation(spec: LoadedSpec, opts: OperationOptions): Promise<RunResult> {
  return run(spec, opts, "apply");
}

export function destroyOperation(spec: LoadedSpec, opts: OperationOptions): Promise<RunResult> {
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
export function planOperation(spec: LoadedSpec, opts: OperationOptions & { diff?: boolean }): Promise<PlanReport> {
  return withCluster(opts, async (kube, target) => {
    try {
      await probeServer(kube, opts.signal);
    } catch (e) {
      // Any other answer (e.g. 403 on /version) still shows the server is there; assess decides per step.
      if (!isKubeApiError(e) || e.status === 401) throw e;
    }
    const executors = opts.executors ?? EXECUTORS;
    const context = { kube, connection: target, ...(opts.tools ? { tools: opts.tools } : {}) };
    const journal = journalFor(spec, kube, opts.journal);
    const planned = await planOnline(spec, executors, context, journal, { diff: opts.diff === true, ...(opts.parallelism !== undefined ? { parallelism: opts.parallelism } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
    return { steps: planned.map(({ diff: _diff, ...step }) => step), diffs: new Map(planned.flatMap((s) => (s.diff !== undefined ? [[s.name, s.diff] as const] : []))) };
  });
}

/**
 * Whether the cluster answers: `undefined` when it does, else why not, split
 * into "unreachable" (no answer, or no usable kubeconfig) and "rejected" (the
 * API server answered but refused the credentials). Reads nothing else.
 */
export async function reachOperation(target: ClusterTarget): Promise<{ kind: "unreachable" | "rejected"; message: string } | undefined> {
  let kube: KubeClient;
  try {
    kube = await connect(target);
  } catch (e) {
    return { kind: "unreachable", message: (e as Error).message };
  }
  try {
    await probeServer(kube);
    return undefined;
  } catch (e) {
    const status = (e as { status?: unknown }).status;
    return { kind: status === 401 || status === 403 ? "rejected" : "unreachable", message: (e as Error).message };
  } finally {
    kube.close();
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
export function statusOperation(spec: LoadedSpec, opts: OperationOptions): Promise<StatusReport | undefined> {
  return withCluster(opts, async (kube) => {
    const location = recordLocation(spec, opts.journal);
    if (location === undefined) return undefined;
    const journal = Journal.forSpec(spec, new SecretRecordStore(kube, location, spec.name));
    const record = await journal.readRecord();
    if (record === undefined) return undefined;
    // Keyed step hashes compare under the record's key; without one, a keyed step reads as changed.
    const steps = record.hashKey !== undefined ? keyedSpec(spec, record.hashKey).steps : spec.steps;
    const summary = summarizeRecord(record, { specHash: spec.specHash, steps });
    return { ...location, summary, ...(record.lease !== undefined ? { leaseHolder: leaseHolderState(record.lease, currentRun(), new Date(), pidAlive) } : {}) };
  });
}

export interface UnlockReport {
  namespace: string;
  name: string;
  /** The lease that was cleared; undefined when none was held. */
  cleared: Lease | undefined;
}

/** Clears the lease on a record by hand (`khook unlock`). The record's steps are kept. */
export function unlockOperation(location: StateSettings, specName: string | undefined, opts: OperationOptions): Promise<UnlockReport> {
  return withCluster(opts, async (kube) => {
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

export async function clusterIdentityOperation(opts: Pick<OperationOptions, "target" | "signal">): Promise<ClusterIdentity> {
  let kube: KubeClient;
  try {
    kube = await connect(loadClusterTarget(opts.target));
  } catch {
    return { server: null, kubeSystemUid: null };
  }
  try {
    const ns = await kube.requestJson<{ metadata?: { uid?: string } }>({ method: "GET", path: "/api/v1/namespaces/kube-system", timeoutMs: IDENTITY_TIMEOUT_MS, ...(opts.signal ? { signal: opts.signal } : {}) });
    return { server: kube.server, kubeSystemUid: ns.metadata?.uid ?? null };
  } catch {
    return { server: kube.server, kubeSystemUid: null };
  } finally {
    kube.close();
  }
}
