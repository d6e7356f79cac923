/** Shapes shared by every module in provider/kube. */

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
  finalizers?: string[];
  [key: string]: unknown;
}

/** Any Kubernetes object, kept as the API sent it (unknown fields included). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

/** One resource type, as discovery knows it: everything needed to build a URL and name it. */
export interface ResourceType {
  group: string;
  version: string;
  /** Plural resource name, e.g. `deployments`. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

/** A discovered resource, with the names kubectl accepts for it. */
export interface ApiResource extends ResourceType {
  singular: string;
  shortNames: readonly string[];
  verbs: readonly string[];
  categories: readonly string[];
}

export function apiVersionOf(rt: Pick<ResourceType, "group" | "version">): string {
  return rt.group === "" ? rt.version : `${rt.group}/${rt.version}`;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf("/");
  return i < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** `deployments.apps`, `pods` — the group-qualified resource name kubectl prints. */
export function groupResource(rt: Pick<ResourceType, "group" | "resource">): string {
  return rt.group === "" ? rt.resource : `${rt.resource}.${rt.group}`;
}

/** `deployments.apps "x" in namespace "y"` / `namespaces "x"` — kubectl's way of naming an object. */
export function describeObject(
  rt: Pick<ResourceType, "group" | "resource">,
  name?: string,
  namespace?: string,
): string {
  let s = groupResource(rt);
  if (name !== undefined && name !== "") s += ` "${name}"`;
  if (namespace !== undefined && namespace !== "") s += ` in namespace "${namespace}"`;
  return s;
}

/** `deployment/x` — the short form used in progress lines. */
export function shortRef(rt: Pick<ResourceType, "kind">, name: string): string {
  return `${rt.kind.toLowerCase()}/${name}`;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
