/**
 * Waits for deletions that say why they do not finish: a teardown's waits (helm uninstall's, a
 * `delete:` step's, an `apply:` step's destroy) run under a StallMonitor whose diagnosis reads the
 * objects being deleted and, when a Namespace is among them, the cluster's APIServices: a
 * Terminating Namespace and the condition that holds it, finalizers that do not clear, an
 * aggregated API that is not available (the reasoning is pure: kubectl/deletion.ts). A wait that
 * makes no progress logs `blocked: <cause>`, and one that times out ends its error with the causes.
 *
 * A Namespace that is Terminating only because the cluster cannot discover an aggregated API (its
 * content already deleted) is not waited for: it finishes by itself when that API serves again or
 * its APIService is removed, often by a later step of the same teardown, which a wait here would
 * hold back until the deadline. The wait says so in one line and goes on. Every other deletion is
 * waited for as before: an object whose content or finalizers remain may still need a controller
 * that a later step tears down.
 */
import { WaitTimeoutError } from "../../kube/index.js";
import { formatMs } from "../../kube/watch.js";
import { deletionCauses, heldOnlyByDiscovery } from "../../kubectl/deletion.js";
import { describeObject, type KubeObject, type ResourceType } from "../../kubectl/types.js";
import { executionError } from "../../errors.js";
import { quiet, StallMonitor, subjectOf, waitBoundMs, withCauses, type StallSubject } from "./stall.js";
import type { StepContext } from "../contract.js";

const API_SERVICES: ResourceType = {
  group: "apiregistration.k8s.io",
  version: "v1",
  resource: "apiservices",
  kind: "APIService",
  namespaced: false,
};

/** One object a teardown waits to be gone (with `uid`, that incarnation). */
export interface Doomed {
  readonly resource: ResourceType;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly uid?: string | undefined;
}

/** The causes that hold the subjects' deletion now, redacted; each read that fails is left out. */
export async function diagnoseDeletion(
  ctx: Pick<StepContext, "kube" | "signal" | "redactor">,
  subjects: readonly StallSubject[],
): Promise<string[]> {
  const opts = { signal: ctx.signal };
  try {
    const live = (
      await Promise.all(
        subjects.map((s) =>
          quiet(
            ctx.kube
              .resolveKind(s.apiVersion, s.kind, opts)
              .then((rt) => ctx.kube.get(rt, s.name, s.namespace, opts))
              .then((o): KubeObject | undefined => (o === undefined ? undefined : { ...o, kind: s.kind })),
            undefined as KubeObject | undefined,
          ),
        ),
      )
    ).filter((o): o is KubeObject => o !== undefined);
    const apiServices = live.some((o) => o.kind === "Namespace")
      ? await quiet(
          ctx.kube.list(API_SERVICES, opts).then((l) => l.items.map((o) => ({ ...o, kind: "APIService" }))),
          [] as KubeObject[],
        )
      : [];
    return deletionCauses({ subjects: live, apiServices }).map((l) => ctx.redactor.redact(l));
  } catch {
    return [];
  }
}

/** How a deletion wait is bounded and what its timeout tells the user to do next. */
export interface GoneOptions {
  /** When the step began (ms since the epoch): what it spent before the wait is gone from its deadline. */
  readonly since?: number;
  /** The command to run again once what blocks the deletion is cleared: the step's own (`destroy` by default). */
  readonly rerun?: "apply" | "destroy";
}

/**
 * Waits until every object is gone, at most until a little before the attempt's deadline (its time
 * left counted from `since`, when the step began its teardown), under a
 * StallMonitor that names what holds them. Returns one line per Namespace left Terminating (see
 * the module comment); the caller logs nothing more about those.
 */
export async function waitUntilGone(
  ctx: StepContext,
  objects: readonly Doomed[],
  opts: GoneOptions = {},
): Promise<string[]> {
  if (objects.length === 0) return [];
  // The attempt's time left: what the step spent before the wait (since `since`) is gone.
  const spent = opts.since !== undefined ? Math.max(0, Date.now() - opts.since) : 0;
  const timeoutMs = waitBoundMs(Math.max(0, ctx.deadline - spent));
  const subjects = objects.map((o) => subjectOf(o.resource, o.name, o.namespace));
  const monitor = new StallMonitor(ctx, () => subjects, diagnoseDeletion);
  const left: string[] = [];
  const settled = await Promise.allSettled(
    objects.map(async (o) => {
      const label = describeObject(o.resource, o.name, o.namespace);
      const options = {
        signal: ctx.signal,
        timeoutMs,
        description: `${label} to be deleted`,
        onProgress: () => monitor.progress(),
      };
      if (o.resource.kind !== "Namespace") {
        await ctx.kube.waitForDeletion(o.resource, o.name, o.namespace, {
          ...options,
          ...(o.uid !== undefined ? { uid: o.uid } : {}),
        });
        return;
      }
      const outcome = await ctx.kube.waitFor<string | true>(
        { resource: o.resource, name: o.name },
        (found) => {
          const current = found
            .filter((x) => x.metadata?.name === o.name && (o.uid === undefined || x.metadata?.uid === o.uid))
            .map((x) => ({ ...x, kind: "Namespace" }))[0];
          if (current === undefined) return { state: "done", value: true };
          const held = heldOnlyByDiscovery(current);
          if (held !== undefined) return { state: "done", value: leftTerminating(`namespace/${o.name}`, held) };
          return {
            state: "pending",
            message: `${label} still exists${current.metadata?.deletionTimestamp !== undefined ? " (Terminating)" : ""}`,
          };
        },
        options,
      );
      if (outcome !== true) left.push(ctx.redactor.redact(outcome));
    }),
  );
  const failures = settled.flatMap((s) => (s.status === "rejected" ? [s.reason as unknown] : []));
  if (failures.length === 0) {
    monitor.stop();
    for (const line of left) ctx.log(line);
    return left;
  }
  const other = failures.find((f) => !(f instanceof WaitTimeoutError));
  if (other !== undefined) {
    monitor.stop();
    throw other;
  }
  const still = failures.map((f) => (f as WaitTimeoutError).lastState);
  const causes = await monitor.causesNow();
  throw executionError(
    ctx.redactor.redact(
      withCauses(
        `not deleted after ${formatMs(timeoutMs)}: ${still.join("; ")}; once what blocks it is cleared, run the ${opts.rerun ?? "destroy"} again`,
        causes,
      ),
    ),
  );
}

/** The line for a Namespace the teardown does not wait for (see the module comment). */
function leftTerminating(label: string, held: { groupVersions: string[]; message: string }): string {
  const apis = held.groupVersions.length > 0 ? held.groupVersions.join(", ") : "an aggregated API";
  return (
    `${label} is left Terminating: its content is deleted, and the namespace controller cannot finish it while ` +
    `${apis} does not answer discovery (NamespaceDeletionDiscoveryFailure: ${held.message}); ` +
    `it goes once that API serves again or its APIService is removed, so the teardown goes on`
  );
}
