/**
 * `apply:` — `kubectl apply` of every manifest source, then optionally
 * `kubectl wait --for=... ` on exactly the applied objects.
 */
import { unifiedDiff } from "../../text-diff.js";
import { executionError } from "../../errors.js";
import { ApplyAllError, type ApplyResult, type KubeApi } from "../../kube/index.js";
import { APPLIED_BY, OWNED_BY, isOwnedBy, ownerValue } from "../../ownership.js";
import type { ApplyStep } from "./definition.js";
import { parseWaitFor } from "../../kubectl/waitfor.js";
import { ensureNamespace } from "../cluster/namespace.js";
import {
  countSummary,
  describeDrifted,
  forDiff,
  isUnknownKind,
  maskSecretPair,
  objectLabel,
  resolveObjects,
  type ResolvedObject,
} from "../cluster/resolve-objects.js";
import { readManifestSources, renderWithHooks } from "../manifests/read-sources.js";
import { explainedWait, subjectOf } from "../cluster/stall.js";
import { waitUntilGone } from "../cluster/deletion-wait.js";
import type {
  AddedObjectRef,
  DriftContext,
  DriftedThing,
  DriftFinding,
  StepContext,
  StepExecutor,
  StepOutcome,
} from "../contract.js";
import { hooksFor } from "../../dsl/hooks.js";

/** The step's objects after its hooks: post-render always, pre-apply when `send` (the objects are about to be sent). */
async function readObjects(step: ApplyStep, ctx: StepContext, send = false) {
  const sourced = await renderWithHooks(
    await readManifestSources(step.action.manifests, {
      baseDir: ctx.spec.baseDir,
      signal: ctx.signal,
      redactor: ctx.redactor,
      tools: ctx.tools,
    }),
    ctx,
    send,
  );
  return { sourced, resolved: await resolveObjects(ctx.kube, sourced, step.action.namespace, ctx.signal) };
}

/** The applied objects among those webhooks added, as the record keeps them (matched by kind, name and namespace). */
function addedRefs(added: readonly Record<string, unknown>[], results: readonly ApplyResult[]): AddedObjectRef[] {
  if (added.length === 0) return [];
  const out: AddedObjectRef[] = [];
  for (const o of added) {
    const meta = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    const r = results.find(
      (x) =>
        x.resource.kind === o.kind &&
        x.name === meta.name &&
        (typeof meta.namespace !== "string" || meta.namespace === "" || x.namespace === meta.namespace),
    );
    if (r === undefined) continue;
    out.push({
      apiVersion: String(o.apiVersion),
      kind: r.resource.kind,
      name: r.name,
      ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
    });
  }
  return out;
}

/** Every object exists already: the `skipIf: exists` predicate. */
async function allExist(
  kube: KubeApi,
  resolved: Awaited<ReturnType<typeof resolveObjects>>,
  signal: AbortSignal,
): Promise<boolean> {
  if (resolved.length === 0 || resolved.some(isUnknownKind)) return false;
  const found = await Promise.all(
    (resolved as ResolvedObject[]).map((o) => kube.get(o.resource, o.name, o.namespace, { signal })),
  );
  return found.every((o) => o !== undefined);
}

async function waitForApplied(
  step: ApplyStep,
  ctx: StepContext,
  objects: readonly { resource: ResolvedObject["resource"]; name: string; namespace: string | undefined }[],
): Promise<void> {
  if (step.action.waitFor === undefined) return;
  const parsed = parseWaitFor(step.action.waitFor, { allowDelete: false });
  if (!parsed.ok) throw executionError(`waitFor: ${parsed.message}`);
  ctx.log(`waiting for ${step.action.waitFor} on ${objects.length} object${objects.length === 1 ? "" : "s"}`);
  await explainedWait(
    ctx,
    () => objects.map((o) => subjectOf(o.resource, o.name, o.namespace)),
    (onProgress, timeoutMs) =>
      ctx.kube.waitForObjects(
        objects.map((o) => ({
          resource: o.resource,
          name: o.name,
          ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
        })),
        parsed.condition,
        { signal: ctx.signal, timeoutMs, onProgress },
      ),
  );
}

function applyOptions(step: ApplyStep, ctx: StepContext, dryRun: boolean) {
  const owner = ownerValue(ctx.spec.name, step.name);
  return {
    signal: ctx.signal,
    ...(step.action.namespace !== undefined ? { defaultNamespace: step.action.namespace } : {}),
    annotations: { [APPLIED_BY]: owner },
    createAnnotations: { [OWNED_BY]: owner },
    serverSide: step.action.serverSide,
    dryRun,
  };
}

/**
 * The step's diff, object by object in document order, from assess's dry runs. An object
 * whose dry run failed (say, its namespace is created by an earlier object) leaves no
 * diff to show: the step's diff is then that failure.
 */
function dryRunDiff(
  resolved: Awaited<ReturnType<typeof resolveObjects>>,
  dryRuns: ReadonlyMap<ResolvedObject, ApplyResult | Error>,
): string | Error {
  const chunks: string[] = [];
  for (const o of resolved) {
    if (isUnknownKind(o)) {
      chunks.push(`# ${String(o.manifest.kind)}/${o.name}: ${o.message} (it will be created once its CRD exists)`);
      continue;
    }
    const r = dryRuns.get(o)!;
    if (r instanceof Error) return r;
    const label = objectLabel(o);
    const masked = maskSecretPair(r.before, r.object);
    chunks.push(
      unifiedDiff(forDiff(masked.before), forDiff(masked.after), {
        old: `${label} (live)`,
        new: `${label} (after apply)`,
      }),
    );
  }
  return chunks.filter((c) => c !== "").join("\n");
}

/**
 * Do the step's objects still hold what it applied? Each object is read from its kind's list
 * (ctx.live) and compared with what applying its manifest would change (KubeApi.appliedDrift:
 * only fields the manifest sets count, so what controllers and defaulting add is not drift).
 */
async function applyDrift(step: ApplyStep, ctx: DriftContext): Promise<DriftFinding> {
  const reshaping = hooksFor(step, "pre-apply").map((h) => h.name);
  if (reshaping.length > 0)
    return {
      state: "not-checkable",
      reason: `pre-apply webhook ${reshaping.join(", ")} may have reshaped what the step applied, and plan --live calls no webhooks`,
    };
  const { resolved } = await readObjects(step, ctx);
  const found = await Promise.all(
    resolved.map(async (o): Promise<DriftedThing | undefined> => {
      if (isUnknownKind(o))
        return {
          ref: `${String(o.manifest.kind).toLowerCase()}/${o.name}`,
          change: "gone",
          note: "its kind is not served any more",
        };
      const live = await ctx.live.get(o.resource, o.name, o.namespace);
      if (live === undefined) return { ref: objectLabel(o), change: "gone" };
      const d = await ctx.kube.appliedDrift(o.manifest, live, {
        ...applyOptions(step, ctx, false),
        defaultNamespace: o.namespace ?? "",
      });
      if (!d.drifted) return undefined;
      return {
        ref: objectLabel(o),
        change: "changed",
        fields: d.fields,
        ...(d.unconfirmed !== undefined ? { note: `not confirmed by a dry run: ${d.unconfirmed}` } : {}),
      };
    }),
  );
  const drifted = found.filter((d): d is DriftedThing => d !== undefined);
  if (drifted.length === 0)
    return {
      state: "in-sync",
      reason: `${resolved.length} object${resolved.length === 1 ? "" : "s"} as applied`,
    };
  return { state: "drifted", reason: describeDrifted(drifted), drifted };
}

export const applyExecutor: StepExecutor<ApplyStep> = {
  type: "apply",
  diffs: true,

  async assess(step, ctx, opts) {
    const { resolved } = await readObjects(step, ctx);
    if (step.action.skipIf === "exists" && (await allExist(ctx.kube, resolved, ctx.signal))) {
      return {
        action: "skip",
        reason: `skipIf: exists — all ${resolved.length} objects already exist${step.action.waitFor ? `; will wait for ${step.action.waitFor}` : ""}`,
      };
    }
    const unknown = resolved.filter(isUnknownKind);
    const known = resolved.filter((o): o is ResolvedObject => !isUnknownKind(o));
    const results = await Promise.all(
      known.map((o) =>
        ctx.kube
          .apply(o.manifest, { ...applyOptions(step, ctx, true), defaultNamespace: o.namespace ?? "" })
          .catch((e: unknown) => e as Error),
      ),
    );
    const counts: Record<string, number> = { "to create": unknown.length, "to configure": 0, unchanged: 0 };
    const changed: string[] = unknown.map((u) => `${String(u.manifest.kind).toLowerCase()}/${u.name}`);
    for (const [i, r] of results.entries()) {
      if (r instanceof Error) {
        // A namespace created earlier in this step does not exist yet in a plan: that object will be created.
        counts["to create"]!++;
        changed.push(objectLabel(known[i]!));
        continue;
      }
      const key = r.action === "created" ? "to create" : r.action === "configured" ? "to configure" : "unchanged";
      counts[key]!++;
      if (r.action !== "unchanged") changed.push(objectLabel(known[i]!));
    }
    const action =
      counts["to create"]! > 0
        ? "create"
        : counts["to configure"]! > 0
          ? "configure"
          : step.action.waitFor
            ? "wait"
            : "no-op";
    const list = changed.length > 0 ? ` (${changed.slice(0, 3).join(", ")}${changed.length > 3 ? ", ..." : ""})` : "";
    const reason = `${countSummary(counts, ["to create", "to configure", "unchanged"])}${list}`;
    if (opts?.diff !== true) return { action, reason };
    const dryRuns = new Map<ResolvedObject, ApplyResult | Error>(known.map((o, i) => [o, results[i]!]));
    return { action, reason, diff: dryRunDiff(resolved, dryRuns) };
  },

  async apply(step, ctx): Promise<StepOutcome> {
    // Objects first: a hook that rejects them fails the step before anything (even the namespace) is created.
    const { resolved } = await readObjects(step, ctx, true);
    if (step.action.createNamespace && step.action.namespace !== undefined) {
      if (await ensureNamespace(ctx.kube, step.action.namespace, ctx.signal))
        ctx.log(`namespace/${step.action.namespace} created`);
    }
    if (step.action.skipIf === "exists" && (await allExist(ctx.kube, resolved, ctx.signal))) {
      const known = resolved as ResolvedObject[];
      await waitForApplied(step, ctx, known);
      return {
        status: "skipped",
        reason: `skipIf: exists — all ${known.length} object${known.length === 1 ? "" : "s"} already exist${step.action.waitFor ? `, and meet ${step.action.waitFor}` : ""}`,
      };
    }
    const manifests = resolved.map((o) => o.manifest);
    let results: ApplyResult[];
    try {
      results = await ctx.kube.applyAll(manifests, {
        ...applyOptions(step, ctx, false),
        onResult: (r) => ctx.log(`${r.ref} ${r.action}`),
      });
    } catch (e) {
      // The objects' own errors stay its cause: the engine reads them to tell a transient refusal from a denial.
      if (e instanceof ApplyAllError) throw Object.assign(executionError(ctx.redactor.redact(e.message)), { cause: e });
      throw e;
    }
    const counts: Record<string, number> = { created: 0, configured: 0, unchanged: 0 };
    for (const r of results) counts[r.action] = (counts[r.action] ?? 0) + 1;
    await waitForApplied(
      step,
      ctx,
      results.map((r) => ({ resource: r.resource, name: r.name, namespace: r.namespace })),
    );
    const added = addedRefs(ctx.hooks?.added() ?? [], results);
    const large = results.filter((r) => r.serverSideBecauseTooLarge).length;
    return {
      status: "ok",
      reason: `${countSummary(counts, ["created", "configured", "unchanged"])}${large > 0 ? ` (${large} server-side: too large for the last-applied annotation)` : ""}${step.action.waitFor ? `; ${step.action.waitFor} met` : ""}`,
      ...(added.length > 0 ? { added } : {}),
    };
  },

  async destroy(step, ctx) {
    const since = Date.now();
    const { resolved } = await readObjects(step, ctx);
    let deleted = 0;
    let absent = 0;
    const foreign: string[] = [];
    // Reverse order: a namespace or CRD listed first goes last.
    for (const o of [...resolved].reverse()) {
      if (isUnknownKind(o)) {
        absent++;
        continue;
      }
      const live = await ctx.kube.get(o.resource, o.name, o.namespace, { signal: ctx.signal });
      if (live === undefined) {
        absent++;
        continue;
      }
      if (!isOwnedBy(live, ctx.spec.name, step.name)) {
        foreign.push(objectLabel(o));
        continue;
      }
      await ctx.kube.delete(o.resource, o.name, o.namespace, { signal: ctx.signal, propagationPolicy: "Background" });
      const left = await waitUntilGone(
        ctx,
        [{ resource: o.resource, name: o.name, namespace: o.namespace, uid: live.metadata?.uid }],
        { since },
      );
      if (left.length === 0) ctx.log(`${objectLabel(o)} deleted`);
      deleted++;
    }
    // Objects webhooks added (the record lists them; the spec cannot): removed last, owned ones only.
    for (const ref of [...(ctx.recordedAdditions ?? [])].reverse()) {
      const label = `${ref.kind}/${ref.name}${ref.namespace !== undefined ? ` -n ${ref.namespace}` : ""}`;
      let resource;
      try {
        resource = await ctx.kube.resolveKind(ref.apiVersion, ref.kind, { signal: ctx.signal });
      } catch {
        absent++;
        continue;
      }
      const live = await ctx.kube.get(resource, ref.name, ref.namespace, { signal: ctx.signal });
      if (live === undefined) {
        absent++;
        continue;
      }
      if (!isOwnedBy(live, ctx.spec.name, step.name)) {
        foreign.push(label);
        continue;
      }
      await ctx.kube.delete(resource, ref.name, ref.namespace, { signal: ctx.signal, propagationPolicy: "Background" });
      const left = await waitUntilGone(
        ctx,
        [{ resource, name: ref.name, namespace: ref.namespace, uid: live.metadata?.uid }],
        { since },
      );
      if (left.length === 0) ctx.log(`${label} deleted (added by a pre-apply webhook)`);
      deleted++;
    }
    const parts = [`${deleted} deleted`];
    if (absent > 0) parts.push(`${absent} already absent`);
    if (foreign.length > 0)
      parts.push(
        `${foreign.length} left alone (not created by this step: ${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", ..." : ""})`,
      );
    return { status: deleted > 0 ? "ok" : "skipped", reason: parts.join(", ") };
  },

  drift: applyDrift,
};
