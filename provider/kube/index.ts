/**
 * provider/kube: the only code that talks to the API server — requests, discovery,
 * OpenAPI documents, watches, logs and kubeconfig loading. What kubectl computes
 * without a server (three-way merge, JSONPath, wait conditions, rollout status,
 * resource arguments) is in provider/kubectl/.
 */
export type { KubeApi } from "./api.js";
export { KubeClient, loadClusterTarget } from "./client.js";
export type { ClusterTarget } from "./client.js";
export { sleep } from "./transport.js";
export type { Transport, RequestOptions, RawResponse, HttpMethod, QueryValue } from "./transport.js";

export {
  KubeApiError,
  KubeConnectionError,
  KubeConfigError,
  WaitTimeoutError,
  apiErrorFromResponse,
  isKubeApiError,
  isNotFound,
} from "./api-errors.js";
export type { ErrorTarget } from "./api-errors.js";

export { Discovery, UnknownResourceError, parseAggregated } from "./discovery.js";
export type { ResolveOptions } from "./discovery.js";

export { FIELD_MANAGER, PATCH_CONTENT_TYPES, resourcePath } from "./objects.js";
export type {
  PatchType,
  ReadOptions,
  WriteOptions,
  ServerSideApplyOptions,
  ListOptions,
  ObjectList,
  DeleteOptions,
  DeleteResult,
  PropagationPolicy,
} from "./objects.js";

export { ApplyAllError } from "./apply.js";
export type { ApplyAction, ApplyConnection, ApplyOptions, ApplyAllOptions, ApplyResult } from "./apply.js";

export { OpenApiCache } from "./openapi.js";
export type { PatchPlan } from "./openapi.js";

export { watch, waitFor, waitForDeletion, observe, describeScope, waitForCondition, waitForObjects } from "./watch.js";
export type {
  WatchEvent,
  WatchEventType,
  WatchOptions,
  WaitScope,
  WaitVerdict,
  WaitCheck,
  WaitOptions,
  ObjectRef,
} from "./watch.js";

export { podLogs, jobPods, PODS, JOBS } from "./logs.js";
export type { LogOptions } from "./logs.js";

// The object shapes the client speaks (defined with the pure kubectl semantics, which use them too).
export type { KubeObject, ObjectMeta, ResourceType, ApiResource } from "../kubectl/types.js";
