/**
 * `job:` — run a container to completion as a batch/v1 Job named after the step.
 *
 * - labelled app.kubernetes.io/managed-by: khook and khook.io/spec: <spec>; a same-named Job
 *   without them, or of another spec, is never touched;
 * - each run replaces the previous run's Job (delete, wait until gone, create) unless
 *   `skipIf: succeeded` finds it completed;
 * - backoffLimit 0 and restartPolicy Never: every khook attempt is a fresh Job;
 * - activeDeadlineSeconds = the step timeout, so a Job khook stopped waiting on stops too;
 * - on failure the pod's last log lines go into the step error.
 */
import { executionError } from "../../errors.js";
import { JOBS, type KubeObject } from "../../kube/index.js";
import { transientCause } from "../../kube/transient.js";
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  SPEC_LABEL,
  STEP_LABEL,
  labelledOwner,
  labelValue,
} from "../../ownership.js";
import type { JobStep } from "./definition.js";
import { waitUntilGone, type Doomed } from "../cluster/deletion-wait.js";
import { ensureNamespace } from "../cluster/namespace.js";
import { explainedWait, subjectOf } from "../cluster/stall.js";
import type { DriftContext, DriftFinding, StepContext, StepExecutor } from "../contract.js";

export const LOG_TAIL_LINES = 20;

function jobNamespace(step: JobStep): string {
  return step.action.namespace;
}

type Condition = { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string };

function finished(job: KubeObject | undefined): { state: "complete" | "failed"; condition: Condition } | undefined {
  const conditions = ((job?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).filter(
    (c) => c.status === "True",
  );
  const failed = conditions.find((c) => c.type === "Failed");
  if (failed) return { state: "failed", condition: failed };
  const complete = conditions.find((c) => c.type === "Complete");
  if (complete) return { state: "complete", condition: complete };
  return undefined;
}

/** Why a same-named Job is not this spec's (another spec's, or not khook's at all), or undefined when it is ours. */
function notOursReason(step: JobStep, job: KubeObject, specName: string): string | undefined {
  const who = labelledOwner(job, specName);
  if (who.owner === "this-spec") return undefined;
  const where = `job ${step.name} in namespace ${jobNamespace(step)}`;
  return who.owner === "not-khook"
    ? `${where} exists but is not managed by khook (it lacks the label ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE})`
    : `${where} exists but belongs to another khook spec, "${who.spec}" (label ${SPEC_LABEL}=${who.spec}), not to "${specName}"`;
}

/** Refuses a same-named Job that this spec does not own. */
function assertOwned(step: JobStep, job: KubeObject | undefined, specName: string): void {
  const why = job === undefined ? undefined : notOursReason(step, job, specName);
  if (why !== undefined)
    throw executionError(
      `${why}; khook never replaces a Job it does not own. Rename the step or delete that Job yourself`,
    );
}

export function jobManifest(step: JobStep, specName: string): KubeObject {
  const a = step.action;
  const labels = {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [SPEC_LABEL]: labelValue(specName),
    [STEP_LABEL]: labelValue(step.name),
  };
  const container: Record<string, unknown> = { name: "main", image: a.image };
  if (a.command && a.command.length > 0) container.command = a.command;
  if (a.args && a.args.length > 0) container.args = a.args;
  if (a.env && Object.keys(a.env).length > 0)
    container.env = Object.entries(a.env).map(([name, value]) => ({ name, value }));
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: step.name, namespace: jobNamespace(step), labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: Math.max(1, Math.ceil(step.timeoutMs / 1000)),
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          ...(a.serviceAccount !== undefined ? { serviceAccountName: a.serviceAccount } : {}),
          containers: [container],
        },
      },
    },
  };
}

/** The last log lines of the Job's pods, or a sentence saying why there are none. */
async function failureLogs(step: JobStep, ctx: StepContext): Promise<string> {
  const ns = jobNamespace(step);
  try {
    const pods = await ctx.kube.jobPods(ns, step.name, { signal: ctx.signal });
    if (pods.length === 0) return "no logs could be read: the Job has no pods";
    const pod = pods[pods.length - 1]!;
    const name = String(pod.metadata?.name);
    const logs = (await ctx.kube.podLogs(ns, name, { tailLines: LOG_TAIL_LINES, signal: ctx.signal })).trimEnd();
    return logs === "" ? `pod ${name} wrote no logs` : `last ${LOG_TAIL_LINES} log lines of pod ${name}:\n${logs}`;
  } catch (e) {
    return `no logs could be read: ${ctx.redactor.redact((e as Error).message)}`;
  }
}

/**
 * The wait on a Job that runs: a transient failure here (a watch refused by an overloaded API
 * server) is not retried, since the engine's retry would replace the Job and run it again. What
 * fails before the Job exists (a webhook refusing its creation) is retried as usual.
 */
async function whileItRuns<T>(step: JobStep, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (e) {
    if (transientCause(e) === undefined) throw e;
    throw executionError(
      `${(e as Error).message} (while job ${step.name} ran; not retried, since a new try would run the job again)`,
    );
  }
}

/** The Job incarnation a deletion waits to be gone (a new one of the same name is not waited for). */
function jobGone(step: JobStep, job: KubeObject): Doomed {
  return { resource: JOBS, name: step.name, namespace: jobNamespace(step), uid: job.metadata?.uid };
}

async function getJob(step: JobStep, ctx: StepContext): Promise<KubeObject | undefined> {
  return ctx.kube.get(JOBS, step.name, jobNamespace(step), { signal: ctx.signal });
}

/**
 * A Job runs once: what it did is not visible to khook, and a Job gone since (its TTL, a
 * cleanup) is what one-shot Jobs do, not drift. So a job: step is in sync whether its Job is
 * still there or not; only a same-named Job that is not this spec's makes it not checkable.
 */
async function jobDrift(step: JobStep, ctx: DriftContext): Promise<DriftFinding> {
  const job = await ctx.live.get(JOBS, step.name, jobNamespace(step));
  if (job === undefined)
    return {
      state: "in-sync",
      reason: `job ${step.name} ran and is gone since (one-shot Jobs are cleaned up; not drift)`,
    };
  const why = notOursReason(step, job, ctx.spec.name);
  if (why !== undefined) return { state: "not-checkable", reason: why };
  const done = finished(job);
  return {
    state: "in-sync",
    reason: `job ${step.name} ran${done !== undefined ? ` (${done.state})` : ""}; what it did is not khook's to compare`,
  };
}

export const jobExecutor: StepExecutor<JobStep> = {
  type: "job",
  drift: jobDrift,

  async assess(step, ctx) {
    const job = await getJob(step, ctx);
    assertOwned(step, job, ctx.spec.name);
    const done = finished(job);
    if (step.action.skipIf === "succeeded" && done?.state === "complete") {
      return {
        action: "skip",
        reason: `skipIf: succeeded — job ${step.name} completed${done.condition.lastTransitionTime ? ` at ${done.condition.lastTransitionTime}` : ""}`,
      };
    }
    return {
      action: "run",
      reason:
        job === undefined
          ? `create job ${step.name} (${step.action.image})`
          : `replace the previous run's job ${step.name} (${done?.state ?? "still running"})`,
    };
  },

  async apply(step, ctx) {
    const since = Date.now();
    const ns = jobNamespace(step);
    if (step.action.createNamespace && (await ensureNamespace(ctx.kube, ns, ctx.signal)))
      ctx.log(`namespace/${ns} created`);
    const previous = await getJob(step, ctx);
    assertOwned(step, previous, ctx.spec.name);
    const done = finished(previous);
    if (step.action.skipIf === "succeeded" && done?.state === "complete") {
      return {
        status: "skipped",
        reason: `skipIf: succeeded — job ${step.name} already completed${done.condition.lastTransitionTime ? ` at ${done.condition.lastTransitionTime}` : ""}`,
      };
    }
    if (previous !== undefined) {
      ctx.log(`replacing the previous run's job ${step.name}`);
      await ctx.kube.delete(JOBS, step.name, ns, { signal: ctx.signal, propagationPolicy: "Background" });
      await waitUntilGone(ctx, [jobGone(step, previous)], { since, rerun: "apply" });
    }
    const created = await ctx.kube.create(JOBS, jobManifest(step, ctx.spec.name), { signal: ctx.signal });
    ctx.log(`job ${step.name} created; waiting for it to finish`);
    const uid = created.metadata?.uid;
    const result = await whileItRuns(
      step,
      explainedWait(
        ctx,
        () => [subjectOf(JOBS, step.name, ns)],
        (onProgress, timeoutMs) =>
          ctx.kube.waitFor(
            { resource: JOBS, name: step.name, namespace: ns },
            (objs) => {
              const job = objs.find((o) => uid === undefined || o.metadata?.uid === uid);
              if (job === undefined)
                return { state: "failed", message: `job ${step.name} was deleted while khook waited for it` };
              const f = finished(job);
              if (f !== undefined) return { state: "done", value: f };
              const active = (job.status as { active?: number } | undefined)?.active ?? 0;
              return {
                state: "pending",
                message: active > 0 ? `job ${step.name} is running` : `job ${step.name} has not started a pod yet`,
              };
            },
            { signal: ctx.signal, timeoutMs, description: `job ${step.name} to finish`, onProgress },
          ),
      ),
    );
    if (result.state === "complete") return { status: "ok", reason: `job ${step.name} completed` };
    const why = [result.condition.reason, result.condition.message].filter(Boolean).join(": ");
    throw executionError(
      ctx.redactor.redact(`job ${step.name} failed${why ? ` (${why})` : ""}; ${await failureLogs(step, ctx)}`),
    );
  },

  async destroy(step, ctx) {
    const since = Date.now();
    const job = await getJob(step, ctx);
    if (job === undefined) return { status: "skipped", reason: `job ${step.name} is already gone` };
    const why = notOursReason(step, job, ctx.spec.name);
    if (why !== undefined) return { status: "skipped", reason: `${why}; left alone` };
    await ctx.kube.delete(JOBS, step.name, jobNamespace(step), { signal: ctx.signal, propagationPolicy: "Background" });
    await waitUntilGone(ctx, [jobGone(step, job)], { since });
    return { status: "ok", reason: `job ${step.name} deleted` };
  },
};
