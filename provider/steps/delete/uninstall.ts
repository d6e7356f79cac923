/**
 * `delete: { release: ... }` — helm uninstall, then wait until the release's
 * resources are gone (steps/helm/release-storage.ts: khook's wait, which names what holds
 * them), bounded by the step timeout. An absent release is success unless
 * `ignoreNotFound: false`.
 *
 * helm: owns presence and delete: owns absence, so this uninstalls any release
 * of that name, whoever installed it: the spec asked for its absence.
 *
 * The delete executor dispatches here for the release form.
 */
import { executionError } from "../../errors.js";
import type { DeleteReleaseNormalized, DeleteStep } from "./definition.js";
import { HelmSession, locateHelm } from "../../tools/helm.js";
import { describeRevision, historyState } from "../../helm/release.js";
import { goneOrLeft, uninstallAndWait } from "../helm/release-storage.js";
import { ALL_RELEASES_SELECTOR, RELEASE_STORAGE, secretsOfRelease, storedRevisions } from "../../helm/storage.js";
import type { Assessment, DestroyOutcome, DriftContext, DriftFinding, StepContext, StepOutcome } from "../contract.js";

type DeleteReleaseAction = DeleteReleaseNormalized;

export function isDeleteRelease(action: DeleteStep["action"]): action is DeleteReleaseAction {
  return "release" in action;
}

function releaseAction(step: DeleteStep): DeleteReleaseAction {
  const a = step.action;
  if (!isDeleteRelease(a)) throw new Error(`step ${step.name}: not a delete-by-release step`);
  return a;
}

async function withSession<T>(ctx: StepContext, fn: (s: HelmSession) => Promise<T>): Promise<T> {
  const helm = await locateHelm({ explicit: ctx.tools?.helm, redactor: ctx.redactor, signal: ctx.signal });
  const session = HelmSession.open({ helm, connection: ctx.connection, redactor: ctx.redactor, signal: ctx.signal });
  try {
    return await fn(session);
  } finally {
    session.close();
  }
}

function notFound(a: { release: string; namespace: string }): string {
  return `release ${a.release} not found in namespace ${a.namespace}`;
}

async function assess(step: DeleteStep, ctx: StepContext): Promise<Assessment> {
  const a = releaseAction(step);
  return withSession(ctx, async (s) => {
    const state = historyState(await s.history(a.release, a.namespace), a.release, a.namespace);
    if (state.kind === "absent" || state.kind === "uninstalled") {
      if (a.ignoreNotFound) return { action: "no-op", reason: `${notFound(a)}; nothing to delete` };
      return { action: "delete", reason: `${notFound(a)}: the step will fail (ignoreNotFound: false)` };
    }
    return {
      action: "delete",
      reason: `uninstall release ${a.release} (namespace ${a.namespace}), ${describeRevision(state.last)}`,
    };
  });
}

async function apply(step: DeleteStep, ctx: StepContext): Promise<StepOutcome> {
  const a = releaseAction(step);
  return withSession(ctx, async (s) => {
    const state = historyState(await s.history(a.release, a.namespace), a.release, a.namespace);
    const absent = (): StepOutcome => {
      if (a.ignoreNotFound) return { status: "ok", reason: `${notFound(a)}; nothing to delete` };
      throw executionError(`${notFound(a)} (ignoreNotFound: false)`);
    };
    if (state.kind === "absent" || state.kind === "uninstalled") return absent();
    ctx.log(
      `uninstalling release ${a.release} (namespace ${a.namespace}), ${describeRevision(state.last)}, and waiting for its resources to be gone`,
    );
    const done = await uninstallAndWait(s, { release: a.release, namespace: a.namespace }, ctx, "apply");
    if (!done.removed) return absent(); // gone between the history read and the uninstall
    return {
      status: "ok",
      reason: `uninstalled release ${a.release} (namespace ${a.namespace}, was ${describeRevision(state.last)}); ${goneOrLeft(done.left)}`,
    };
  });
}

/** A delete step creates nothing, so destroy has nothing to undo. */
async function destroy(_step: DeleteStep, _ctx: StepContext): Promise<DestroyOutcome> {
  return { status: "skipped", reason: "a delete: step creates nothing; nothing to undo" };
}

/** Is the release the step uninstalled still gone? Read from helm's Secrets in its namespace (one list, shared). */
async function drift(step: DeleteStep, ctx: DriftContext): Promise<DriftFinding> {
  const a = releaseAction(step);
  const secrets = await ctx.live.select(RELEASE_STORAGE, a.namespace, ALL_RELEASES_SELECTOR);
  const revisions = storedRevisions(secretsOfRelease(secrets, a.release), a.release);
  const ref = `release ${a.release} -n ${a.namespace}`;
  if (revisions === undefined)
    return { state: "not-checkable", reason: `${ref}: a revision Secret of the release is not one helm wrote` };
  const history = revisions.map((r) => r.revision);
  const state = historyState(history.length > 0 ? history : undefined, a.release, a.namespace);
  if (state.kind === "absent" || state.kind === "uninstalled")
    return { state: "in-sync", reason: `release ${a.release} (namespace ${a.namespace}) is still not installed` };
  return {
    state: "drifted",
    reason: `release ${a.release} (namespace ${a.namespace}) is installed again: ${describeRevision(state.last)}`,
    drifted: [{ ref, change: "back" }],
  };
}

export const deleteReleaseExecutor = { assess, apply, destroy, drift };
