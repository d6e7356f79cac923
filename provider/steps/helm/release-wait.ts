/**
 * `wait: true` for a helm release, done by khook: one watch per object of the release that
 * helm's --wait would look at, each settled the moment the object is ready by helm's rules
 * (provider/helm/readiness.ts). helm itself polls every two seconds.
 */
import { WaitTimeoutError, type KubeObject } from "../../kube/index.js";
import { formatMs } from "../../kube/watch.js";
import { manifestObjects } from "../../hooks/post-renderer.js";
import { executionError } from "../../errors.js";
import { hasReadinessRule, readiness } from "../../helm/readiness.js";
import { StallMonitor, waitBoundMs, withCauses } from "../cluster/stall.js";
import type { StepContext } from "../contract.js";

interface Waitable {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string | undefined;
}

/** The objects of a release manifest that helm's --wait looks at. */
export function waitableObjects(manifest: string): Waitable[] {
  const out: Waitable[] = [];
  for (const o of manifestObjects(manifest)) {
    const { apiVersion, kind } = o as { apiVersion?: unknown; kind?: unknown };
    const meta = (o as KubeObject).metadata;
    if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof meta?.name !== "string") continue;
    if (hasReadinessRule(apiVersion, kind)) out.push({ apiVersion, kind, name: meta.name, namespace: meta.namespace });
  }
  return out;
}

/**
 * Resolves once every waitable object of the release is ready; on timeout, one error
 * naming each object that is not, and why.
 */
export async function waitForRelease(
  manifest: string,
  release: { name: string; namespace: string },
  ctx: StepContext,
): Promise<void> {
  const objects = waitableObjects(manifest);
  if (objects.length === 0) return;
  const timeoutMs = waitBoundMs(ctx.deadline);
  ctx.log(`waiting for the objects of release ${release.name} (namespace ${release.namespace}) to be ready`);
  const labelOf = (o: Waitable): string => `${o.kind.toLowerCase()}/${o.name}`;
  const monitor = new StallMonitor(ctx, () =>
    objects.map((o) => ({ ...o, namespace: o.namespace ?? release.namespace })),
  );
  const settled = await Promise.allSettled(
    objects.map(async (o) => {
      const resource = await ctx.kube.resolveKind(o.apiVersion, o.kind, { signal: ctx.signal });
      const namespace = resource.namespaced ? (o.namespace ?? release.namespace) : undefined;
      await ctx.kube.waitFor(
        { resource, name: o.name, ...(namespace !== undefined ? { namespace } : {}) },
        (found) => {
          const r = readiness(
            found.find((x) => x.metadata?.name === o.name),
            o.apiVersion,
            o.kind,
          );
          return r.ready ? { state: "done", value: true } : { state: "pending", message: r.why };
        },
        {
          signal: ctx.signal,
          timeoutMs,
          description: labelOf(o),
          onProgress: (m) => {
            monitor.progress();
            ctx.log(`${labelOf(o)}: ${m}`);
          },
        },
      );
    }),
  );
  monitor.stop();
  const failures = settled.flatMap((s, i) =>
    s.status === "rejected" ? [{ label: labelOf(objects[i]!), error: s.reason as unknown }] : [],
  );
  if (failures.length === 0) return;
  const other = failures.find((f) => !(f.error instanceof WaitTimeoutError));
  if (other !== undefined) throw other.error;
  // Each object's last state, also when its watch never saw it (then the state says why, without the object's name).
  const notReady = failures.map((f) => `${f.label}: ${(f.error as WaitTimeoutError).lastState}`);
  const causes = await monitor.causesNow();
  const message =
    `release ${release.name} (namespace ${release.namespace}) is installed but not ready after ${formatMs(timeoutMs)}: ${notReady.join("; ")}. ` +
    `See why with kubectl describe -n ${release.namespace} ${failures.map((f) => f.label).join(" ")}; the next run waits again`;
  throw executionError(ctx.redactor.redact(withCauses(message, causes)));
}
