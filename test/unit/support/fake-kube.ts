/**
 * A recording fake of the KubeApi interface (provider/kube/api.ts), for unit
 * tests of the executors' decisions: an in-memory object store, discovery from
 * a small catalog with kubectl's resource-argument rules, and a log of every
 * call that changes the cluster. Waits never wait: they decide from the
 * objects as they are (after `beforeWait` had its say), so tests script what
 * the controllers would have done. It is for logic only; the integration tests
 * run the same executors against the real cluster.
 */
import { KhookError } from "../../../provider/errors.js";
import type { KubeApi } from "../../../provider/kube/api.js";
import type { AppliedDrift, ApplyAllOptions, ApplyOptions, ApplyResult } from "../../../provider/kube/apply.js";
import { differingFields } from "../../../provider/kubectl/applied-drift.js";
import { UnknownResourceError, type ResolveOptions } from "../../../provider/kube/discovery.js";
import { KubeApiError, WaitTimeoutError } from "../../../provider/kube/api-errors.js";
import type { LogOptions } from "../../../provider/kube/logs.js";
import type {
  DeleteOptions,
  DeleteResult,
  ListOptions,
  ObjectList,
  PatchType,
  WriteOptions,
} from "../../../provider/kube/objects.js";
import type { ObjectRef, WaitCheck, WaitOptions, WaitScope } from "../../../provider/kube/watch.js";
import { checkObjects, evaluateCondition } from "../../../provider/kubectl/conditions.js";
import { matchKind, matchResource, splitTarget } from "../../../provider/kubectl/resourceref.js";
import { applyMergePatch, type JsonMap } from "../../../provider/kubectl/threeway.js";
import {
  splitApiVersion,
  type ApiResource,
  type KubeObject,
  type ResourceType,
} from "../../../provider/kubectl/types.js";
import type { WaitCondition } from "../../../provider/kubectl/waitfor.js";

function resource(
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[] = [],
): ApiResource {
  return {
    group,
    version,
    resource: plural,
    kind,
    namespaced,
    singular: kind.toLowerCase(),
    shortNames,
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
    categories: [],
  };
}

/** The types the executor tests use. */
export const CATALOG: readonly ApiResource[] = [
  resource("", "v1", "namespaces", "Namespace", false, ["ns"]),
  resource("", "v1", "configmaps", "ConfigMap", true, ["cm"]),
  resource("", "v1", "secrets", "Secret", true),
  resource("", "v1", "pods", "Pod", true, ["po"]),
  resource("", "v1", "services", "Service", true, ["svc"]),
  resource("apps", "v1", "deployments", "Deployment", true, ["deploy"]),
  resource("apps", "v1", "daemonsets", "DaemonSet", true, ["ds"]),
  resource("apps", "v1", "statefulsets", "StatefulSet", true, ["sts"]),
  resource("apps", "v1", "replicasets", "ReplicaSet", true, ["rs"]),
  resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, ["pvc"]),
  resource("", "v1", "events", "Event", true, ["ev"]),
  resource("batch", "v1", "jobs", "Job", true),
  resource("example.com", "v1", "widgets", "Widget", true),
];

export class FakeKube implements KubeApi {
  contextNamespace = "default";
  /** Every call that writes, as `verb kind/name -n ns` (and `wait-deleted ...`), in order. */
  readonly writes: string[] = [];
  /** Every server-side dry run (apply or patch with `dryRun`), as `verb kind/name -n ns`, in order. */
  readonly dryRuns: string[] = [];
  /** Options passed to apply/applyAll, per call. */
  readonly applyOptions: ApplyOptions[] = [];
  /** Called before a wait decides: the place to play the controller (complete a Job, roll out a Deployment). */
  beforeWait: ((scope: WaitScope) => void) | undefined;
  /** Pod logs by `ns/pod`. */
  readonly logs = new Map<string, string>();
  /** Errors to throw from the next call of a verb (`patch`, `create`, ...). */
  readonly failNext = new Map<string, Error>();
  private readonly objects = new Map<string, KubeObject>();
  private uid = 0;
  private rv = 0;

  /** Puts an object in the store as if it already existed (no write is recorded). */
  seed(obj: KubeObject): KubeObject {
    const rt = this.typeOf(obj);
    const stored = this.stamp(structuredClone(obj), rt);
    this.objects.set(this.key(rt, stored.metadata?.name ?? "", stored.metadata?.namespace), stored);
    return stored;
  }

  /** The stored object, for assertions. */
  object(kind: string, name: string, namespace?: string): KubeObject | undefined {
    const rt = CATALOG.find((r) => r.kind === kind);
    if (rt === undefined) throw new Error(`no ${kind} in the fake's catalog`);
    return this.objects.get(this.key(rt, name, namespace));
  }

  /** Writes of one verb, e.g. `delete`. */
  written(verb: string): string[] {
    return this.writes.filter((w) => w.startsWith(`${verb} `));
  }

  // ---------------------------------------------------------------- discovery

  async resolveKind(apiVersion: string, kind: string, _opts?: ResolveOptions): Promise<ApiResource> {
    const { group, version } = splitApiVersion(apiVersion);
    const hit = matchKind(CATALOG, group, version, kind);
    if (hit === undefined)
      throw new UnknownResourceError(`the server doesn't have a resource type for ${kind} in ${apiVersion}`);
    return hit;
  }

  async resolveTarget(arg: string, _opts?: ResolveOptions): Promise<{ type: ApiResource; name: string | undefined }> {
    const t = splitTarget(arg);
    if (!t.ok) throw new KhookError("invalid-input", t.message);
    const type = matchResource(CATALOG, t.type);
    if (type === undefined) throw new UnknownResourceError(`the server doesn't have a resource type "${t.type}"`);
    return { type, name: t.name };
  }

  // ---------------------------------------------------------------- objects

  async get(rt: ResourceType, name: string, namespace?: string): Promise<KubeObject | undefined> {
    const o = this.objects.get(this.key(rt, name, namespace));
    return o === undefined ? undefined : structuredClone(o);
  }

  async list(rt: ResourceType, opts: ListOptions = {}): Promise<ObjectList> {
    const items = [...this.objects.values()].filter((o) => {
      if (o.kind !== rt.kind) return false;
      if (
        rt.namespaced &&
        !opts.allNamespaces &&
        opts.namespace !== undefined &&
        o.metadata?.namespace !== opts.namespace
      )
        return false;
      return matchesLabels(o, opts.labelSelector) && matchesFields(o, opts.fieldSelector);
    });
    return { items: items.map((o) => structuredClone(o)), resourceVersion: String(this.rv) };
  }

  async create(rt: ResourceType, obj: KubeObject, _opts?: WriteOptions): Promise<KubeObject> {
    this.maybeFail("create");
    const name = obj.metadata?.name ?? "";
    const key = this.key(rt, name, obj.metadata?.namespace);
    if (this.objects.has(key))
      throw new KubeApiError(409, "AlreadyExists", `${rt.resource} "${name}" already exists`, { resource: rt, name });
    const stored = this.stamp(structuredClone(obj), rt);
    this.objects.set(key, stored);
    this.record("create", rt, name, obj.metadata?.namespace);
    return structuredClone(stored);
  }

  async replace(rt: ResourceType, obj: KubeObject, _opts?: WriteOptions): Promise<KubeObject> {
    this.maybeFail("replace");
    const name = obj.metadata?.name ?? "";
    const key = this.key(rt, name, obj.metadata?.namespace);
    if (!this.objects.has(key))
      throw new KubeApiError(404, "NotFound", `${rt.resource} "${name}" not found`, { resource: rt, name });
    const stored = this.stamp(structuredClone(obj), rt);
    this.objects.set(key, stored);
    this.record("replace", rt, name, obj.metadata?.namespace);
    return structuredClone(stored);
  }

  async delete(rt: ResourceType, name: string, namespace?: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    this.maybeFail("delete");
    const ns = rt.namespaced ? namespace : undefined;
    const key = this.key(rt, name, ns);
    const o = this.objects.get(key);
    if (o === undefined || (opts.uid !== undefined && o.metadata?.uid !== opts.uid))
      return { status: "not-found", name, namespace: ns };
    this.objects.delete(key);
    this.record("delete", rt, name, ns);
    return { status: "deleted", name, namespace: ns, uid: o.metadata?.uid, object: o };
  }

  async patch(
    rt: ResourceType,
    name: string,
    namespace: string | undefined,
    type: PatchType,
    body: unknown,
    opts: WriteOptions = {},
  ): Promise<KubeObject> {
    this.maybeFail("patch");
    const ns = rt.namespaced ? namespace : undefined;
    const key = this.key(rt, name, ns);
    const live = this.objects.get(key);
    if (live === undefined)
      throw new KubeApiError(404, "NotFound", `${rt.resource} "${name}" not found`, {
        resource: rt,
        name,
        namespace: ns,
      });
    if (type === "json") throw new Error("the fake does not apply JSON patches");
    // Strategic and merge patches of maps merge the same way; the fake needs nothing finer.
    const patched = applyMergePatch(structuredClone(live) as JsonMap, body as JsonMap) as KubeObject;
    if (opts.dryRun) {
      this.dryRuns.push(this.label(`patch(${type})`, rt, name, ns));
      return patched;
    }
    this.objects.set(key, this.stamp(patched, rt));
    this.record(`patch(${type})`, rt, name, ns);
    return structuredClone(patched);
  }

  // ---------------------------------------------------------------- kubectl apply

  async apply(manifest: KubeObject, opts: ApplyOptions = {}): Promise<ApplyResult> {
    this.applyOptions.push(opts);
    this.maybeFail("apply");
    const rt = await this.resolveKind(String(manifest.apiVersion), String(manifest.kind));
    const name = manifest.metadata?.name ?? "";
    const namespace = rt.namespaced
      ? (manifest.metadata?.namespace ?? (opts.defaultNamespace || this.contextNamespace))
      : undefined;
    const key = this.key(rt, name, namespace);
    const before = this.objects.get(key);
    const desired = structuredClone(manifest);
    const meta = (desired.metadata ??= {});
    if (namespace !== undefined) meta.namespace = namespace;
    const annotations = {
      ...(before === undefined ? (opts.createAnnotations ?? {}) : keptCreateAnnotations(before, opts)),
      ...(meta.annotations ?? {}),
      ...(opts.annotations ?? {}),
    };
    if (Object.keys(annotations).length > 0) meta.annotations = annotations;
    const ref = `${rt.kind.toLowerCase()}${rt.group ? `.${rt.group}` : ""}/${name}`;
    const base = {
      resource: rt,
      name,
      namespace,
      ref,
      before: before === undefined ? undefined : structuredClone(before),
    };
    if (opts.dryRun) this.dryRuns.push(this.label("apply", rt, name, namespace));
    if (before === undefined) {
      const created = this.stamp(desired, rt);
      if (!opts.dryRun) {
        this.objects.set(key, created);
        this.record("apply(create)", rt, name, namespace);
      }
      return { ...base, action: "created", object: structuredClone(created) };
    }
    const merged = { ...before, ...desired, metadata: { ...before.metadata, ...desired.metadata } } as KubeObject;
    if (JSON.stringify(stripped(merged)) === JSON.stringify(stripped(before)))
      return { ...base, action: "unchanged", object: structuredClone(before) };
    if (!opts.dryRun) {
      this.objects.set(key, this.stamp(merged, rt));
      this.record("apply(configure)", rt, name, namespace);
    }
    return { ...base, action: "configured", object: structuredClone(merged) };
  }

  /** The fake's apply laid over `live`: the fields it would change; a difference counts as a dry run, as the client's does. */
  async appliedDrift(manifest: KubeObject, live: KubeObject, opts: ApplyOptions = {}): Promise<AppliedDrift> {
    const annotations = {
      ...keptCreateAnnotations(live, opts),
      ...(manifest.metadata?.annotations ?? {}),
      ...(opts.annotations ?? {}),
    };
    const merged = {
      ...live,
      ...manifest,
      metadata: { ...live.metadata, ...manifest.metadata, namespace: live.metadata?.namespace, annotations },
    } as KubeObject;
    const fields = differingFields(live, merged);
    if (fields.length === 0) return { drifted: false };
    const rt = await this.resolveKind(String(manifest.apiVersion), String(manifest.kind));
    this.dryRuns.push(this.label("apply", rt, String(live.metadata?.name), live.metadata?.namespace));
    return { drifted: true, fields };
  }

  async applyAll(manifests: readonly KubeObject[], opts: ApplyAllOptions = {}): Promise<ApplyResult[]> {
    const out: ApplyResult[] = [];
    for (const m of manifests) {
      const r = await this.apply(m, opts);
      opts.onResult?.(r);
      out.push(r);
    }
    return out;
  }

  // ---------------------------------------------------------------- waits

  async waitFor<T = true>(scope: WaitScope, check: WaitCheck<T>, opts: WaitOptions): Promise<T> {
    this.beforeWait?.(scope);
    const v = check(this.inScope(scope));
    if (v.state === "done") return v.value;
    if (v.state === "failed") throw new KhookError("execution", v.message);
    throw new WaitTimeoutError(
      `timed out waiting for ${opts.description ?? scope.resource.resource}: ${v.message}`,
      v.message,
    );
  }

  waitForCondition(scope: WaitScope, condition: WaitCondition, opts: WaitOptions): Promise<KubeObject[]> {
    return this.waitFor(scope, (objs) => checkObjects(condition, objs, scope.resource, scope.name), opts);
  }

  async waitForObjects(refs: readonly ObjectRef[], condition: WaitCondition, opts: WaitOptions): Promise<void> {
    for (const r of refs) {
      await this.waitFor(
        { resource: r.resource, name: r.name, ...(r.namespace !== undefined ? { namespace: r.namespace } : {}) },
        (objs) => {
          const res = evaluateCondition(condition, objs[0]);
          return res.met ? { state: "done", value: true } : { state: "pending", message: res.detail };
        },
        opts,
      );
    }
  }

  async waitForDeletion(rt: ResourceType, name: string, namespace: string | undefined): Promise<void> {
    if (this.objects.has(this.key(rt, name, namespace)))
      throw new WaitTimeoutError(`${rt.resource} "${name}" still exists`, "still exists");
    this.record("wait-deleted", rt, name, namespace);
  }

  // ---------------------------------------------------------------- logs

  async podLogs(namespace: string, pod: string, _opts?: LogOptions): Promise<string> {
    return this.logs.get(`${namespace}/${pod}`) ?? "";
  }

  async jobPods(namespace: string, job: string): Promise<KubeObject[]> {
    return [...this.objects.values()].filter(
      (o) => o.kind === "Pod" && o.metadata?.namespace === namespace && o.metadata?.labels?.["job-name"] === job,
    );
  }

  // ---------------------------------------------------------------- helpers

  private inScope(scope: WaitScope): KubeObject[] {
    const rt = scope.resource;
    return [...this.objects.values()].filter(
      (o) =>
        o.kind === rt.kind &&
        (scope.name === undefined || o.metadata?.name === scope.name) &&
        (!rt.namespaced ||
          scope.allNamespaces ||
          scope.namespace === undefined ||
          o.metadata?.namespace === scope.namespace) &&
        matchesLabels(o, scope.labelSelector) &&
        matchesFields(o, scope.fieldSelector),
    );
  }

  private typeOf(obj: KubeObject): ApiResource {
    const { group, version } = splitApiVersion(String(obj.apiVersion));
    const rt = matchKind(CATALOG, group, version, String(obj.kind));
    if (rt === undefined) throw new Error(`no ${String(obj.kind)} in the fake's catalog`);
    return rt;
  }

  private key(
    rt: Pick<ResourceType, "group" | "resource" | "namespaced">,
    name: string,
    namespace: string | undefined,
  ): string {
    return `${rt.group}/${rt.resource}/${rt.namespaced ? (namespace ?? this.contextNamespace) : ""}/${name}`;
  }

  private stamp(obj: KubeObject, rt: ResourceType): KubeObject {
    const meta = (obj.metadata ??= {});
    if (rt.namespaced) meta.namespace ??= this.contextNamespace;
    else delete meta.namespace;
    meta.uid ??= `uid-${++this.uid}`;
    meta.resourceVersion = String(++this.rv);
    obj.apiVersion ??= rt.group === "" ? rt.version : `${rt.group}/${rt.version}`;
    obj.kind ??= rt.kind;
    return obj;
  }

  private record(verb: string, rt: ResourceType, name: string, namespace: string | undefined): void {
    this.writes.push(this.label(verb, rt, name, namespace));
  }

  private label(verb: string, rt: ResourceType, name: string, namespace: string | undefined): string {
    return `${verb} ${rt.kind.toLowerCase()}/${name}${rt.namespaced && namespace ? ` -n ${namespace}` : ""}`;
  }

  private maybeFail(verb: string): void {
    const e = this.failNext.get(verb);
    if (e !== undefined) {
      this.failNext.delete(verb);
      throw e;
    }
  }
}

/** kubectl apply keeps a create-only annotation only while the live object carries the same value. */
function keptCreateAnnotations(live: KubeObject, opts: ApplyOptions): Record<string, string> {
  return Object.fromEntries(
    Object.entries(opts.createAnnotations ?? {}).filter(([k, v]) => live.metadata?.annotations?.[k] === v),
  );
}

function stripped(o: KubeObject): KubeObject {
  const c = structuredClone(o);
  if (c.metadata) {
    delete c.metadata.resourceVersion;
    delete c.metadata.uid;
  }
  return c;
}

/** `a=b,c=d` equality selectors only. */
function matchesLabels(o: KubeObject, selector: string | undefined): boolean {
  if (selector === undefined || selector === "") return true;
  return selector.split(",").every((term) => {
    const [k, v] = term.split("=") as [string, string | undefined];
    return o.metadata?.labels?.[k.trim()] === v?.trim();
  });
}

/** `metadata.name=x` and `metadata.namespace=y` only. */
function matchesFields(o: KubeObject, selector: string | undefined): boolean {
  if (selector === undefined || selector === "") return true;
  return selector.split(",").every((term) => {
    const [k, v] = term.split("=") as [string, string | undefined];
    if (k === "metadata.name") return o.metadata?.name === v;
    if (k === "metadata.namespace") return o.metadata?.namespace === v;
    throw new Error(`the fake does not support the field selector ${k}`);
  });
}
