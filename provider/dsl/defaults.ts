/**
 * The defaults table: every default of the khook v1 document, in one place.
 *
 * The loader applies the action defaults once (withActionDefaults), so a
 * LoadedStep's action is complete: the executors read `step.action.namespace`,
 * never `?? "default"`, and the input hash (hash.ts) reads the same normalized
 * action, dropping the fields that equal these defaults. If the hash and an
 * executor could disagree on a default, resume would treat a real change as
 * unchanged; with one table they cannot.
 *
 * test/unit/defaults-table.test.ts checks that every `default` of the JSON
 * Schema is here, with the same value.
 */
import type {
  ActionByType,
  ApplyAction,
  DeleteAction,
  DeleteManifestsAction,
  DeleteReleaseAction,
  DeleteResourceAction,
  FailurePolicy,
  HelmAction,
  JobAction,
  OnError,
  PatchAction,
  RolloutAction,
  StepSpec,
  StepType,
  WaitAction,
} from "./types.js";
import { stepTypeOf } from "./types.js";

/** The document-level defaults: step scheduling (`defaults:`), the state record, hooks. */
export const SPEC_DEFAULTS = {
  timeout: "5m",
  retries: 0,
  retryDelay: "10s",
  onError: "fail" as OnError,
  namespace: "default",
  stateEnabled: true,
  stateNamespace: "default",
  stateNamePrefix: "khook-state-",
  hookPriority: 0,
  hookFailurePolicy: "Fail" as FailurePolicy,
  hookAllowAdd: false,
  hookAllowClusterScoped: false,
  functionTimeout: "30s",
  webhookTimeout: "10s",
} as const;

/**
 * The defaults of each action block, keyed like the schema's definitions
 * (`helmAction` -> helm, `deleteByRelease` -> deleteByRelease). One default is
 * not a constant: a helm release is named after its step.
 */
export const ACTION_DEFAULTS = {
  helm: { namespace: SPEC_DEFAULTS.namespace, createNamespace: false, atomic: false, wait: false },
  apply: { createNamespace: false, serverSide: false },
  deleteByManifests: { ignoreNotFound: true },
  deleteByResource: { allNamespaces: false, ignoreNotFound: true },
  deleteByRelease: { namespace: SPEC_DEFAULTS.namespace, ignoreNotFound: true },
  patch: { namespace: SPEC_DEFAULTS.namespace, type: "strategic" },
  wait: { allNamespaces: false },
  rollout: {},
  job: { namespace: SPEC_DEFAULTS.namespace, createNamespace: false },
} as const satisfies {
  helm: Partial<HelmAction>;
  apply: Partial<ApplyAction>;
  deleteByManifests: Partial<DeleteManifestsAction>;
  deleteByResource: Partial<DeleteResourceAction>;
  deleteByRelease: Partial<DeleteReleaseAction>;
  patch: Partial<PatchAction>;
  wait: Partial<WaitAction>;
  rollout: Partial<RolloutAction>;
  job: Partial<JobAction>;
};

export type ActionDefaultsKey = keyof typeof ACTION_DEFAULTS;

/** `A` with the fields `K` always present. */
type Defaulted<A, K extends keyof A> = A & { readonly [P in K]-?: Exclude<A[P], undefined> };

/** An action block after the loader applied the table: every defaulted field is set. */
export interface NormalizedActionByType {
  helm: Defaulted<HelmAction, "release" | keyof typeof ACTION_DEFAULTS.helm>;
  apply: Defaulted<ApplyAction, keyof typeof ACTION_DEFAULTS.apply>;
  delete:
    | Defaulted<DeleteManifestsAction, keyof typeof ACTION_DEFAULTS.deleteByManifests>
    | Defaulted<DeleteResourceAction, keyof typeof ACTION_DEFAULTS.deleteByResource>
    | Defaulted<DeleteReleaseAction, keyof typeof ACTION_DEFAULTS.deleteByRelease>;
  patch: Defaulted<PatchAction, keyof typeof ACTION_DEFAULTS.patch>;
  wait: Defaulted<WaitAction, keyof typeof ACTION_DEFAULTS.wait>;
  rollout: RolloutAction;
  job: Defaulted<JobAction, keyof typeof ACTION_DEFAULTS.job>;
}

/** A step's type with its action block, as written. */
export type TypedAction = { [T in StepType]: { readonly type: T; readonly action: ActionByType[T] } }[StepType];

/** A step's type with its normalized action block. */
export type NormalizedTypedAction = {
  [T in StepType]: { readonly type: T; readonly action: NormalizedActionByType[T] };
}[StepType];

/** The step's type and action block (a valid step has exactly one action key). */
export function typedActionOf(step: StepSpec): TypedAction {
  const type = stepTypeOf(step);
  return { type, action: (step as unknown as ActionByType)[type] } as TypedAction;
}

/** Which of the three `delete:` forms a block is, named like its table row. */
export function deleteForm(action: DeleteAction): "deleteByManifests" | "deleteByResource" | "deleteByRelease" {
  if ("release" in action) return "deleteByRelease";
  if ("manifests" in action) return "deleteByManifests";
  return "deleteByResource";
}

/** The table row that applies to an action block. */
export function defaultsFor(t: TypedAction): Readonly<Record<string, unknown>> {
  return t.type === "delete" ? ACTION_DEFAULTS[deleteForm(t.action)] : ACTION_DEFAULTS[t.type];
}

/**
 * The action block with every default applied (fields the author left out, or
 * wrote as null, take the table's value). Applied once, at load.
 */
export function withActionDefaults(t: TypedAction, stepName: string): NormalizedTypedAction {
  switch (t.type) {
    case "helm":
      return { type: t.type, action: { ...ACTION_DEFAULTS.helm, release: stepName, ...defined(t.action) } };
    case "apply":
      return { type: t.type, action: { ...ACTION_DEFAULTS.apply, ...defined(t.action) } };
    case "delete": {
      const a = t.action;
      if ("release" in a) return { type: t.type, action: { ...ACTION_DEFAULTS.deleteByRelease, ...defined(a) } };
      if ("manifests" in a) return { type: t.type, action: { ...ACTION_DEFAULTS.deleteByManifests, ...defined(a) } };
      return { type: t.type, action: { ...ACTION_DEFAULTS.deleteByResource, ...defined(a) } };
    }
    case "patch":
      return { type: t.type, action: { ...ACTION_DEFAULTS.patch, ...defined(t.action) } };
    case "wait":
      return { type: t.type, action: { ...ACTION_DEFAULTS.wait, ...defined(t.action) } };
    case "rollout":
      return { type: t.type, action: defined(t.action) };
    case "job":
      return { type: t.type, action: { ...ACTION_DEFAULTS.job, ...defined(t.action) } };
  }
}

/** Freezes a JSON-like value and everything inside it: the loaded spec is never mutated. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The object without its undefined (and null) fields, so they do not override a default when spread. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
}
