/**
 * The live check's orchestration (engine/drift.ts) and the repair run it leads to (the engine's
 * `rerun` and apply-mode `leave`), on stub executors and an in-memory record. The executors'
 * own checks have their tests (executor-drift.test.ts); the real cluster, test/integration/drift.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkDrift } from "../../provider/engine/drift.js";
import { repairRun, LEFT_BY_REPAIR } from "../../provider/operations.js";
import { Journal } from "../../provider/state/journal.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";
import {
  noExtras,
  resultOf,
  specFixture,
  storedRecord,
  StubExecutors,
  CHAIN,
  journaledApply,
} from "./support/engine-fixtures.js";

const apply = journaledApply;

const DIAMOND = [
  { name: "a" },
  { name: "b", needs: ["a"] },
  { name: "c", needs: ["a"] },
  { name: "d", needs: ["b", "c"] },
];

describe("live check: which steps are asked", { timeout: 10_000 }, () => {
  test("only the steps the record calls completed are checked; the others say why not, and nothing is written", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture([...CHAIN, { name: "x", whenHolds: false }]);
    const first = new StubExecutors().on("c", () => {
      throw new Error("boom");
    });
    await apply(spec, first, store);
    const writes = store.calls.write;
    const stubs = new StubExecutors().on("a", () => ({
      state: "drifted",
      reason: "configmap/a changed (data.k)",
      drifted: [{ ref: "configmap/a", change: "changed", fields: ["data.k"] }],
    }));
    const report = await checkDrift(spec, stubs.map, noExtras, Journal.forSpec(spec, store));
    assert.deepEqual(
      stubs.calls.map((c) => `${c.kind}:${c.step.name}`),
      ["drift:a", "drift:b"],
    );
    const by = new Map(report.steps.map((s) => [s.name, s]));
    assert.equal(by.get("a")!.state, "drifted");
    assert.deepEqual(by.get("a")!.drifted, [{ ref: "configmap/a", change: "changed", fields: ["data.k"] }]);
    assert.equal(by.get("b")!.state, "in-sync");
    assert.equal(by.get("c")!.state, "not-checkable");
    assert.match(by.get("c")!.reason, /failed, not completed: apply runs it/);
    assert.equal(by.get("c")!.decidedBy, "record");
    assert.equal(by.get("x")!.decidedBy, "when");
    assert.equal(store.calls.write, writes, "the live check writes nothing");
  });

  test("a check that throws makes its step not checkable, with the error, and the others go on", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture([{ name: "a" }, { name: "b" }]);
    await apply(spec, new StubExecutors(), store);
    const stubs = new StubExecutors().on("a", () => {
      throw new Error("configmaps is forbidden: cannot list");
    });
    const report = await checkDrift(spec, stubs.map, noExtras, Journal.forSpec(spec, store));
    assert.equal(report.steps[0]!.state, "not-checkable");
    assert.match(report.steps[0]!.reason, /cannot check it: configmaps is forbidden/);
    assert.equal(report.steps[1]!.state, "in-sync");
  });

  test("what a check reports is redacted: a secret in a reason or a field path becomes ***", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture([{ name: "a" }], { secrets: ["s3cr3t-value"] });
    await apply(spec, new StubExecutors(), store);
    const stubs = new StubExecutors().on("a", () => ({
      state: "drifted",
      reason: "release x values differ at token.s3cr3t-value",
      drifted: [{ ref: "release x", change: "revision", fields: ["values.s3cr3t-value"] }],
    }));
    const report = await checkDrift(spec, stubs.map, noExtras, Journal.forSpec(spec, store));
    assert.ok(!JSON.stringify(report).includes("s3cr3t-value"), JSON.stringify(report));
  });

  test("the check sees the step's record: when it finished and the baseline it kept (a helm revision)", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture([{ name: "a" }]);
    await apply(
      spec,
      new StubExecutors().on("a", () => ({ status: "ok", reason: "installed", baseline: { revision: 7 } })),
      store,
    );
    assert.deepEqual(storedRecord(store).steps["a"]!.baseline, { revision: 7 });
    const stubs = new StubExecutors();
    await checkDrift(spec, stubs.map, noExtras, Journal.forSpec(spec, store));
    const ctx = stubs.calls[0]!.ctx as unknown as {
      recorded: { baseline?: { revision?: number }; finishedAt: string };
    };
    assert.equal(ctx.recorded.baseline?.revision, 7);
    assert.equal(ctx.recorded.finishedAt, storedRecord(store).steps["a"]!.finishedAt);
  });
});

describe("apply --repair: exactly the drifted steps re-run, in the DAG's order", { timeout: 10_000 }, () => {
  test("repair-only-drifted: the drifted steps run although the record resumes them, the rest are left with their entries untouched, and the record notes the repair", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture(DIAMOND);
    await apply(spec, new StubExecutors(), store);
    const before = storedRecord(store);
    const check = new StubExecutors()
      .on("d", () => ({ state: "drifted", reason: "d drifted" }))
      .on("b", () => ({ state: "drifted", reason: "b drifted" }));
    const report = await checkDrift(spec, check.map, noExtras, Journal.forSpec(spec, store));
    const { rerun, leave } = repairRun(spec, report);
    assert.deepEqual([...rerun], ["b", "d"]);
    const stubs = new StubExecutors();
    const r = await apply(spec, stubs, store, { rerun, leave });
    assert.equal(r.status, "succeeded");
    assert.deepEqual(stubs.trace, ["start:b", "end:b", "start:d", "end:d"], "b before d, nothing else");
    assert.equal(resultOf(r, "a").reason, LEFT_BY_REPAIR);
    const after = storedRecord(store);
    assert.deepEqual(after.steps["a"], before.steps["a"], "a left step's entry is untouched");
    assert.deepEqual(after.steps["c"], before.steps["c"]);
    assert.notEqual(after.steps["b"]!.finishedAt, before.steps["b"]!.finishedAt, "b re-ran");
    assert.deepEqual(after.repair?.steps, ["b", "d"]);
    assert.equal(after.runStatus, "succeeded");
  });

  test("a repaired step that fails leaves its dependents as they are (a repair runs nothing else)", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture(CHAIN);
    await apply(spec, new StubExecutors(), store);
    const before = storedRecord(store);
    const stubs = new StubExecutors().on("a", () => {
      throw new Error("still broken");
    });
    const r = await apply(spec, stubs, store, {
      rerun: new Set(["a"]),
      leave: new Map([
        ["b", LEFT_BY_REPAIR],
        ["c", LEFT_BY_REPAIR],
      ]),
    });
    assert.equal(r.status, "failed");
    assert.deepEqual(
      stubs.calls.map((c) => c.step.name),
      ["a"],
    );
    const after = storedRecord(store);
    assert.equal(after.steps["a"]!.status, "failed");
    assert.deepEqual(after.steps["b"], before.steps["b"]);
    assert.deepEqual(after.steps["c"], before.steps["c"]);
  });

  test("rerun without leave (a Pulumi up after a live refresh): the drifted step runs with whatever else the record does not resume", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture(CHAIN);
    await apply(spec, new StubExecutors(), store);
    const stubs = new StubExecutors();
    await apply(spec, stubs, store, { rerun: new Set(["b"]) });
    assert.deepEqual(
      stubs.calls.map((c) => c.step.name),
      ["b"],
      "a and c resume; b re-runs",
    );
    assert.deepEqual(storedRecord(store).repair?.steps, ["b"]);
  });

  test("a run that repairs nothing keeps the last repair's note", async () => {
    const store = new MemoryRecordStore();
    const spec = specFixture(CHAIN);
    await apply(spec, new StubExecutors(), store);
    await apply(spec, new StubExecutors(), store, { rerun: new Set(["c"]) });
    const noted = storedRecord(store).repair;
    await apply(spec, new StubExecutors(), store);
    assert.deepEqual(storedRecord(store).repair, noted);
  });
});
