/**
 * The cluster as the executors (and lifecycle hooks) see it: the contract
 * between what a step decides and the API server that carries it out.
 *
 * KubeClient implements it against a real server. Unit tests implement it
 * with a recording fake (test/unit/support/fake-kube.ts), so every decision an
 * executor makes (ownership refusals, skip predicates, replace-vs-create, what
 * it deletes, its error messages) is testable without a cluster; the
 * integration tests still run the same executors on the real one.
 *
 * Every method has kubectl's semantics, names objects the way kubectl does in
 * its errors, and honours `signal`. Nothing here knows about specs or steps.
 */
import type { WaitCondition } from "../kubectl/waitfor.js";
import type { ApiResource, KubeObject, ResourceType } from "../kubectl/types.js";
import type { AppliedDrift, ApplyAllOptions, ApplyOptions, ApplyResult } from "./apply.js";
import type { ResolveOptions } from "./discovery.js";
import type { LogOptions } from "./logs.js";
import type {
  DeleteOptions,
  DeleteResult,
  ListOptions,
  ObjectList,
  PatchType,
  ReadOptions,
  WriteOptions,
} from "./objects.js";
import type { ObjectRef, WaitCheck, WaitOptions, WaitScope } from "./watch.js";

export interface KubeApi {
  /** The kubeconfig context's namespace, else `default`: where a namespaced target without `namespace:` is (like kubectl). */
  readonly contextNamespace: string;

  // ---------------------------------------------------------------- discovery

  /** Resolves a manifest's `{apiVersion, kind}`. Rejects with UnknownResourceError when the server does not serve it. */
  resolveKind(apiVersion: string, kind: string, opts?: ResolveOptions): Promise<ApiResource>;
  /** Resolves `type` or `type/name` (`daemonset/aws-node`, `pods`), kubectl's resource-argument rules. */
  resolveTarget(arg: string, opts?: ResolveOptions): Promise<{ type: ApiResource; name: string | undefined }>;
  /** The server's version and the API versions it serves (helm's `.Capabilities`), for hook contexts. Optional for fakes. */
  capabilities?(opts?: { signal?: AbortSignal }): Promise<{ kubernetesVersion: string; apiVersions: string[] }>;

  // ---------------------------------------------------------------- objects

  /** The object, or undefined when it does not exist. */
  get(rt: ResourceType, name: string, namespace?: string, opts?: ReadOptions): Promise<KubeObject | undefined>;
  /** Every matching object (all pages). */
  list(rt: ResourceType, opts?: ListOptions): Promise<ObjectList>;
  create(rt: ResourceType, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject>;
  replace(rt: ResourceType, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject>;
  /** Deletes one object; a missing one is `not-found`, not an error. */
  delete(rt: ResourceType, name: string, namespace?: string, opts?: DeleteOptions): Promise<DeleteResult>;
  /** `kubectl patch`; the object must exist. */
  patch(
    rt: ResourceType,
    name: string,
    namespace: string | undefined,
    type: PatchType,
    body: unknown,
    opts?: WriteOptions,
  ): Promise<KubeObject>;

  // ---------------------------------------------------------------- kubectl apply

  /** `kubectl apply` of one object: create, or a three-way patch from last-applied / manifest / live. */
  apply(manifest: KubeObject, opts?: ApplyOptions): Promise<ApplyResult>;
  /** Applies several objects in order (namespaces and CRDs act as barriers); rejects with ApplyAllError listing every failure. */
  applyAll(manifests: readonly KubeObject[], opts?: ApplyAllOptions): Promise<ApplyResult[]>;
  /**
   * Whether `apply(manifest, opts)` would change `live` (read by the caller, from a list), and
   * which fields: only the fields the apply sets count. Costs a request only when it differs
   * (a dry run confirms it). Never changes the cluster.
   */
  appliedDrift(manifest: KubeObject, live: KubeObject, opts?: ApplyOptions): Promise<AppliedDrift>;

  // ---------------------------------------------------------------- waits (watches, never polling)

  /** Resolves as soon as `check` says done for the objects in `scope`; rejects on `failed` or at `opts.timeoutMs`. */
  waitFor<T = true>(scope: WaitScope, check: WaitCheck<T>, opts: WaitOptions): Promise<T>;
  /** `kubectl wait --for=...` on a scope; resolves with the matching objects. */
  waitForCondition(scope: WaitScope, condition: WaitCondition, opts: WaitOptions): Promise<KubeObject[]>;
  /** `kubectl wait --for=...` on exactly these objects (one watch per type and namespace). */
  waitForObjects(refs: readonly ObjectRef[], condition: WaitCondition, opts: WaitOptions): Promise<void>;
  /** Until the named object (with `uid`: that incarnation) is gone. */
  waitForDeletion(
    rt: ResourceType,
    name: string,
    namespace: string | undefined,
    opts: WaitOptions & { uid?: string },
  ): Promise<void>;

  // ---------------------------------------------------------------- logs

  /** The pod's log text (`kubectl logs`); "" when there are none yet. */
  podLogs(namespace: string, pod: string, opts?: LogOptions): Promise<string>;
  /** The pods of a Job, oldest first. */
  jobPods(namespace: string, job: string, opts?: { signal?: AbortSignal }): Promise<KubeObject[]>;
}
