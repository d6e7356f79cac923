/**
 * The state record as pure data and pure functions: its entries, the one resume rule, its
 * serialization, and the summary `khook status` and Pulumi's read show. No I/O: the journal
 * decides when to write, the store how. README.md says what a record holds, and what it never does.
 */

import { parseLease, type Lease } from "./lease.js";
import { parseLocationText } from "./location.js";

export const RECORD_FORMAT = 1;
/** The key of the JSON blob in the Secret's data. */
export const RECORD_KEY = "record.json";
/** The reason a resumed step is reported with, verbatim from the spec. */
export const RESUME_REASON = "unchanged since it succeeded in a previous run (state record)";
/** Error text per step is truncated to this many UTF-8 bytes. */
export const MAX_ERROR_BYTES = 2048;
/** Reason text per step is truncated to this many UTF-8 bytes. */
export const MAX_REASON_BYTES = 512;
/** Well below the ~1 MiB object cap; beyond it stale entries are dropped. */
export const MAX_RECORD_BYTES = 256 * 1024;

export type RecordCommand = "apply" | "destroy";

/**
 * `running` / `destroying` while a run is in progress (a crash can leave them
 * behind: a marker for status output; the lock is the `lease`); `succeeded` / `failed` /
 * `cancelled` after it. A fully successful destroy deletes the record, so a
 * finished destroy only ever leaves `failed` or `cancelled` behind.
 */
export type RecordRunStatus = "running" | "destroying" | "succeeded" | "failed" | "cancelled";

/**
 * Per step. Only `ok` resumes (with the same input hash). `destroying` marks a
 * step whose teardown has started (written before destroy is called for it);
 * `destroyed` one whose teardown finished; `destroy-failed` one whose teardown
 * failed.
 */
export type StepEntryStatus = "ok" | "failed" | "skipped" | "destroying" | "destroyed" | "destroy-failed";

export interface StepEntry {
  readonly inputHash: string;
  readonly status: StepEntryStatus;
  readonly reason: string;
  readonly attempts: number;
  /** Transient failures retried within the step's deadline (webhooks not serving yet, 503s, conflicts); absent when none. */
  readonly transientRetries?: number;
  readonly durationMs: number;
  /** ISO-8601. */
  readonly finishedAt: string;
  /** Redacted, then truncated to MAX_ERROR_BYTES. */
  readonly error?: string;
  /**
   * Objects a pre-apply webhook added to the step (hooks' allow.add): not in the spec, so
   * destroy learns of them here. Kept across runs until destroyed. Added in format 1 without a bump.
   */
  readonly added?: readonly AddedObject[];
  /** What the step made, for the drift check (`khook plan --live`). Added in format 1 without a bump. */
  readonly baseline?: StepBaseline;
}

/** What the record keeps of what a step made, for the drift check: what the cluster alone cannot say. */
export interface StepBaseline {
  /** helm: the release's revision when the step finished (made by it, or found up to date). */
  readonly revision?: number;
}

/** A repair (`khook apply --repair`, or a Pulumi `up` after a live refresh): when it ran and which steps it re-ran. */
export interface RepairNote {
  /** ISO-8601: when the repairing run started. */
  readonly at: string;
  /** The drifted steps it re-ran, in document order. */
  readonly steps: readonly string[];
}

/** An object a webhook added, as destroy finds it again. */
export interface AddedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** At most this many added objects are kept per step (a record has a size cap). */
export const MAX_ADDED_OBJECTS = 200;

/** `a` then the objects of `b` that `a` does not hold, capped. */
export function mergeAdded(a: readonly AddedObject[] = [], b: readonly AddedObject[] = []): AddedObject[] {
  const key = (o: AddedObject): string => `${o.apiVersion}\0${o.kind}\0${o.namespace ?? ""}\0${o.name}`;
  const seen = new Set(a.map(key));
  return [...a, ...b.filter((o) => !seen.has(key(o)))].slice(0, MAX_ADDED_OBJECTS);
}

/**
 * What a shell stamps on a record to say who holds it (the Pulumi resource: its stack and a
 * token, provider/pulumi/record-owner/). A JSON object the core stores and carries across runs
 * but never reads: only the shell that wrote it knows what it means.
 */
export type OwnerData = Readonly<Record<string, unknown>>;

/** How many records a record remembers having been moved from (a bound on what it can be made to hold). */
export const MAX_MOVED_FROM = 16;

/**
 * The records a record remembers having been moved from: those it `carried` and those the spec
 * `left` now, oldest first, without `here` (a spec back on a record it left owns it again).
 */
export function movedFromAfter(carried: readonly string[], left: readonly string[], here: string): string[] {
  return [...new Set([...carried, ...left])].filter((p) => p !== here).slice(-MAX_MOVED_FROM);
}

/**
 * A run that takes the record up: the record is its spec's current one again (its `movedTo`
 * goes), remembers `movedFrom`, and carries `owner` when one is given (else the recorded one).
 */
export interface TakeUp {
  readonly owner?: OwnerData;
  readonly movedFrom: readonly string[];
}

export interface StateRecord {
  readonly format: typeof RECORD_FORMAT;
  /** metadata.name of the spec that last wrote it. */
  readonly spec: string;
  readonly specHash: string;
  readonly khookVersion: string;
  /** What the last run was. */
  readonly command: RecordCommand;
  readonly runStatus: RecordRunStatus;
  readonly startedAt: string;
  readonly updatedAt: string;
  readonly finishedAt?: string;
  /** The run that may write the record (lease.ts); absent when no run holds it. Added in format 1 without a bump: older readers ignore it. */
  readonly lease?: Lease;
  /** Who holds the record, as the shell that stamped it says (OwnerData); kept by every run that stamps none. */
  readonly owner?: OwnerData;
  /**
   * Set once the spec journals on another record (`state:` names it now): which one, for people.
   * A record left so is never trusted to resume a step (isResumable): the objects moved on with
   * the spec, and a destroy from there may have removed them. A run that takes it up clears it.
   */
  readonly movedTo?: string;
  /**
   * The records ("namespace/name") the spec journaled on before this one, oldest first: each is
   * released (`movedTo`) once a run here succeeds, and removed by a destroy here.
   */
  readonly movedFrom?: readonly string[];
  /**
   * The key of keyed step hashes (dsl/keyed-hash.ts), base64: present once a spec with
   * secret-bearing steps ran. The record lives in a Secret; the key never leaves it (nor
   * the Pulumi state, where it is a secret). Added in format 1 without a bump.
   */
  readonly hashKey?: string;
  readonly steps: Readonly<Record<string, StepEntry>>;
  /**
   * Per step, the helm process a run started for it and that may outlive the run (helm keeps
   * going after `kill -9` of khook, and leaves the release pending if it dies too). Written when
   * helm starts, removed when the step's entry is written: a mark that outlives its step was
   * left by a run that stopped mid-step (provider/helm/recover.ts reads it). Added in format 1
   * without a bump: older readers ignore it.
   */
  readonly helmInFlight?: Readonly<Record<string, InFlightHelm>>;
  /** The last repair, kept until the next one. Added in format 1 without a bump: older readers ignore it. */
  readonly repair?: RepairNote;
}

/** A helm install or upgrade a run started for a step (see StateRecord.helmInFlight). */
export interface InFlightHelm {
  /** The run that started it: its lease id, host and pid, and where that pid means something (lease.ts). */
  readonly run: {
    readonly id: string;
    readonly host: string;
    readonly pid: number;
    readonly pidNamespace?: string;
    readonly bootId?: string;
  };
  /** helm's own pid and host. */
  readonly pid: number;
  readonly host: string;
  /** ISO-8601. */
  readonly startedAt: string;
  /** ISO-8601: helm has finished or given up by then (its --timeout, with room to spare). */
  readonly until: string;
  readonly release: string;
  readonly namespace: string;
  readonly operation: "install" | "upgrade";
  /** The revision helm writes. */
  readonly revision: number;
  /** helm's start time as its host counts it (Linux: /proc/<pid>/stat's starttime), when the host says. */
  readonly processStart?: string;
}

export interface RunIdentity {
  readonly spec: string;
  readonly specHash: string;
  readonly khookVersion: string;
  /** The key this run's keyed step hashes are computed under; kept in the record (see StateRecord.hashKey). */
  readonly hashKey?: string;
}

/** A step as far as the record cares: its name and input hash. */
export interface StepKey {
  readonly name: string;
  readonly inputHash: string;
}

/** The one resume rule: recorded `ok` with the same input hash, in a record the spec has not left. */
export function isResumable(record: StateRecord | undefined, step: StepKey): boolean {
  const entry = record !== undefined && record.movedTo === undefined ? ownEntry(record, step.name) : undefined;
  return entry !== undefined && entry.status === "ok" && entry.inputHash === step.inputHash;
}

/**
 * A record for a run that starts now, carrying the previous record's step entries over, and its
 * owner and moves as they were unless the run takes the record up (`takeUp`).
 */
export function beginRecord(
  previous: StateRecord | undefined,
  id: RunIdentity,
  command: RecordCommand,
  now: Date,
  takeUp?: TakeUp,
  repairs?: readonly string[],
): StateRecord {
  const at = now.toISOString();
  const hashKey = id.hashKey ?? previous?.hashKey;
  const owner = takeUp?.owner ?? previous?.owner;
  const movedTo = takeUp === undefined ? previous?.movedTo : undefined;
  const movedFrom = takeUp === undefined ? previous?.movedFrom : takeUp.movedFrom;
  const repair: RepairNote | undefined =
    repairs !== undefined && repairs.length > 0 ? { at, steps: [...repairs] } : previous?.repair;
  return {
    ...(repair !== undefined ? { repair } : {}),
    ...(owner !== undefined ? { owner } : {}),
    ...(movedTo !== undefined ? { movedTo } : {}),
    ...(movedFrom !== undefined && movedFrom.length > 0 ? { movedFrom } : {}),
    ...(hashKey !== undefined ? { hashKey } : {}),
    format: RECORD_FORMAT,
    spec: id.spec,
    specHash: id.specHash,
    khookVersion: id.khookVersion,
    command,
    runStatus: command === "apply" ? "running" : "destroying",
    startedAt: at,
    updatedAt: at,
    steps: { ...(previous?.steps ?? {}) },
    // A dead run's helm marks stay until their step runs again: a run that does not get to it leaves them for the next.
    ...(previous?.helmInFlight !== undefined && Object.keys(previous.helmInFlight).length > 0
      ? { helmInFlight: previous.helmInFlight }
      : {}),
  };
}

/** The record with `mark` as step `name`'s helm in flight (undefined: none). */
export function withHelmInFlight(record: StateRecord, name: string, mark: InFlightHelm | undefined): StateRecord {
  const { helmInFlight: previous, ...rest } = record;
  const marks: Record<string, InFlightHelm> = { ...(previous ?? {}) };
  if (mark === undefined) delete marks[name];
  else Object.defineProperty(marks, name, { value: mark, enumerable: true, writable: true, configurable: true }); // a step may be named __proto__
  return Object.keys(marks).length === 0 ? rest : { ...rest, helmInFlight: marks };
}

/** Step `name`'s helm in flight, if the record has one. */
export function helmInFlightOf(record: StateRecord | undefined, name: string): InFlightHelm | undefined {
  const marks = record?.helmInFlight;
  return marks !== undefined && Object.prototype.hasOwnProperty.call(marks, name) ? marks[name] : undefined;
}

/** What the record needs of a finished step. */
export interface OutcomeInput {
  readonly inputHash: string;
  readonly status: "ok" | "failed" | "skipped";
  readonly reason: string;
  readonly attempts: number;
  readonly transientRetries?: number;
  readonly durationMs: number;
  readonly error?: string;
  readonly added?: readonly AddedObject[];
  readonly baseline?: StepBaseline;
}

export interface Redacting {
  redact(text: string): string;
}

/**
 * The entry for a step that executed in this run. Text is redacted before it
 * is truncated (truncating first could cut a secret in half and leave the
 * half unmasked).
 */
export function entryFromOutcome(
  outcome: OutcomeInput,
  redactor: Redacting,
  now: Date,
  status: StepEntryStatus = outcome.status,
): StepEntry {
  const entry: StepEntry = {
    inputHash: outcome.inputHash,
    status,
    reason: truncateUtf8(redactor.redact(outcome.reason), MAX_REASON_BYTES),
    attempts: outcome.attempts,
    ...(outcome.transientRetries !== undefined && outcome.transientRetries > 0
      ? { transientRetries: outcome.transientRetries }
      : {}),
    durationMs: Math.max(0, Math.round(outcome.durationMs)),
    finishedAt: now.toISOString(),
    ...(outcome.added !== undefined && outcome.added.length > 0 ? { added: mergeAdded(outcome.added) } : {}),
    ...(outcome.baseline !== undefined && Object.keys(outcome.baseline).length > 0
      ? { baseline: outcome.baseline }
      : {}),
  };
  if (outcome.error !== undefined) {
    return { ...entry, error: truncateUtf8(redactor.redact(outcome.error), MAX_ERROR_BYTES) };
  }
  return entry;
}

export function withEntry(record: StateRecord, name: string, entry: StepEntry, now: Date): StateRecord {
  return { ...record, updatedAt: now.toISOString(), steps: { ...record.steps, [name]: entry } };
}

/**
 * Before destroy touches anything, every step about to be torn down loses its
 * `ok`: a teardown that stops half-way must never leave a record that lets the
 * next apply resume-skip a step whose objects are gone.
 */
export function markDestroying(record: StateRecord, names: Iterable<string>, now: Date): StateRecord {
  const steps: Record<string, StepEntry> = { ...record.steps };
  const at = now.toISOString();
  for (const name of names) {
    const prev = ownEntry(record, name);
    if (prev === undefined) continue;
    const { error: _dropped, ...rest } = prev;
    steps[name] = { ...rest, status: "destroying", reason: "teardown started", finishedAt: at };
  }
  return { ...record, updatedAt: at, steps };
}

/** The final status; the lease is released with it. */
export function finishRecord(
  record: StateRecord,
  status: "succeeded" | "failed" | "cancelled",
  now: Date,
): StateRecord {
  const at = now.toISOString();
  const { lease: _released, ...rest } = record;
  return { ...rest, runStatus: status, updatedAt: at, finishedAt: at };
}

/** The record with `lease` held (or, with undefined, released). */
export function withLease(record: StateRecord, lease: Lease | undefined): StateRecord {
  const { lease: _previous, ...rest } = record;
  return lease === undefined ? rest : { ...rest, lease };
}

/**
 * The JSON written to the cluster. Compacts stale entries (names not in
 * `currentSteps`) oldest-first when the record outgrows `maxBytes`.
 */
export function serializeRecord(
  record: StateRecord,
  currentSteps: ReadonlySet<string> | undefined = undefined,
  maxBytes = MAX_RECORD_BYTES,
): string {
  let text = JSON.stringify(stored(record));
  if (Buffer.byteLength(text, "utf8") <= maxBytes || currentSteps === undefined) return text;
  const stale = Object.entries(record.steps)
    .filter(([name]) => !currentSteps.has(name))
    .sort(([, a], [, b]) => a.finishedAt.localeCompare(b.finishedAt));
  const steps: Record<string, StepEntry> = { ...record.steps };
  for (const [name] of stale) {
    delete steps[name];
    text = JSON.stringify(stored({ ...record, steps }));
    if (Buffer.byteLength(text, "utf8") <= maxBytes) break;
  }
  return text;
}

/**
 * The record as format 1 stores it: the moves sit inside `owner`, where the Pulumi resource first
 * wrote them (records in clusters and older khook versions read them there).
 */
function stored(record: StateRecord): object {
  const { owner, movedTo, movedFrom, ...rest } = record;
  const held = {
    ...(owner ?? {}),
    ...(movedTo !== undefined ? { movedTo } : {}),
    ...(movedFrom !== undefined ? { movedFrom } : {}),
  };
  return Object.keys(held).length > 0 ? { owner: held, ...rest } : rest;
}

export type ParsedRecord =
  { readonly ok: true; readonly record: StateRecord } | { readonly ok: false; readonly problem: string };

/**
 * Reads a record, tolerantly: an unreadable or future-format record is
 * reported as a problem (the journal then starts afresh — the record is a
 * journal, not an ownership ledger). Entries that do not have the expected
 * shape are dropped individually.
 */
export function parseRecord(text: string): ParsedRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, problem: `not valid JSON (${(e as Error).message})` };
  }
  if (!isObject(raw)) return { ok: false, problem: "not a JSON object" };
  if (raw["format"] !== RECORD_FORMAT) {
    return {
      ok: false,
      problem: `unsupported record format ${JSON.stringify(raw["format"])} (this khook reads format ${RECORD_FORMAT})`,
    };
  }
  const steps: Record<string, StepEntry> = {};
  const rawSteps = raw["steps"];
  if (isObject(rawSteps)) {
    for (const [name, e] of Object.entries(rawSteps)) {
      const entry = parseEntry(e);
      if (entry)
        Object.defineProperty(steps, name, { value: entry, enumerable: true, writable: true, configurable: true });
    }
  }
  const str = (k: string, d = ""): string => (typeof raw[k] === "string" ? (raw[k] as string) : d);
  const command: RecordCommand = raw["command"] === "destroy" ? "destroy" : "apply";
  const runStatus = RUN_STATUSES.has(raw["runStatus"] as RecordRunStatus)
    ? (raw["runStatus"] as RecordRunStatus)
    : "failed";
  const record: StateRecord = {
    format: RECORD_FORMAT,
    spec: str("spec"),
    specHash: str("specHash"),
    khookVersion: str("khookVersion"),
    command,
    runStatus,
    startedAt: str("startedAt"),
    updatedAt: str("updatedAt"),
    ...(typeof raw["finishedAt"] === "string" ? { finishedAt: raw["finishedAt"] } : {}),
    ...leaseField(raw["lease"]),
    ...ownerAndMoves(raw["owner"]),
    ...(typeof raw["hashKey"] === "string" && raw["hashKey"] !== "" ? { hashKey: raw["hashKey"] } : {}),
    steps,
    ...helmInFlightField(raw["helmInFlight"]),
    ...repairField(raw["repair"]),
  };
  return { ok: true, record };
}

function repairField(raw: unknown): { repair?: RepairNote } {
  if (!isObject(raw) || typeof raw["at"] !== "string" || !Array.isArray(raw["steps"])) return {};
  return { repair: { at: raw["at"], steps: raw["steps"].filter((s): s is string => typeof s === "string") } };
}

function baselineField(raw: unknown): { baseline?: StepBaseline } {
  if (!isObject(raw)) return {};
  const revision = raw["revision"];
  return Number.isInteger(revision) && (revision as number) > 0 ? { baseline: { revision: revision as number } } : {};
}

/** The well-formed marks; a malformed one is dropped (it then proves nothing). */
function helmInFlightField(raw: unknown): { helmInFlight?: Record<string, InFlightHelm> } {
  if (!isObject(raw)) return {};
  const marks: Record<string, InFlightHelm> = {};
  for (const [name, m] of Object.entries(raw)) {
    if (!isObject(m) || !isObject(m["run"])) continue;
    const run = m["run"];
    const str = (o: Record<string, unknown>, k: string): string | undefined =>
      typeof o[k] === "string" ? (o[k] as string) : undefined;
    const int = (o: Record<string, unknown>, k: string): number | undefined =>
      Number.isInteger(o[k]) ? (o[k] as number) : undefined;
    const [id, runHost, runPid] = [str(run, "id"), str(run, "host"), int(run, "pid")];
    const [pid, host, startedAt, until, release, namespace, revision] = [
      int(m, "pid"),
      str(m, "host"),
      str(m, "startedAt"),
      str(m, "until"),
      str(m, "release"),
      str(m, "namespace"),
      int(m, "revision"),
    ];
    const operation = m["operation"];
    if (
      id === undefined ||
      runHost === undefined ||
      runPid === undefined ||
      pid === undefined ||
      host === undefined ||
      startedAt === undefined
    )
      continue;
    if (
      until === undefined ||
      release === undefined ||
      namespace === undefined ||
      revision === undefined ||
      (operation !== "install" && operation !== "upgrade")
    )
      continue;
    Object.defineProperty(marks, name, {
      value: {
        run: {
          id,
          host: runHost,
          pid: runPid,
          ...(typeof run["pidNamespace"] === "string" ? { pidNamespace: run["pidNamespace"] } : {}),
          ...(typeof run["bootId"] === "string" ? { bootId: run["bootId"] } : {}),
        },
        pid,
        host,
        startedAt,
        until,
        release,
        namespace,
        operation,
        revision,
        ...(typeof m["processStart"] === "string" ? { processStart: m["processStart"] } : {}),
      },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return Object.keys(marks).length > 0 ? { helmInFlight: marks } : {};
}

/** A stored `owner` object split into the shell's owner data and the moves (see `stored`); malformed moves are dropped. */
export function ownerAndMoves(v: unknown): Pick<StateRecord, "owner" | "movedTo" | "movedFrom"> {
  if (!isObject(v)) return {};
  const { movedTo, movedFrom, ...owner } = v;
  const from = Array.isArray(movedFrom)
    ? movedFrom
        .filter((p): p is string => typeof p === "string" && parseLocationText(p) !== undefined)
        .slice(-MAX_MOVED_FROM)
    : [];
  return {
    ...(Object.keys(owner).length > 0 ? { owner } : {}),
    ...(typeof movedTo === "string" && movedTo !== "" ? { movedTo } : {}),
    ...(from.length > 0 ? { movedFrom: from } : {}),
  };
}

const RUN_STATUSES = new Set<RecordRunStatus>(["running", "destroying", "succeeded", "failed", "cancelled"]);
const ENTRY_STATUSES = new Set<StepEntryStatus>([
  "ok",
  "failed",
  "skipped",
  "destroying",
  "destroyed",
  "destroy-failed",
]);

function parseEntry(e: unknown): StepEntry | undefined {
  if (!isObject(e)) return undefined;
  if (typeof e["inputHash"] !== "string" || !ENTRY_STATUSES.has(e["status"] as StepEntryStatus)) return undefined;
  const entry: StepEntry = {
    inputHash: e["inputHash"],
    status: e["status"] as StepEntryStatus,
    reason: typeof e["reason"] === "string" ? e["reason"] : "",
    attempts: typeof e["attempts"] === "number" ? e["attempts"] : 0,
    ...(typeof e["transientRetries"] === "number" && e["transientRetries"] > 0
      ? { transientRetries: e["transientRetries"] }
      : {}),
    durationMs: typeof e["durationMs"] === "number" ? e["durationMs"] : 0,
    finishedAt: typeof e["finishedAt"] === "string" ? e["finishedAt"] : "",
  };
  const added = Array.isArray(e["added"]) ? e["added"].filter(isAddedObject) : [];
  const withAdded = { ...(added.length > 0 ? { ...entry, added } : entry), ...baselineField(e["baseline"]) };
  return typeof e["error"] === "string" ? { ...withAdded, error: e["error"] } : withAdded;
}

function isAddedObject(v: unknown): v is AddedObject {
  if (!isObject(v)) return false;
  return (
    typeof v["apiVersion"] === "string" &&
    typeof v["kind"] === "string" &&
    typeof v["name"] === "string" &&
    (v["namespace"] === undefined || typeof v["namespace"] === "string")
  );
}

function leaseField(raw: unknown): { lease?: Lease } {
  const lease = parseLease(raw);
  return lease === undefined ? {} : { lease };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function ownEntry(record: StateRecord, name: string): StepEntry | undefined {
  return Object.prototype.hasOwnProperty.call(record.steps, name) ? record.steps[name] : undefined;
}

const TRUNCATION_MARK = " … [truncated]";

/** Cuts `text` to at most `maxBytes` UTF-8 bytes (marker included), on a character boundary. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  const budget = Math.max(0, maxBytes - Buffer.byteLength(TRUNCATION_MARK, "utf8"));
  let bytes = 0;
  let out = "";
  for (const ch of text) {
    const n = Buffer.byteLength(ch, "utf8");
    if (bytes + n > budget) break;
    bytes += n;
    out += ch;
  }
  return out + TRUNCATION_MARK;
}

// ---------------------------------------------------------------------------
// Display: `khook status` and Pulumi's read.

export interface StepSummary {
  readonly name: string;
  readonly status: StepEntryStatus;
  /** The input hash the entry was recorded for. */
  readonly inputHash: string;
  readonly reason: string;
  readonly attempts: number;
  /** Transient failures retried within the step's deadline in the run that recorded it (0 when none). */
  readonly transientRetries: number;
  readonly durationMs: number;
  readonly finishedAt: string;
  readonly error?: string;
  /** Whether the current spec has a step of this name (undefined when no spec was given). */
  readonly inSpec?: boolean;
  /** The step is in the spec but its input hash differs from the recorded one. */
  readonly changed?: boolean;
  /** The next apply would resume-skip it (ignoring `when:`, which is decided at load). */
  readonly resumable?: boolean;
  /** Finished before the last run started: the last run did not execute it. */
  readonly fromEarlierRun: boolean;
}

export interface RecordSummary {
  readonly spec: string;
  readonly command: RecordCommand;
  readonly runStatus: RecordRunStatus;
  readonly khookVersion: string;
  readonly startedAt: string;
  readonly updatedAt: string;
  readonly finishedAt?: string;
  /** The run holding the record's lease, if any (it may have expired). */
  readonly lease?: Lease;
  /** Whether the whole-spec hash matches the given spec's (undefined when no spec was given). */
  readonly specChanged?: boolean;
  /** The record the spec left this one for (StateRecord.movedTo): then no step resumes from it. */
  readonly movedTo?: string;
  /** The records the spec journaled on before this one (StateRecord.movedFrom). */
  readonly movedFrom?: readonly string[];
  /** Current spec steps first in document order, then steps only in the record, by name. */
  readonly steps: readonly StepSummary[];
  /** Count per entry status, over the steps listed. */
  readonly counts: Readonly<Partial<Record<StepEntryStatus, number>>>;
  /** Current spec steps with no entry at all. */
  readonly unrecorded: readonly string[];
  /** The last repair (`apply --repair`), if one ran. */
  readonly repair?: RepairNote;
}

/** A pure summary of a record for display, optionally compared against the current spec. */
export function summarizeRecord(
  record: StateRecord,
  current?: { readonly specHash: string; readonly steps: readonly StepKey[] },
): RecordSummary {
  const steps: StepSummary[] = [];
  const counts: Partial<Record<StepEntryStatus, number>> = {};
  const unrecorded: string[] = [];
  const seen = new Set<string>();
  const add = (name: string, entry: StepEntry, key: StepKey | undefined): void => {
    const s: StepSummary = {
      name,
      status: entry.status,
      inputHash: entry.inputHash,
      reason: entry.reason,
      attempts: entry.attempts,
      transientRetries: entry.transientRetries ?? 0,
      durationMs: entry.durationMs,
      finishedAt: entry.finishedAt,
      ...(entry.error !== undefined ? { error: entry.error } : {}),
      ...(current
        ? {
            inSpec: key !== undefined,
            ...(key ? { changed: key.inputHash !== entry.inputHash, resumable: isResumable(record, key) } : {}),
          }
        : {}),
      fromEarlierRun: entry.finishedAt !== "" && record.startedAt !== "" && entry.finishedAt < record.startedAt,
    };
    steps.push(s);
    counts[entry.status] = (counts[entry.status] ?? 0) + 1;
  };
  if (current) {
    for (const key of current.steps) {
      seen.add(key.name);
      const entry = ownEntry(record, key.name);
      if (entry) add(key.name, entry, key);
      else unrecorded.push(key.name);
    }
  }
  for (const name of Object.keys(record.steps).sort()) {
    if (seen.has(name)) continue;
    const entry = ownEntry(record, name);
    if (entry) add(name, entry, undefined);
  }
  return {
    spec: record.spec,
    command: record.command,
    runStatus: record.runStatus,
    khookVersion: record.khookVersion,
    startedAt: record.startedAt,
    updatedAt: record.updatedAt,
    ...(record.finishedAt !== undefined ? { finishedAt: record.finishedAt } : {}),
    ...(record.lease !== undefined ? { lease: record.lease } : {}),
    ...(current ? { specChanged: current.specHash !== record.specHash } : {}),
    ...(record.movedTo !== undefined ? { movedTo: record.movedTo } : {}),
    ...(record.movedFrom !== undefined ? { movedFrom: record.movedFrom } : {}),
    steps,
    counts,
    unrecorded,
    ...(record.repair !== undefined ? { repair: record.repair } : {}),
  };
}
