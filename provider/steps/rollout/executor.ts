/**
 * `rollout:` steps — kubectl rollout restart / status for Deployments,
 * DaemonSets and StatefulSets.
 *
 * - restart: the same strategic merge patch kubectl sends (a new
 *   `kubectl.kubernetes.io/restartedAt` on the pod template, RFC 3339). The
 *   target must exist; a paused Deployment is refused, like kubectl.
 * - status: kubectl's completeness rules, watch-driven, bounded by the
 *   attempt's deadline. A target that does not exist yet is waited for (it may
 *   be created by a controller or a parallel step); ProgressDeadlineExceeded
 *   and non-RollingUpdate strategies fail at once, as in kubectl.
 */
import { executionError, invalidInput } from "../../errors.js";
import type { KubeApi } from "../../kube/api.js";
import { restartPatch, rfc3339, rolloutStatus, ROLLOUT_KINDS, type RolloutKind } from "../../kubectl/rollout.js";
import type { ApiResource, KubeObject } from "../../kubectl/types.js";
import type { RolloutStep } from "./definition.js";
import { explainedWait, subjectOf } from "../cluster/stall.js";
import type { Assessment, DestroyOutcome, DriftFinding, StepContext, StepExecutor, StepOutcome } from "../contract.js";

interface Target {
  mode: "restart" | "status";
  type: ApiResource;
  name: string;
  namespace: string;
  /** `deployment/x in namespace y` */
  label: string;
}

async function resolveTarget(step: RolloutStep, kube: KubeApi, signal: AbortSignal): Promise<Target> {
  const a = step.action;
  const mode = a.restart !== undefined ? "restart" : "status";
  const ref = a.restart ?? a.status;
  const field = `/steps/${step.index}/rollout/${mode}`;
  if (ref === undefined || (a.restart !== undefined && a.status !== undefined)) {
    throw invalidInput(`step ${step.name}: rollout needs exactly one of restart: or status:`, []);
  }
  const { type, name } = await kube.resolveTarget(ref, { signal });
  if (name === undefined) {
    const message = `rollout.${mode} needs TYPE/NAME (e.g. deployment/coredns), got "${ref}"`;
    throw invalidInput(`step ${step.name}: ${message}`, [
      { severity: "error", path: field, message, position: step.position },
    ]);
  }
  if (type.group !== "apps" || !ROLLOUT_KINDS.includes(type.kind as RolloutKind)) {
    const message = `rollout ${mode} supports deployment, daemonset and statefulset, not ${type.kind.toLowerCase()}`;
    throw invalidInput(`step ${step.name}: ${message}`, [
      { severity: "error", path: field, message, position: step.position },
    ]);
  }
  const namespace = a.namespace;
  return { mode, type, name, namespace, label: `${type.kind.toLowerCase()}/${name} in namespace ${namespace}` };
}

function replicasOf(o: KubeObject): string {
  const spec = o["spec"] as { replicas?: number } | undefined;
  const status = o["status"] as { desiredNumberScheduled?: number } | undefined;
  if (typeof spec?.replicas === "number") return `${spec.replicas} replica${spec.replicas === 1 ? "" : "s"}`;
  if (typeof status?.desiredNumberScheduled === "number") return `${status.desiredNumberScheduled} scheduled`;
  return "";
}

async function restart(t: Target, ctx: StepContext): Promise<StepOutcome> {
  const live = await ctx.kube.get(t.type, t.name, t.namespace, { signal: ctx.signal });
  if (!live) {
    throw executionError(
      `${t.type.resource}.apps "${t.name}" not found in namespace "${t.namespace}": rollout restart needs an existing ${t.type.kind} (order this step after whatever creates it with needs:)`,
    );
  }
  if (t.type.kind === "Deployment" && (live["spec"] as { paused?: boolean } | undefined)?.paused === true) {
    throw executionError(`can't restart paused deployment "${t.name}" (run rollout resume first)`);
  }
  const now = new Date();
  await ctx.kube.patch(t.type, t.name, t.namespace, "strategic", restartPatch(now), { signal: ctx.signal });
  return {
    status: "ok",
    reason: `${t.type.kind.toLowerCase()}.apps/${t.name} restarted (restartedAt ${rfc3339(now)})`,
  };
}

async function status(t: Target, ctx: StepContext): Promise<StepOutcome> {
  ctx.log(`waiting for the rollout of ${t.label}`);
  let lastLogged = "";
  const message = await explainedWait(
    ctx,
    () => [subjectOf(t.type, t.name, t.namespace)],
    (onProgress, timeoutMs) =>
      ctx.kube.waitFor<string>(
        { resource: t.type, name: t.name, namespace: t.namespace },
        (objs) => {
          const o = objs[0];
          if (!o) return { state: "pending", message: `${t.type.kind.toLowerCase()}/${t.name} does not exist yet` };
          const s = rolloutStatus(o);
          if (s.state === "done") return { state: "done", value: s.message };
          if (s.state === "failed") return { state: "failed", message: s.message };
          return { state: "pending", message: s.message };
        },
        { signal: ctx.signal, timeoutMs, description: `the rollout of ${t.label}`, onProgress },
      ),
    (m) => {
      if (m !== lastLogged) ctx.log(m);
      lastLogged = m;
    },
  );
  return { status: "ok", reason: message };
}

export const rolloutExecutor: StepExecutor<RolloutStep> = {
  type: "rollout",

  async assess(step: RolloutStep, ctx: StepContext): Promise<Assessment> {
    const t = await resolveTarget(step, ctx.kube, ctx.signal);
    const live = await ctx.kube.get(t.type, t.name, t.namespace, { signal: ctx.signal });
    if (t.mode === "restart") {
      if (!live)
        return {
          action: "restart",
          reason: `${t.label} does not exist yet (restart fails unless an earlier step creates it)`,
        };
      const r = replicasOf(live);
      return { action: "restart", reason: `${t.label}${r ? ` (${r})` : ""} gets a new restartedAt` };
    }
    if (!live) return { action: "wait", reason: `${t.label} does not exist yet` };
    const s = rolloutStatus(live);
    if (s.state === "done") return { action: "no-op", reason: s.message };
    return { action: "wait", reason: s.message };
  },

  async apply(step: RolloutStep, ctx: StepContext): Promise<StepOutcome> {
    const t = await resolveTarget(step, ctx.kube, ctx.signal);
    return t.mode === "restart" ? restart(t, ctx) : status(t, ctx);
  },

  async destroy(): Promise<DestroyOutcome> {
    return { status: "skipped", reason: "rollout steps have nothing to undo" };
  },

  async drift(): Promise<DriftFinding> {
    return {
      state: "not-checkable",
      reason: "a rollout: step makes nothing lasting to compare: a restart is an event, and a status check a wait",
    };
  },
};
