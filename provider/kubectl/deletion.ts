/**
 * Why a deletion does not finish, as pure code: what a person reads with `kubectl get ns x -o yaml`
 * and `kubectl get apiservices` when a teardown hangs. The field's classic is the namespace stuck
 * in `Terminating`: the namespace controller records why in the Namespace's conditions
 * (`NamespaceDeletionDiscoveryFailure` when an aggregated API does not answer discovery,
 * `NamespaceContentRemaining`, `NamespaceFinalizersRemaining`, ...), and an object whose
 * finalizers nobody clears stays with its deletionTimestamp set.
 *
 * Lines read like apply's stalls (kubectl/blockers.ts): `namespace/app: Terminating:
 * NamespaceDeletionDiscoveryFailure: ... metrics.k8s.io/v1beta1 ...`, `apiservice/v1beta1.metrics.k8s.io:
 * not available: MissingEndpoints: ...`, `configmap/hold -n app: being deleted, but its finalizers
 * have not cleared: example.com/hold`.
 *
 * And one decision: whether a Namespace that is Terminating is worth waiting for
 * (`heldOnlyByDiscovery`). The gathering is in provider/steps/cluster/deletion-wait.ts.
 */
import { isObject, type KubeObject } from "./types.js";

type Rec = Record<string, unknown>;

/** What a diagnosis of a stalled deletion looks at. */
export interface DeletionFacts {
  /** The objects being waited on, as they are now (absent ones are gone: nothing to say). */
  readonly subjects: readonly KubeObject[];
  /** The cluster's APIServices (apiregistration.k8s.io/v1), when a Namespace is among the subjects. */
  readonly apiServices: readonly KubeObject[];
}

/** The namespace controller's conditions, in the order a person reads them. */
const NAMESPACE_CONDITIONS = [
  "NamespaceDeletionDiscoveryFailure",
  "NamespaceDeletionGroupVersionParsingFailure",
  "NamespaceDeletionContentFailure",
  "NamespaceContentRemaining",
  "NamespaceFinalizersRemaining",
] as const;

function conditions(o: KubeObject): Rec[] {
  const status = isObject(o["status"]) ? o["status"] : {};
  return Array.isArray(status["conditions"]) ? status["conditions"].filter(isObject) : [];
}

function isTrue(o: KubeObject, type: string): Rec | undefined {
  return conditions(o).find((c) => c["type"] === type && c["status"] === "True");
}

function oneLine(s: unknown): string {
  return typeof s === "string" ? s.replace(/\s+/g, " ").trim().replace(/\.$/, "") : "";
}

function label(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return `${(o.kind ?? "object").toLowerCase()}/${o.metadata?.name ?? "?"}${ns !== undefined && ns !== "" ? ` -n ${ns}` : ""}`;
}

/** The group-versions a discovery failure names (`metrics.k8s.io/v1beta1`), from the namespace controller's message. */
export function failingGroupVersions(message: string): string[] {
  const found = new Set<string>();
  // "unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: stale GroupVersion discovery: ..."
  for (const m of message.matchAll(/([a-z0-9][a-z0-9.-]*\.[a-z0-9.-]+)\/(v[0-9][a-z0-9]*)(?=:)/g))
    found.add(`${m[1]}/${m[2]}`);
  return [...found];
}

/**
 * A Namespace that is Terminating only because the cluster cannot discover an aggregated API: its
 * content is deleted (no content and no finalizers remaining) and only the namespace controller's
 * last check, which needs every API to answer, holds it. Such a namespace finishes by itself once
 * the API serves again or its APIService is removed, and nothing a teardown does next depends on
 * it: waiting for it only burns the step's deadline (and when the APIService belongs to a later
 * step's teardown, that wait can never end). Returns the group-versions it waits for, and the
 * condition's message.
 */
export function heldOnlyByDiscovery(ns: KubeObject): { groupVersions: string[]; message: string } | undefined {
  if (ns.kind !== "Namespace" || ns.metadata?.deletionTimestamp === undefined) return undefined;
  const discovery = isTrue(ns, "NamespaceDeletionDiscoveryFailure");
  if (discovery === undefined) return undefined;
  for (const type of NAMESPACE_CONDITIONS.slice(1)) if (isTrue(ns, type) !== undefined) return undefined;
  const message = oneLine(discovery["message"]);
  return { groupVersions: failingGroupVersions(message), message };
}

/** The APIService that serves `group/version` (named `<version>.<group>`). */
function apiServiceFor(groupVersion: string, services: readonly KubeObject[]): KubeObject | undefined {
  const [group, version] = groupVersion.split("/");
  return services.find((s) => s.metadata?.name === `${version}.${group}`);
}

/** `not available: MissingEndpoints: endpoints for service/x ...`, or undefined when it is available. */
function unavailable(service: KubeObject): string | undefined {
  const available = conditions(service).find((c) => c["type"] === "Available");
  if (available?.["status"] === "True") return undefined;
  const why = [oneLine(available?.["reason"]), oneLine(available?.["message"])].filter((s) => s !== "").join(": ");
  return `not available${why !== "" ? `: ${why}` : ""}`;
}

/** The causes that hold the subjects' deletion, one line each, most telling first. */
export function deletionCauses(facts: DeletionFacts): string[] {
  const lines: string[] = [];
  const failing = new Set<string>();
  for (const o of facts.subjects) {
    if (o.metadata?.deletionTimestamp === undefined) continue;
    if (o.kind === "Namespace") {
      for (const type of NAMESPACE_CONDITIONS) {
        const c = isTrue(o, type);
        if (c === undefined) continue;
        const message = oneLine(c["message"]);
        lines.push(`${label(o)}: Terminating: ${type}: ${message}`);
        if (type === "NamespaceDeletionDiscoveryFailure")
          for (const gv of failingGroupVersions(message)) failing.add(gv);
      }
      const finalizers = specFinalizers(o);
      if (lines.length === 0 && finalizers.length > 0)
        lines.push(
          `${label(o)}: Terminating: the namespace controller has not finished (finalizers: ${finalizers.join(", ")})`,
        );
      continue;
    }
    const finalizers = o.metadata?.finalizers ?? [];
    if (finalizers.length > 0)
      lines.push(
        `${label(o)}: being deleted since ${o.metadata.deletionTimestamp}, but its finalizers have not cleared: ${finalizers.join(", ")}; the controller that owns them must remove them (or is gone)`,
      );
  }
  for (const gv of failing) {
    const service = apiServiceFor(gv, facts.apiServices);
    const why = service === undefined ? undefined : unavailable(service);
    if (service !== undefined && why !== undefined)
      lines.push(
        `apiservice/${service.metadata?.name}: ${why}; the namespace controller cannot finish deleting namespaces until ${gv} serves again or this APIService is removed`,
      );
  }
  return lines;
}

function specFinalizers(ns: KubeObject): string[] {
  const spec = isObject(ns["spec"]) ? ns["spec"] : {};
  return Array.isArray(spec["finalizers"]) ? spec["finalizers"].filter((f): f is string => typeof f === "string") : [];
}
