/**
 * `patch:` — `kubectl patch` of one existing object: strategic (the default),
 * merge (RFC 7386) or json (RFC 6902). The target must exist.
 */
import { unifiedDiff } from "../../text-diff.js";
import { executionError } from "../../errors.js";
import { isKubeApiError, type ApiResource, type KubeObject } from "../../kube/index.js";
import type { PatchStep } from "./definition.js";
import { describeDrifted, forDiff, maskSecretPair } from "../cluster/resolve-objects.js";
import { differingFields } from "../../kubectl/applied-drift.js";
import { applyMergePatch, type JsonMap } from "../../kubectl/threeway.js";
import type { DriftContext, DriftFinding, StepContext, StepExecutor } from "../contract.js";

interface Target {
  resource: ApiResource;
  name: string;
  namespace: string | undefined;
  live: KubeObject;
}

async function findTarget(step: PatchStep, ctx: StepContext): Promise<Target> {
  const { type, name } = await ctx.kube.resolveTarget(step.action.target, { signal: ctx.signal });
  if (name === undefined) throw executionError(`patch target ${step.action.target} must be kind/name`);
  const namespace = type.namespaced ? step.action.namespace : undefined;
  const live = await ctx.kube.get(type, name, namespace, { signal: ctx.signal });
  if (live === undefined) {
    throw executionError(
      `${step.action.target}${namespace ? ` in namespace ${namespace}` : ""} does not exist; a patch target must exist (order this step after whatever creates it with needs:)`,
    );
  }
  return { resource: type, name, namespace, live };
}

async function sendPatch(step: PatchStep, ctx: StepContext, t: Target, dryRun: boolean): Promise<KubeObject> {
  const type = step.action.type;
  try {
    return await ctx.kube.patch(t.resource, t.name, t.namespace, type, step.action.patch, {
      signal: ctx.signal,
      dryRun,
    });
  } catch (e) {
    if (
      type === "strategic" &&
      isKubeApiError(e) &&
      (e.status === 415 || /strategic merge patch/i.test(e.apiMessage))
    ) {
      throw executionError(
        `${e.message}\nhint: strategic merge patches do not work on custom resources; use type: merge`,
      );
    }
    throw e;
  }
}

function changed(before: KubeObject, after: KubeObject): boolean {
  return forDiff(before) !== forDiff(after);
}

/**
 * Does the target still hold what the patch set? Read from its kind's list; a merge patch is laid
 * over it here (RFC 7386, pure), and only a difference (or a strategic or JSON patch, which have
 * no such shortcut) costs a request: a server-side dry run of the patch, compared with the live object.
 */
async function patchDrift(step: PatchStep, ctx: DriftContext): Promise<DriftFinding> {
  const { type, name } = await ctx.kube.resolveTarget(step.action.target, { signal: ctx.signal });
  if (name === undefined) throw executionError(`patch target ${step.action.target} must be kind/name`);
  const namespace = type.namespaced ? step.action.namespace : undefined;
  const ref = `${type.kind.toLowerCase()}/${name}${namespace !== undefined ? ` -n ${namespace}` : ""}`;
  const live = await ctx.live.get(type, name, namespace);
  if (live === undefined)
    return {
      state: "drifted",
      reason: `${ref} is gone (the patched object; a patch: step cannot bring it back, whatever created it must)`,
      drifted: [{ ref, change: "gone" }],
    };
  if (step.action.type === "merge") {
    const patched = applyMergePatch(structuredClone(live) as JsonMap, step.action.patch as JsonMap) as KubeObject;
    if (differingFields(live, patched).length === 0)
      return { state: "in-sync", reason: `${ref} still holds the ${step.action.type} patch` };
  }
  const after = await sendPatch(step, ctx, { resource: type, name, namespace, live }, true);
  const fields = differingFields(live, after);
  if (fields.length === 0) return { state: "in-sync", reason: `${ref} still holds the ${step.action.type} patch` };
  const drifted = [{ ref, change: "changed" as const, fields }];
  return { state: "drifted", reason: describeDrifted(drifted), drifted };
}

export const patchExecutor: StepExecutor<PatchStep> = {
  type: "patch",
  diffs: true,

  async assess(step, ctx, opts) {
    const t = await findTarget(step, ctx);
    const after = await sendPatch(step, ctx, t, true);
    const assessment = changed(t.live, after)
      ? { action: "configure" as const, reason: `${step.action.type} patch changes ${step.action.target}` }
      : { action: "no-op" as const, reason: `${step.action.target} already matches the patch` };
    if (opts?.diff !== true) return assessment;
    const masked = maskSecretPair(t.live, after);
    return {
      ...assessment,
      diff: unifiedDiff(forDiff(masked.before), forDiff(masked.after), {
        old: `${step.action.target} (live)`,
        new: `${step.action.target} (patched)`,
      }),
    };
  },

  async apply(step, ctx) {
    const t = await findTarget(step, ctx);
    const after = await sendPatch(step, ctx, t, false);
    return {
      status: "ok",
      reason: changed(t.live, after)
        ? `${step.action.target} patched`
        : `${step.action.target} already matched the patch (no change)`,
    };
  },

  async destroy() {
    return { status: "skipped", reason: "a patch: step changes an object it does not own; nothing to undo" };
  },

  drift: patchDrift,
};
