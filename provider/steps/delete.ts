/**
 * `delete:` — three exclusive forms: by manifests (`kubectl delete -f`), by
 * resource/selector (`kubectl delete daemonset/aws-node`, `-l`, `--field-selector`),
 * and by release (`helm uninstall`, in delete-release.ts). Every form waits until
 * what it deleted is gone, bounded by the step timeout. Absent is success unless
 * `ignoreNotFound: false`.
 */
import { executionError } from "../errors.js";
import type { ApiResource, KubeObject } from "../kube/index.js";
import type { LoadedStepBase } from "../dsl/loaded.js";
import { deleteReleaseExecutor, isDeleteRelease } from "./delete-release.js";
import { waitUntilGone } from "./deletion.js";
import { isUnknownKind, objectLabel, resolveObjects } from "./objects.js";
import { readManifestSources, renderWithHooks } from "./sources.js";
import type { StepContext, StepExecutor, StepOutcome } from "./types.js";

type DeleteStep = LoadedStepBase<"delete">;

interface Victim {
  resource: ApiResource;
  name: string;
  namespace: string | undefined;
  uid: string | undefined;
}

/** What the step would delete now, and what it names that is already absent. */
async function findVictims(step: DeleteStep, ctx: StepContext): Promise<{ victims: Victim[]; absent: string[] }> {
  const action = step.action;
  if (isDeleteRelease(action)) throw new Error(`step ${step.name}: a delete-by-release step has no objects to find`);
  const victims: Victim[] = [];
  const absent: string[] = [];
  if ("manifests" in action) {
    // post-render hooks shape what is deleted exactly as they shape what an apply sends.
    const sourced = await renderWithHooks(
      await readManifestSources(action.manifests, {
        baseDir: ctx.spec.baseDir,
        signal: ctx.signal,
        redactor: ctx.redactor,
        tools: ctx.tools,
      }),
      ctx,
      false,
    );
    const resolved = await resolveObjects(ctx.kube, sourced, action.namespace, ctx.signal);
    for (const o of [...resolved].reverse()) {
      if (isUnknownKind(o)) {
        absent.push(`${String(o.manifest.kind).toLowerCase()}/${o.name} (no such kind)`);
        continue;
      }
      const live = await ctx.kube.get(o.resource, o.name, o.namespace, { signal: ctx.signal });
      if (live === undefined) absent.push(objectLabel(o));
      else victims.push({ resource: o.resource, name: o.name, namespace: o.namespace, uid: live.metadata?.uid });
    }
    return { victims, absent };
  }
  const { type, name } = await ctx.kube.resolveTarget(action.resource, { signal: ctx.signal });
  const namespace =
    type.namespaced && !action.allNamespaces ? (action.namespace ?? ctx.kube.contextNamespace) : undefined;
  if (name !== undefined) {
    const live = await ctx.kube.get(type, name, namespace, { signal: ctx.signal });
    if (live === undefined) absent.push(objectLabel({ resource: type, name, namespace }));
    else victims.push({ resource: type, name, namespace, uid: live.metadata?.uid });
    return { victims, absent };
  }
  const list = await ctx.kube.list(type, {
    signal: ctx.signal,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(action.allNamespaces ? { allNamespaces: true } : {}),
    ...(action.selector !== undefined ? { labelSelector: action.selector } : {}),
    ...(action.fieldSelector !== undefined ? { fieldSelector: action.fieldSelector } : {}),
  });
  for (const o of list.items as KubeObject[]) {
    victims.push({
      resource: type,
      name: String(o.metadata?.name),
      namespace: o.metadata?.namespace,
      uid: o.metadata?.uid,
    });
  }
  return { victims, absent };
}

function listed(names: readonly string[]): string {
  return `${names.slice(0, 3).join(", ")}${names.length > 3 ? `, and ${names.length - 3} more` : ""}`;
}

export const deleteExecutor: StepExecutor<"delete"> = {
  type: "delete",

  async assess(step, ctx) {
    if (isDeleteRelease(step.action)) return deleteReleaseExecutor.assess(step, ctx);
    const { victims, absent } = await findVictims(step, ctx);
    if (victims.length === 0) {
      if (absent.length > 0 && !step.action.ignoreNotFound)
        return { action: "delete", reason: `${listed(absent)} not found: the step will fail (ignoreNotFound: false)` };
      return { action: "no-op", reason: absent.length > 0 ? `already absent: ${listed(absent)}` : "nothing matches" };
    }
    return { action: "delete", reason: `${victims.length} to delete: ${listed(victims.map(objectLabel))}` };
  },

  async apply(step, ctx): Promise<StepOutcome> {
    if (isDeleteRelease(step.action)) return deleteReleaseExecutor.apply(step, ctx);
    const since = Date.now();
    const { victims, absent } = await findVictims(step, ctx);
    if (absent.length > 0 && !step.action.ignoreNotFound)
      throw executionError(`not found: ${listed(absent)} (ignoreNotFound: false)`);
    await Promise.all(
      victims.map(async (v) => {
        const r = await ctx.kube.delete(v.resource, v.name, v.namespace, {
          signal: ctx.signal,
          propagationPolicy: "Background",
        });
        if (r.status === "deleted") ctx.log(`${objectLabel(v)} deleted`);
      }),
    );
    await waitUntilGone(
      ctx,
      victims.map((v) => ({ resource: v.resource, name: v.name, namespace: v.namespace, uid: v.uid })),
      { since },
    );
    const parts = [`${victims.length} deleted`];
    if (absent.length > 0) parts.push(`${absent.length} already absent`);
    return { status: "ok", reason: victims.length === 0 && absent.length === 0 ? "nothing matched" : parts.join(", ") };
  },

  async destroy(step, ctx) {
    if (isDeleteRelease(step.action)) return deleteReleaseExecutor.destroy(step, ctx);
    return { status: "skipped", reason: "a delete: step creates nothing; nothing to undo" };
  },
};
