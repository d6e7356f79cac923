/**
 * Waits that say why they are not converging. Every wait an executor does (wait:, apply's
 * waitFor:, helm's wait, rollout status, a Job) runs through `explainedWait`: when the wait
 * has made no progress for a while it reads what hangs off the waited-on objects and logs
 * each blocking cause once (`blocked: pod/mysql-0: persistentvolumeclaim/data is not bound
 * (...)`), and when the wait times out its error ends with the causes found then.
 *
 * The reasoning is pure (provider/kubectl/blockers.ts); this module decides when to look and
 * what to read: the subjects, and in each of their namespaces the Pods, the ReplicaSets (for a
 * Deployment), the PersistentVolumeClaims, the EndpointSlices (for a Service) and the Events.
 * A diagnosis is best-effort: a read that fails (RBAC, an API that is not served) leaves that
 * part out and never fails the step.
 */
import { PODS, WaitTimeoutError } from "../../kube/index.js";
import { formatMs } from "../../kube/watch.js";
import { stallCauses } from "../../kubectl/blockers.js";
import { apiVersionOf, type KubeObject, type ResourceType } from "../../kubectl/types.js";
import type { StepContext } from "../contract.js";

/** One object being waited on, as a manifest names it. */
export interface StallSubject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
}

/** The subject for an object of a discovered type. */
export function subjectOf(rt: ResourceType, name: string, namespace: string | undefined): StallSubject {
  return { apiVersion: apiVersionOf(rt), kind: rt.kind, name, namespace: rt.namespaced ? namespace : undefined };
}

/** How long a wait may go without progress before khook looks for a cause: 10 s, or a third of a short deadline. */
export function stallAfterMs(deadline: number): number {
  return Math.max(1000, Math.min(10_000, Math.floor(deadline / 3)));
}

/**
 * The bound of a wait that explains itself: a little before the attempt's deadline, so the
 * wait's own timeout (naming what is not ready, and why) settles before the engine's timer,
 * whose message says only "timed out after …", and leaves time to read the causes.
 */
export function waitBoundMs(deadline: number): number {
  return Math.max(0, deadline - Math.min(2000, Math.floor(deadline / 10)));
}

const REPLICA_SETS: ResourceType = {
  group: "apps",
  version: "v1",
  resource: "replicasets",
  kind: "ReplicaSet",
  namespaced: true,
};
const CLAIMS: ResourceType = {
  group: "",
  version: "v1",
  resource: "persistentvolumeclaims",
  kind: "PersistentVolumeClaim",
  namespaced: true,
};
const EVENTS: ResourceType = { group: "", version: "v1", resource: "events", kind: "Event", namespaced: true };
const ENDPOINT_SLICES: ResourceType = {
  group: "discovery.k8s.io",
  version: "v1",
  resource: "endpointslices",
  kind: "EndpointSlice",
  namespaced: true,
};

/** Kinds whose readiness is decided by pods (and so can be diagnosed). */
const DIAGNOSABLE = new Set([
  "Deployment",
  "StatefulSet",
  "DaemonSet",
  "ReplicaSet",
  "ReplicationController",
  "Job",
  "Pod",
  "Service",
  "PersistentVolumeClaim",
]);

/** A diagnosis's read: its value, or `fallback` when it fails (RBAC, an API not served). */
export async function quiet<T>(p: Promise<T>, fallback: T): Promise<T> {
  try {
    return await p;
  } catch {
    return fallback;
  }
}

/** Reads the subjects and what hangs off them; each read that fails is left out. */
export async function gatherStallFacts(
  ctx: Pick<StepContext, "kube" | "signal">,
  subjects: readonly StallSubject[],
): Promise<{ subjects: KubeObject[]; related: KubeObject[] }> {
  const wanted = subjects.filter((s) => DIAGNOSABLE.has(s.kind) && s.namespace !== undefined);
  const opts = { signal: ctx.signal };
  const found = await Promise.all(
    wanted.map((s) =>
      quiet(
        ctx.kube.resolveKind(s.apiVersion, s.kind, opts).then((rt) => ctx.kube.get(rt, s.name, s.namespace, opts)),
        undefined,
      ),
    ),
  );
  const live = found.filter((o): o is KubeObject => o !== undefined);
  const namespaces = [...new Set(wanted.map((s) => s.namespace!))];
  const kindsIn = (n: string): Set<string> => new Set(wanted.filter((s) => s.namespace === n).map((s) => s.kind));
  const related = await Promise.all(
    namespaces.flatMap((namespace) => {
      const kinds = kindsIn(namespace);
      const types = [
        PODS,
        CLAIMS,
        EVENTS,
        ...(kinds.has("Deployment") ? [REPLICA_SETS] : []),
        ...(kinds.has("Service") ? [ENDPOINT_SLICES] : []),
      ];
      // A list's items carry no kind: put it back, the reasoning reads it.
      return types.map((rt) =>
        quiet(
          ctx.kube.list(rt, { namespace, ...opts }).then((l) => l.items.map((o) => ({ ...o, kind: rt.kind }))),
          [] as KubeObject[],
        ),
      );
    }),
  );
  return { subjects: live, related: related.flat() };
}

/** The blocking causes of the subjects now, redacted; empty when none is known (or nothing could be read). */
export async function diagnoseStall(
  ctx: Pick<StepContext, "kube" | "signal" | "redactor">,
  subjects: readonly StallSubject[],
): Promise<string[]> {
  if (subjects.length === 0) return [];
  try {
    return stallCauses(await gatherStallFacts(ctx, subjects)).map((l) => ctx.redactor.redact(l));
  } catch {
    return [];
  }
}

/** The text a timed-out wait's error gains: one line per cause. */
export function withCauses(message: string, causes: readonly string[]): string {
  if (causes.length === 0) return message;
  return `${message}\nwhat blocks it:\n${causes.map((c) => `  - ${c}`).join("\n")}`;
}

export type SubjectsOf = () => readonly StallSubject[] | Promise<readonly StallSubject[]>;

/** Reads the causes that block the subjects now (diagnoseStall for waits to converge, cluster/deletion-wait.ts for waits to be gone). */
export type Diagnose = (
  ctx: Pick<StepContext, "kube" | "signal" | "redactor">,
  subjects: readonly StallSubject[],
) => Promise<string[]>;

/**
 * Watches a wait for stalls: after stallAfterMs without progress(), and again every
 * stallAfterMs while it stays stuck, logs the causes found, each distinct one once.
 */
export class StallMonitor {
  private readonly every: number;
  private readonly logged = new Set<string>();
  private last: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: StepContext,
    private readonly subjects: SubjectsOf,
    private readonly diagnose: Diagnose = diagnoseStall,
  ) {
    this.every = stallAfterMs(ctx.deadline);
    this.arm();
  }

  /** The wait moved (a new progress message): the stall clock starts again. */
  progress(): void {
    if (!this.stopped) this.arm();
  }

  /**
   * The causes as they are now; the last ones seen when nothing can be read any more, or when
   * reading would outlast the attempt (the error must settle before the engine's own timer).
   */
  async causesNow(): Promise<string[]> {
    this.stop();
    const budgetMs = Math.max(0, this.ctx.deadline - 200);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), budgetMs)));
    try {
      const fresh = await Promise.race([
        (async () => {
          if (this.looking !== undefined) await this.looking;
          return this.diagnose(this.ctx, await this.currentSubjects());
        })(),
        late,
      ]);
      return fresh !== undefined && fresh.length > 0 ? fresh : this.last;
    } finally {
      clearTimeout(timer);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private async currentSubjects(): Promise<readonly StallSubject[]> {
    try {
      return await this.subjects();
    } catch {
      return [];
    }
  }

  private arm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.looking = this.look().finally(() => {
        this.looking = undefined;
        if (!this.stopped) this.arm();
      });
    }, this.every);
    this.timer.unref();
  }

  private async look(): Promise<void> {
    const causes = await this.diagnose(this.ctx, await this.currentSubjects());
    if (this.stopped) return;
    this.last = causes;
    for (const c of causes) {
      if (this.logged.has(c)) continue;
      this.logged.add(c);
      this.ctx.log(`blocked: ${c}`);
    }
  }
}

/**
 * Runs `wait` (given a progress callback and its bound, see waitBoundMs) under a StallMonitor.
 * Progress messages go to `log` (default: the step's log). When the wait times out
 * (WaitTimeoutError), it is rethrown as an execution error that ends with the causes.
 */
export async function explainedWait<T>(
  ctx: StepContext,
  subjects: SubjectsOf,
  wait: (onProgress: (message: string) => void, timeoutMs: number) => Promise<T>,
  log: (message: string) => void = (m) => ctx.log(m),
): Promise<T> {
  const monitor = new StallMonitor(ctx, subjects);
  const budgetMs = ctx.deadline;
  try {
    return await wait((m) => {
      monitor.progress();
      log(m);
    }, waitBoundMs(budgetMs));
  } catch (e) {
    if (!(e instanceof WaitTimeoutError)) throw e;
    // The wait stopped a little early only to leave time for the diagnosis: it timed out against the whole budget.
    const message = e.message.replace(/^timed out after \S+/, `timed out after ${formatMs(budgetMs)}`);
    // Still a WaitTimeoutError (an execution error): callers tell a timeout from other failures.
    throw new WaitTimeoutError(ctx.redactor.redact(withCauses(message, await monitor.causesNow())), e.lastState);
  } finally {
    monitor.stop();
  }
}
