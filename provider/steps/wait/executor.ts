/**
 * `wait:` steps — kubectl wait, watch-driven, bounded by the attempt's deadline.
 *
 * Where a bootstrap differs from kubectl on purpose:
 * - a kind/name target that does not exist yet is waited for (kubectl fails
 *   with NotFound): a bootstrap often waits on objects an operator creates;
 * - a type (with or without selectors) that matches nothing yet is waited for
 *   too (kubectl fails with "no matching resources found"); the condition
 *   holds once at least one object matches and every match meets it;
 * - `delete` holds when nothing matches (already gone counts);
 * - a resource type the server does not serve yet (a CRD being installed by an
 *   earlier step) is given up to 30s to appear in discovery.
 *
 * A namespaced target without `namespace` / `allNamespaces` is looked up in
 * the kubeconfig context's namespace (`default` unless the context sets one),
 * as kubectl wait and the delete: step do.
 */
import { invalidInput } from "../../errors.js";
import { UnknownResourceError } from "../../kube/discovery.js";
import type { WaitScope } from "../../kube/watch.js";
import { checkObjects } from "../../kubectl/conditions.js";
import type { KubeObject } from "../../kubectl/types.js";
import type { WaitStep } from "./definition.js";
import { formatWaitCondition, parseWaitFor, type WaitCondition } from "../../kubectl/waitfor.js";
import { explainedWait, subjectOf, type StallSubject } from "../cluster/stall.js";
import type { Assessment, DestroyOutcome, DriftFinding, StepContext, StepExecutor, StepOutcome } from "../contract.js";

/** How long an unknown resource type may take to appear in discovery (its CRD may still be installing). */
const UNKNOWN_TYPE_GRACE_MS = 30_000;

interface Target {
  scope: WaitScope;
  condition: WaitCondition;
  /** `deployment/x in namespace "y"`, `pods in all namespaces matching app=x`. */
  label: string;
}

function parseCondition(step: WaitStep): WaitCondition {
  const p = parseWaitFor(step.action.for, { allowDelete: true });
  if (!p.ok) {
    throw invalidInput(`step ${step.name}: wait.for: ${p.message}`, [
      { severity: "error", path: `/steps/${step.index}/wait/for`, message: p.message, position: step.position },
    ]);
  }
  return p.condition;
}

async function resolveTarget(step: WaitStep, ctx: StepContext, waitForType: boolean): Promise<Target> {
  const a = step.action;
  const condition = parseCondition(step);
  const { type, name } = await ctx.kube.resolveTarget(a.on, {
    signal: ctx.signal,
    waitMs: waitForType ? Math.min(UNKNOWN_TYPE_GRACE_MS, ctx.deadline) : 0,
  });
  if (name !== undefined && a.allNamespaces) {
    throw invalidInput(
      `step ${step.name}: wait.on names one object (${a.on}); it cannot be combined with allNamespaces`,
      [],
    );
  }
  if (name !== undefined && a.selector) {
    throw invalidInput(
      `step ${step.name}: wait.on names one object (${a.on}); it cannot be combined with selector`,
      [],
    );
  }
  const namespace = type.namespaced && !a.allNamespaces ? (a.namespace ?? ctx.kube.contextNamespace) : undefined;
  const scope: WaitScope = {
    resource: type,
    namespace,
    allNamespaces: type.namespaced && a.allNamespaces,
    name,
    labelSelector: a.selector,
    fieldSelector: a.fieldSelector,
  };
  return { scope, condition, label: label(scope) };
}

function label(s: WaitScope): string {
  const rt = s.resource;
  let out =
    s.name !== undefined
      ? `${rt.kind.toLowerCase()}/${s.name}`
      : rt.group === ""
        ? rt.resource
        : `${rt.resource}.${rt.group}`;
  if (rt.namespaced) out += s.allNamespaces ? " in all namespaces" : ` in namespace ${s.namespace}`;
  if (s.labelSelector) out += ` matching ${s.labelSelector}`;
  if (s.fieldSelector) out += ` with ${s.fieldSelector}`;
  return out;
}

/** Current matching objects, read-only. */
async function current(ctx: StepContext, s: WaitScope): Promise<KubeObject[]> {
  if (s.name !== undefined) {
    const o = await ctx.kube.get(s.resource, s.name, s.namespace, { signal: ctx.signal });
    if (!o) return [];
    // A field selector still applies to a named object, as in kubectl.
    if (!s.fieldSelector) return [o];
  }
  const fieldSelector = [s.name !== undefined ? `metadata.name=${s.name}` : "", s.fieldSelector ?? ""]
    .filter(Boolean)
    .join(",");
  const { items } = await ctx.kube.list(s.resource, {
    namespace: s.namespace,
    allNamespaces: s.allNamespaces,
    labelSelector: s.labelSelector,
    fieldSelector: fieldSelector || undefined,
    signal: ctx.signal,
  });
  return items;
}

/** At most one progress line per interval, so a watch over many pods does not flood the log. */
function throttled(log: (m: string) => void, everyMs = 2000): (m: string) => void {
  let last = 0;
  return (m) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    log(m);
  };
}

export const waitExecutor: StepExecutor<WaitStep> = {
  type: "wait",

  async assess(step: WaitStep, ctx: StepContext): Promise<Assessment> {
    const condition = parseCondition(step);
    const cond = formatWaitCondition(condition);
    let t: Target;
    try {
      t = await resolveTarget(step, ctx, false);
    } catch (e) {
      if (e instanceof UnknownResourceError) {
        return {
          action: "wait",
          reason: `${cond} on ${step.action.on}: the resource type is not served yet (${e.message})`,
        };
      }
      throw e;
    }
    const objs = await current(ctx, t.scope);
    const v = checkObjects(t.condition, objs, t.scope.resource, t.scope.name);
    if (v.state === "done") {
      const n = objs.length;
      const reason =
        t.condition.kind === "delete"
          ? `nothing matches ${t.label} (already gone)`
          : `${cond} already holds on ${t.scope.name !== undefined ? t.label : `${n} ${n === 1 ? "object" : "objects"} (${t.label})`}`;
      return { action: "no-op", reason };
    }
    return { action: "wait", reason: `${cond} on ${t.label}: ${v.state === "pending" ? v.message : "not yet"}` };
  },

  async apply(step: WaitStep, ctx: StepContext): Promise<StepOutcome> {
    const t = await resolveTarget(step, ctx, true);
    const cond = formatWaitCondition(t.condition);
    ctx.log(`waiting for ${cond} on ${t.label}`);
    // What is waited on, for a diagnosis when it does not converge (not for `delete`: nothing blocks a deletion but finalizers, which the progress names).
    const subjects = async (): Promise<StallSubject[]> =>
      t.condition.kind === "delete"
        ? []
        : (await current(ctx, t.scope)).map((o) =>
            subjectOf(t.scope.resource, o.metadata?.name ?? "", o.metadata?.namespace),
          );
    const objs = await explainedWait(
      ctx,
      subjects,
      (onProgress, timeoutMs) =>
        ctx.kube.waitForCondition(t.scope, t.condition, {
          signal: ctx.signal,
          timeoutMs,
          onProgress,
          description: `${cond} on ${t.label}`,
        }),
      throttled((m) => ctx.log(m)),
    );
    if (t.condition.kind === "delete") return { status: "ok", reason: `nothing matches ${t.label} any more` };
    const n = objs.length;
    return {
      status: "ok",
      reason:
        t.scope.name !== undefined
          ? `${cond} holds on ${t.label}`
          : `${cond} holds on ${n} ${n === 1 ? "object" : "objects"} (${t.label})`,
    };
  },

  async destroy(): Promise<DestroyOutcome> {
    return { status: "skipped", reason: "wait steps have nothing to undo" };
  },

  async drift(): Promise<DriftFinding> {
    return {
      state: "not-checkable",
      reason: "a wait: step makes nothing: what it waited for is not khook's to keep (plan shows whether it holds now)",
    };
  },
};
