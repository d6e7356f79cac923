/**
 * Client-side apply that behaves like `kubectl apply`:
 *
 * - create: the object gets `kubectl.kubernetes.io/last-applied-configuration`
 *   (the manifest itself, encoded the way kubectl encodes it);
 * - re-apply: a three-way patch from (last-applied, new manifest, live) — a
 *   strategic merge patch when the server's OpenAPI v3 says the kind accepts one
 *   (built-in types), else a three-way JSON merge patch (custom resources).
 *   A field removed from the manifest is removed from the object. Objects last
 *   applied by kubectl carry the same annotation and are taken over seamlessly.
 * - `{}` patch → `unchanged`, else `configured`; new → `created`.
 *
 * `serverSide: true` uses server-side apply with force instead, and so does an object whose
 * last-applied copy would not fit in its annotations (kubectl would fail with `metadata.annotations:
 * Too long`; `serverSideBecauseTooLarge` on the result says which objects went that way).
 */
import { KhookError } from "../errors.js";
import { kubectlRef, lastAppliedTooLarge, parseLastApplied, withLastApplied } from "../kubectl/lastapplied.js";
import {
  createThreeWayJsonMergePatch,
  createThreeWayStrategicMergePatch,
  deepEqual,
  isMap,
  PatchComputationError,
  type JsonMap,
} from "../kubectl/threeway.js";
import { describeObject, type ApiResource, type KubeObject } from "../kubectl/types.js";
import { differingFields, holdsApplied, patchedFields, withStringDataMerged } from "../kubectl/applied-drift.js";
import type { Discovery } from "./discovery.js";
import { KubeApiError } from "./api-errors.js";
import { FIELD_MANAGER, get, resourcePath, serverSideApply } from "./objects.js";
import type { OpenApiCache } from "./openapi.js";
import type { Transport } from "./transport.js";

/** What apply needs of a connection (KubeClient is one). */
export interface ApplyConnection extends Transport {
  /** The kubeconfig context's namespace: where namespaced objects without one go. */
  readonly contextNamespace: string;
  readonly discovery: Pick<Discovery, "resolveKind" | "expect">;
  readonly openapi: Pick<OpenApiCache, "patchPlan" | "invalidate">;
}

export type ApplyAction = "created" | "configured" | "unchanged";

export interface ApplyOptions {
  signal?: AbortSignal;
  /** Namespace for namespaced objects that name none. Default: the kubeconfig context's namespace. */
  defaultNamespace?: string;
  /** Added to every object's annotations (e.g. `khook.io/owned-by: <spec>/<step>`). */
  annotations?: Readonly<Record<string, string>>;
  /**
   * Added only when the object is created, and kept on later applies while the live object
   * still carries the same value: how khook marks what it owns (and never claims what it adopts).
   */
  createAnnotations?: Readonly<Record<string, string>>;
  /** Added to every object's labels. */
  labels?: Readonly<Record<string, string>>;
  /** Server-side dry run: nothing is persisted; the result shows what would be. */
  dryRun?: boolean;
  /** Server-side apply (force) instead of kubectl's client-side three-way merge. */
  serverSide?: boolean;
  /** Default `khook`. */
  fieldManager?: string;
}

export interface ApplyResult {
  action: ApplyAction;
  resource: ApiResource;
  name: string;
  /** Set for namespaced objects. */
  namespace: string | undefined;
  /** `deployment.apps/x` — what kubectl prints before the action. */
  ref: string;
  /** The object after the apply (the dry-run result when dryRun). */
  object: KubeObject;
  /** The live object before the apply; undefined when it did not exist. */
  before: KubeObject | undefined;
  /** The patch sent (client-side apply of an existing object). */
  patch?: { type: "strategic" | "merge"; body: JsonMap };
  /** Applied server-side though client-side was asked for: its last-applied copy would not fit in its annotations. */
  serverSideBecauseTooLarge?: true;
}

/** Conflicts are retried like kubectl (which retries a patch 5 times). */
const MAX_TRIES = 5;

export async function applyObject(
  client: ApplyConnection,
  manifest: KubeObject,
  opts: ApplyOptions = {},
): Promise<ApplyResult> {
  const apiVersion = manifest.apiVersion;
  const kind = manifest.kind;
  if (typeof apiVersion !== "string" || apiVersion === "" || typeof kind !== "string" || kind === "") {
    throw new KhookError("execution", `cannot apply an object without apiVersion and kind: ${summarize(manifest)}`);
  }
  const name = manifest.metadata?.name;
  if (typeof name !== "string" || name === "") {
    if (manifest.metadata?.generateName)
      throw new KhookError(
        "execution",
        `cannot use generateName with apply (${kind} ${manifest.metadata.generateName}...)`,
      );
    throw new KhookError("execution", `cannot apply a ${kind} without metadata.name`);
  }
  const rt = await client.discovery.resolveKind(apiVersion, kind, { signal: opts.signal });
  const obj = prepare(manifest, rt, opts, client.contextNamespace);
  const namespace = rt.namespaced ? obj.metadata!.namespace : undefined;
  const tooLarge = !opts.serverSide && lastAppliedTooLarge(obj);
  let result: ApplyResult;
  try {
    result =
      opts.serverSide || tooLarge
        ? await applyServerSide(client, rt, obj, name, namespace, opts)
        : await applyClientSide(client, rt, obj, name, namespace, opts);
    if (tooLarge) result.serverSideBecauseTooLarge = true;
  } catch (e) {
    // kubectl's well-known limit: the last-applied copy of a very large object (big CRDs) overflows the 256 KiB of annotations.
    if (
      !opts.serverSide &&
      e instanceof KubeApiError &&
      e.status === 422 &&
      /annotations: Too long/.test(e.apiMessage)
    ) {
      throw new KhookError(
        "execution",
        `${e.message} — the object is too large for client-side apply's last-applied annotation; use apply.serverSide: true (kubectl apply --server-side)`,
      );
    }
    throw e;
  }
  if (rt.group === "apiextensions.k8s.io" && rt.kind === "CustomResourceDefinition" && !opts.dryRun)
    noteCrd(client, obj);
  return result;
}

/** A copy of the manifest with the namespace decided and khook's labels/annotations added. */
export function prepare(
  manifest: KubeObject,
  rt: ApiResource,
  opts: ApplyOptions,
  contextNamespace: string,
): KubeObject {
  const obj = structuredClone(manifest);
  const meta = (obj.metadata ??= {});
  if (rt.namespaced) {
    if (typeof meta.namespace !== "string" || meta.namespace === "")
      meta.namespace = opts.defaultNamespace || contextNamespace || "default";
  } else {
    delete meta.namespace;
  }
  if (opts.annotations && Object.keys(opts.annotations).length > 0)
    meta.annotations = { ...(meta.annotations ?? {}), ...opts.annotations };
  if (opts.labels && Object.keys(opts.labels).length > 0) meta.labels = { ...(meta.labels ?? {}), ...opts.labels };
  return obj;
}

/** The manifest plus the create-only annotations that apply to this incarnation (see ApplyOptions.createAnnotations). */
function withCreateAnnotations(obj: KubeObject, live: KubeObject | undefined, opts: ApplyOptions): KubeObject {
  const extra = opts.createAnnotations;
  if (extra === undefined) return obj;
  const keep = Object.entries(extra).filter(([k, v]) => live === undefined || live.metadata?.annotations?.[k] === v);
  if (keep.length === 0) return obj;
  const copy = structuredClone(obj);
  const meta = (copy.metadata ??= {});
  meta.annotations = { ...(meta.annotations ?? {}), ...Object.fromEntries(keep) };
  return copy;
}

async function applyClientSide(
  client: ApplyConnection,
  rt: ApiResource,
  obj: KubeObject,
  name: string,
  namespace: string | undefined,
  opts: ApplyOptions,
): Promise<ApplyResult> {
  const ref = kubectlRef(rt, name);
  const target = { resource: rt, name, namespace };
  // kubectl validates fields server-side (--validate=strict): unknown or duplicate fields are errors, not silently dropped.
  const query = {
    fieldManager: opts.fieldManager ?? FIELD_MANAGER,
    fieldValidation: "Strict",
    dryRun: opts.dryRun ? "All" : undefined,
  };
  for (let attempt = 1; ; attempt++) {
    const live = await get(client, rt, name, namespace, { signal: opts.signal });
    const desired = withCreateAnnotations(obj, live, opts);
    if (!live) {
      const body = withLastApplied(desired);
      try {
        const created = await client.requestJson<KubeObject>({
          method: "POST",
          path: resourcePath(rt, namespace),
          query,
          body,
          signal: opts.signal,
          target,
        });
        return { action: "created", resource: rt, name, namespace, ref, object: created, before: undefined };
      } catch (e) {
        // Someone created it between our GET and POST: patch it instead.
        if (e instanceof KubeApiError && e.alreadyExists && attempt < MAX_TRIES) continue;
        throw e;
      }
    }
    const original = parseLastApplied(live);
    const modified = withLastApplied(desired);
    const plan = await client.openapi.patchPlan(rt, opts.signal);
    let patch: JsonMap;
    try {
      patch =
        plan.type === "strategic"
          ? createThreeWayStrategicMergePatch(original, modified as JsonMap, live as JsonMap, plan.meta)
          : createThreeWayJsonMergePatch(original, modified as JsonMap, live as JsonMap);
    } catch (e) {
      if (e instanceof PatchComputationError) {
        throw new KhookError(
          "execution",
          `${describeObject(rt, name, namespace)}: cannot compute the apply patch: ${e.message}`,
        );
      }
      throw e;
    }
    if (Object.keys(patch).length === 0) {
      return { action: "unchanged", resource: rt, name, namespace, ref, object: live, before: live };
    }
    try {
      const patched = await client.requestJson<KubeObject>({
        method: "PATCH",
        path: resourcePath(rt, namespace, name),
        query,
        body: JSON.stringify(patch),
        contentType:
          plan.type === "strategic" ? "application/strategic-merge-patch+json" : "application/merge-patch+json",
        signal: opts.signal,
        target,
      });
      return {
        action: "configured",
        resource: rt,
        name,
        namespace,
        ref,
        object: patched,
        before: live,
        patch: { type: plan.type, body: patch },
      };
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 409 && attempt < MAX_TRIES) continue;
      if (e instanceof KubeApiError && e.status === 404 && attempt < MAX_TRIES) continue; // deleted meanwhile: create it
      throw e;
    }
  }
}

async function applyServerSide(
  client: ApplyConnection,
  rt: ApiResource,
  obj: KubeObject,
  name: string,
  namespace: string | undefined,
  opts: ApplyOptions,
): Promise<ApplyResult> {
  const ref = kubectlRef(rt, name);
  const before = await get(client, rt, name, namespace, { signal: opts.signal });
  const { object, created } = await serverSideApply(client, rt, withCreateAnnotations(obj, before, opts), {
    signal: opts.signal,
    dryRun: opts.dryRun,
    fieldManager: opts.fieldManager ?? FIELD_MANAGER,
    fieldValidation: "Strict",
    force: true,
  });
  let action: ApplyAction;
  if (created || !before) action = "created";
  else if (opts.dryRun) action = deepEqual(stripVolatile(before), stripVolatile(object)) ? "unchanged" : "configured";
  else action = before.metadata?.resourceVersion === object.metadata?.resourceVersion ? "unchanged" : "configured";
  return { action, resource: rt, name, namespace, ref, object, before };
}

function stripVolatile(o: KubeObject): KubeObject {
  const c = structuredClone(o);
  if (c.metadata) {
    delete c.metadata.managedFields;
    delete c.metadata.resourceVersion;
    delete c.metadata.generation;
  }
  return c;
}

function noteCrd(client: ApplyConnection, crd: KubeObject): void {
  const spec = isMap(crd["spec"]) ? crd["spec"] : {};
  const names = isMap(spec["names"]) ? spec["names"] : {};
  const group = typeof spec["group"] === "string" ? spec["group"] : "";
  const kind = typeof names["kind"] === "string" ? names["kind"] : "";
  if (group === "" || kind === "") return;
  client.discovery.expect({
    group,
    kind,
    plural: typeof names["plural"] === "string" ? names["plural"] : undefined,
    singular: typeof names["singular"] === "string" ? names["singular"] : undefined,
    shortNames: Array.isArray(names["shortNames"])
      ? names["shortNames"].filter((s): s is string => typeof s === "string")
      : undefined,
  });
  client.openapi.invalidate();
}

function summarize(o: KubeObject): string {
  const s = JSON.stringify(o);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

// ------------------------------------------------------------------ drift

/** How a live object compares with what applying its manifest would make of it (see appliedDrift). */
export type AppliedDrift =
  | { readonly drifted: false }
  | {
      readonly drifted: true;
      /** The fields an apply would change, by path (never a value). */
      readonly fields: readonly string[];
      /** Set when the dry run that confirms a difference failed: the fields then come from the comparison alone. */
      readonly unconfirmed?: string;
    };

/**
 * Whether applying `manifest` (with the options khook's apply uses) would change `live`, and
 * which fields: drift, in the fields khook applied and in no other. A client-side apply is
 * judged by its three-way patch of (last-applied, manifest, live), computed here without a
 * request (with the kind's OpenAPI patch metadata, read once per group version); a server-side
 * apply by whether the live object still holds every field it sent. Only an object found to
 * differ costs a request: a server-side dry run of the same apply, whose result, compared with
 * the live object, confirms the difference and names it (defaulting and value normalisation
 * such as `500m` for `0.5` then read as in sync).
 */
export async function appliedDrift(
  client: ApplyConnection,
  manifest: KubeObject,
  live: KubeObject,
  opts: ApplyOptions = {},
): Promise<AppliedDrift> {
  const rt = await client.discovery.resolveKind(String(manifest.apiVersion), String(manifest.kind), {
    signal: opts.signal,
  });
  const desired = withCreateAnnotations(prepare(manifest, rt, opts, client.contextNamespace), live, opts);
  let suspected: string[];
  // An object too large for the last-applied annotation went server-side (applyObject), so it is judged as one.
  if (opts.serverSide || lastAppliedTooLarge(desired)) {
    if (holdsApplied(withStringDataMerged(desired as JsonMap), live)) return { drifted: false };
    suspected = differingFields(live, mergedOver(live, withStringDataMerged(desired as JsonMap)));
  } else {
    const original = parseLastApplied(live);
    const modified = withLastApplied(desired) as JsonMap;
    const plan = await client.openapi.patchPlan(rt, opts.signal);
    const merged = (o: JsonMap | undefined): JsonMap | undefined => withStringDataMerged(o);
    const patch =
      plan.type === "strategic"
        ? createThreeWayStrategicMergePatch(merged(original), merged(modified)!, live as JsonMap, plan.meta)
        : createThreeWayJsonMergePatch(merged(original), merged(modified)!, live as JsonMap);
    if (Object.keys(patch).length === 0) return { drifted: false };
    suspected = patchedFields(patch);
  }
  let after: ApplyResult;
  try {
    after = await applyObject(client, manifest, { ...opts, dryRun: true });
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    return { drifted: true, fields: suspected, unconfirmed: e instanceof Error ? e.message : String(e) };
  }
  const fields = differingFields(live, after.object);
  return fields.length === 0 ? { drifted: false } : { drifted: true, fields };
}

/** `live` with `applied`'s fields laid over it (maps merged, lists and scalars replaced): what to name when a dry run cannot. */
function mergedOver(live: KubeObject, applied: JsonMap): KubeObject {
  const over = (a: unknown, b: unknown): unknown => {
    if (!isMap(a) || !isMap(b)) return b;
    const out: JsonMap = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = over(a[k], v);
    return out;
  };
  return over(live, applied) as KubeObject;
}

// ------------------------------------------------------------------ many objects

export interface ApplyAllOptions extends ApplyOptions {
  /**
   * How many objects are applied at once between barriers. Default 4.
   * Namespaces, CRDs, APIServices, admission configuration, PriorityClasses,
   * RuntimeClasses, LimitRanges and ResourceQuotas are barriers: everything
   * before them finishes first, and nothing after starts until they are applied.
   */
  concurrency?: number;
  /** Keep applying the rest after a failure (like kubectl); the error lists every failure. Default true. */
  continueOnError?: boolean;
  /** Called as each object finishes, in completion order. */
  onResult?: (r: ApplyResult) => void;
}

/** Several failures from one applyAll; `results` holds what did succeed. */
export class ApplyAllError extends KhookError {
  readonly results: readonly (ApplyResult | undefined)[];
  readonly failures: readonly { index: number; error: unknown }[];
  constructor(results: (ApplyResult | undefined)[], failures: { index: number; error: unknown }[]) {
    const lines = failures.map((f) => `  - ${f.error instanceof Error ? f.error.message : String(f.error)}`);
    super(
      "execution",
      failures.length === 1 ? lines[0]!.slice(4) : `${failures.length} objects failed to apply:\n${lines.join("\n")}`,
    );
    this.name = "ApplyAllError";
    this.results = results;
    this.failures = failures;
  }
}

const BARRIER_KINDS = new Set([
  "/Namespace",
  "apiextensions.k8s.io/CustomResourceDefinition",
  "apiregistration.k8s.io/APIService",
  "admissionregistration.k8s.io/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
  "admissionregistration.k8s.io/MutatingAdmissionPolicy",
  "admissionregistration.k8s.io/MutatingAdmissionPolicyBinding",
  "scheduling.k8s.io/PriorityClass",
  "node.k8s.io/RuntimeClass",
  "/LimitRange",
  "/ResourceQuota",
]);

function isBarrier(o: KubeObject): boolean {
  const av = typeof o.apiVersion === "string" ? o.apiVersion : "";
  const group = av.includes("/") ? av.slice(0, av.indexOf("/")) : "";
  return BARRIER_KINDS.has(`${group}/${String(o.kind ?? "")}`);
}

/** Applies objects in order; see ApplyAllOptions for what runs concurrently. Results are in input order. */
export async function applyAll(
  client: ApplyConnection,
  manifests: readonly KubeObject[],
  opts: ApplyAllOptions = {},
): Promise<ApplyResult[]> {
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const continueOnError = opts.continueOnError ?? true;
  const results: (ApplyResult | undefined)[] = new Array<ApplyResult | undefined>(manifests.length);
  const failures: { index: number; error: unknown }[] = [];
  let stop = false;

  const one = async (i: number): Promise<void> => {
    if (stop) return;
    try {
      const r = await applyObject(client, manifests[i]!, opts);
      results[i] = r;
      opts.onResult?.(r);
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      failures.push({ index: i, error: e });
      if (!continueOnError) stop = true;
    }
  };

  let i = 0;
  while (i < manifests.length && !stop) {
    if (isBarrier(manifests[i]!)) {
      await one(i);
      i++;
      continue;
    }
    // A run of non-barrier objects: a small worker pool, started in order.
    let j = i;
    while (j < manifests.length && !isBarrier(manifests[j]!)) j++;
    let next = i;
    const end = j;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, end - i) }, async () => {
        while (!stop && next < end) await one(next++);
      }),
    );
    i = j;
  }
  if (failures.length > 0) {
    failures.sort((a, b) => a.index - b.index);
    throw new ApplyAllError(results, failures);
  }
  return results as ApplyResult[];
}
