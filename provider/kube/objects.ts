/**
 * CRUD on any resource type, as raw REST: get, list, create, replace, delete,
 * patch (strategic / merge / json) and server-side apply. Objects keep every
 * field the server sends.
 */
import type { QueryValue, Transport } from "./transport.js";
import { isNotFound, KubeApiError } from "./api-errors.js";
import type { KubeObject, ResourceType } from "../kubectl/types.js";

export const FIELD_MANAGER = "khook";

export type PatchType = "strategic" | "merge" | "json" | "apply";

export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  strategic: "application/strategic-merge-patch+json",
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  apply: "application/apply-patch+yaml",
};

export interface ReadOptions {
  signal?: AbortSignal;
}

export interface WriteOptions {
  signal?: AbortSignal;
  /** Server-side dry run (`dryRun=All`): validated and admitted, never persisted. */
  dryRun?: boolean;
  /** Default `khook`. */
  fieldManager?: string;
  /** Server-side field validation (`Strict` rejects unknown and duplicate fields, like kubectl's default). */
  fieldValidation?: "Strict" | "Warn" | "Ignore";
}

export interface ServerSideApplyOptions extends WriteOptions {
  /** Take ownership of conflicting fields (kubectl --force-conflicts). Default true. */
  force?: boolean;
}

export interface ListOptions {
  signal?: AbortSignal;
  /** Namespace to list in; ignored for cluster-scoped types. Omit (or allNamespaces) for all namespaces. */
  namespace?: string;
  allNamespaces?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the whole list is always returned. Default 500 (kubectl's chunk size). */
  limit?: number;
}

export interface ObjectList {
  items: KubeObject[];
  /** The list's resourceVersion: a watch from here misses nothing. */
  resourceVersion: string;
}

export type PropagationPolicy = "Background" | "Foreground" | "Orphan";

export interface DeleteOptions {
  signal?: AbortSignal;
  /** Default Background, like kubectl. */
  propagationPolicy?: PropagationPolicy;
  gracePeriodSeconds?: number;
  dryRun?: boolean;
  /** Only delete this exact incarnation (uid precondition). */
  uid?: string;
  /** Only delete this exact version (resourceVersion precondition); a mismatch is a 409 KubeApiError. */
  resourceVersion?: string;
}

export type DeleteResult =
  | {
      status: "deleted";
      name: string;
      namespace: string | undefined;
      uid: string | undefined;
      object: KubeObject | undefined;
    }
  | { status: "not-found"; name: string; namespace: string | undefined };

/** `/api/v1/namespaces/ns/pods/name` — the URL of a collection or an object. */
export function resourcePath(rt: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  let p = rt.group === "" ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
  if (rt.namespaced && namespace !== undefined && namespace !== "") p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${rt.resource}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) p += `/${subresource}`;
  return p;
}

function ns(rt: ResourceType, namespace: string | undefined): string | undefined {
  return rt.namespaced ? namespace : undefined;
}

/** The object, or undefined when it does not exist. */
export async function get(
  client: Transport,
  rt: ResourceType,
  name: string,
  namespace?: string,
  opts: ReadOptions = {},
): Promise<KubeObject | undefined> {
  const n = ns(rt, namespace);
  try {
    return await client.requestJson<KubeObject>({
      path: resourcePath(rt, n, name),
      signal: opts.signal,
      target: { resource: rt, name, namespace: n },
    });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Lists every matching object (following `continue` tokens). */
export async function list(client: Transport, rt: ResourceType, opts: ListOptions = {}): Promise<ObjectList> {
  const n = opts.allNamespaces ? undefined : ns(rt, opts.namespace);
  const items: KubeObject[] = [];
  let cont: string | undefined;
  let resourceVersion = "";
  do {
    const query: Record<string, QueryValue> = {
      labelSelector: opts.labelSelector || undefined,
      fieldSelector: opts.fieldSelector || undefined,
      limit: opts.limit ?? 500,
      continue: cont,
    };
    const page = await client.requestJson<{
      items?: KubeObject[];
      metadata?: { resourceVersion?: string; continue?: string };
    }>({
      path: resourcePath(rt, n),
      query,
      signal: opts.signal,
      target: { resource: rt, namespace: n },
    });
    // A list does not carry apiVersion/kind per item; fill them so items are self-describing.
    const apiVersion = rt.group === "" ? rt.version : `${rt.group}/${rt.version}`;
    for (const it of page.items ?? []) {
      it.apiVersion ??= apiVersion;
      it.kind ??= rt.kind;
      items.push(it);
    }
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return { items, resourceVersion };
}

function writeQuery(opts: WriteOptions, extra: Record<string, QueryValue> = {}): Record<string, QueryValue> {
  return {
    ...extra,
    fieldManager: opts.fieldManager ?? FIELD_MANAGER,
    fieldValidation: opts.fieldValidation,
    dryRun: opts.dryRun ? "All" : undefined,
  };
}

export async function create(
  client: Transport,
  rt: ResourceType,
  obj: KubeObject,
  opts: WriteOptions = {},
): Promise<KubeObject> {
  const n = ns(rt, obj.metadata?.namespace);
  return client.requestJson<KubeObject>({
    method: "POST",
    path: resourcePath(rt, n),
    query: writeQuery(opts),
    body: obj,
    signal: opts.signal,
    target: { resource: rt, name: obj.metadata?.name ?? obj.metadata?.generateName, namespace: n },
  });
}

export async function replace(
  client: Transport,
  rt: ResourceType,
  obj: KubeObject,
  opts: WriteOptions = {},
): Promise<KubeObject> {
  const n = ns(rt, obj.metadata?.namespace);
  const name = obj.metadata?.name ?? "";
  return client.requestJson<KubeObject>({
    method: "PUT",
    path: resourcePath(rt, n, name),
    query: writeQuery(opts),
    body: obj,
    signal: opts.signal,
    target: { resource: rt, name, namespace: n },
  });
}

/** Deletes one object; a missing object is `not-found`, not an error. */
export async function remove(
  client: Transport,
  rt: ResourceType,
  name: string,
  namespace?: string,
  opts: DeleteOptions = {},
): Promise<DeleteResult> {
  const n = ns(rt, namespace);
  const body: Record<string, unknown> = {
    apiVersion: "v1",
    kind: "DeleteOptions",
    propagationPolicy: opts.propagationPolicy ?? "Background",
  };
  if (opts.gracePeriodSeconds !== undefined) body["gracePeriodSeconds"] = opts.gracePeriodSeconds;
  if (opts.dryRun) body["dryRun"] = ["All"];
  const preconditions = {
    ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
    ...(opts.resourceVersion !== undefined ? { resourceVersion: opts.resourceVersion } : {}),
  };
  if (Object.keys(preconditions).length > 0) body["preconditions"] = preconditions;
  try {
    const res = await client.requestJson<KubeObject>({
      method: "DELETE",
      path: resourcePath(rt, n, name),
      body,
      signal: opts.signal,
      target: { resource: rt, name, namespace: n },
    });
    const object = res && res.kind !== "Status" ? res : undefined;
    return { status: "deleted", name, namespace: n, uid: object?.metadata?.uid, object };
  } catch (e) {
    if (isNotFound(e)) return { status: "not-found", name, namespace: n };
    // A uid precondition that no longer matches means the incarnation we meant is gone.
    if (e instanceof KubeApiError && e.status === 409 && opts.uid !== undefined && /precondition/i.test(e.apiMessage)) {
      return { status: "not-found", name, namespace: n };
    }
    throw e;
  }
}

/** `kubectl patch`. The target must exist (404 is an error). */
export async function patch(
  client: Transport,
  rt: ResourceType,
  name: string,
  namespace: string | undefined,
  type: PatchType,
  body: unknown,
  opts: WriteOptions & { force?: boolean } = {},
): Promise<KubeObject> {
  const n = ns(rt, namespace);
  return client.requestJson<KubeObject>({
    method: "PATCH",
    path: resourcePath(rt, n, name),
    query: writeQuery(opts, { force: type === "apply" ? (opts.force ?? true) : undefined }),
    body: typeof body === "string" ? body : JSON.stringify(body),
    contentType: PATCH_CONTENT_TYPES[type],
    signal: opts.signal,
    target: { resource: rt, name, namespace: n },
  });
}

/**
 * Server-side apply (`kubectl apply --server-side --force-conflicts`): the
 * object as this field manager's full intent. `created` is true when the
 * server answered 201.
 */
export async function serverSideApply(
  client: Transport,
  rt: ResourceType,
  obj: KubeObject,
  opts: ServerSideApplyOptions = {},
): Promise<{ object: KubeObject; created: boolean }> {
  const n = ns(rt, obj.metadata?.namespace);
  const name = obj.metadata?.name ?? "";
  const res = await client.request({
    method: "PATCH",
    path: resourcePath(rt, n, name),
    query: writeQuery(opts, { force: opts.force ?? true }),
    // JSON is valid YAML, and the apply-patch content type accepts it.
    body: JSON.stringify(obj),
    contentType: PATCH_CONTENT_TYPES.apply,
    signal: opts.signal,
    target: { resource: rt, name, namespace: n },
  });
  return { object: JSON.parse(res.text) as KubeObject, created: res.status === 201 };
}
