/**
 * When khook may recover, without asking, a release left pending by its own dead run.
 *
 * helm records no owner for a pending operation, so on its own a pending release says nothing
 * about whether the helm behind it is still working (a rollback would undo that one's work).
 * khook's state record says more: when khook starts helm for a step it records which run started
 * it, helm's pid and host, the revision helm is about to write, and until when helm can run (its
 * own --timeout). The step's entry is cleared when the step ends, so a mark that outlives its
 * step was left by a run that stopped mid-step.
 *
 * khook recovers the release itself only when all of this holds:
 * - the step's record names a run, and that run is gone: its lease expired, or its process no
 *   longer runs on this host (this run took the record over from it);
 * - the pending revision is the one that run's helm was starting (the same number, and
 *   pending-install for an install, pending-upgrade for an upgrade);
 * - that helm is no longer running: on this host its pid is gone; on another host its own
 *   --timeout has passed. While it may still run, khook waits for it (never past that time).
 * Then a pending upgrade is rolled back to the last deployed revision, and a pending first
 * install is uninstalled. Every other case is refused with the recovery command, as before.
 */
import { describeRevision, recoveryFor, recoveryText, type HelmRevision, type Recovery } from "./release.js";

/** What the state record says a run's helm was doing for a step (state/record.ts InFlightHelm). */
export interface HelmMark {
  readonly run: { readonly id: string; readonly host: string; readonly pid: number };
  readonly pid: number;
  readonly host: string;
  /** ISO-8601: helm has finished or given up by then (its own --timeout, with room to spare). */
  readonly until: string;
  readonly release: string;
  readonly namespace: string;
  readonly operation: "install" | "upgrade";
  /** The revision helm was writing. */
  readonly revision: number;
}

export interface PendingFacts {
  readonly release: string;
  readonly namespace: string;
  /** Oldest first; the last revision is pending. */
  readonly history: readonly HelmRevision[];
  /** The step's mark in the state record; undefined without state: or without a mark. */
  readonly mark: HelmMark | undefined;
  /** This run's id (its lease). */
  readonly thisRun: string;
  readonly thisHost: string;
  /** How the run that left the mark ended, as far as this run knows. */
  readonly markRunEnded: "lease-expired" | "process-gone" | undefined;
  /** Whether the marked helm's pid runs (asked only on its own host). */
  readonly helmPidAlive: boolean | undefined;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

export type PendingRecovery =
  | { readonly action: "refuse"; readonly why: string }
  | { readonly action: "wait"; readonly line: string; readonly pid: number | undefined; readonly until: number }
  | { readonly action: "recover"; readonly line: string; readonly recovery: Recovery };

const refuse = (why: string): PendingRecovery => ({ action: "refuse", why });

export function decidePendingRecovery(f: PendingFacts): PendingRecovery {
  const last = f.history[f.history.length - 1];
  const m = f.mark;
  if (last === undefined) return refuse("the release has no revision");
  if (m === undefined) return refuse("the state record does not say that khook started this operation");
  if (m.release !== f.release || m.namespace !== f.namespace) return refuse("the state record names another release");
  if (m.run.id === f.thisRun) return refuse("this run started it");
  if (f.markRunEnded === undefined) return refuse(`the khook run that started it (pid ${m.run.pid} on ${m.run.host}) is not known to be gone`);
  const expected = m.operation === "install" ? "pending-install" : "pending-upgrade";
  if (last.revision !== m.revision || last.status !== expected) {
    return refuse(`the pending ${describeRevision(last)} is not the ${expected} of revision ${m.revision} that khook started`);
  }
  const until = Date.parse(m.until);
  const helmMayRun = !Number.isFinite(until) ? false : f.now < until && (m.host === f.thisHost ? f.helmPidAlive === true : true);
  const who = `khook run ${m.run.id.slice(0, 8)} (pid ${m.run.pid} on ${m.run.host}, ${f.markRunEnded === "lease-expired" ? "its lease expired" : "no longer running"})`;
  if (helmMayRun) {
    const whereHelm = m.host === f.thisHost ? `helm (pid ${m.pid})` : `helm (pid ${m.pid} on ${m.host}, which this host cannot see)`;
    return {
      action: "wait",
      line: `release ${f.release} (namespace ${f.namespace}) is ${last.status} at revision ${last.revision}, started by ${who}; its ${whereHelm} may still be working: waiting for it to finish, at the latest until ${new Date(until).toISOString()}`,
      pid: m.host === f.thisHost ? m.pid : undefined,
      until,
    };
  }
  const recovery = recoveryFor(f.history, f.release, f.namespace);
  if (m.operation === "upgrade" && recovery.action !== "rollback") return refuse("no earlier revision was deployed to roll back to");
  const what = recovery.action === "rollback" ? `rolling back to revision ${recovery.toRevision}` : "uninstalling the first install";
  return {
    action: "recover",
    line: `recovering release ${f.release} (namespace ${f.namespace}): ${last.status} at revision ${last.revision} was left by ${who}, and its helm (pid ${m.pid}) is gone: ${what} (${recoveryText(recovery)})`,
    recovery,
  };
}
