/**
 * Why a wait is not converging, as pure code: the one-hop reasoning a person does with
 * `kubectl describe` when a Deployment stays unavailable. From the objects being waited on
 * and what hangs off them in the cluster (ReplicaSets, Pods, PersistentVolumeClaims,
 * EndpointSlices, Events), name the causes that block them, one line per distinct cause:
 *
 *   deployment/mysql → replicaset/mysql-5d… → pod/mysql-5d…-x (Pending: unbound claim)
 *                                             → persistentvolumeclaim/data (Pending: no storage class)
 *
 * reads as `pod/mysql-5d…-x: persistentvolumeclaim/data is not bound (no persistent volumes
 * available for this claim and no storage class is set)`.
 *
 * The causes are the field's classic stalls: an image that cannot be pulled, a crash loop, a
 * container that cannot be configured, a pod no node accepts, an unbound claim, a controller
 * that cannot create its pods (quota, admission), a failed pod, a Service without endpoints.
 * Progress (a pod that is merely starting) is not a cause: an empty answer means "nothing is
 * known to block it". The gathering (which objects to read) is in provider/steps/cluster/stall.ts.
 */
import { isObject, type KubeObject } from "./types.js";

/** What a diagnosis looks at: the waited-on objects and everything reachable from them. */
export interface StallFacts {
  /** The objects being waited on: Deployments, StatefulSets, DaemonSets, Jobs, ReplicaSets, Pods, Services, PVCs. */
  readonly subjects: readonly KubeObject[];
  /** Objects in the subjects' namespaces: ReplicaSets, Pods, PVCs, EndpointSlices, Events. */
  readonly related: readonly KubeObject[];
}

/** Container waiting reasons that will not clear by themselves (ContainerCreating and PodInitializing will). */
const STUCK_WAITING = new Set([
  "ImagePullBackOff",
  "ErrImagePull",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
  "PreCreateHookError",
  "PostStartHookError",
]);

/** Events about a claim that say why it is not bound (FailedBinding is a Normal event). */
const CLAIM_EVENT_REASONS = new Set([
  "FailedBinding",
  "ProvisioningFailed",
  "ExternalProvisioning",
  "WaitForFirstConsumer",
  "WaitForPodScheduled",
]);

/** At most this many lines; the rest is counted. */
export const MAX_CAUSES = 6;

type Rec = Record<string, unknown>;

function rec(v: unknown): Rec {
  return isObject(v) ? v : {};
}

function list(v: unknown): Rec[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function ref(o: KubeObject): string {
  return `${(o.kind ?? "object").toLowerCase()}/${o.metadata?.name ?? "?"}`;
}

function ns(o: KubeObject): string {
  return o.metadata?.namespace ?? "";
}

function condition(o: KubeObject, type: string): Rec | undefined {
  return list(rec(o["status"])["conditions"]).find((c) => c["type"] === type);
}

/** One line of text, without the trailing period kubelet and the scheduler add. */
function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim().replace(/\.$/, "");
}

/** An index of the related objects: by owner uid, by kind and namespace, and events by the uid they are about. */
class Related {
  private readonly byOwner = new Map<string, KubeObject[]>();
  private readonly byKind = new Map<string, KubeObject[]>();
  private readonly eventsByUid = new Map<string, KubeObject[]>();

  constructor(objects: readonly KubeObject[]) {
    const seen = new Set<string>();
    for (const o of objects) {
      const uid = o.metadata?.uid;
      if (uid !== undefined) {
        if (seen.has(uid)) continue;
        seen.add(uid);
      }
      if (o.kind === "Event") {
        const about = str(rec(o["involvedObject"])["uid"]) ?? str(rec(o["regarding"])["uid"]);
        if (about !== undefined) push(this.eventsByUid, about, o);
        continue;
      }
      push(this.byKind, `${o.kind ?? ""}/${ns(o)}`, o);
      for (const r of list(o.metadata?.ownerReferences)) {
        const owner = str(r["uid"]);
        if (owner !== undefined) push(this.byOwner, owner, o);
      }
    }
  }

  children(o: KubeObject, kind: string): KubeObject[] {
    const uid = o.metadata?.uid;
    return uid === undefined ? [] : (this.byOwner.get(uid) ?? []).filter((c) => c.kind === kind);
  }

  ofKind(kind: string, namespace: string): KubeObject[] {
    return this.byKind.get(`${kind}/${namespace}`) ?? [];
  }

  /** Events about `o`, newest first; Warning events only unless `reasons` admits a Normal one. */
  events(o: KubeObject, reasons?: ReadonlySet<string>): Rec[] {
    const uid = o.metadata?.uid;
    if (uid === undefined) return [];
    return (this.eventsByUid.get(uid) ?? [])
      .filter((e) => e["type"] === "Warning" || (reasons !== undefined && reasons.has(String(e["reason"]))))
      .sort((a, b) => eventTime(b).localeCompare(eventTime(a)));
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

function eventTime(e: Rec): string {
  return str(e["lastTimestamp"]) ?? str(e["eventTime"]) ?? str(rec(e["metadata"])["creationTimestamp"]) ?? "";
}

function eventText(e: Rec): string {
  const reason = str(e["reason"]);
  const message = str(e["message"]) ?? str(e["note"]);
  return oneLine([reason, message].filter((x) => x !== undefined).join(": "));
}

/** A cause: the object it is about, and what blocks it (the text that is grouped). */
interface Cause {
  about: string;
  text: string;
}

/** The pods a subject's readiness depends on, following ownership (Deployment → ReplicaSet → Pod). */
function podsOf(subject: KubeObject, idx: Related): KubeObject[] {
  switch (subject.kind) {
    case "Pod":
      return [subject];
    case "Deployment":
      return newestReplicaSets(idx.children(subject, "ReplicaSet")).flatMap((rs) => idx.children(rs, "Pod"));
    case "StatefulSet":
    case "DaemonSet":
    case "ReplicaSet":
    case "ReplicationController":
    case "Job":
      return idx.children(subject, "Pod");
    case "Service": {
      const selector = rec(rec(subject["spec"])["selector"]);
      const wanted = Object.entries(selector);
      if (wanted.length === 0) return [];
      return idx.ofKind("Pod", ns(subject)).filter((p) => wanted.every(([k, v]) => p.metadata?.labels?.[k] === v));
    }
    default:
      return [];
  }
}

/** The ReplicaSets that still matter to a Deployment: those with replicas wanted (the new one, and old ones scaling down). */
function newestReplicaSets(sets: KubeObject[]): KubeObject[] {
  const wanted = sets.filter((rs) => Number(rec(rs["spec"])["replicas"] ?? 0) > 0);
  return wanted.length > 0 ? wanted : sets;
}

/** The controllers between a subject and its pods, whose own failures (FailedCreate) block pods from existing. */
function controllersOf(subject: KubeObject, idx: Related): KubeObject[] {
  if (subject.kind === "Deployment") return [subject, ...newestReplicaSets(idx.children(subject, "ReplicaSet"))];
  if (["StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"].includes(subject.kind ?? ""))
    return [subject];
  return [];
}

function controllerCauses(c: KubeObject, idx: Related): Cause[] {
  const out: Cause[] = [];
  const failure = condition(c, "ReplicaFailure");
  if (failure?.["status"] === "True") {
    out.push({
      about: ref(c),
      text: `cannot create pods: ${oneLine([str(failure["reason"]), str(failure["message"])].filter((x) => x !== undefined).join(": "))}`,
    });
    return out;
  }
  const failedCreate = idx.events(c).find((e) => e["reason"] === "FailedCreate");
  if (failedCreate !== undefined) out.push({ about: ref(c), text: `cannot create pods: ${eventText(failedCreate)}` });
  return out;
}

function claimCause(claimName: string, namespace: string, idx: Related): string | undefined {
  const claim = idx.ofKind("PersistentVolumeClaim", namespace).find((c) => c.metadata?.name === claimName);
  if (claim === undefined) return `persistentvolumeclaim/${claimName} does not exist`;
  const phase = str(rec(claim["status"])["phase"]);
  if (phase === "Bound") return undefined;
  const why = idx.events(claim, CLAIM_EVENT_REASONS)[0];
  const detail = why !== undefined ? oneLine(str(why["message"]) ?? eventText(why)) : `phase ${phase ?? "Pending"}`;
  return `persistentvolumeclaim/${claimName} is not bound (${detail})`;
}

function containerCauses(pod: KubeObject): string[] {
  const status = rec(pod["status"]);
  const out: string[] = [];
  for (const [field, label] of [
    ["initContainerStatuses", "init container"],
    ["containerStatuses", "container"],
  ] as const) {
    for (const cs of list(status[field])) {
      const name = str(cs["name"]) ?? "?";
      const waiting = rec(rec(cs["state"])["waiting"]);
      const reason = str(waiting["reason"]);
      if (reason !== undefined && STUCK_WAITING.has(reason)) {
        const message = str(waiting["message"]);
        let text = `${label} ${name} is waiting: ${reason}${message !== undefined ? ` (${oneLine(message)})` : ""}`;
        const last = rec(rec(cs["lastState"])["terminated"]);
        if (reason === "CrashLoopBackOff" && typeof last["exitCode"] === "number") {
          text += `, last exit code ${last["exitCode"]}${str(last["reason"]) !== undefined ? ` (${str(last["reason"])})` : ""}`;
        }
        out.push(text);
      }
      const terminated = rec(rec(cs["state"])["terminated"]);
      if (status["phase"] === "Failed" && typeof terminated["exitCode"] === "number" && terminated["exitCode"] !== 0) {
        out.push(
          `${label} ${name} exited with code ${terminated["exitCode"]}${str(terminated["reason"]) !== undefined ? ` (${str(terminated["reason"])})` : ""}`,
        );
      }
    }
  }
  return out;
}

function podCauses(pod: KubeObject, idx: Related): Cause[] {
  const about = ref(pod);
  const status = rec(pod["status"]);
  const texts: string[] = [];
  // Claims first: an unbound claim is the reason the scheduler gives up, one hop further.
  const claims = list(rec(pod["spec"])["volumes"]).flatMap((v) => {
    const c = str(rec(v["persistentVolumeClaim"])["claimName"]);
    return c === undefined ? [] : [c];
  });
  const claimTexts = claims.flatMap((c) => claimCause(c, ns(pod), idx) ?? []);
  texts.push(...claimTexts);
  const scheduled = condition(pod, "PodScheduled");
  if (scheduled?.["status"] === "False" && claimTexts.length === 0) {
    const message = str(scheduled["message"]) ?? str(scheduled["reason"]) ?? "no node accepts it";
    texts.push(`cannot be scheduled: ${oneLine(message)}`);
  }
  texts.push(...containerCauses(pod));
  if (status["phase"] === "Failed" && texts.length === 0) {
    texts.push(
      `failed${str(status["reason"]) !== undefined ? `: ${str(status["reason"])}` : ""}${str(status["message"]) !== undefined ? ` (${oneLine(str(status["message"])!)})` : ""}`,
    );
  }
  // Nothing in the status says why: the newest warning about the pod (FailedMount, FailedCreatePodSandBox, ...).
  if (texts.length === 0 && condition(pod, "Ready")?.["status"] !== "True") {
    const warning = idx.events(pod).find((e) => e["reason"] !== "FailedScheduling");
    if (warning !== undefined) texts.push(eventText(warning));
  }
  return texts.map((text) => ({ about, text }));
}

function serviceCauses(svc: KubeObject, idx: Related): Cause[] {
  const spec = rec(svc["spec"]);
  if (spec["type"] === "ExternalName" || Object.keys(rec(spec["selector"])).length === 0) return [];
  const slices = idx
    .ofKind("EndpointSlice", ns(svc))
    .filter((s) => s.metadata?.labels?.["kubernetes.io/service-name"] === svc.metadata?.name);
  const ready = slices.some((s) => list(s["endpoints"]).some((e) => rec(e["conditions"])["ready"] !== false));
  if (ready) return [];
  const pods = podsOf(svc, idx);
  if (pods.length === 0) {
    const selector = Object.entries(rec(spec["selector"]))
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(",");
    return [{ about: ref(svc), text: `has no endpoints: no pod matches its selector ${selector}` }];
  }
  return [
    {
      about: ref(svc),
      text: `has no ready endpoints: ${pods.length} matching ${pods.length === 1 ? "pod is" : "pods are"} not ready`,
    },
  ];
}

function subjectCauses(subject: KubeObject, idx: Related): Cause[] {
  if (subject.kind === "PersistentVolumeClaim") {
    const t = claimCause(subject.metadata?.name ?? "?", ns(subject), idx);
    return t === undefined ? [] : [{ about: ref(subject), text: t.replace(/^persistentvolumeclaim\/\S+ /, "") }];
  }
  const out: Cause[] = [];
  if (subject.kind === "Service") out.push(...serviceCauses(subject, idx));
  for (const c of controllersOf(subject, idx)) out.push(...controllerCauses(c, idx));
  for (const p of podsOf(subject, idx)) out.push(...podCauses(p, idx));
  return out;
}

/**
 * The distinct causes that block the subjects, one line each: identical causes of several
 * objects share a line (`pod/a, pod/b: container main is waiting: ImagePullBackOff (...)`).
 * Empty when nothing is known to block them.
 */
export function stallCauses(facts: StallFacts): string[] {
  const idx = new Related([...facts.subjects, ...facts.related]);
  const byText = new Map<string, string[]>();
  for (const subject of facts.subjects) {
    for (const c of subjectCauses(subject, idx)) {
      const abouts = byText.get(c.text) ?? [];
      if (!abouts.includes(c.about)) abouts.push(c.about);
      byText.set(c.text, abouts);
    }
  }
  const lines = [...byText].map(
    ([text, abouts]) =>
      `${abouts.length > 3 ? `${abouts.slice(0, 3).join(", ")} and ${abouts.length - 3} more` : abouts.join(", ")}: ${text}`,
  );
  if (lines.length <= MAX_CAUSES) return lines;
  return [...lines.slice(0, MAX_CAUSES - 1), `and ${lines.length - MAX_CAUSES + 1} more causes`];
}
