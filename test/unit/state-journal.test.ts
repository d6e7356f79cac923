/** The journal's write discipline, against the in-memory store. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Redactor } from "../../provider/redact.js";
import { Journal } from "../../provider/state/journal.js";
import { parseRecord } from "../../provider/state/record.js";
import { MemoryRecordStore, PermanentStoreError } from "../../provider/state/store.js";
import { deferred, tick } from "./support/engine-fixtures.js";

function journal(store: MemoryRecordStore): Journal {
  return new Journal(store, { spec: "demo", specHash: "sha256:s", stepNames: ["a", "b", "c"], redactor: new Redactor(), khookVersion: "9.9.9" });
}

const ok = { status: "ok" as const, reason: "done", attempts: 1, durationMs: 3 };

describe("state: journal writes", () => {
  test("open reads once", async () => {
    const store = new MemoryRecordStore();
    const j = journal(store);
    await j.open();
    await j.open();
    assert.equal(store.calls.read, 1);
  });

  test("one write in flight at a time; changes meanwhile go out as one write of the latest state", async () => {
    const store = new MemoryRecordStore();
    const gate = deferred();
    store.beforeWrite = () => (store.calls.write === 1 ? gate.promise : undefined);
    const j = journal(store);
    await j.open();
    j.beginRun();
    j.recordStep({ name: "a", inputHash: "ha" }, ok);
    j.recordStep({ name: "b", inputHash: "hb" }, ok);
    j.recordStep({ name: "c", inputHash: "hc" }, ok);
    await tick();
    assert.equal(store.calls.write, 1);
    gate.resolve();
    assert.equal(await j.finish("succeeded"), undefined);
    assert.equal(store.calls.write, 2);
    const r = parseRecord(store.json ?? "");
    assert.ok(r.ok);
    assert.deepEqual(Object.keys(r.record.steps), ["a", "b", "c"]);
    assert.equal(r.record.runStatus, "succeeded");
    assert.equal(r.record.khookVersion, "9.9.9");
  });

  test("a permanent write error is reported by finish and stops further attempts", async () => {
    const store = new MemoryRecordStore();
    store.failWrites = new PermanentStoreError("forbidden to create Secret \"x\" in namespace \"y\"");
    const j = journal(store);
    await j.open();
    j.beginRun();
    await tick();
    j.recordStep({ name: "a", inputHash: "ha" }, ok);
    assert.match((await j.finish("succeeded")) ?? "", /forbidden to create Secret "x" in namespace "y"/);
    assert.equal(store.calls.write, 1);
  });

  test("a transient error is wrapped with the store's description", async () => {
    const store = new MemoryRecordStore(undefined, 'Secret "x" in namespace "y"');
    store.failWrites = new Error("ECONNRESET");
    const j = journal(store);
    await j.open();
    j.beginRun();
    assert.equal(await j.finish("failed"), 'cannot write the state record (Secret "x" in namespace "y"): ECONNRESET');
  });

  test("deleteRecord waits for writes in flight, so nothing recreates the record afterwards", async () => {
    const store = new MemoryRecordStore("{}");
    const gate = deferred();
    store.beforeWrite = () => gate.promise;
    const j = journal(store);
    await j.open();
    j.beginRun();
    const del = j.deleteRecord();
    j.recordStep({ name: "a", inputHash: "ha" }, ok); // ignored: the journal is closed
    gate.resolve();
    await del;
    await tick();
    assert.equal(store.exists, false);
    assert.equal(store.calls.write, 1);
  });

  test("readRecord reads afresh and rejects unreadable records", async () => {
    const store = new MemoryRecordStore("nope");
    await assert.rejects(journal(store).readRecord(), /unreadable/);
    assert.equal(await journal(new MemoryRecordStore()).readRecord(), undefined);
  });
});
