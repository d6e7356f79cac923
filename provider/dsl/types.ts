/**
 * The khook v1 document model, exactly as the normative spec defines it.
 * `schema/v1/khook.json` describes the same shapes; test/unit/schema-drift.test.ts
 * keeps the two from drifting apart.
 */

export const API_VERSION = "khook.io/v1";
export const KIND = "Khook";

/** Go-style duration text such as `90s`, `5m`, `1h30m`. */
export type DurationText = string;
export type OnError = "fail" | "continue";

export interface KhookDocument {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: Metadata;
  defaults?: StepDefaults;
  state?: StateConfig;
  hooks?: HookSpec[];
  steps: StepSpec[];
}

export interface Metadata {
  name: string;
}

export interface StepDefaults {
  timeout?: DurationText;
  retries?: number;
  retryDelay?: DurationText;
  onError?: OnError;
}

export interface StateConfig {
  enabled?: boolean;
  namespace?: string;
  name?: string;
}

/** Fields every step shares. Only `name` is an input to the step's hash. */
export interface StepCommon extends StepDefaults {
  name: string;
  needs?: string[];
  when?: string;
}

export const STEP_TYPES = ["helm", "apply", "delete", "patch", "wait", "rollout", "job"] as const;
export type StepType = (typeof STEP_TYPES)[number];

export interface HelmStep extends StepCommon {
  helm: HelmAction;
}
export interface ApplyStep extends StepCommon {
  apply: ApplyAction;
}
export interface DeleteStep extends StepCommon {
  delete: DeleteAction;
}
export interface PatchStep extends StepCommon {
  patch: PatchAction;
}
export interface WaitStep extends StepCommon {
  wait: WaitAction;
}
export interface RolloutStep extends StepCommon {
  rollout: RolloutAction;
}
export interface JobStep extends StepCommon {
  job: JobAction;
}

export type StepSpec = HelmStep | ApplyStep | DeleteStep | PatchStep | WaitStep | RolloutStep | JobStep;

/** Maps each step type to its action block. */
export interface ActionByType {
  helm: HelmAction;
  apply: ApplyAction;
  delete: DeleteAction;
  patch: PatchAction;
  wait: WaitAction;
  rollout: RolloutAction;
  job: JobAction;
}

export interface BasicAuth {
  username: string;
  password: string;
}

export type ValuesSource = { file: string } | { url: string };

export type ManifestSource = { inline: string } | { file: string } | { url: string } | { kustomize: string };

export interface HelmAction {
  chart: string;
  repo?: string;
  version?: string;
  auth?: BasicAuth;
  release?: string;
  namespace?: string;
  createNamespace?: boolean;
  skipIf?: "installed";
  atomic?: boolean;
  wait?: boolean;
  values?: Record<string, unknown>;
  valuesFrom?: ValuesSource[];
}

export interface ApplyAction {
  manifests: ManifestSource[];
  namespace?: string;
  createNamespace?: boolean;
  skipIf?: "exists";
  serverSide?: boolean;
  waitFor?: string;
}

/** `delete:` by manifests. `namespace` and `ignoreNotFound` mirror `kubectl delete -f -n NS --ignore-not-found`. */
export interface DeleteManifestsAction {
  manifests: ManifestSource[];
  namespace?: string;
  ignoreNotFound?: boolean;
}

export interface DeleteResourceAction {
  resource: string;
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  fieldSelector?: string;
  ignoreNotFound?: boolean;
}

export interface DeleteReleaseAction {
  release: string;
  namespace?: string;
  ignoreNotFound?: boolean;
}

export type DeleteAction = DeleteManifestsAction | DeleteResourceAction | DeleteReleaseAction;

export type PatchType = "strategic" | "merge" | "json";

export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: unknown;
  from?: string;
}

export interface PatchAction {
  target: string;
  namespace?: string;
  type?: PatchType;
  patch: Record<string, unknown> | JsonPatchOperation[];
}

export interface WaitAction {
  for: string;
  on: string;
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  fieldSelector?: string;
}

export interface RolloutAction {
  restart?: string;
  status?: string;
  namespace: string;
}

export interface JobAction {
  image: string;
  command?: string[];
  args?: string[];
  env?: Record<string, string>;
  namespace?: string;
  createNamespace?: boolean;
  serviceAccount?: string;
  skipIf?: "succeeded";
}

/** Lifecycle events a hook can handle (see docs/hooks.md). */
export const HOOK_EVENTS = ["post-render", "pre-apply", "post-apply", "finalize"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
export type FailurePolicy = "Fail" | "Ignore";

/** A lifecycle hook: one handler (a KRM exec function or a webhook) on one or more events. */
export interface HookSpec {
  name: string;
  on: HookEvent[];
  match?: HookMatch;
  priority?: number;
  failurePolicy?: FailurePolicy;
  function?: HookFunction;
  webhook?: HookWebhook;
  allow?: HookAllow;
}

/** What a pre-apply webhook may add beyond the step's declared objects (nothing by default). */
export interface HookAllow {
  add?: boolean;
  clusterScoped?: boolean;
  namespaces?: string[];
}

/** Which steps a hook applies to: a step matches when it is in `steps` (if given) and of one of `types` (if given). */
export interface HookMatch {
  steps?: string[];
  types?: StepType[];
}

/** A KRM function (exec form): ResourceList YAML on stdin, a ResourceList back on stdout. */
export interface HookFunction {
  exec: string;
  config?: Record<string, unknown>;
  timeout?: DurationText;
}

/** A webhook speaking the Scoby hooks v1 contract. */
export interface HookWebhook {
  url: string;
  timeout?: DurationText;
  headers?: Record<string, string>;
}

/** The `skipIf` word of a type's action block, or undefined when it has none. */
type SkipIfWord<T extends StepType> = "skipIf" extends keyof ActionByType[T]
  ? NonNullable<ActionByType[T]["skipIf" & keyof ActionByType[T]]>
  : undefined;

/**
 * The one `skipIf` word each step type accepts (undefined: no skip policy). Typed
 * against the action interfaces, so a new type, or a skipIf added to one, is asked for here.
 */
export const SKIP_IF_BY_TYPE = {
  helm: "installed",
  apply: "exists",
  delete: undefined,
  patch: undefined,
  wait: undefined,
  rollout: undefined,
  job: "succeeded",
} as const satisfies { readonly [T in StepType]: SkipIfWord<T> };

/** The keys under which an action names a local file or directory (`chart:` only when its value is a path). */
export type LocalFileKey = "file" | "kustomize" | "chart";

/**
 * Which keys of each step type's action may name local files: dsl/hash.ts's
 * fileReferences reads exactly those (a unit test holds it to this), and the Pulumi
 * bundle's quick scan for local files looks for them (pulumi/bundle.ts).
 */
export const LOCAL_FILE_KEYS = {
  helm: ["file", "chart"],
  apply: ["file", "kustomize"],
  delete: ["file", "kustomize"],
  patch: [],
  wait: [],
  rollout: [],
  job: [],
} as const satisfies Record<StepType, readonly LocalFileKey[]>;

export function stepTypeOf(step: StepSpec): StepType {
  for (const t of STEP_TYPES) if (t in step) return t;
  throw new Error(`step ${step.name} has no action key`);
}
