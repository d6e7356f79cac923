/**
 * Whether a release is still the one a `helm:` step left, as a function of plain data: its
 * stored revisions (storage.ts) and what the state record kept of the step (the revision it
 * made or found up to date, and when it finished).
 *
 * - no revision, or the last one `uninstalled`: drifted, uninstalled by hand;
 * - the last one pending: drifted, a helm operation runs or died on it;
 * - the last one is the recorded revision: in sync (a revision never changes once written);
 * - another revision (a `helm rollback`, a hand-made `helm upgrade`): drifted, naming the
 *   revision, what helm said of it (`Rollback to 1`), and what differs from the recorded one:
 *   the chart, and the value paths (never the values);
 * - a record written before revisions were kept: judged by time, a revision deployed after the
 *   step finished is drifted.
 *
 * The objects inside a release are helm's to compare, not khook's: an object of the chart edited
 * by hand is not seen here (docs/cli.md says so).
 */
import { describeRevision, historyState, type HelmRevision } from "./release.js";
import type { StoredRevision } from "./storage.js";
import { isPlainMap, type Values } from "./release-values.js";

export interface ReleaseDriftFacts {
  readonly release: string;
  readonly namespace: string;
  /** The release's stored revisions, oldest first (empty: none). */
  readonly revisions: readonly StoredRevision[];
  /** The revision the record says the step left; undefined in a record written before it kept one. */
  readonly recordedRevision: number | undefined;
  /** ISO-8601: when the step's recorded run finished. */
  readonly finishedAt: string;
}

export type ReleaseDrift =
  | { readonly state: "in-sync"; readonly reason: string }
  | { readonly state: "not-checkable"; readonly reason: string }
  | {
      readonly state: "drifted";
      readonly change: "revision" | "uninstalled" | "pending";
      readonly reason: string;
      /** `values.<path>` for each value path that differs, `chart` when the chart does. */
      readonly fields?: readonly string[];
    };

export function decideReleaseDrift(f: ReleaseDriftFacts): ReleaseDrift {
  const where = `release ${f.release} (namespace ${f.namespace})`;
  const history = f.revisions.map((r) => r.revision);
  const state = historyState(history.length > 0 ? history : undefined, f.release, f.namespace);
  switch (state.kind) {
    case "absent":
      return { state: "drifted", change: "uninstalled", reason: `${where} is not installed: it was uninstalled` };
    case "uninstalled":
      return {
        state: "drifted",
        change: "uninstalled",
        reason: `${where} was uninstalled (history kept: ${describeRevision(state.last)})`,
      };
    case "pending":
      return {
        state: "drifted",
        change: "pending",
        reason: `${where} is ${state.last.status} at ${describeRevision(state.last)}: a helm operation runs on it or died`,
      };
    case "present":
      break;
  }
  const last = state.last;
  if (f.recordedRevision === undefined) return driftByTime(f, where, last);
  if (last.revision === f.recordedRevision)
    return { state: "in-sync", reason: `${where} at ${describeRevision(last)}, as khook left it` };
  const recorded = f.revisions.find((r) => r.revision.revision === f.recordedRevision);
  const lastStored = f.revisions[f.revisions.length - 1]!;
  const fields: string[] = [];
  const differences: string[] = [];
  if (recorded !== undefined) {
    if (recorded.revision.chart !== last.chart) {
      fields.push("chart");
      differences.push(`chart ${last.chart}, not ${recorded.revision.chart}`);
    }
    const paths = differingValuePaths(recorded.config, lastStored.config);
    fields.push(...paths.map((p) => `values.${p}`));
    if (paths.length > 0) differences.push(`values differ at ${listed(paths)}`);
    else if (differences.length === 0) differences.push("same chart and values");
  } else differences.push(`revision ${f.recordedRevision} is no longer in the release's history to compare with`);
  return {
    state: "drifted",
    change: "revision",
    reason: `${where} is at ${describeRevision(last)}${last.description !== "" ? ` ("${last.description}")` : ""}, not at revision ${f.recordedRevision} that khook left: ${differences.join("; ")}`,
    ...(fields.length > 0 ? { fields } : {}),
  };
}

/** A record without the revision: a revision deployed after the step finished is someone else's. */
function driftByTime(f: ReleaseDriftFacts, where: string, last: HelmRevision): ReleaseDrift {
  const deployed = Date.parse(last.updated);
  const finished = Date.parse(f.finishedAt);
  if (Number.isNaN(deployed) || Number.isNaN(finished))
    return {
      state: "not-checkable",
      reason: `${where}: the state record does not say which revision khook left, and ${describeRevision(last)} has no deploy time to compare; the next apply that runs this step records it`,
    };
  if (deployed <= finished)
    return {
      state: "in-sync",
      reason: `${where} at ${describeRevision(last)}, deployed before khook's run finished (the record predates revision tracking)`,
    };
  return {
    state: "drifted",
    change: "revision",
    reason: `${where} is at ${describeRevision(last)}${last.description !== "" ? ` ("${last.description}")` : ""}, deployed at ${last.updated}, after khook's run finished at ${f.finishedAt}`,
  };
}

/** The paths (`crds.enabled`, `image.tag`) where two sets of user-supplied values differ; maps compare key by key. */
export function differingValuePaths(a: Values, b: Values): string[] {
  const out: string[] = [];
  const walk = (x: unknown, y: unknown, path: string): void => {
    if (isPlainMap(x) && isPlainMap(y)) {
      for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort())
        walk(x[k], y[k], path === "" ? k : `${path}.${k}`);
      return;
    }
    if (JSON.stringify(x) !== JSON.stringify(y)) out.push(path);
  };
  walk(a, b, "");
  return out;
}

function listed(paths: readonly string[]): string {
  return paths.length <= 5 ? paths.join(", ") : `${paths.slice(0, 5).join(", ")} and ${paths.length - 5} more`;
}
