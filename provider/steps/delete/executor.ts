/**
 * `delete:` — three exclusive forms: by manifests (`kubectl delete -f`), by
 * resource/selector (`kubectl delete daemonset/aws-node`, `-l`, `--field-selector`),
 * and by release (`helm uninstall`, in uninstall.ts). Every form waits until
 * what it deleted is gone, bounded by the step timeout. Absent is success unless
 * `ignoreNotFound: false`.
 */
import { executionError } from "../../errors.js";
import type { ApiResource, KubeObject } from "../../kube/index.js";
import type { DeleteStep } from "./definition.js";
import { deleteReleaseExecutor, isDeleteRelease } from "./uninstall.js";
import { waitUntilGone } from "../cluster/deletion-wait.js";
import { describeDrifted, isUnknownKind, objectLabel, resolveObjects } from "../cluster/resolve-objects.js";
import { readManifestSources, renderWithHooks } from "../manifests/read-sources.js";
import type { DriftContext, DriftedThing, DriftFinding, StepContext, StepExecutor, StepOutcome } from "../contract.js";

interface Victim {
  resource: ApiResource;
  name: string;
  namespace: string | undefined;
  uid: string | undefined;
}

/** The manifests form's objects: post-render hooks shape what is deleted exactly as they shape what an apply sends. */
async function manifestObjects(
  action: Extract<DeleteStep["action"], { manifests: unknown }>,
  ctx: StepContext,
): ReturnType<typeof resolveObjects> {
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
  return resolveObjects(ctx.kube, sourced, action.namespace, ctx.signal);
}

/** What the step would delete now, and what it names that is already absent. */
async function findVictims(step: DeleteStep, ctx: StepContext): Promise<{ victims: Victim[]; absent: string[] }> {
  const action = step.action;
  if (isDeleteRelease(action)) throw new Error(`step ${step.name}: a delete-by-release step has no objects to find`);
  const victims: Victim[] = [];
  const absent: string[] = [];
  if ("manifests" in action) {
    const resolved = await manifestObjects(action, ctx);
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

/**
 * Is what the step deleted still gone? Named objects are looked up in their kind's list; a
 * selector is one list of its own (with its label and field selectors). Anything found is back.
 */
async function deleteDrift(step: DeleteStep, ctx: DriftContext): Promise<DriftFinding> {
  const action = step.action;
  if (isDeleteRelease(action)) return deleteReleaseExecutor.drift(step, ctx);
  const back: DriftedThing[] = [];
  let named = 0;
  if ("manifests" in action) {
    const resolved = await manifestObjects(action, ctx);
    named = resolved.length;
    for (const o of resolved) {
      if (isUnknownKind(o)) continue;
      if ((await ctx.live.get(o.resource, o.name, o.namespace)) !== undefined)
        back.push({ ref: objectLabel(o), change: "back" });
    }
  } else {
    const { type, name } = await ctx.kube.resolveTarget(action.resource, { signal: ctx.signal });
    const namespace =
      type.namespaced && !action.allNamespaces ? (action.namespace ?? ctx.kube.contextNamespace) : undefined;
    if (name !== undefined) {
      named = 1;
      if ((await ctx.live.get(type, name, namespace)) !== undefined)
        back.push({ ref: objectLabel({ resource: type, name, namespace }), change: "back" });
    } else {
      const found =
        action.fieldSelector === undefined
          ? await ctx.live.select(type, namespace, action.selector)
          : (
              await ctx.kube.list(type, {
                signal: ctx.signal,
                ...(namespace !== undefined ? { namespace } : { allNamespaces: true }),
                ...(action.selector !== undefined ? { labelSelector: action.selector } : {}),
                fieldSelector: action.fieldSelector,
              })
            ).items;
      for (const o of found)
        back.push({
          ref: objectLabel({ resource: type, name: String(o.metadata?.name), namespace: o.metadata?.namespace }),
          change: "back",
        });
    }
  }
  if (back.length === 0)
    return {
      state: "in-sync",
      reason:
        named > 0 ? `still absent: ${named} object${named === 1 ? "" : "s"}` : "nothing matches, as after the delete",
    };
  return { state: "drifted", reason: describeDrifted(back), drifted: back };
}

export const deleteExecutor: StepExecutor<DeleteStep> = {
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
      { since, rerun: "apply" },
    );
    const parts = [`${victims.length} deleted`];
    if (absent.length > 0) parts.push(`${absent.length} already absent`);
    return { status: "ok", reason: victims.length === 0 && absent.length === 0 ? "nothing matched" : parts.join(", ") };
  },

  async destroy(step, ctx) {
    if (isDeleteRelease(step.action)) return deleteReleaseExecutor.destroy(step, ctx);
    return { status: "skipped", reason: "a delete: step creates nothing; nothing to undo" };
  },

  drift: deleteDrift,
};
