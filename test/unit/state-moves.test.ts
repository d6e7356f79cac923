/**
 * Moves of a spec's state record (provider/state/moves.ts and the record's move marks): a record
 * the spec left never resumes a step, how the marks are stored, what a CLI apply or destroy does
 * about the spec's other records, and the conditional release and removal.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Redactor } from "../../provider/redact.js";
import { Journal } from "../../provider/state/journal.js";
import { newLease, type LeaseSelf } from "../../provider/state/lease.js";
import { locationText, parseLocationText } from "../../provider/state/location.js";
import {
  needsSearch,
  planApplyMove,
  planDestroyMove,
  releaseRecord,
  removeRecord,
  type FoundRecord,
  type LockCheck,
} from "../../provider/state/moves.js";
import {
  beginRecord,
  isResumable,
  MAX_MOVED_FROM,
  movedFromAfter,
  parseRecord,
  serializeRecord,
  type StateRecord,
} from "../../provider/state/record.js";
import { findRecords, type SecretLister } from "../../provider/state/secret-store.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";

const T0 = new Date("2026-01-01T00:00:00.000Z");
const me: LeaseSelf = { id: "run-me", holder: "alice", host: "laptop", pid: 100 };
const other: LeaseSelf = { id: "run-other", holder: "bob", host: "ci", pid: 4242 };
const lock: LockCheck = { self: me, now: T0, isAlive: () => true };
const HERE = { namespace: "ns", name: "rec-b" };

function record(extra: Partial<StateRecord> = {}): StateRecord {
  return {
    format: 1,
    spec: "demo",
    specHash: "sha256:s",
    khookVersion: "1",
    command: "apply",
    runStatus: "succeeded",
    startedAt: T0.toISOString(),
    updatedAt: T0.toISOString(),
    steps: {
      a: {
        inputHash: "ha",
        status: "ok",
        reason: "done",
        attempts: 1,
        durationMs: 1,
        finishedAt: T0.toISOString(),
      },
    },
    ...extra,
  };
}

const at = (place: string, extra: Partial<StateRecord> = {}): FoundRecord => ({
  location: parseLocationText(place)!,
  record: record(extra),
});

describe("state moves: the record", () => {
  test("state-move: a record the spec left never resumes a step, even one recorded ok with the same input hash", () => {
    assert.equal(isResumable(record(), { name: "a", inputHash: "ha" }), true);
    assert.equal(isResumable(record({ movedTo: "ns/rec-b" }), { name: "a", inputHash: "ha" }), false);
  });

  test("the marks are stored inside owner (format 1), with or without a shell's owner data, and read back apart", () => {
    const cli = JSON.parse(serializeRecord(record({ movedFrom: ["ns/rec-a"] }))) as Record<string, unknown>;
    assert.deepEqual(cli["owner"], { movedFrom: ["ns/rec-a"] });
    const parsed = parseRecord(JSON.stringify(cli));
    assert.ok(parsed.ok);
    assert.equal(parsed.record.owner, undefined, "no owner data: the CLI's record");
    assert.deepEqual(parsed.record.movedFrom, ["ns/rec-a"]);

    const owned = record({ owner: { project: "p", stack: "s", token: "t" }, movedTo: "there" });
    const stored = JSON.parse(serializeRecord(owned)) as Record<string, unknown>;
    assert.deepEqual(stored["owner"], { project: "p", stack: "s", token: "t", movedTo: "there" });
    const back = parseRecord(JSON.stringify(stored));
    assert.ok(back.ok);
    assert.deepEqual(back.record.owner, { project: "p", stack: "s", token: "t" });
    assert.equal(back.record.movedTo, "there");
    assert.equal(JSON.parse(serializeRecord(record()))["owner"], undefined, "nothing to store: no owner key");
  });

  test("a run that takes the record up clears movedTo, sets movedFrom, and keeps the owner unless it gives one; a run that does not keeps both", () => {
    const left = record({ owner: { x: 1 }, movedTo: "elsewhere", movedFrom: ["ns/old"] });
    const id = { spec: "demo", specHash: "sha256:s", khookVersion: "1" };
    const kept = beginRecord(left, id, "apply", T0);
    assert.equal(kept.movedTo, "elsewhere");
    assert.deepEqual(kept.movedFrom, ["ns/old"]);
    const taken = beginRecord(left, id, "apply", T0, { movedFrom: ["ns/rec-a"] });
    assert.equal(taken.movedTo, undefined);
    assert.deepEqual(taken.movedFrom, ["ns/rec-a"]);
    assert.deepEqual(taken.owner, { x: 1 });
    assert.deepEqual(beginRecord(left, id, "apply", T0, { owner: { y: 2 }, movedFrom: [] }).owner, { y: 2 });
    assert.equal(beginRecord(left, id, "apply", T0, { movedFrom: [] }).movedFrom, undefined);
  });

  test("a journal told moveHere takes a left record up: it re-runs every step, then the record is the spec's current one", async () => {
    const store = new MemoryRecordStore(serializeRecord(record({ movedTo: "ns/rec-b" })));
    const journal = new Journal(store, {
      spec: "demo",
      specHash: "sha256:s",
      stepNames: ["a"],
      redactor: new Redactor(),
      self: me,
      now: () => T0,
      isAlive: () => true,
    });
    await journal.open();
    assert.equal(journal.isResumable({ name: "a", inputHash: "ha" }), false);
    journal.moveHere(["ns/rec-b"]);
    await journal.beginRun();
    journal.recordStep({ name: "a", inputHash: "ha" }, { status: "ok", reason: "applied", attempts: 1, durationMs: 1 });
    await journal.finish("succeeded");
    const after = parseRecord(store.json!);
    assert.ok(after.ok);
    assert.equal(after.record.movedTo, undefined);
    assert.deepEqual(after.record.movedFrom, ["ns/rec-b"]);
    assert.equal(isResumable(after.record, { name: "a", inputHash: "ha" }), true);
  });

  test("movedFromAfter: carried then left, once each, without the record itself, the newest MAX_MOVED_FROM", () => {
    assert.deepEqual(movedFromAfter(["ns/a", "ns/b"], ["ns/b", "ns/c"], "ns/a"), ["ns/b", "ns/c"]);
    const many = Array.from({ length: MAX_MOVED_FROM + 3 }, (_, i) => `ns/r${i}`);
    assert.deepEqual(movedFromAfter(many, [], "ns/here"), many.slice(-MAX_MOVED_FROM));
  });
});

describe("state moves: an apply (the CLI)", () => {
  test("only a new, unreadable or left record looks for the spec's other records", () => {
    assert.equal(needsSearch(undefined), true);
    assert.equal(needsSearch(record({ movedTo: "x" })), true);
    assert.equal(needsSearch(record()), false);
  });

  test("state-move: the spec's current record elsewhere is what it moves from, with what that one moved from; left ones and the record itself are not", () => {
    const plan = planApplyMove(
      HERE,
      undefined,
      [at("ns/rec-a", { movedFrom: ["ns/older"] }), at("ns/gone", { movedTo: "ns/rec-a" }), at("ns/rec-b")],
      lock,
    );
    assert.deepEqual(plan, { kind: "go", movedFrom: ["ns/older", "ns/rec-a"], release: ["ns/older", "ns/rec-a"] });
  });

  test("no other record: nothing to take up, and the records moved from before are released again", () => {
    assert.deepEqual(planApplyMove(HERE, undefined, [], lock), { kind: "go", release: [] });
    assert.deepEqual(planApplyMove(HERE, record({ movedFrom: ["ns/rec-a"] }), [], lock), {
      kind: "go",
      release: ["ns/rec-a"],
    });
  });

  test("state-move: back on a record it left, the spec takes it up and moves from where it went", () => {
    const plan = planApplyMove(
      { namespace: "ns", name: "rec-a" },
      record({ movedTo: "ns/rec-b" }),
      [at("ns/rec-b", { movedFrom: ["ns/rec-a"] })],
      lock,
    );
    assert.deepEqual(plan, { kind: "go", movedFrom: ["ns/rec-b"], release: ["ns/rec-b"] });
    assert.deepEqual(planApplyMove({ namespace: "ns", name: "rec-a" }, record({ movedTo: "x" }), [], lock), {
      kind: "go",
      movedFrom: [],
      release: [],
    });
  });

  test("state-move: a current record a shell owns (a Pulumi resource) or a live run has locked blocks the move", () => {
    const owned = planApplyMove(HERE, undefined, [at("ns/rec-a", { owner: { token: "t" } })], lock);
    assert.equal(owned.kind, "blocked");
    assert.equal(owned.kind === "blocked" && owned.blockers[0]!.why, "owned");
    const locked = planApplyMove(HERE, undefined, [at("ns/rec-a", { lease: newLease(other, "apply", T0) })], lock);
    assert.equal(locked.kind === "blocked" && locked.blockers[0]!.why, "locked");
    const expired = planApplyMove(
      HERE,
      undefined,
      [at("ns/rec-a", { lease: newLease(other, "apply", new Date(T0.getTime() - 600_000)) })],
      lock,
    );
    assert.equal(expired.kind, "go", "a lease its holder stopped renewing blocks nothing");
    const ownedLeft = planApplyMove(HERE, undefined, [at("ns/rec-a", { owner: { token: "t" }, movedTo: "x" })], lock);
    assert.deepEqual(ownedLeft, { kind: "go", release: [] }, "a record its owner left is the owner's business");
  });
});

describe("state moves: a destroy (the CLI)", () => {
  test("state-move: every other record no shell owns is released before the teardown and removed after it", () => {
    const plan = planDestroyMove(
      HERE,
      [
        at("ns/rec-a"),
        at("ns/older", { movedTo: "ns/rec-a" }),
        at("ns/rec-b"),
        at("ns/pulumi-left", { owner: { t: 1 }, movedTo: "x" }),
      ],
      lock,
    );
    assert.deepEqual(plan, { kind: "go", release: ["ns/rec-a"], remove: ["ns/rec-a", "ns/older"] });
    assert.deepEqual(planDestroyMove(undefined, [at("ns/rec-b")], lock), {
      kind: "go",
      release: ["ns/rec-b"],
      remove: ["ns/rec-b"],
    });
  });

  test("state-move: a current record a shell owns, or a record a live run holds, blocks the destroy", () => {
    assert.equal(planDestroyMove(HERE, [at("ns/rec-a", { owner: { t: 1 } })], lock).kind, "blocked");
    assert.equal(
      planDestroyMove(HERE, [at("ns/older", { movedTo: "x", lease: newLease(other, "apply", T0) })], lock).kind,
      "blocked",
    );
  });
});

describe("state moves: the conditional writes", () => {
  test("releaseRecord marks a record left once, only while the condition holds, and keeps the rest", async () => {
    const store = new MemoryRecordStore(serializeRecord(record()));
    assert.equal(await releaseRecord(store, "there", () => false), false);
    assert.equal(await releaseRecord(store, "there", () => true), true);
    const after = parseRecord(store.json!);
    assert.ok(after.ok);
    assert.equal(after.record.movedTo, "there");
    assert.deepEqual(Object.keys(after.record.steps), ["a"]);
    assert.equal(await releaseRecord(store, "again", () => true), false, "left already");
    assert.equal(await releaseRecord(new MemoryRecordStore(), "x", () => true), false, "no record");
  });

  test("releaseRecord re-reads and judges again when the record changed under it", async () => {
    const store = new MemoryRecordStore(serializeRecord(record()));
    let once = true;
    store.beforeWrite = () => {
      if (!once) return;
      once = false;
      store.json = serializeRecord(record({ owner: { token: "taken" } }));
      store.version = "changed";
    };
    assert.equal(await releaseRecord(store, "there", (r) => r.owner === undefined), false);
    const after = parseRecord(store.json!);
    assert.ok(after.ok);
    assert.equal(after.record.movedTo, undefined, "taken up meanwhile: not released");
  });

  test("removeRecord deletes only while the condition holds", async () => {
    const store = new MemoryRecordStore(serializeRecord(record({ movedTo: "x" })));
    assert.equal(await removeRecord(store, (r) => r.movedTo === undefined), false);
    assert.ok(store.exists);
    assert.equal(await removeRecord(store, (r) => r.movedTo !== undefined), true);
    assert.equal(store.exists, false);
    assert.equal(await removeRecord(store, () => true), false, "gone already");
  });
});

describe("state moves: finding a spec's records", () => {
  const secret = (namespace: string, name: string, r: StateRecord | string) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace, name },
    data: { "record.json": Buffer.from(typeof r === "string" ? r : serializeRecord(r)).toString("base64") },
  });

  test("by label in every namespace; the record's own spec decides, and unreadable records are left out", async () => {
    const asked: unknown[] = [];
    const kube: SecretLister = {
      list: async (_rt, opts) => (
        asked.push(opts),
        {
          resourceVersion: "1",
          items: [
            secret("ns", "rec-a", record()),
            secret("ns", "other", record({ spec: "demo-but-longer" })),
            secret("ns", "broken", "{"),
          ],
        }
      ),
    };
    const found = await findRecords(kube, "demo", ["ns"]);
    assert.deepEqual(found.searched, "every namespace");
    assert.deepEqual(
      found.records.map((r) => locationText(r.location)),
      ["ns/rec-a"],
    );
    assert.match(JSON.stringify(asked[0]), /app\.kubernetes\.io\/managed-by=khook,khook\.io\/spec=demo/);
  });

  test("where listing every namespace is forbidden, in each namespace it may list", async () => {
    const forbidden = Object.assign(new Error("forbidden"), { status: 403 });
    const kube: SecretLister = {
      list: async (_rt, opts) => {
        if (opts?.allNamespaces === true || opts?.namespace === "default") throw forbidden;
        return { resourceVersion: "1", items: [secret(opts!.namespace!, "rec-a", record())] };
      },
    };
    const found = await findRecords(kube, "demo", ["ns", "default"]);
    assert.deepEqual(found.searched, ["ns"]);
    assert.equal(found.records.length, 1);
  });
});
