/**
 * The hook events, each defined once: where in a step's life it happens (and so who fires it),
 * in which runs, with which handler, and how the schema describes it to editors. The loader's
 * rules, StepHooks (provider/hooks/step-hooks.ts), the engine, the planner and the schema generator all
 * read HOOK_EVENT_DEFINITIONS; adding an event is one definition and its line in that list
 * (provider/hooks/README.md).
 */

/** A run of the engine: `plan` is the planner's dry runs (executors' assess). */
export type HookRun = "apply" | "plan" | "destroy";

/**
 * The points of a step's life where events happen, and who reaches them: the step's executor
 * where its objects exist (`render`: rendered, nothing sent yet; `send`: about to be sent), or
 * the engine around the step's attempts (`after-step`: the attempts are over, ok or failed,
 * on every step; `before-teardown`: before each destroy attempt). A step kind says which of
 * the others its steps have (StepKind.hookPoints).
 */
export const HOOK_POINTS = {
  render: { firedBy: "executor", everyStep: false },
  send: { firedBy: "executor", everyStep: false },
  "after-step": { firedBy: "engine", everyStep: true },
  "before-teardown": { firedBy: "engine", everyStep: false },
} as const satisfies Record<string, { firedBy: "engine" | "executor"; everyStep: boolean }>;
export type HookPoint = keyof typeof HOOK_POINTS;

/** One event. */
export interface HookEventDefinition<Name extends string = string> {
  readonly name: Name;
  readonly at: HookPoint;
  /** The runs that fire it; `plan` means the planner's dry runs do (plan never calls a webhook). */
  readonly runs: readonly HookRun[];
  /** The one handler kind it takes (the loader's hook-event-handler rule); docs/hooks.md says why. */
  readonly handler: "function" | "webhook";
  /** For editors: when it happens and what its handler may do. */
  readonly description: string;
  /** In the schema's list of what a hook handles: `post-render (<this>)`. */
  readonly handles: string;
}

const postRender = {
  name: "post-render",
  at: "render",
  // Rendering sends nothing, so plan --diff runs the functions too.
  runs: ["apply", "plan", "destroy"],
  handler: "function",
  description:
    "After a step's objects are rendered (apply and delete-by-manifests sources, kustomize, helm charts through helm's post-renderer), before anything is sent. Functions only: plan --diff runs them.",
  handles: "a KRM function transforms or validates a step's rendered objects before anything is sent",
} as const satisfies HookEventDefinition<"post-render">;

const preApply = {
  name: "pre-apply",
  at: "send",
  runs: ["apply"],
  handler: "webhook",
  description:
    "Right before a step sends its objects (helm: before install or upgrade). Webhooks only: receives {phase, object, children}, may return changed children.",
  handles:
    "a webhook receives {phase, object, children} right before the objects are sent and may return changed children",
} as const satisfies HookEventDefinition<"pre-apply">;

const postApply = {
  name: "post-apply",
  at: "after-step",
  runs: ["apply"],
  handler: "webhook",
  description:
    "After a step finished, ok or failed. Webhooks only: told the outcome, the objects and the helm revision.",
  handles: "a webhook is told the outcome",
} as const satisfies HookEventDefinition<"post-apply">;

const finalize = {
  name: "finalize",
  at: "before-teardown",
  runs: ["destroy"],
  handler: "webhook",
  description:
    "Before destroy removes a step's objects (helm: before uninstall). Webhooks only: the teardown proceeds only after the hook succeeds.",
  handles: "a webhook must succeed before destroy removes the step's objects",
} as const satisfies HookEventDefinition<"finalize">;

/** Every event, in the order the schema lists them and hooks fire within a point. */
export const HOOK_EVENT_DEFINITIONS = [postRender, preApply, postApply, finalize] as const;

export type HookEvent = (typeof HOOK_EVENT_DEFINITIONS)[number]["name"];
export const HOOK_EVENTS: readonly HookEvent[] = HOOK_EVENT_DEFINITIONS.map((e) => e.name);

/** Each event's definition, by name. */
export const HOOK_LIFECYCLE = Object.fromEntries(HOOK_EVENT_DEFINITIONS.map((e) => [e.name, e])) as unknown as {
  readonly [E in HookEvent]: HookEventDefinition<E>;
};

export function lifecycleOf(event: HookEvent): HookEventDefinition {
  return HOOK_LIFECYCLE[event];
}

/** The events at `point` that fire in `run`, in HOOK_EVENTS order. */
export function eventsAt(point: HookPoint, run: HookRun): HookEvent[] {
  return HOOK_EVENTS.filter((e) => lifecycleOf(e).at === point && lifecycleOf(e).runs.includes(run));
}

/** A form of a step kind that a point is limited to (delete: only its manifests form renders objects). */
export interface HookStepForm {
  readonly applies: (action: unknown) => boolean;
  /** The form, in `it happens on ...` lists. */
  readonly name: string;
  /** A step of the kind in another form, in `does not happen on step "x" (...)`. */
  readonly otherwise: string;
}

/** The points a kind's steps have besides the ones every step has: on every step of it, or on one form. */
export type HookPoints = Partial<Record<HookPoint, true | HookStepForm>>;

/** The points of one step of a kind with `points`, given its action block. */
export function stepHookPoints(points: HookPoints, action: unknown): HookPoint[] {
  return (Object.keys(HOOK_POINTS) as HookPoint[]).filter((p) => {
    if (HOOK_POINTS[p].everyStep) return true;
    const form = points[p];
    return form === true || (form !== undefined && form.applies(action));
  });
}
