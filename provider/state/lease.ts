/**
 * The lease on a state record: which run may write it, and when a holder is certainly gone. Pure
 * data and decisions; the journal claims, renews and releases it (README.md: why it lives in the
 * record, and why a pid is trusted only in its own pid namespace and boot).
 */

export interface Lease {
  /** Unique per run: how a journal recognizes its own lease after a re-read. */
  readonly id: string;
  /** Who runs it: the user name, for people. */
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
  /** Where `pid` means something (see the header); absent when the holder could not tell. */
  readonly pidNamespace?: string;
  readonly bootId?: string;
  /** When the holder's process started, in clock ticks after boot (/proc/<pid>/stat field 22): tells a reused pid. */
  readonly processStart?: string;
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
  readonly pidNamespace?: string;
  readonly bootId?: string;
  readonly processStart?: string;
}

/** Whether process `pid`, started at `processStart` (when known), still runs in this pid namespace. */
export type IsAlive = (pid: number, processStart: string | undefined) => boolean;

export type LeaseAssessment =
  | { readonly kind: "free" }
  | { readonly kind: "ours" }
  /** Held by a run that is (as far as we can tell) alive: a second run must not start. */
  | { readonly kind: "held"; readonly lease: Lease }
  /** Its holder stopped renewing: taken over, with a warning. */
  | { readonly kind: "expired"; readonly lease: Lease }
  /** Held by a process of this pid namespace and boot that is no longer running (kill -9): taken over at once. */
  | { readonly kind: "abandoned"; readonly lease: Lease };

/**
 * Who may write the record now. `isAlive` is asked only about a holder that
 * ran in this pid namespace of this boot (a pid says nothing about anywhere else).
 */
export function assessLease(lease: Lease | undefined, self: LeaseSelf, now: Date, isAlive: IsAlive): LeaseAssessment {
  if (lease === undefined) return { kind: "free" };
  if (lease.id === self.id) return { kind: "ours" };
  if (samePidSpace(lease, self) && lease.pid !== self.pid && !isAlive(lease.pid, lease.processStart))
    return { kind: "abandoned", lease };
  const deadline = Date.parse(lease.renewDeadline);
  if (!Number.isFinite(deadline) || deadline <= now.getTime()) return { kind: "expired", lease };
  return { kind: "held", lease };
}

/** Whether the lease's pid names a process this run can see: same host, pid namespace and boot, all known. */
export function samePidSpace(lease: Pick<Lease, "host" | "pidNamespace" | "bootId">, self: LeaseSelf): boolean {
  return (
    lease.host === self.host &&
    lease.pidNamespace !== undefined &&
    lease.pidNamespace === self.pidNamespace &&
    lease.bootId !== undefined &&
    lease.bootId === self.bootId
  );
}

export function newLease(self: LeaseSelf, command: Lease["command"], now: Date, durationMs = LEASE_DURATION_MS): Lease {
  return {
    id: self.id,
    holder: self.holder,
    host: self.host,
    pid: self.pid,
    ...(self.pidNamespace !== undefined ? { pidNamespace: self.pidNamespace } : {}),
    ...(self.bootId !== undefined ? { bootId: self.bootId } : {}),
    ...(self.processStart !== undefined ? { processStart: self.processStart } : {}),
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

/**
 * What `khook status` can say of a recorded holder: `live` (its lease runs and, where this
 * machine can see its process, that process runs), `expired` (it stopped renewing), or
 * `holder-gone` (its process no longer runs in this pid namespace of this boot: the next run
 * takes the lease over at once). `seen` says whether this machine could check the process at all.
 */
export interface LeaseHolderState {
  readonly state: "live" | "expired" | "holder-gone";
  readonly seen: boolean;
}

export function leaseHolderState(lease: Lease, self: LeaseSelf, now: Date, isAlive: IsAlive): LeaseHolderState {
  const seen = samePidSpace(lease, self);
  const kind = assessLease(lease, { ...self, id: `${lease.id}-observer` }, now, isAlive).kind;
  return { state: kind === "abandoned" ? "holder-gone" : kind === "expired" ? "expired" : "live", seen };
}

/** The status line's words on a recorded holder, after `Locked:   by <holder> ...`. */
export function describeLeaseHolder(lease: Lease, holder: LeaseHolderState): string {
  const who = describeLease(lease);
  if (holder.state === "holder-gone") {
    return `${who}, but that process is no longer running (same host, pid namespace and boot as this command): the lease is abandoned, and the next khook run takes it over at once`;
  }
  if (holder.state === "expired") {
    return `${who}, but the lease expired at ${lease.renewDeadline} (that run stopped renewing it: it is gone or hung): the next khook run takes it over`;
  }
  const where = holder.seen
    ? "that process is running"
    : "khook cannot see that process from here, so the lease holds until it expires";
  return `${who}, lease renewed until ${lease.renewDeadline} (${where})`;
}

/** The fail-fast message of a second run: who holds it, until when, and how to clear it. */
export function leaseHeldMessage(lease: Lease, record: string, unlockCommand: string): string {
  return (
    `the state record (${record}) is locked by another khook run: ${describeLease(lease)}, lease renewed until ${lease.renewDeadline}. ` +
    `Nothing was changed. Wait for that run to finish and try again; if it is gone, the lease expires at ${lease.renewDeadline}, ` +
    `or clear it now with: ${unlockCommand}`
  );
}

export function leaseTakenOverWarning(
  assessment: Extract<LeaseAssessment, { kind: "expired" | "abandoned" }>,
  record: string,
): string {
  const why =
    assessment.kind === "abandoned"
      ? `its process is no longer running (same host, pid namespace and boot as this run)`
      : `it was not renewed after ${assessment.lease.renewDeadline}`;
  return `took over the lease on the state record (${record}) held by ${describeLease(assessment.lease)}: ${why}. That run's last step may not be recorded; it re-runs if it did not finish.`;
}

/** Why this run may no longer write the record: the lease was cleared or taken while it ran. */
export function leaseLostMessage(now: Lease | undefined, record: string): string {
  const by = now === undefined ? "it was cleared (khook unlock)" : `it is now held by ${describeLease(now)}`;
  return `this run lost its lease on the state record (${record}): ${by}. This run started no further steps, cancelled the ones running, and stopped writing the record so it cannot overwrite the other run's; run khook again once the other run is done.`;
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
  if (
    id === undefined ||
    holder === undefined ||
    host === undefined ||
    startedAt === undefined ||
    renewDeadline === undefined
  )
    return undefined;
  if (typeof pid !== "number" || !Number.isInteger(pid)) return undefined;
  const command = o["command"] === "destroy" ? "destroy" : "apply";
  const pidNamespace = str("pidNamespace");
  const bootId = str("bootId");
  const processStart = str("processStart");
  return {
    id,
    holder,
    host,
    pid,
    ...(pidNamespace !== undefined ? { pidNamespace } : {}),
    ...(bootId !== undefined ? { bootId } : {}),
    ...(processStart !== undefined ? { processStart } : {}),
    command,
    startedAt,
    renewDeadline,
  };
}
