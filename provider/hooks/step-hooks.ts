/**
 * Lifecycle hooks of one step: the one place every event goes through.
 *
 * The engine makes a StepHooks per step (shared by its attempts) and hands
 * every attempt a view bound to that attempt's signal and log. Which event
 * fires where, in which runs, is each event's definition (dsl/hook-events.ts);
 * StepHooks fires the events of each point. Executors call
 * `render` where their objects exist (apply and delete sources, helm's
 * post-renderer): the `render` events, then the `send` ones when the objects are
 * about to be sent. The engine calls `afterStep` when the step's attempts are
 * over and `beforeTeardown` before each destroy attempt.
 *
 * - post-render: KRM functions, in order; each sees the previous one's output.
 *   A function's failure, or a result of severity `error`, fails the step before
 *   anything is sent, listing each result with its object and field. Function
 *   failures are deterministic (same input, same output), so they are not retried.
 * - post-render functions see every object as applied, secrets included; webhooks
 *   never see a secret value (objects carrying one are named in context.withheld and
 *   cannot be replaced).
 * - pre-apply (apply mode only): webhooks receive `{phase, object, children}` and
 *   may return changed children (which replace the set they were sent); an object
 *   they add fails the step unless the hook's `allow:` admits it.
 * - post-apply: webhooks are told the outcome, the objects sent and the helm revision.
 * - finalize: webhooks must succeed before the step's objects are removed.
 *
 * Webhook errors follow the Scoby hooks contract: `permanent: false` is retried under the step's
 * retries, `permanent: true` fails the step at once, `continue: true` proceeds
 * unchanged. With failurePolicy Ignore an unreachable hook is logged and skipped.
 * Plan runs post-render functions (side-effect free by the KRM functions spec) and never calls
 * a webhook.
 */
import { executionError, KhookError } from "../errors.js";
import type { Redactor } from "../redact.js";
import { hooksFor, type LoadedHook, type LoadedWebhookHandler } from "../dsl/hooks.js";
import { eventsAt, lifecycleOf, type HookEvent, type HookRun } from "../dsl/hook-events.js";
import type { LoadedSpec, LoadedStep } from "../dsl/loaded.js";
import { buildContext, objectKey, partitionObjects, type HookContextExtras } from "./context.js";
import type * as FunctionRunner from "./function.js";
import type { FunctionResult } from "./function.js";
import type * as WebhookClient from "./webhook.js";

// The runners are required when a hook runs: a spec without hooks, and a resumed re-run, never
// pays for them (nor for child_process, which the function runner spawns with).
const functionRunner = (): typeof FunctionRunner => require("./function.js") as typeof FunctionRunner;
const webhookClient = (): typeof WebhookClient => require("./webhook.js") as typeof WebhookClient;

export type HookMode = HookRun;
export type KubeObjectLike = Record<string, unknown>;

/** A failure that retrying the attempt cannot fix: the engine does not retry it. */
export class PermanentHookError extends KhookError {
  readonly permanent = true;
  constructor(message: string) {
    super("execution", message);
    this.name = "PermanentHookError";
  }
}

export function isPermanent(e: unknown): boolean {
  return e instanceof PermanentHookError;
}

/** The step's reason when it succeeded but one of its `after-step` hooks (post-apply when applying) failed. */
export function afterStepFailedReason(mode: HookMode): string {
  return `the step succeeded, but its ${eventsAt("after-step", mode).join(" or ")} hook failed`;
}

/** What an attempt's hooks need from the attempt. */
export interface AttemptIo {
  readonly signal: AbortSignal;
  log(message: string): void;
  /**
   * Whether the cluster serves `kind` as a namespaced resource (discovery), or undefined when it
   * does not serve it. Without it, an object added by a webhook is judged by its metadata alone.
   */
  isNamespaced?(apiVersion: string, kind: string): Promise<boolean | undefined>;
}

export interface PostApplyOutcome {
  readonly status: "ok" | "failed" | "skipped";
  readonly reason: string;
  readonly revision?: number | undefined;
}

/** What an executor sees of its step's hooks during one attempt (StepContext.hooks). */
export interface AttemptHooks {
  /** Whether `render` may change the objects (helm then routes its manifest through the post-renderer). */
  readonly transformsObjects: boolean;
  /** The `render` events, then the `send` ones when `send` is true (post-render, then pre-apply when applying). */
  render(objects: readonly KubeObjectLike[], opts: { send: boolean }): Promise<KubeObjectLike[]>;
  /** Chart, release, values and capabilities for the context (helm). */
  setExtras(extras: HookContextExtras): void;
  /** The objects pre-apply webhooks added during the last render that sent objects (allow.add). */
  added(): readonly KubeObjectLike[];
}

/** The step's hooks for a run in `mode`, or undefined when no hook applies to it. */
export function stepHooksFor(
  spec: LoadedSpec,
  step: LoadedStep,
  mode: HookMode,
  redactor: Redactor,
): StepHooks | undefined {
  return step.hooks.length > 0 ? new StepHooks(spec, step, mode, redactor) : undefined;
}

/** The hooks of one step in one run. */
export class StepHooks {
  private sent: KubeObjectLike[] = [];
  private addedObjects: KubeObjectLike[] = [];
  private readonly wheres = new Map<string, string>();
  private extras: HookContextExtras = {};

  constructor(
    private readonly spec: LoadedSpec,
    readonly step: LoadedStep,
    readonly mode: HookMode,
    private readonly redactor: Redactor,
  ) {}

  /** The hooks of this step for `event`, in run order. */
  for(event: HookEvent): LoadedHook[] {
    return hooksFor(this.step, event);
  }

  /** Whether `render` changes anything in this mode: a hook on a `render` or `send` event that fires in it. */
  get transformsObjects(): boolean {
    return [...eventsAt("render", this.mode), ...eventsAt("send", this.mode)].some((e) => this.for(e).length > 0);
  }

  /** The view one attempt's executor gets. */
  bind(io: AttemptIo): AttemptHooks {
    return {
      transformsObjects: this.transformsObjects,
      render: (objects, opts) => this.render(objects, io, opts),
      setExtras: (extras) => this.setExtras(extras),
      added: () => this.added(),
    };
  }

  /** What executors know about the step beyond its spec (helm: chart, release, values). */
  setExtras(extras: HookContextExtras): void {
    this.extras = { ...this.extras, ...extras };
  }

  /**
   * The `render` events (post-render), then, when `send`, the `send` ones (pre-apply
   * when applying): the objects to send. `send` is false for reads (plan, diff,
   * delete's lookups): the `send` events then do not fire.
   */
  async render(objects: readonly KubeObjectLike[], io: AttemptIo, opts: { send: boolean }): Promise<KubeObjectLike[]> {
    let current = [...objects];
    if (opts.send) this.addedObjects = [];
    for (const event of eventsAt("render", this.mode))
      for (const hook of this.for(event)) current = await this.runFunctionHook(hook, event, current, io);
    if (opts.send) {
      for (const event of eventsAt("send", this.mode))
        for (const hook of this.for(event)) current = await this.runChildrenWebhook(hook, event, current, io);
      this.sent = current;
    }
    return current;
  }

  /**
   * The `after-step` events (post-apply when applying): webhooks told how the step ended,
   * each retried under the step's retries. Throws when a Fail hook does not succeed.
   */
  async afterStep(
    outcome: PostApplyOutcome,
    io: AttemptIo,
    sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    for (const event of eventsAt("after-step", this.mode)) await this.tellOutcome(event, outcome, io, sleep);
  }

  /** The `before-teardown` events (finalize when destroying): every hook must succeed before the step's objects are removed. The engine retries the attempt. */
  async beforeTeardown(io: AttemptIo): Promise<void> {
    for (const event of eventsAt("before-teardown", this.mode))
      for (const hook of this.for(event)) await this.callWebhookHook(hook, event, [], io, this.extras);
  }

  // ---------------------------------------------------------------- handlers

  private async tellOutcome(
    event: HookEvent,
    outcome: PostApplyOutcome,
    io: AttemptIo,
    sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    for (const hook of this.for(event)) {
      const extras: HookContextExtras = {
        ...this.extras,
        ...(outcome.revision !== undefined && this.extras.release !== undefined
          ? { release: { ...this.extras.release, revision: outcome.revision } }
          : {}),
        outcome: { status: outcome.status, reason: outcome.reason },
      };
      const attempts = 1 + Math.max(0, this.step.retries);
      for (let attempt = 1; ; attempt++) {
        try {
          await this.callWebhookHook(hook, event, this.sent, io, extras);
          break;
        } catch (e) {
          if (isPermanent(e) || attempt >= attempts || io.signal.aborted) throw e;
          io.log(`${event} hook ${hook.name}: ${(e as Error).message}; retrying (${attempt + 1}/${attempts})`);
          await sleep(this.step.retryDelayMs, io.signal);
        }
      }
    }
  }

  /** `spec.yaml:12`, for messages. Looking a position up parses the positioned document: only on demand, once. */
  private where(hook: LoadedHook): string {
    let w = this.wheres.get(hook.name);
    if (w === undefined) {
      const line = hook.position?.line;
      w = `${this.spec.file ?? "spec"}${line !== undefined ? `:${line}` : ""}`;
      this.wheres.set(hook.name, w);
    }
    return w;
  }

  private contextJson(
    hook: LoadedHook,
    event: HookEvent,
    withheld: readonly string[],
    extras: HookContextExtras = this.extras,
  ): string {
    return JSON.stringify(
      buildContext({
        event,
        hook: hook.name,
        spec: this.spec.name,
        step: { name: this.step.name, type: this.step.type, summary: this.step.summary },
        extras,
        withheld,
        redactor: this.redactor,
      }),
    );
  }

  /**
   * A function is the spec author's own local program, run like kubectl's KRM orchestrators
   * run one: it gets every object exactly as it will be applied, secrets included, so a
   * validator judges what is applied. What it says (results, stderr, failures) is redacted.
   */
  private async runFunctionHook(
    hook: LoadedHook,
    event: HookEvent,
    objects: KubeObjectLike[],
    io: AttemptIo,
  ): Promise<KubeObjectLike[]> {
    if (hook.handler.kind !== "function") return objects;
    const run = await functionRunner().runFunction(hook.handler, objects, this.contextJson(hook, event, []), {
      redactor: this.redactor,
      signal: io.signal,
    });
    const label =
      run.results.length > 0 || run.failure !== undefined ? `${event} hook ${hook.name} (${this.where(hook)})` : "";
    for (const r of run.results) io.log(`${label}: ${formatResult(r)}`);
    const errors = run.results.filter((r) => r.severity === "error");
    if (run.failure !== undefined || errors.length > 0) {
      const lines = errors.map((r) => `  - ${formatResult(r)}`);
      // A validator reports through error results (and exits 1): its results are the message.
      const head =
        errors.length > 0
          ? `${label} rejected the step's objects (${errors.length} error${errors.length === 1 ? "" : "s"}); nothing was sent to the cluster`
          : `${label}: function ${hook.handler.exec} ${run.failure ?? "failed"}`;
      throw new PermanentHookError(this.redactor.redact([head, ...lines].join("\n")));
    }
    return run.items ?? [];
  }

  /**
   * A webhook is remote: it never receives a secret value. An object that carries one is not
   * shown; it is named in `context.withheld` (so a policy hook can still refuse the step) and
   * is sent as declared: the webhook cannot replace it. The webhook may change or drop the
   * objects it was shown; it may add one only where its `allow:` says so.
   */
  private async runChildrenWebhook(
    hook: LoadedHook,
    event: HookEvent,
    objects: KubeObjectLike[],
    io: AttemptIo,
  ): Promise<KubeObjectLike[]> {
    const { visible, withheld } = partitionObjects(objects, this.redactor);
    const shown = visible.map((v) => v.object);
    const children = await this.callWebhookHook(
      hook,
      event,
      shown,
      io,
      this.extras,
      withheld.map((w) => objectKey(w.object)),
    );
    if (children === undefined) return objects;
    const returned = Object.values(children);
    const added = await this.checkReturned(
      hook,
      event,
      shown,
      withheld.map((w) => w.object),
      returned,
      io,
    );
    io.log(
      `${event} hook ${hook.name}: ${returned.length} object(s) returned${added.length > 0 ? `, ${added.length} of them added: ${added.map(objectKey).join(", ")}` : ""}`,
    );
    this.addedObjects.push(...added);
    return mergeWithheld(returned, withheld);
  }

  /** The objects a webhook added (not among those it was shown); throws when it may not have returned one of them. */
  private async checkReturned(
    hook: LoadedHook,
    event: HookEvent,
    shown: readonly KubeObjectLike[],
    withheld: readonly KubeObjectLike[],
    returned: readonly KubeObjectLike[],
    io: AttemptIo,
  ): Promise<KubeObjectLike[]> {
    const defaultNamespace = this.stepNamespace();
    const identity = (o: KubeObjectLike): string => objectIdentity(o, defaultNamespace);
    const shownIds = new Set(shown.map(identity));
    const withheldIds = new Set(withheld.map(identity));
    const problems: string[] = [];
    const added: KubeObjectLike[] = [];
    for (const o of returned) {
      const id = identity(o);
      if (shownIds.has(id)) continue;
      if (withheldIds.has(id)) {
        problems.push(
          `returned ${objectKey(o)}, which it was not shown because it carries a secret value: a webhook cannot replace an object khook withheld from it`,
        );
        continue;
      }
      const problem = await this.additionProblem(hook, o, shown, io);
      if (problem !== undefined) problems.push(problem);
      else added.push(o);
    }
    if (problems.length > 0)
      throw new PermanentHookError(
        this.redactor.redact(
          `${this.webhookLabel(hook, event)}: ${problems.join("; ")}; nothing was sent to the cluster`,
        ),
      );
    return added;
  }

  /** Why the hook may not add `o`, or undefined. */
  private async additionProblem(
    hook: LoadedHook,
    o: KubeObjectLike,
    shown: readonly KubeObjectLike[],
    io: AttemptIo,
  ): Promise<string | undefined> {
    const key = objectKey(o);
    const allow = hook.allow;
    if (!allow.add) {
      return `added ${key}, which the step does not declare: a pre-apply webhook may change the step's objects but adds one only where the hook allows it (allow: {add: true, namespaces: [...]} on hook ${hook.name})`;
    }
    const meta = (o.metadata ?? {}) as { namespace?: unknown };
    const written = typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : undefined;
    const namespaced =
      io.isNamespaced !== undefined && typeof o.apiVersion === "string" && typeof o.kind === "string"
        ? await io.isNamespaced(o.apiVersion, o.kind)
        : written !== undefined;
    if (namespaced === false || (namespaced === undefined && written === undefined)) {
      return allow.clusterScoped
        ? undefined
        : `added ${key}, a cluster-scoped object, and hook ${hook.name} allows only namespaced additions (allow.clusterScoped: true allows it)`;
    }
    const namespace = written ?? this.stepNamespace() ?? "default";
    const allowed = allow.namespaces ?? this.declaredNamespaces(shown);
    if (!allowed.includes(namespace)) {
      const where =
        allow.namespaces !== undefined
          ? `allow.namespaces is [${allowed.join(", ")}]`
          : `without allow.namespaces a hook adds only in the step's own namespaces (${allowed.join(", ") || "none"})`;
      return `added ${key} in namespace ${namespace}: ${where}`;
    }
    return undefined;
  }

  /** The namespace objects of this step go to when they name none (apply's and helm's namespace:). */
  private stepNamespace(): string | undefined {
    const ns = (this.step.action as { namespace?: unknown }).namespace;
    return typeof ns === "string" && ns !== "" ? ns : undefined;
  }

  private declaredNamespaces(shown: readonly KubeObjectLike[]): string[] {
    const out = new Set<string>();
    const own = this.stepNamespace();
    if (own !== undefined) out.add(own);
    for (const o of shown) {
      const ns = (o.metadata as { namespace?: unknown } | undefined)?.namespace;
      if (typeof ns === "string" && ns !== "") out.add(ns);
    }
    return [...out].sort();
  }

  /** The objects pre-apply webhooks added during this step's last render (the journal records them). */
  added(): readonly KubeObjectLike[] {
    return this.addedObjects;
  }

  private webhookLabel(hook: LoadedHook, phase: HookEvent): string {
    const handler = hook.handler as LoadedWebhookHandler;
    return `${phase} hook ${hook.name} (${this.where(hook)}, ${this.redactor.redact(webhookClient().describeUrl(handler.url))})`;
  }

  /**
   * One webhook call under the contract. Returns the changed children (at `send`),
   * or undefined for "no changes"; throws when the step must fail or retry.
   */
  private async callWebhookHook(
    hook: LoadedHook,
    phase: HookEvent,
    objects: readonly KubeObjectLike[],
    io: AttemptIo,
    extras: HookContextExtras,
    withheld: readonly string[] = [],
  ): Promise<Record<string, KubeObjectLike> | undefined> {
    const handler = hook.handler as LoadedWebhookHandler;
    const label = (): string => this.webhookLabel(hook, phase);
    const request = {
      phase,
      object: this.stepObject(extras),
      children: childrenMap(objects),
      context: JSON.parse(this.contextJson(hook, phase, withheld, extras)) as unknown,
    };
    const answer = await webhookClient().callWebhook(handler, request, { redactor: this.redactor, signal: io.signal });
    switch (answer.kind) {
      case "ok":
        return lifecycleOf(phase).at === "send" ? answer.children : undefined;
      case "unreachable":
        if (hook.failurePolicy === "Ignore") {
          io.log(`${label()}: ${answer.message}; failurePolicy Ignore: skipped`);
          return undefined;
        }
        throw executionError(
          `${label()}: ${answer.message} (failurePolicy Fail; set failurePolicy: Ignore to proceed without it)`,
        );
      case "error": {
        const text = `${label()} answered HTTP ${answer.status}: ${answer.message}`;
        if (answer.continue) {
          io.log(`${text}; continue: true, so the step proceeds unchanged`);
          return undefined;
        }
        if (answer.permanent) throw new PermanentHookError(`${text} (permanent: not retried)`);
        throw executionError(text);
      }
    }
  }

  /** Scoby's `object`: the step being reconciled, as a Kubernetes-style object. */
  private stepObject(extras: HookContextExtras): Record<string, unknown> {
    return this.redactor.redactValue({
      apiVersion: "khook.io/v1",
      kind: "Step",
      metadata: { name: this.step.name, labels: { "khook.io/spec": this.spec.name } },
      spec: { type: this.step.type, summary: this.step.summary },
      ...(extras.outcome !== undefined ? { status: extras.outcome } : {}),
    });
  }
}

/** Scoby's children map: `Kind/name -n namespace` keys (a repeated key gets `#2`, `#3`, ...). */
export function childrenMap(objects: readonly KubeObjectLike[]): Record<string, KubeObjectLike> {
  const out: Record<string, KubeObjectLike> = {};
  for (const o of objects) {
    const base = objectKey(o);
    let key = base;
    for (let n = 2; key in out; n++) key = `${base} #${n}`;
    out[key] = o;
  }
  return out;
}

/** Which object `o` is: kind, namespace (the step's when it names none) and name; apiVersion may change across versions of one kind. */
function objectIdentity(o: KubeObjectLike, defaultNamespace: string | undefined): string {
  const meta = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const ns = typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : (defaultNamespace ?? "");
  return `${String(o.kind)}\0${ns}\0${String(meta.name)}`;
}

/** Puts withheld objects back where they were, relative to the (possibly changed) rest. */
function mergeWithheld(
  items: readonly KubeObjectLike[],
  withheld: readonly { index: number; object: KubeObjectLike }[],
): KubeObjectLike[] {
  const out = [...items];
  for (const w of withheld) out.splice(Math.min(w.index, out.length), 0, w.object);
  return out;
}

/** `error Deployment/web -n apps spec.template.spec.containers[0].resources.limits: message` */
export function formatResult(r: FunctionResult): string {
  const ref = r.resourceRef;
  const object =
    ref !== undefined ? `${ref.kind ?? "?"}/${ref.name ?? "?"}${ref.namespace ? ` -n ${ref.namespace}` : ""}` : "";
  const field = r.field?.path !== undefined ? `${object !== "" ? " " : ""}${r.field.path}` : "";
  const where = object + field;
  return `${r.severity}${where !== "" ? ` ${where}` : ""}: ${r.message}`;
}
