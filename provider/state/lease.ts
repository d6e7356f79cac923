/**
 * The lease on a state record: which run may write it. Pure data and pure
 * decisions; the journal (journal.ts) claims, renews and releases it.
 *
 * The lease lives inside the record itself, so locking needs no RBAC beyond
 * what the record already needs. Every record write carries the Secret's
 * resourceVersion, so claiming is atomic: of two runs that read a free lease,
 * only one write lands, and the other re-reads and finds the lease held.
 *
 * Expiry compares the holder's renewal deadline with this machine's clock;
 * the lease lasts several renewal intervals so modest clock skew between
 * hosts cannot make a live run look expired.
 */

export interface Lease {
  /** Unique per run: how a journal recognizes its own lease after a re-read. */
  readonly id: string;
  /** Who runs it: the user name, for people. */
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
  /** What the holding run does. */
  readonly command: "apply" | "destroy";
  /** ISO-8601: when the run took the lease. */
  readonly startedAt: string;
  /** ISO-8601: the holder renews before this; after it, the lease may be taken over. */
  readonly renewDeadline: string;
}

/** How long a lease lasts without renewal. */
export const LEASE_DURATION_MS = 90_000;
/** How often a run renews its lease (a step finishing renews it too). */
export const LEASE_RENEW_INTERVAL_MS = 30_000;

export interface LeaseSelf {
  readonly id: string;
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
}

export type LeaseAssessment =
  | { readonly kind: "free" }
  | { readonly kind: "ours" }
  /** Held by a run that is (as far as we can tell) alive: a second run must not start. */
  | { readonly kind: "held"; readonly lease: Lease }
  /** Its holder stopped renewing: taken over, with a warning. */
  | { readonly kind: "expired"; readonly lease: Lease }
  /** Held by a process on this host that is no longer running (kill -9): taken over at once. */
  | { readonly kind: "abandoned"; readonly lease: Lease };

/**
 * Who may write the record now. `isAlive` is asked only about pids on this
 * host (a pid says nothing about another machine).
 */
export function assessLease(lease: Lease | undefined, self: LeaseSelf, now: Date, isAlive: (pid: number) => boolean): LeaseAssessment {
  if (lease === undefined) return { kind: "free" };
  if (lease.id === self.id) return { kind: "ours" };
  if (lease.host === self.host && lease.pid !== self.pid && !isAlive(lease.pid)) return { kind: "abandoned", lease };
  const deadline = Date.parse(lease.renewDeadline);
  if (!Number.isFinite(deadline) || deadline <= now.getTime()) return { kind: "expired", lease };
  return { kind: "held", lease };
}

export function newLease(self: LeaseSelf, command: Lease["command"], now: Date, durationMs = LEASE_DURATION_MS): Lease {
  return {
    id: self.id,
    holder: self.holder,
    host: self.host,
    pid: self.pid,
    command,
    startedAt: now.toISOString(),
    renewDeadline: new Date(now.getTime() + durationMs).toISOString(),
  };
}

export function renewLease(lease: Lease, now: Date, durationMs = LEASE_DURATION_MS): Lease {
  return { ...lease, renewDeadline: new Date(now.getTime() + durationMs).toISOString() };
}

/** `alice on ci-runner-3 (pid 4242, khook apply started 2026-11-23T18:00:00.000Z)` */
export function describeLease(lease: Lease): string {
  return `${lease.holder} on ${lease.host} (pid ${lease.pid}, khook ${lease.command} started ${lease.startedAt})`;
}

/** The fail-fast message of a second run: who holds it, until when, and how to clear it. */
export function leaseHeldMessage(lease: Lease, record: string, unlockCommand: string): string {
  return (
    `the state record (${record}) is locked by another khook run: ${describeLease(lease)}, lease renewed until ${lease.renewDeadline}. ` +
    `Nothing was changed. Wait for that run to finish and try again; if it is gone, the lease expires at ${lease.renewDeadline}, ` +
    `or clear it now with: ${unlockCommand}`
  );
}

export function leaseTakenOverWarning(assessment: Extract<LeaseAssessment, { kind: "expired" | "abandoned" }>, record: string): string {
  const why =
    assessment.kind === "abandoned"
      ? `its process is no longer running on this host`
      : `it was not renewed after ${assessment.lease.renewDeadline}`;
  return `took over the lease on the state record (${record}) held by ${describeLease(assessment.lease)}: ${why}. That run's last step may not be recorded; it re-runs if it did not finish.`;
}

/** Why this run may no longer write the record: the lease was cleared or taken while it ran. */
export function leaseLostMessage(now: Lease | undefined, record: string): string {
  const by = now === undefined ? "it was cleared (khook unlock)" : `it is now held by ${describeLease(now)}`;
  return `this run lost its lease on the state record (${record}): ${by}. This run stopped writing the record so it cannot overwrite the other run's; run khook again once the other run is done.`;
}

export function parseLease(raw: unknown): Lease | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof o[k] === "string" ? (o[k] as string) : undefined);
  const id = str("id");
  const holder = str("holder");
  const host = str("host");
  const startedAt = str("startedAt");
  const renewDeadline = str("renewDeadline");
  const pid = o["pid"];
  if (id === undefined || holder === undefined || host === undefined || startedAt === undefined || renewDeadline === undefined) return undefined;
  if (typeof pid !== "number" || !Number.isInteger(pid)) return undefined;
  const command = o["command"] === "destroy" ? "destroy" : "apply";
  return { id, holder, host, pid, command, startedAt, renewDeadline };
}
