/**
 * A release's history as helm reports it (`helm history -o json`, or its storage Secrets:
 * storage.ts), classified for the install/upgrade decision, and the exact command that
 * recovers a release a dead helm left pending.
 */

/** One entry of `helm history -o json`. */
export interface HelmRevision {
  revision: number;
  updated: string;
  status: string;
  /** `<chart name>-<chart version>` */
  chart: string;
  app_version: string;
  description: string;
}

/** A chart's name and version (Chart.yaml). */
export interface ChartMeta {
  name: string;
  version: string;
  /** Chart.yaml's appVersion, when `helm show chart` was asked (hook contexts). */
  appVersion?: string;
}

export type HistoryState =
  | { kind: "absent" }
  | { kind: "uninstalled"; last: HelmRevision }
  | { kind: "pending"; last: HelmRevision; recovery: string }
  | { kind: "present"; last: HelmRevision };

const PENDING = new Set(["pending-install", "pending-upgrade", "pending-rollback"]);

/** Classifies a release's history (oldest first) for the install/upgrade decision. */
export function historyState(
  history: readonly HelmRevision[] | undefined,
  release: string,
  namespace: string,
): HistoryState {
  const last = history?.[history.length - 1];
  if (history === undefined || last === undefined) return { kind: "absent" };
  if (last.status === "uninstalled") return { kind: "uninstalled", last };
  if (PENDING.has(last.status))
    return { kind: "pending", last, recovery: recoveryCommand(history, release, namespace) };
  return { kind: "present", last };
}

/**
 * How a pending release gets back to a state helm accepts: a rollback to the latest revision
 * that was deployed (or superseded, which was deployed once), or an uninstall when there is none
 * (a first install).
 */
export type Recovery =
  | { action: "rollback"; release: string; namespace: string; toRevision: number }
  | { action: "uninstall"; release: string; namespace: string };

export function recoveryFor(history: readonly HelmRevision[], release: string, namespace: string): Recovery {
  const last = history[history.length - 1]!;
  const good = [...history]
    .reverse()
    .find((h) => h.revision !== last.revision && (h.status === "deployed" || h.status === "superseded"));
  if (last.status === "pending-install" || good === undefined) return { action: "uninstall", release, namespace };
  return { action: "rollback", release, namespace, toRevision: good.revision };
}

/** The recovery as the helm command line a person runs. */
export function recoveryText(r: Recovery): string {
  return r.action === "uninstall"
    ? `helm uninstall ${r.release} --namespace ${r.namespace}`
    : `helm rollback ${r.release} ${r.toRevision} --namespace ${r.namespace}`;
}

function recoveryCommand(history: readonly HelmRevision[], release: string, namespace: string): string {
  return recoveryText(recoveryFor(history, release, namespace));
}

export function describeRevision(r: HelmRevision): string {
  return `revision ${r.revision} (${r.chart}, ${r.status})`;
}

export function pendingMessage(
  state: Extract<HistoryState, { kind: "pending" }>,
  release: string,
  namespace: string,
): string {
  return (
    `release ${release} (namespace ${namespace}) is ${state.last.status} at ${describeRevision(state.last)}: ` +
    `a helm operation on it is still running, or was interrupted (helm refuses to change a release in this state). ` +
    `If no other helm operation is running, recover with: ${state.recovery} — then re-run khook`
  );
}

/** `name@version`, as plan shows the target. */
export function chartLabel(c: ChartMeta): string {
  return `${c.name}@${c.version}`;
}

/** helm history's `chart` column for a chart: `<name>-<version>`. */
export function historyChart(c: ChartMeta): string {
  return `${c.name}-${c.version}`;
}
