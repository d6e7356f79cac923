/**
 * What the helm step and `delete: {release}` share about a release that exists: reading it from
 * helm's storage (one list request instead of helm processes), and uninstalling it with a wait that
 * says why it does not finish.
 *
 * `helm uninstall --wait` waits for every deleted object, a Terminating Namespace included, and
 * when its deadline comes says only `context deadline exceeded`. So khook runs `helm uninstall`
 * without `--wait` and waits itself (steps/cluster/deletion-wait.ts): one watch per deleted object, the causes
 * named when it stalls, and a Namespace that only an unavailable aggregated API holds left to the
 * namespace controller. A release whose chart has `post-delete` hooks keeps helm's own `--wait`
 * (helm runs those hooks after its wait), explained by the same diagnosis while it runs; so does a
 * release whose storage khook cannot read (another driver), whose hooks it cannot know.
 */
import { executionError } from "../../errors.js";
import { RELEASE_STORAGE, releaseSelector, storedReleases, type StoredReleases } from "../../helm/storage.js";
import { manifestObjects } from "../../hooks/post-renderer.js";
import type { HelmSession } from "../../tools/helm.js";
import { diagnoseDeletion, waitUntilGone, type Doomed, type GoneOptions } from "../cluster/deletion-wait.js";
import { StallMonitor, withCauses, type StallSubject } from "../cluster/stall.js";
import type { StepContext } from "../contract.js";

/**
 * The release's history and latest user values from helm's storage Secrets, in one list request
 * instead of `helm history` and `helm get values` (two helm processes per step, the bulk of a
 * re-run). Undefined means "ask helm": another storage driver, no permission to list Secrets, or
 * a record helm did not write.
 */
export async function storedReleasesOf(
  ctx: StepContext,
  t: { release: string; namespace: string },
): Promise<StoredReleases | undefined> {
  if (!readsStorageSecrets()) return undefined;
  try {
    const list = await ctx.kube.list(RELEASE_STORAGE, {
      namespace: t.namespace,
      labelSelector: releaseSelector(t.release),
      signal: ctx.signal,
    });
    return storedReleases(list.items, t.release);
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return undefined;
  }
}

/** helm's storage driver, when it is one khook reads from the cluster (Secrets); undefined otherwise. */
export function readsStorageSecrets(): boolean {
  const driver = process.env["HELM_DRIVER"];
  return driver === undefined || driver === "" || driver === "secret" || driver === "secrets";
}

/** helm's own timeout for a step: room to finish (an atomic rollback, say) before the engine's timeout fires. */
export function helmTimeoutMs(deadline: number): number {
  const margin = Math.min(10_000, Math.floor(deadline / 10));
  return Math.max(1000, deadline - margin);
}

/** An object of a release's manifest. */
interface ManifestObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string | undefined;
  /** `helm.sh/resource-policy: keep`: helm uninstall leaves it. */
  readonly kept: boolean;
}

/** What uninstalling a release will wait for, and who waits. */
export interface UninstallPlan {
  /** helm's own `--wait` (post-delete hooks, or hooks unknown), else khook's. */
  readonly helmWaits: boolean;
  /** The objects helm deletes (kept ones left out), in the release's namespace unless they say another. */
  readonly objects: readonly StallSubject[];
}

/** Pure: who waits for an uninstall, and for what, from the release's manifest and hook events (undefined: unknown). */
export function planUninstall(
  manifest: string,
  hookEvents: readonly string[] | undefined,
  releaseNamespace: string,
): UninstallPlan {
  const objects = parseManifest(manifest)
    .filter((o) => !o.kept)
    .map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.name,
      namespace: o.kind === "Namespace" ? undefined : (o.namespace ?? releaseNamespace),
    }));
  return { helmWaits: hookEvents === undefined || hookEvents.includes("post-delete"), objects };
}

function parseManifest(manifest: string): ManifestObject[] {
  let docs: Record<string, unknown>[];
  try {
    docs = manifestObjects(manifest);
  } catch {
    return [];
  }
  const out: ManifestObject[] = [];
  for (const o of docs) {
    const meta = (o["metadata"] ?? {}) as { name?: unknown; namespace?: unknown; annotations?: unknown };
    const { apiVersion, kind } = o as { apiVersion?: unknown; kind?: unknown };
    if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof meta.name !== "string") continue;
    const annotations = (meta.annotations ?? {}) as Record<string, unknown>;
    out.push({
      apiVersion,
      kind,
      name: meta.name,
      namespace: typeof meta.namespace === "string" ? meta.namespace : undefined,
      kept: annotations["helm.sh/resource-policy"] === "keep",
    });
  }
  return out;
}

/**
 * Uninstalls the release and waits for what it deleted to be gone (see the module comment).
 * Returns false when helm found no such release; otherwise the lines about namespaces left
 * Terminating, already logged.
 */
export async function uninstallAndWait(
  session: HelmSession,
  t: { release: string; namespace: string },
  ctx: StepContext,
  rerun: GoneOptions["rerun"] = "destroy",
): Promise<{ removed: false } | { removed: true; left: string[] }> {
  const since = Date.now();
  const stored = await storedReleasesOf(ctx, t);
  const manifest =
    stored?.latestManifest ??
    (await session.rawManifest(t.release, t.namespace).catch((e: unknown) => {
      if (ctx.signal.aborted) throw e;
      return "";
    }));
  const plan = planUninstall(
    manifest,
    stored?.history !== undefined ? stored.latestHookEvents : undefined,
    t.namespace,
  );
  const timeoutMs = helmTimeoutMs(ctx.deadline);
  if (plan.helmWaits) {
    const monitor = new StallMonitor(ctx, () => plan.objects, diagnoseDeletion);
    try {
      const removed = await session.uninstall(t.release, t.namespace, timeoutMs, { wait: true });
      return removed ? { removed: true, left: [] } : { removed: false };
    } catch (e) {
      const causes = await monitor.causesNow();
      if (causes.length === 0) throw e;
      throw executionError(ctx.redactor.redact(withCauses((e as Error).message, causes)));
    } finally {
      monitor.stop();
    }
  }
  const removed = await session.uninstall(t.release, t.namespace, timeoutMs, { wait: false });
  if (!removed) return { removed: false };
  const doomed: Doomed[] = [];
  for (const o of plan.objects) {
    try {
      const resource = await ctx.kube.resolveKind(o.apiVersion, o.kind, { signal: ctx.signal });
      doomed.push({ resource, name: o.name, namespace: resource.namespaced ? o.namespace : undefined });
    } catch (e) {
      // A kind that is no longer served (its CRD went first) has nothing left to wait for.
      if (ctx.signal.aborted) throw e;
    }
  }
  return { removed: true, left: await waitUntilGone(ctx, doomed, { since, rerun }) };
}

/** How an uninstall's reason ends: its resources are gone, or which namespaces are left Terminating and why. */
export function goneOrLeft(left: readonly string[]): string {
  return left.length === 0 ? "its resources are gone" : `its resources are gone except: ${left.join("; ")}`;
}
