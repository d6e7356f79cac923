/**
 * A spec's other records around one CLI run (moves.ts decides, this module reads and writes): an
 * apply on a new or left record finds the spec's records by their label and moves from the current
 * ones, releasing them once the run succeeds; a destroy releases every other record of the spec
 * before its teardown and removes them after it. The CLI knows no earlier record from outputs, as
 * the Pulumi resource does, so the label is how it finds one.
 */
import { SPEC_DEFAULTS } from "../dsl/defaults.js";
import type { Journal } from "./journal.js";
import { assessLease, describeLease, type LeaseSelf } from "./lease.js";
import { describeRecord, locationText, parseLocationText, type RecordLocation } from "./location.js";
import {
  needsSearch,
  planApplyMove,
  planDestroyMove,
  releaseRecord,
  removeRecord,
  type FoundRecord,
  type LockCheck,
  type MoveBlocker,
} from "./moves.js";
import { parseRecord, type StateRecord } from "./record.js";
import { findRecords, SecretRecordStore, type SecretClient, type SecretLister } from "./secret-store.js";
import { currentRun, pidAlive } from "./journal.js";

export interface SpecRecordsContext {
  readonly kube: SecretClient & SecretLister;
  readonly specName: string;
  /** The run's record; undefined when the spec keeps none (`state:` off). */
  readonly here: RecordLocation | undefined;
  /** The run's journal, unopened or opened (it is opened here). */
  readonly journal: Journal | undefined;
  readonly signal?: AbortSignal;
  /** One line for people: a record left or removed, or why none could be looked for. */
  readonly note: (message: string) => void;
  /** Who this run is and how to tell a live lease holder (default: this process). */
  readonly self?: LeaseSelf;
}

/** What the run does about the spec's other records: refuse to start, or act once it ended. */
export interface AroundRun {
  /** Why the run must not start (naming both records and the way out); nothing was changed. */
  readonly refusal?: string;
  /** After the run: what it did to the other records; returns the error that fails the run, if any. */
  readonly after?: (succeeded: boolean) => Promise<string | undefined>;
}

/** Before an apply (see the header). */
export async function aroundApply(ctx: SpecRecordsContext): Promise<AroundRun> {
  const { here, journal } = ctx;
  if (here === undefined || journal === undefined) return {};
  let previous: StateRecord | undefined;
  try {
    previous = await journal.open();
  } catch {
    return {}; // the run reports the record it cannot read
  }
  if (!needsSearch(previous)) return { after: releaseAfter(ctx, here, previous?.movedFrom ?? []) };
  const found = await otherRecords(ctx, previous);
  if ("refusal" in found) return found;
  const plan = planApplyMove(here, previous, found.records, lockCheck(ctx));
  if (plan.kind === "blocked") return { refusal: blockedMessage(ctx, "apply", plan.blockers) };
  if (plan.movedFrom !== undefined) journal.moveHere(plan.movedFrom);
  return { after: releaseAfter(ctx, here, plan.release) };
}

/** Before a destroy (see the header). */
export async function aroundDestroy(ctx: SpecRecordsContext): Promise<AroundRun> {
  const { here, journal, specName } = ctx;
  let previous: StateRecord | undefined;
  try {
    previous = await journal?.open();
  } catch {
    return {}; // the run reports the record it cannot read
  }
  const found = await otherRecords(ctx, previous);
  if ("refusal" in found) return found;
  const lock = lockCheck(ctx);
  const plan = planDestroyMove(here, found.records, lock);
  if (plan.kind === "blocked") return { refusal: blockedMessage(ctx, "destroy", plan.blockers) };
  const leftFor = here !== undefined ? describeRecord(here) : "no state record (the spec's state: is off)";
  try {
    // Stale once the teardown starts: never resumed from, even if the teardown stops half-way.
    for (const other of plan.release) await releaseAt(ctx, other, leftFor);
  } catch (e) {
    return { refusal: `${(e as Error).message}. Nothing was torn down.` };
  }
  const removable = (r: StateRecord): boolean =>
    r.spec === specName &&
    r.owner === undefined &&
    r.movedTo !== undefined &&
    assessLease(r.lease, lock.self, new Date(), lock.isAlive).kind !== "held";
  return {
    after: async (succeeded) => {
      if (!succeeded) return undefined;
      for (const other of plan.remove) {
        const location = parseLocationText(other)!;
        try {
          if (await removeRecord(new SecretRecordStore(ctx.kube, location, specName), removable, ctx.signal))
            ctx.note(
              `removed the state record ${other}, which this spec had left${here !== undefined ? ` for ${locationText(here)}` : ""}`,
            );
        } catch (e) {
          return `the teardown succeeded, but khook could not remove the state record ${other}, which this spec had left: ${(e as Error).message}`;
        }
      }
      return undefined;
    },
  };
}

/** After an apply that succeeds: each record in `movedFrom` that no shell owns is marked as left for `here`. */
function releaseAfter(ctx: SpecRecordsContext, here: RecordLocation, movedFrom: readonly string[]): AroundRun["after"] {
  if (movedFrom.length === 0) return undefined;
  return async (succeeded) => {
    if (!succeeded) return undefined;
    for (const left of movedFrom) {
      try {
        if (await releaseAt(ctx, left, describeRecord(here)))
          ctx.note(
            `left the state record ${left} for ${locationText(here)}: it is marked as left, and khook destroy removes it`,
          );
      } catch (e) {
        const { namespace, name } = parseLocationText(left)!;
        return (
          `the run succeeded, but khook could not mark the state record ${left}, which this spec left for ${locationText(here)}, as left: ${(e as Error).message}. ` +
          `It still says its steps succeeded: run khook apply again, or delete it (kubectl delete secret -n ${namespace} ${name})`
        );
      }
    }
    return undefined;
  };
}

/** Marks the record at `text` ("namespace/name") as left for `movedTo`, if it is the spec's, no shell owns it, and it is not left already. */
function releaseAt(ctx: SpecRecordsContext, text: string, movedTo: string): Promise<boolean> {
  const location = parseLocationText(text);
  if (location === undefined) return Promise.resolve(false);
  const store = new SecretRecordStore(ctx.kube, location, ctx.specName);
  return releaseRecord(store, movedTo, (r) => r.spec === ctx.specName && r.owner === undefined, ctx.signal);
}

/**
 * The spec's records other than the run's: those its label finds (in every namespace or, where that
 * is forbidden, in the record's namespace and the default one), and those the record names in its
 * movedFrom. A search that fails refuses the run.
 */
async function otherRecords(
  ctx: SpecRecordsContext,
  previous: StateRecord | undefined,
): Promise<{ records: FoundRecord[] } | { refusal: string }> {
  const { here, specName } = ctx;
  const namespaces = [...(here !== undefined ? [here.namespace] : []), SPEC_DEFAULTS.stateNamespace];
  let found: Awaited<ReturnType<typeof findRecords>>;
  try {
    found = await findRecords(ctx.kube, specName, namespaces, ctx.signal);
  } catch (e) {
    return {
      refusal: `cannot look for the other state records of spec "${specName}" (${(e as Error).message}). Nothing was changed.`,
    };
  }
  // Said only to a spec that keeps a record: a destroy with state: off may have no use for secrets at all.
  if (here !== undefined && found.searched !== "every namespace" && found.searched.length === 0)
    ctx.note(
      `warning: cannot look for the other state records of spec "${specName}": listing Secrets is forbidden in ${namespaces.map((n) => `namespace "${n}"`).join(" and ")}. ` +
        `A record the spec journaled on before is neither released nor removed; grant list on secrets to let khook find it`,
    );
  const known = new Set(found.records.map((r) => locationText(r.location)));
  const named: FoundRecord[] = [];
  for (const text of previous?.movedFrom ?? []) {
    const location = parseLocationText(text);
    if (location === undefined || known.has(text)) continue;
    const stored = await new SecretRecordStore(ctx.kube, location, specName).read(ctx.signal).catch(() => undefined);
    const parsed = stored?.json === undefined ? undefined : parseRecord(stored.json);
    if (parsed?.ok && parsed.record.spec === specName) named.push({ location, record: parsed.record });
  }
  const all = [...found.records, ...named];
  return { records: here === undefined ? all : all.filter((r) => locationText(r.location) !== locationText(here)) };
}

function lockCheck(ctx: SpecRecordsContext): LockCheck {
  return { self: ctx.self ?? currentRun(), now: new Date(), isAlive: pidAlive };
}

/** Why the run cannot carry the move, naming both records and what to do. */
function blockedMessage(ctx: SpecRecordsContext, mode: "apply" | "destroy", blockers: readonly MoveBlocker[]): string {
  const at = ctx.here !== undefined ? `the state record ${locationText(ctx.here)}` : "no state record";
  const why = blockers.map((b) => {
    const there = `the state record ${locationText(b.location)}`;
    if (b.why === "locked" && b.record.lease !== undefined)
      return `${there} is locked by another khook run, ${describeLease(b.record.lease)}: wait for it to finish (or clear it with khook unlock --record ${locationText(b.location)}) and run again`;
    const { namespace, name } = b.location;
    return mode === "apply"
      ? `${there} is held by a Pulumi Khook resource (its record names an owner), which khook apply cannot take it from: ` +
          `set state: back to ${locationText(b.location)} and apply from that Pulumi stack, or destroy the resource there; ` +
          `if that resource is gone, delete the Secret (kubectl delete secret -n ${namespace} ${name}) and run again`
      : `${there} is held by a Pulumi Khook resource (its record names an owner), whose objects this destroy would tear down: ` +
          `destroy it from that Pulumi stack; if that resource is gone, delete the Secret (kubectl delete secret -n ${namespace} ${name}) and run again`;
  });
  return (
    `khook ${mode} of spec "${ctx.specName}" on ${at} refused: the spec has another state record that this run ${mode === "apply" ? "would move from" : "would leave stale"}. ` +
    `${why.join("; ")}. Nothing was changed.`
  );
}
