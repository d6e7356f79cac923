/**
 * What a step kind is: the loader's part (dsl/step-kind.ts: defaults, rules, summary, files, hook
 * points) and its executor, which the engine calls. Each kind is one folder under
 * provider/steps/ (its definition.ts holds its block's schema and type); index.ts lists them.
 */
import type { KindDefinitions } from "../dsl/schema-assembly.js";
import type { StepKind } from "../dsl/step-kind.js";
import type { LoadedSpec, LoadedStep, LoadedStepBase } from "../dsl/loaded.js";
import type { Redactor } from "../redact.js";
import type { KubeApi } from "../kube/api.js";
import type { ClusterTarget } from "../kube/client.js";
import type { AttemptHooks } from "../hooks/step-hooks.js";
import type { StepRecord } from "../state/journal.js";
import type { StepBaseline } from "../state/record.js";
import type { LiveReads } from "../kube/live.js";

/** What plan shows for a step, decided from live state. */
export type PlanAction =
  "install" | "upgrade" | "create" | "configure" | "delete" | "restart" | "run" | "wait" | "skip" | "no-op";

export interface Assessment {
  action: PlanAction;
  /** One line, for people, e.g. `revision 3 (ingress-nginx-4.8.3, deployed) -> ingress-nginx@4.9.0`. */
  reason: string;
  /**
   * Only when assess was asked for it (`plan --diff`), from an executor that diffs:
   * the unified diff of what apply would change, made from the same server-side dry
   * run that decided the action, or why it could not be made. Not yet redacted as a
   * whole: the plan passes it through the run's redactor.
   */
  diff?: string | Error;
}

export interface AssessOptions {
  /** Also return the diff (Assessment.diff). */
  readonly diff?: boolean;
}

/** How one attempt of a step ended. `skipped` is a skipIf short-circuit, which still satisfies `needs`. */
export interface StepOutcome {
  status: "ok" | "skipped";
  reason: string;
  /** helm: the revision this attempt made, for post-apply hooks. */
  revision?: number;
  /** Objects a pre-apply webhook added and the step applied: the record keeps them for destroy. */
  added?: readonly AddedObjectRef[];
  /** What the record keeps of what the step made, for the drift check (helm: the release's revision). */
  baseline?: StepBaseline;
}

/** An object outside the spec that a step applied (a webhook's addition), as destroy finds it again. */
export interface AddedObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface StepContext {
  readonly spec: LoadedSpec;
  readonly signal: AbortSignal;
  readonly redactor: Redactor;
  /** The cluster: discovery, get/list/patch, apply, watch/wait, logs (provider/kube/api.ts). */
  readonly kube: KubeApi;
  /** Milliseconds left in this attempt; waits use it as their bound. */
  readonly deadline: number;
  /** Progress lines for people (already safe to print after redaction). */
  log(message: string): void;
  /**
   * How subprocesses (helm) reach the cluster: the same kubeconfig and context
   * the kube client uses, passed to them explicitly. Absent: the default
   * resolution (KUBECONFIG, ~/.kube/config, in-cluster service account).
   */
  readonly connection?: ClusterTarget;
  /** Tool binaries from the provider configuration; else KHOOK_HELM / KHOOK_KUSTOMIZE / KHOOK_KUBECTL, else PATH. */
  readonly tools?: ToolPaths;
  /** The step's lifecycle hooks (provider/hooks); absent when none applies to the step. */
  readonly hooks?: AttemptHooks;
  /** destroy: the objects the state record says webhooks added to this step (not in the spec). */
  readonly recordedAdditions?: readonly AddedObjectRef[];
  /** The state record as this step sees it (helm: what a dead run left in flight); absent without `state:`. */
  readonly record?: StepRecord;
}

/** How a completed step compares with the cluster now (`khook plan --live`). */
export type DriftState = "in-sync" | "drifted" | "not-checkable";

/** What happened to one thing a step made. */
export type DriftChange =
  /** An object's applied fields differ (`fields` names them). */
  | "changed"
  /** An object the step applied is gone. */
  | "gone"
  /** A release is at another revision than the one khook made. */
  | "revision"
  /** A release was uninstalled. */
  | "uninstalled"
  /** A release is pending (a helm operation runs or died). */
  | "pending"
  /** Something a `delete:` step removed exists again. */
  | "back";

export interface DriftedThing {
  /** `configmap/app -n web`, `release cert-manager -n cert-manager`. */
  readonly ref: string;
  readonly change: DriftChange;
  /** The fields (or value paths) that differ, by path: never a value. */
  readonly fields?: readonly string[];
  /** A word more, for people (why it is gone, that a dry run could not confirm it). */
  readonly note?: string;
}

export interface DriftFinding {
  readonly state: DriftState;
  /** One line for people: names objects and fields, never a value. */
  readonly reason: string;
  /** What drifted (state "drifted" only). */
  readonly drifted?: readonly DriftedThing[];
}

/** A drift check's context: the step's context, one look at the cluster shared by every step, and the step's record. */
export interface DriftContext extends StepContext {
  /** The cluster read a list per kind and namespace (kube/live.ts), shared by every step of the check. */
  readonly live: LiveReads;
  /** What the state record says of the step's last successful run. */
  readonly recorded: RecordedRun;
}

export interface RecordedRun {
  /** ISO-8601: when the step's run that the record keeps finished. */
  readonly finishedAt: string;
  readonly baseline?: StepBaseline;
}

export interface ToolPaths {
  readonly helm?: string;
  readonly kustomize?: string;
  readonly kubectl?: string;
}

export interface DestroyOutcome {
  status: "ok" | "skipped";
  reason: string;
}

/** Runs the steps of one kind; `S` is that kind's loaded step. */
export interface StepExecutor<S extends LoadedStep = LoadedStep> {
  readonly type: S["type"];
  /** Read-only: decides plan's action from live state. Must never change the cluster. */
  assess(step: S, ctx: StepContext, opts?: AssessOptions): Promise<Assessment>;
  /** Runs one attempt. Throws on failure; the engine handles retries and timeouts. */
  apply(step: S, ctx: StepContext): Promise<StepOutcome>;
  /** Undoes what this step created, and only that. */
  destroy(step: S, ctx: StepContext): Promise<DestroyOutcome>;
  /**
   * Read-only, for a step the record calls completed: does what it made still hold in the
   * cluster (`khook plan --live`)? Reads through `ctx.live` (a list per kind, not a GET per
   * object); names what drifted, never a value. Must never change the cluster.
   */
  drift(step: S, ctx: DriftContext): Promise<DriftFinding>;
  /** Set when assess, asked to, returns a diff (from its server-side dry run): a failed assess then says in the diff why there is none. */
  readonly diffs?: true;
}

/** The executors the engine runs steps with, by kind. */
export type ExecutorRegistry = { readonly [kind: string]: StepExecutor };

/** The loaded step a kind's executor runs. */
export type StepOfKind<K> =
  K extends Kind<infer Name, infer _Action, infer Normalized> ? LoadedStepBase<Name, Normalized> : never;

/**
 * What a kind's definition.ts exports as DEFINITION: its block's schema and the definitions it
 * refers to. Build time only (typebox): steps/generate-schema.ts reads it, nothing at run time.
 */
export type KindDefinition = Omit<KindDefinitions, "name">;

/** A tool a kind's steps run, which Pulumi's check looks for before a run. */
export type KindTool = "helm" | "kustomize";

/**
 * A step kind: what the loader reads, and its executor, required on first use (a run loads only
 * the kinds it executes; a resumed re-run none). `Action` is the block as written,
 * `Normalized` with its defaults applied.
 */
export interface Kind<Name extends string = string, Action = unknown, Normalized = unknown> extends StepKind<
  Name,
  Action,
  Normalized
> {
  readonly executor: StepExecutor<LoadedStepBase<Name, Normalized>>;
  /**
   * Its defaults, by the definition they belong to (`helmAction`; one per form of a block with
   * forms): `normalize` applies them, and the schema generator writes them into the schema's
   * `default`s. One table, read by the loader, the hash, the executor and editors alike.
   */
  readonly defaults: { readonly [definition: string]: Readonly<Record<string, unknown>> };
  /** The tools every step of the kind runs (a `kustomize:` source adds kustomize: manifests/kind.ts). */
  readonly tools: readonly KindTool[];
}
