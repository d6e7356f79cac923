/**
 * helm's readiness rules (`helm upgrade --wait`, helm v3 pkg/kube/ready.go), as pure
 * functions of one live object. khook waits on them with watches, where helm polls every
 * two seconds. Kinds without a rule (ConfigMaps, Jobs without wait-for-jobs, ...) are
 * ready once they exist, as in helm.
 *
 * Deliberate differences (khook reads one object's status; helm also lists other objects):
 * - Deployment: helm looks up the new ReplicaSet and counts its ready pods; khook reads the
 *   Deployment's own status, counts the ready replicas minus every old one (as if all old
 *   ones were ready) and also wants every replica updated. It can only wait longer, never
 *   shorter (longer without end only if fewer pods than `replicas` can ever exist, a quota say).
 * - ReplicaSet, ReplicationController: helm wants every pod its selector matches Ready (none
 *   yet counts as ready); khook wants `readyReplicas` to reach `replicas`.
 * - An object that is not found is waited for until the timeout; helm fails at once.
 */
import type { KubeObject } from "../kubectl/types.js";

export type Readiness = { ready: true } | { ready: false; why: string };

const READY: Readiness = { ready: true };
const notReady = (why: string): Readiness => ({ ready: false, why });

type Rule = (obj: KubeObject) => Readiness;

/** `group/Kind` -> rule; the core group is "". */
const RULES: Readonly<Record<string, Rule>> = {
  "apps/Deployment": deploymentReady,
  "apps/StatefulSet": statefulSetReady,
  "apps/DaemonSet": daemonSetReady,
  "apps/ReplicaSet": replicaSetReady,
  "/ReplicationController": replicaSetReady,
  "/Pod": podReady,
  "/PersistentVolumeClaim": pvcReady,
  "/Service": serviceReady,
  "apiextensions.k8s.io/CustomResourceDefinition": crdReady,
};

/** Whether helm's --wait looks at objects of this kind at all. */
export function hasReadinessRule(apiVersion: string, kind: string): boolean {
  return RULES[ruleKey(apiVersion, kind)] !== undefined;
}

/** Readiness of one live object by helm's rules; undefined (absent) is not ready. */
export function readiness(obj: KubeObject | undefined, apiVersion: string, kind: string): Readiness {
  if (obj === undefined) return notReady("not found");
  const rule = RULES[ruleKey(apiVersion, kind)];
  return rule === undefined ? READY : rule(obj);
}

function ruleKey(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf("/");
  return `${slash < 0 ? "" : apiVersion.slice(0, slash)}/${kind}`;
}

// ------------------------------------------------------------------ field access

function field(obj: unknown, ...keys: string[]): unknown {
  let v: unknown = obj;
  for (const k of keys) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

function num(obj: unknown, ...keys: string[]): number | undefined {
  const v = field(obj, ...keys);
  return typeof v === "number" ? v : undefined;
}

function str(obj: unknown, ...keys: string[]): string | undefined {
  const v = field(obj, ...keys);
  return typeof v === "string" ? v : undefined;
}

function conditionIs(obj: KubeObject, type: string, status: "True" | "False"): boolean {
  const conditions = field(obj, "status", "conditions");
  return Array.isArray(conditions) && conditions.some((c) => str(c, "type") === type && str(c, "status") === status);
}

const conditionTrue = (obj: KubeObject, type: string): boolean => conditionIs(obj, type, "True");

/** The controller has not seen the latest spec yet: its status describes an older one. */
function staleStatus(obj: KubeObject): Readiness | undefined {
  const generation = num(obj, "metadata", "generation");
  const observed = num(obj, "status", "observedGeneration") ?? 0;
  return generation !== undefined && observed < generation
    ? notReady(`the controller has not observed generation ${generation} yet`)
    : undefined;
}

/**
 * An IntOrString against a total, as Kubernetes scales it: an integer as is, a percentage
 * rounded down (Deployments) or up (DaemonSets).
 */
export function scaledIntOrPercent(value: unknown, total: number, fallback: number, roundUp: boolean): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const m = /^(\d+)%$/.exec(value);
    if (m !== null) {
      const scaled = (Number(m[1]) * total) / 100;
      return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
    }
    if (/^\d+$/.test(value)) return Number(value);
  }
  return fallback;
}

// ------------------------------------------------------------------ rules

function deploymentReady(dep: KubeObject): Readiness {
  if (field(dep, "spec", "paused") === true) return READY; // helm does not wait on a paused Deployment
  const stale = staleStatus(dep);
  if (stale !== undefined) return stale;
  const replicas = num(dep, "spec", "replicas") ?? 1;
  const updated = num(dep, "status", "updatedReplicas") ?? 0;
  if (updated < replicas) return notReady(`${updated} of ${replicas} replicas updated`);
  const expected = replicas - deploymentMaxUnavailable(dep, replicas);
  const total = num(dep, "status", "replicas") ?? 0;
  const readyUpdated = (num(dep, "status", "readyReplicas") ?? 0) - Math.max(0, total - updated);
  return readyUpdated >= expected
    ? READY
    : notReady(`${Math.max(0, readyUpdated)} of ${replicas} replicas ready (needs ${expected})`);
}

/** k8s deploymentutil.MaxUnavailable: 0 for Recreate; at most the replicas; 1 when surge and unavailable are both 0. */
function deploymentMaxUnavailable(dep: KubeObject, replicas: number): number {
  if (str(dep, "spec", "strategy", "type") === "Recreate" || replicas === 0) return 0;
  const rolling = field(dep, "spec", "strategy", "rollingUpdate");
  const surge = scaledIntOrPercent(field(rolling, "maxSurge"), replicas, Math.ceil(replicas / 4), true);
  let unavailable = scaledIntOrPercent(field(rolling, "maxUnavailable"), replicas, Math.floor(replicas / 4), false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return Math.min(unavailable, replicas);
}

function statefulSetReady(sts: KubeObject): Readiness {
  const stale = staleStatus(sts);
  if (stale !== undefined) return stale;
  if ((str(sts, "spec", "updateStrategy", "type") ?? "RollingUpdate") !== "RollingUpdate") return READY;
  const replicas = num(sts, "spec", "replicas") ?? 1;
  const partition = num(sts, "spec", "updateStrategy", "rollingUpdate", "partition") ?? 0;
  const expectedUpdated = Math.max(0, replicas - partition);
  const updated = num(sts, "status", "updatedReplicas") ?? 0;
  if (updated < expectedUpdated) return notReady(`${updated} of ${expectedUpdated} replicas updated`);
  const ready = num(sts, "status", "readyReplicas") ?? 0;
  if (ready !== replicas) return notReady(`${ready} of ${replicas} replicas ready`);
  if (partition === 0 && str(sts, "status", "currentRevision") !== str(sts, "status", "updateRevision")) {
    return notReady(`the update to revision ${str(sts, "status", "updateRevision") ?? "?"} is still rolling out`);
  }
  return READY;
}

function daemonSetReady(ds: KubeObject): Readiness {
  const stale = staleStatus(ds);
  if (stale !== undefined) return stale;
  if ((str(ds, "spec", "updateStrategy", "type") ?? "RollingUpdate") !== "RollingUpdate") return READY;
  const desired = num(ds, "status", "desiredNumberScheduled") ?? 0;
  const updated = num(ds, "status", "updatedNumberScheduled") ?? 0;
  if (updated !== desired) return notReady(`${updated} of ${desired} pods updated`);
  const maxUnavailable = scaledIntOrPercent(
    field(ds, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable"),
    desired,
    1,
    true,
  );
  const expected = desired - maxUnavailable;
  const ready = num(ds, "status", "numberReady") ?? 0;
  return ready >= expected ? READY : notReady(`${ready} of ${desired} pods ready (needs ${expected})`);
}

function replicaSetReady(rs: KubeObject): Readiness {
  const stale = staleStatus(rs);
  if (stale !== undefined) return stale;
  const replicas = num(rs, "spec", "replicas") ?? 1;
  const ready = num(rs, "status", "readyReplicas") ?? 0;
  return ready >= replicas ? READY : notReady(`${ready} of ${replicas} replicas ready`);
}

function podReady(pod: KubeObject): Readiness {
  // As helm: only Ready counts, so a pod that ran to completion (Succeeded) is never ready.
  if (conditionTrue(pod, "Ready")) return READY;
  return notReady(`pod is ${str(pod, "status", "phase") ?? "Pending"}, not Ready`);
}

function pvcReady(pvc: KubeObject): Readiness {
  const phase = str(pvc, "status", "phase");
  return phase === "Bound" ? READY : notReady(`claim is ${phase ?? "Pending"}, not Bound`);
}

function serviceReady(svc: KubeObject): Readiness {
  const type = str(svc, "spec", "type") ?? "ClusterIP";
  if (type === "ExternalName") return READY;
  const clusterIP = str(svc, "spec", "clusterIP");
  if (clusterIP === undefined || clusterIP === "") return notReady("no cluster IP assigned yet");
  if (type === "LoadBalancer") {
    const external = field(svc, "spec", "externalIPs");
    if (Array.isArray(external) && external.length > 0) return READY;
    const ingress = field(svc, "status", "loadBalancer", "ingress");
    if (!Array.isArray(ingress) || ingress.length === 0)
      return notReady("the load balancer has no ingress address yet");
  }
  return READY;
}

function crdReady(crd: KubeObject): Readiness {
  // As helm: a CRD whose names were refused will never be Established, and waiting would only time out.
  return conditionTrue(crd, "Established") || conditionIs(crd, "NamesAccepted", "False")
    ? READY
    : notReady("not Established yet");
}
