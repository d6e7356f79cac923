/**
 * The one rule for what a `helm:` step does to its release, as a function of plain data.
 *
 * - no release (or only an uninstalled one) -> install;
 * - pending-install / pending-upgrade / pending-rollback -> pending: the step refuses, with the
 *   recovery command (recover.ts says when khook may recover it itself);
 * - installed, and `skipIf: installed` -> skip;
 * - deployed with the same chart (name-version), the same user-supplied values, the same render
 *   hooks and, for a local chart, the same rendered manifest -> no-op (no new revision);
 * - anything else (deployed but different, failed, superseded) -> upgrade.
 *
 * Some facts cost a helm process, a values download or a server-side dry run, and most
 * decisions need only a few of them. So the facts are optional: decideRelease returns either the
 * decision or the next fact it needs to reach one, and the executor (steps/helm/executor.ts) gathers that
 * fact and asks again. The order of the `need`s is the order in which they are gathered.
 */
import {
  chartLabel,
  describeRevision,
  historyChart,
  historyState,
  pendingMessage,
  type ChartMeta,
  type HelmRevision,
  type HistoryState,
} from "./release.js";
import { sameValues, type Values } from "./release-values.js";

export interface ReleaseFacts {
  readonly release: string;
  readonly namespace: string;
  /** The release's revisions, oldest first; undefined when there is none. */
  readonly history: readonly HelmRevision[] | undefined;
  /** `skipIf: installed`. */
  readonly skipIfInstalled: boolean;
  /** The spec has hooks, so a release's render-hooks label may be stale (hooksMatch). */
  readonly specHasHooks: boolean;
  /** A local chart: its content can change without its version (manifests). */
  readonly localChart: boolean;
  /** The step's values, merged (need "values"). */
  readonly values?: Values;
  /** The user-supplied values of the latest revision (need "deployedValues"). */
  readonly deployedValues?: Values;
  /** The chart the step would deploy, resolved (need "desiredChart"). */
  readonly desiredChart?: ChartMeta;
  /** Whether the release carries the fingerprint of the step's current render hooks (need "hooksMatch"). */
  readonly hooksMatch?: boolean;
  /** The deployed manifest and a server-side dry run of the upgrade (need "manifests"). */
  readonly manifests?: { readonly deployed: string; readonly rendered: string };
}

export type ReleaseFact = "values" | "deployedValues" | "desiredChart" | "hooksMatch" | "manifests";

export type ReleaseDecision =
  | { readonly action: "pending"; readonly reason: string; readonly state: Extract<HistoryState, { kind: "pending" }> }
  | { readonly action: "skip"; readonly reason: string; readonly last: HelmRevision }
  | { readonly action: "install"; readonly reason: string; readonly desired: ChartMeta }
  | { readonly action: "upgrade"; readonly reason: string; readonly desired: ChartMeta; readonly last: HelmRevision }
  | { readonly action: "no-op"; readonly reason: string; readonly last: HelmRevision };

export type ReleaseDecisionOrNeed = ReleaseDecision | { readonly action: "need"; readonly fact: ReleaseFact };

const need = (fact: ReleaseFact): ReleaseDecisionOrNeed => ({ action: "need", fact });

export function decideRelease(f: ReleaseFacts): ReleaseDecisionOrNeed {
  const state = historyState(f.history, f.release, f.namespace);
  if (state.kind === "pending")
    return { action: "pending", reason: pendingMessage(state, f.release, f.namespace), state };
  if (f.skipIfInstalled && state.kind === "present") {
    return {
      action: "skip",
      reason: `release ${f.release} (namespace ${f.namespace}) is installed: ${describeRevision(state.last)}; skipIf: installed`,
      last: state.last,
    };
  }
  // Every install or upgrade deploys them; read first, so that a bad values source is the first error.
  if (f.values === undefined) return need("values");

  if (state.kind !== "present") {
    if (f.desiredChart === undefined) return need("desiredChart");
    const was = state.kind === "uninstalled" ? describeRevision(state.last) : "not installed";
    return { action: "install", reason: `${was} -> ${chartLabel(f.desiredChart)}`, desired: f.desiredChart };
  }

  const last = state.last;
  if (f.deployedValues === undefined) return need("deployedValues");
  if (f.desiredChart === undefined) return need("desiredChart");
  const desired = f.desiredChart;
  const upgrade = (why: string): ReleaseDecision => ({
    action: "upgrade",
    reason: `${describeRevision(last)} -> ${chartLabel(desired)}${why}`,
    desired,
    last,
  });
  if (last.status !== "deployed") return upgrade(last.status === "failed" ? " (the last revision failed)" : "");
  if (last.chart !== historyChart(desired)) return upgrade("");
  if (!sameValues(f.deployedValues, f.values)) return upgrade(" (values changed)");
  // The render hooks' fingerprint rides on the release: changed hooks re-render it. Specs without hooks skip the lookup.
  if (f.specHasHooks) {
    if (f.hooksMatch === undefined) return need("hooksMatch");
    if (!f.hooksMatch) return upgrade(" (hooks changed)");
  }
  if (f.localChart) {
    if (f.manifests === undefined) return need("manifests");
    if (normalizeManifest(f.manifests.deployed) !== normalizeManifest(f.manifests.rendered))
      return upgrade(" (chart content changed)");
  }
  return { action: "no-op", reason: `${describeRevision(last)} is up to date (same chart and values)`, last };
}

/** `helm get manifest` ends with an extra newline the release JSON's manifest does not have. */
export function normalizeManifest(m: string): string {
  return m.replace(/\s+$/, "") + "\n";
}
