/** provider/kube: the only code that talks to the API server. */
export { KubeClient, sleep } from "./client.js";
export type { KubeConnectOptions, RequestOptions, RawResponse, HttpMethod, QueryValue } from "./client.js";

export {
  KubeApiError,
  KubeConnectionError,
  KubeConfigError,
  WaitTimeoutError,
  apiErrorFromResponse,
  isKubeApiError,
  isNotFound,
} from "./errors.js";
export type { ErrorTarget } from "./errors.js";

export { Discovery, UnknownResourceError, parseAggregated } from "./discovery.js";
export type { ResolveOptions } from "./discovery.js";
export { splitTarget, parseResourceArg, matchResource, matchKind } from "./resourceref.js";
export type { ResourceQuery, TargetParse } from "./resourceref.js";

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

export { LAST_APPLIED_ANNOTATION, ApplyAllError, kubectlRef, lastAppliedJson, parseLastApplied, withLastApplied, prepare as prepareForApply } from "./apply.js";
export type { ApplyAction, ApplyOptions, ApplyAllOptions, ApplyResult } from "./apply.js";

export {
  createThreeWayStrategicMergePatch,
  createThreeWayJsonMergePatch,
  createMergePatch,
  applyMergePatch,
  OpenApiV3PatchMeta,
  NO_PATCH_META,
  PatchComputationError,
} from "./threeway.js";
export type { PatchMeta, FieldPatchMeta, JsonMap } from "./threeway.js";
export { OpenApiCache } from "./openapi.js";
export type { PatchPlan } from "./openapi.js";

export { watch, waitFor, waitForDeletion, observe, describeScope } from "./watch.js";
export type { WatchEvent, WatchEventType, WatchOptions, WaitScope, WaitVerdict, WaitCheck, WaitOptions } from "./watch.js";

export { evaluateCondition, checkObjects, waitForCondition, waitForObjects } from "./conditions.js";
export type { ConditionResult, ObjectRef } from "./conditions.js";

export { parseJsonPath, evaluateJsonPath, formatJsonPathValue, isNonEmptyValue } from "./jsonpath.js";
export type { JsonPathExpr, JsonPathParse, Segment as JsonPathSegment } from "./jsonpath.js";

export { rolloutStatus, restartPatch, rfc3339, ROLLOUT_KINDS, RESTARTED_AT } from "./rollout.js";
export type { RolloutKind, RolloutStatus } from "./rollout.js";

export { podLogs, jobPods, PODS, JOBS } from "./logs.js";
export type { LogOptions } from "./logs.js";

export { apiVersionOf, splitApiVersion, groupResource, describeObject, shortRef } from "./types.js";
export type { KubeObject, ObjectMeta, ResourceType, ApiResource } from "./types.js";
