/**
 * The record holds every step's outcome (issue 10, item 9): a step that never started —
 * blocked by a failed dependency, not started after onError: fail, excluded by when: — is
 * recorded `skipped` with its reason, while an entry that still resumes is kept.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runSpec } from "../../provider/engine/run.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { Journal } from "../../provider/state/journal.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";
import { noExtras, recordingSleep, specFixture, StubExecutors, storedRecord } from "./support/engine-fixtures.js";

function apply(spec: LoadedSpec, stubs: StubExecutors, store: MemoryRecordStore) {
  return runSpec(spec, {
    mode: "apply",
    executors: stubs.map,
    context: noExtras,
    journal: Journal.forSpec(spec, store),
    sleep: recordingSleep().sleep,
    parallelism: 1,
  });
}

const failing = (): StubExecutors => new StubExecutors().on("bad", () => Promise.reject(new Error("boom")));

test("record-holds-never-started-steps: blocked, not-started and excluded steps are recorded skipped with their reason", async () => {
  const entry = (store: MemoryRecordStore, n: string): [string | undefined, string | undefined] => [
    storedRecord(store).steps[n]?.status,
    storedRecord(store).steps[n]?.reason,
  ];

  const continuing = specFixture([
    { name: "bad", onError: "continue" },
    { name: "after", needs: ["bad"] },
    { name: "gated", whenHolds: false, when: "false" },
  ]);
  const first = new MemoryRecordStore();
  assert.equal((await apply(continuing, failing(), first)).status, "failed");
  assert.equal(entry(first, "bad")[0], "failed");
  assert.deepEqual(entry(first, "after"), ["skipped", 'blocked by failed dependency "bad"']);
  assert.deepEqual(entry(first, "gated"), ["skipped", "excluded by when: false"]);
  assert.equal(storedRecord(first).steps["after"]?.inputHash, continuing.stepsByName.get("after")?.inputHash);

  const stopping = specFixture([{ name: "bad" }, { name: "independent" }]);
  const second = new MemoryRecordStore();
  assert.equal((await apply(stopping, failing(), second)).status, "failed");
  assert.deepEqual(entry(second, "independent"), ["skipped", 'not started: step "bad" failed']);
});

test("record-holds-never-started-steps: an entry that still resumes is kept when the step does not start", async () => {
  const store = new MemoryRecordStore();
  await apply(specFixture([{ name: "a" }, { name: "b", needs: ["a"] }]), new StubExecutors(), store);
  // a changed and now fails; b is unchanged and still recorded ok, so it must stay resumable.
  const r = await apply(
    specFixture([
      { name: "a", version: 2 },
      { name: "b", needs: ["a"] },
    ]),
    new StubExecutors().on("a", () => Promise.reject(new Error("boom"))),
    store,
  );
  assert.equal(r.steps.find((s) => s.name === "b")?.status, "skipped");
  assert.equal(storedRecord(store).steps["b"]?.status, "ok");
});
