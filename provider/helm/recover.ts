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
 * - that helm is no longer running: on this host its process is gone (the same pid with the same
 *   start time, where the system says it: Linux; elsewhere a live pid counts only until helm's
 *   time is up); on another host its own --timeout has passed. While it may still run, khook
 *   waits for it.
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
  /** helm's start time as its host counts it (Linux: /proc/<pid>/stat), telling it from a later process with its pid. */
  readonly processStart?: string | undefined;
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
  /**
   * The marked helm on this host (asked only there): whether its pid runs, and whether that is
   * certainly the same process (its start time matches the mark's), not a reused pid.
   */
  readonly helmHere: { readonly running: boolean; readonly identified: boolean } | undefined;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

export type PendingRecovery =
  | { readonly action: "refuse"; readonly why: string }
  /** Wait while `pid` runs (on this host), or without one until `until`; an identified helm is waited for however long it runs (the step's timeout bounds it). */
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
  if (f.markRunEnded === undefined)
    return refuse(`the khook run that started it (pid ${m.run.pid} on ${m.run.host}) is not known to be gone`);
  const expected = m.operation === "install" ? "pending-install" : "pending-upgrade";
  if (last.revision !== m.revision || last.status !== expected) {
    return refuse(
      `the pending ${describeRevision(last)} is not the ${expected} of revision ${m.revision} that khook started`,
    );
  }
  const parsedUntil = Date.parse(m.until);
  const until = Number.isFinite(parsedUntil) ? parsedUntil : 0;
  const here = m.host === f.thisHost;
  const identified = here && f.helmHere?.running === true && f.helmHere.identified;
  const helmMayRun = identified || (f.now < until && (here ? f.helmHere?.running === true : true));
  const who = `khook run ${m.run.id.slice(0, 8)} (pid ${m.run.pid} on ${m.run.host}, ${f.markRunEnded === "lease-expired" ? "its lease expired" : "no longer running"})`;
  if (helmMayRun) {
    const whereHelm = here ? `helm (pid ${m.pid})` : `helm (pid ${m.pid} on ${m.host}, which this host cannot see)`;
    const howLong = identified ? "" : `, at the latest until ${new Date(until).toISOString()}`;
    return {
      action: "wait",
      line: `release ${f.release} (namespace ${f.namespace}) is ${last.status} at revision ${last.revision}, started by ${who}; its ${whereHelm} may still be working: waiting for it to finish${howLong}`,
      pid: here ? m.pid : undefined,
      until: identified ? Number.POSITIVE_INFINITY : until,
    };
  }
  const recovery = recoveryFor(f.history, f.release, f.namespace);
  if (m.operation === "upgrade" && recovery.action !== "rollback")
    return refuse("no earlier revision was deployed to roll back to");
  const what =
    recovery.action === "rollback"
      ? `rolling back to revision ${recovery.toRevision}`
      : "uninstalling the first install";
  return {
    action: "recover",
    line: `recovering release ${f.release} (namespace ${f.namespace}): ${last.status} at revision ${last.revision} was left by ${who}, and its helm (pid ${m.pid}) is gone: ${what} (${recoveryText(recovery)})`,
    recovery,
  };
}
