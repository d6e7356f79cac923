/**
 * The Pulumi resource's record bookkeeping (provider/pulumi/record-owner/): what a delete may tear
 * down, which records an owner has left, and how the owner and its releases land in a record.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Redactor } from "../../provider/redact.js";
import { decideDelete, ownerOf, withMovedFrom, type RecordOwner } from "../../provider/pulumi/record-owner/owner.js";
import { dropReleasedRecord, releaseOwnedRecord } from "../../provider/pulumi/record-owner/resource-operations.js";
import { Journal, type JournalOptions } from "../../provider/state/journal.js";
import { MAX_MOVED_FROM, parseRecord, serializeRecord, type StateRecord } from "../../provider/state/record.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";

const stack = { project: "infra", stack: "dev" };
const mine: RecordOwner = { ...stack, token: "mine" };
const HERE = "ns/khook-state-here";

describe("withMovedFrom: the records an owner has left", () => {
  test("an update that leaves a record lists it", () => {
    assert.deepEqual(withMovedFrom(mine, undefined, "ns/old", HERE).movedFrom, ["ns/old"]);
  });

  test("the list the owner's claim on this record carries is kept, and a second move adds to it", () => {
    const current: RecordOwner = { ...mine, movedFrom: ["ns/first"] };
    assert.deepEqual(withMovedFrom(mine, current, undefined, HERE).movedFrom, ["ns/first"]);
    assert.deepEqual(withMovedFrom(mine, current, "ns/second", HERE).movedFrom, ["ns/first", "ns/second"]);
    assert.deepEqual(withMovedFrom(mine, current, "ns/first", HERE).movedFrom, ["ns/first"], "listed once");
  });

  test("a create that succeeds the holder (a rename or a replace) inherits what the holder left; a sibling's list is not taken", () => {
    const holder: RecordOwner = { ...stack, token: "old", movedFrom: ["ns/first"] };
    assert.deepEqual(withMovedFrom({ ...stack, token: "new", succeeds: "old" }, holder, undefined, HERE).movedFrom, [
      "ns/first",
    ]);
    assert.equal(withMovedFrom({ ...stack, token: "sibling" }, holder, undefined, HERE).movedFrom, undefined);
  });

  test("returning to a record it left takes that record off the list: it is its own again", () => {
    const current: RecordOwner = { ...mine, movedFrom: ["ns/a", HERE] };
    assert.deepEqual(withMovedFrom(mine, current, "ns/b", HERE).movedFrom, ["ns/a", "ns/b"]);
    assert.equal(
      withMovedFrom(mine, undefined, HERE, HERE).movedFrom,
      undefined,
      "no move when the record is the same",
    );
  });

  test("the list is bounded, keeping the newest", () => {
    const many = Array.from({ length: MAX_MOVED_FROM }, (_, i) => `ns/r${i}`);
    const out = withMovedFrom(mine, { ...mine, movedFrom: many }, "ns/newest", HERE).movedFrom!;
    assert.equal(out.length, MAX_MOVED_FROM);
    assert.equal(out.at(-1), "ns/newest");
    assert.ok(!out.includes("ns/r0"));
  });
});

describe("decideDelete: what a resource's delete may tear down", () => {
  const where = "the state record";

  test("its own record, or one nobody claimed: everything", () => {
    assert.deepEqual(decideDelete(mine, "mine", where, stack), { teardown: "all" });
    assert.deepEqual(decideDelete(undefined, "mine", where, stack), { teardown: "all" });
  });

  test("a record a rename or a replace took over, or another stack's: nothing", () => {
    assert.equal(decideDelete({ ...stack, token: "new", succeeds: "mine" }, "mine", where, stack).teardown, "none");
    assert.equal(decideDelete({ ...mine, stack: "prod" }, "other", where, stack).teardown, "none");
  });

  test("a rename or a replace that also moved the record: with a successor created in this update on another record, its own record's delete tears nothing down and removes the record", () => {
    const successor = { resourceName: "after", where: 'the state record (Secret "b")' };
    const decision = decideDelete(mine, "mine", where, stack, successor);
    assert.equal(decision.teardown, "none");
    assert.equal(decision.teardown === "none" && decision.dropRecord, true);
    assert.match(
      decision.teardown === "none" ? decision.note : "",
      /the Khook resource "after", created in this update with the same spec name, has just applied it on the state record \(Secret "b"\)/,
    );
    const unowned = decideDelete(undefined, undefined, where, stack, successor);
    assert.equal(
      unowned.teardown === "none" && unowned.dropRecord,
      false,
      "a record nobody claimed is not removed on a guess",
    );
    assert.equal(
      decideDelete({ ...stack, token: "new", succeeds: "mine" }, "mine", where, stack, successor).teardown,
      "none",
    );
  });

  test("a record a sibling of the stack holds: its own steps; the record goes only when that sibling has left it", () => {
    const sibling: RecordOwner = { ...stack, token: "sibling" };
    assert.deepEqual(decideDelete(sibling, "mine", where, stack), {
      teardown: "own-steps",
      owner: sibling,
      dropRecord: false,
    });
    const left: RecordOwner = { ...sibling, movedTo: "elsewhere" };
    assert.deepEqual(decideDelete(left, "mine", where, stack), {
      teardown: "own-steps",
      owner: left,
      dropRecord: true,
    });
  });
});

const T0 = new Date("2026-01-01T00:00:00.000Z");
const ok = { status: "ok" as const, reason: "done", attempts: 1, durationMs: 3 };

function journal(store: MemoryRecordStore, opts: Partial<JournalOptions> = {}): Journal {
  return new Journal(store, {
    spec: "demo",
    specHash: "sha256:s",
    stepNames: ["a", "b", "c"],
    redactor: new Redactor(),
    khookVersion: "9.9.9",
    self: { id: "run-me", holder: "alice", host: "laptop", pid: 100 },
    now: () => T0,
    isAlive: () => true,
    unlockCommand: "khook unlock -f demo.yaml",
    ...opts,
  });
}

describe("the owner in the record (the Pulumi resource that claimed it)", () => {
  const owner = { project: "infra", stack: "dev", token: "t-1" };
  /** The record as stored, its owner as the Pulumi resource reads it (with the record's moves). */
  const recordIn = (store: MemoryRecordStore): Omit<StateRecord, "owner"> & { owner?: RecordOwner } => {
    const r = parseRecord(store.json ?? "");
    assert.ok(r.ok);
    const owner = ownerOf(r.record);
    const { owner: _data, ...rest } = r.record;
    return owner === undefined ? rest : { ...rest, owner };
  };

  test("a new owner replaces the recorded one; a malformed owner reads as none", async () => {
    const store = new MemoryRecordStore();
    const first = journal(store, { owner });
    await first.open();
    await first.beginRun();
    await first.finish("succeeded");
    const next = { ...owner, token: "t-2" };
    const second = journal(store, { owner: next });
    await second.open();
    await second.beginRun();
    await second.finish("succeeded");
    assert.deepEqual(recordIn(store).owner, next);
    const malformed = parseRecord(
      JSON.stringify({ ...JSON.parse(store.json!), owner: { project: "infra", stack: 3, token: "x" } }),
    );
    assert.ok(malformed.ok);
    assert.equal(ownerOf(malformed.record), undefined);
  });

  /** One apply run by `claimant` that completes (with what `during` records). */
  const completedRun = async (
    store: MemoryRecordStore,
    claimant: typeof owner,
    during: (run: Journal) => void = () => undefined,
  ): Promise<void> => {
    const run = journal(store, { owner: claimant });
    await run.open();
    await run.beginRun();
    during(run);
    await run.finish("succeeded");
  };

  test("a record its owner left: releaseRecord marks it (the owner kept, movedTo set) only while that owner holds it, and keeps the steps", async () => {
    const store = new MemoryRecordStore();
    await completedRun(store, owner, (run) => run.recordStep({ name: "a", inputHash: "ha" }, ok));
    assert.equal(
      await releaseOwnedRecord(store, "t-other", "elsewhere"),
      false,
      "a token that does not hold the record releases nothing",
    );
    assert.equal(recordIn(store).owner?.movedTo, undefined);
    assert.equal(await releaseOwnedRecord(store, "t-1", 'the state record (Secret "b" in namespace "ns")'), true);
    assert.deepEqual(recordIn(store).owner, { ...owner, movedTo: 'the state record (Secret "b" in namespace "ns")' });
    assert.deepEqual(Object.keys(recordIn(store).steps), ["a"]);
    assert.equal(await releaseOwnedRecord(store, "t-1", "again"), false, "released once");
    assert.equal(await releaseOwnedRecord(new MemoryRecordStore(), "t-1", "x"), false, "no record, nothing to release");
  });

  test("a record its owner left: a resource that takes it up again (a new claim) clears the mark", async () => {
    const store = new MemoryRecordStore();
    await completedRun(store, owner);
    await releaseOwnedRecord(store, "t-1", "elsewhere");
    const sibling = { ...owner, token: "t-2" };
    await completedRun(store, sibling);
    assert.deepEqual(recordIn(store).owner, sibling);
  });

  test("deleteReleasedRecord removes a left record only while its owner's release stands and no run holds the lease", async () => {
    const store = new MemoryRecordStore();
    await completedRun(store, owner);
    assert.equal(await dropReleasedRecord(store, "t-1"), false, "not released: the owner still holds it");
    assert.ok(store.exists);
    await releaseOwnedRecord(store, "t-1", "elsewhere");
    assert.equal(await dropReleasedRecord(store, "t-2"), false, "released by another token");
    const leased = journal(store);
    await leased.open();
    await leased.beginRun();
    assert.equal(await dropReleasedRecord(store, "t-1"), false, "a run (the CLI) holds the lease");
    await leased.finish("succeeded");
    assert.equal(recordIn(store).owner?.movedTo, "elsewhere", "a run that claims nothing keeps the release");
    assert.equal(await dropReleasedRecord(store, "t-1"), true);
    assert.equal(store.exists, false);
    assert.equal(await dropReleasedRecord(store, "t-1"), false, "gone already");
  });

  test("an owner's movedTo and movedFrom survive a write and a read; a movedFrom entry that is not namespace/name is dropped", () => {
    const base = JSON.parse(
      serializeRecord({
        format: 1,
        spec: "demo",
        specHash: "sha256:s",
        khookVersion: "1",
        command: "apply",
        runStatus: "succeeded",
        startedAt: T0.toISOString(),
        updatedAt: T0.toISOString(),
        steps: {},
      } as StateRecord),
    ) as Record<string, unknown>;
    const parsed = parseRecord(
      JSON.stringify({
        ...base,
        owner: { ...owner, movedTo: "there", movedFrom: ["ns/a", "bad", "ns/b/c", 7, "ns/d"] },
      }),
    );
    assert.ok(parsed.ok);
    assert.deepEqual(ownerOf(parsed.record), { ...owner, movedTo: "there", movedFrom: ["ns/a", "ns/d"] });
  });
});
