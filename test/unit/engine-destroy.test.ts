/** Destroy mode: the DAG reversed, executor.destroy, and what the journal records. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runSpec, type RunOptions, type RunResult } from "../../provider/engine/run.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { Journal } from "../../provider/state/journal.js";
import { RESUME_REASON, type StateRecord } from "../../provider/state/record.js";
import { PermanentStoreError } from "../../provider/state/store.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";
import {
  deferred,
  noExtras,
  recordingSleep,
  specFixture,
  StubExecutors,
  tick,
  resultOf,
  storedRecord,
  CHAIN,
} from "./support/engine-fixtures.js";

function go(
  mode: "apply" | "destroy",
  spec: LoadedSpec,
  stubs: StubExecutors,
  store?: MemoryRecordStore,
  extra: Partial<RunOptions> = {},
): Promise<RunResult> {
  return runSpec(spec, {
    mode,
    executors: stubs.map,
    context: noExtras,
    ...(store ? { journal: Journal.forSpec(spec, store) } : {}),
    sleep: recordingSleep().sleep,
    ...extra,
  });
}

describe("engine: destroy", { timeout: 10_000 }, () => {
  test("destroy runs in reverse dependency order: a step is destroyed only after every step that needs it", async () => {
    const stubs = new StubExecutors();
    const r = await go("destroy", specFixture(CHAIN), stubs);
    assert.equal(r.status, "succeeded");
    assert.deepEqual(
      stubs.trace.filter((t) => t.startsWith("destroy-start")),
      ["destroy-start:c", "destroy-start:b", "destroy-start:a"],
    );
    assert.equal(stubs.started("a", "apply"), 0, "destroy never calls apply");
  });

  test("destroy: a step with several dependents waits for all of them, independent ones go in parallel", async () => {
    const releaseC = deferred();
    const stubs = new StubExecutors().on("c", () => releaseC.promise);
    const p = go(
      "destroy",
      specFixture([{ name: "a" }, { name: "b", needs: ["a"] }, { name: "c", needs: ["a"] }, { name: "d" }]),
      stubs,
    );
    while (stubs.started("d", "destroy") === 0) await tick();
    await tick();
    assert.equal(stubs.started("a", "destroy"), 0, "a destroyed while c (which needs it) still stands");
    releaseC.resolve();
    await p;
    const t = stubs.trace;
    assert.ok(
      t.indexOf("destroy-start:a") > t.indexOf("destroy-end:b") &&
        t.indexOf("destroy-start:a") > t.indexOf("destroy-end:c"),
    );
  });

  test("destroy: steps excluded by when: are skipped (not destroyed)", async () => {
    const stubs = new StubExecutors();
    const r = await go("destroy", specFixture([{ name: "a" }, { name: "b", needs: ["a"], whenHolds: false }]), stubs);
    assert.equal(resultOf(r, "b").status, "skipped");
    assert.match(resultOf(r, "b").reason, /^excluded by when: /);
    assert.equal(stubs.started("b", "destroy"), 0);
    assert.equal(stubs.started("a", "destroy"), 1);
  });

  test("destroy: a failed teardown keeps the steps it needs", async () => {
    const stubs = new StubExecutors().on("c", () => Promise.reject(new Error("finalizer stuck")));
    const r = await go("destroy", specFixture(CHAIN.map((s) => ({ ...s, onError: "continue" as const }))), stubs);
    assert.equal(resultOf(r, "c").status, "failed");
    assert.deepEqual(
      [resultOf(r, "b").status, resultOf(r, "b").reason],
      ["skipped", 'kept: step "c", which needs it, failed to destroy'],
    );
    assert.equal(resultOf(r, "a").reason, 'kept: step "c", which needs it, failed to destroy (via "b")');
    assert.equal(r.status, "failed");
  });

  test("destroy: resume never applies — a recorded ok step is still torn down", async () => {
    const store = new MemoryRecordStore();
    await go("apply", specFixture(CHAIN), new StubExecutors(), store);
    const stubs = new StubExecutors();
    const r = await go("destroy", specFixture(CHAIN), stubs, store);
    assert.equal(stubs.calls.length, 3);
    assert.ok(r.steps.every((s) => s.reason !== RESUME_REASON));
  });

  test("a fully successful destroy deletes the record, so the next apply re-converges from scratch", async () => {
    const store = new MemoryRecordStore();
    await go("apply", specFixture(CHAIN), new StubExecutors(), store);
    const r = await go("destroy", specFixture(CHAIN), new StubExecutors(), store);
    assert.equal(r.status, "succeeded");
    assert.equal(store.exists, false);
    assert.equal(store.calls.delete, 1);
    const next = new StubExecutors();
    await go("apply", specFixture(CHAIN), next, store);
    assert.equal(next.calls.length, 3);
  });

  test("destroy: every step loses its ok in the record before anything is destroyed", async () => {
    const store = new MemoryRecordStore();
    await go("apply", specFixture(CHAIN), new StubExecutors(), store);
    let seenAtFirstDestroy: StateRecord | undefined;
    const stubs = new StubExecutors().on("c", () => {
      seenAtFirstDestroy = storedRecord(store);
    });
    await go("destroy", specFixture(CHAIN), stubs, store);
    assert.ok(seenAtFirstDestroy);
    assert.equal(seenAtFirstDestroy.runStatus, "destroying");
    assert.deepEqual(
      Object.values(seenAtFirstDestroy.steps).map((e) => e.status),
      ["destroying", "destroying", "destroying"],
    );
  });

  test("a partial teardown never leaves a record that resume-skips a step whose objects are gone", async () => {
    const store = new MemoryRecordStore();
    await go("apply", specFixture(CHAIN), new StubExecutors(), store);
    // c is torn down, then b fails: a is kept.
    const stubs = new StubExecutors().on("b", () => Promise.reject(new Error("cannot delete")));
    const r = await go("destroy", specFixture(CHAIN), stubs, store);
    assert.equal(r.status, "failed");
    const rec = storedRecord(store);
    assert.deepEqual(
      [rec.steps["c"]?.status, rec.steps["b"]?.status, rec.steps["a"]?.status],
      ["destroyed", "destroy-failed", "destroying"],
    );
    assert.equal(rec.command, "destroy");
    assert.equal(rec.runStatus, "failed");
    const next = new StubExecutors();
    const again = await go("apply", specFixture(CHAIN), next, store);
    assert.deepEqual(
      next.calls.map((c) => c.step.name),
      ["a", "b", "c"],
    );
    assert.ok(again.steps.every((s) => s.status === "ok"));
  });

  test("a cancelled teardown marks the run cancelled and resumes nothing afterwards", async () => {
    const store = new MemoryRecordStore();
    await go("apply", specFixture(CHAIN), new StubExecutors(), store);
    const ac = new AbortController();
    const stubs = new StubExecutors().on("c", () => ac.abort());
    const r = await go("destroy", specFixture(CHAIN), stubs, store, { signal: ac.signal });
    assert.equal(r.status, "cancelled");
    assert.equal(storedRecord(store).runStatus, "cancelled");
    const next = new StubExecutors();
    await go("apply", specFixture(CHAIN), next, store);
    assert.equal(next.calls.length, 3);
  });

  test("destroy: if the record cannot be updated first, nothing is destroyed", async () => {
    const store = new MemoryRecordStore();
    await go("apply", specFixture(CHAIN), new StubExecutors(), store);
    store.failWrites = new PermanentStoreError(
      'forbidden to update Secret "khook-state-fixture" in namespace "default" (the state record)',
    );
    const stubs = new StubExecutors();
    const r = await go("destroy", specFixture(CHAIN), stubs, store);
    assert.equal(stubs.calls.length, 0);
    assert.equal(r.status, "failed");
    assert.match(r.journalError ?? "", /forbidden to update Secret.*nothing was destroyed/);
  });

  test("destroy without a record writes none", async () => {
    const store = new MemoryRecordStore();
    const r = await go("destroy", specFixture(CHAIN), new StubExecutors(), store);
    assert.equal(r.status, "succeeded");
    assert.deepEqual(store.calls, { read: 1, write: 0, delete: 0 });
  });

  test("destroy: a record that cannot be deleted after a successful teardown fails the run", async () => {
    const store = new MemoryRecordStore();
    await go("apply", specFixture(CHAIN), new StubExecutors(), store);
    store.failDeletes = new PermanentStoreError(
      'forbidden to delete Secret "khook-state-fixture" in namespace "default" (the state record)',
    );
    const r = await go("destroy", specFixture(CHAIN), new StubExecutors(), store);
    assert.equal(r.status, "failed");
    assert.match(r.journalError ?? "", /forbidden to delete Secret/);
  });
});
