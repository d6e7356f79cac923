/** Plans: offline is pure; online asks executors' assess and consults the record. Neither changes anything. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { planOffline, planOnline } from "../../provider/engine/plan.js";
import { runSpec } from "../../provider/engine/run.js";
import { Journal } from "../../provider/state/journal.js";
import { RESUME_REASON } from "../../provider/state/record.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";
import { noExtras, specFixture, StubExecutors, tick } from "./support/engine-fixtures.js";

const steps = [
  { name: "cni", type: "helm" as const },
  { name: "argocd", type: "helm" as const, needs: ["cni"], when: 'vars.ENV == "prod"', whenHolds: false },
  { name: "patch-it", type: "patch" as const, needs: ["cni"], when: 'vars.ENV == "dev"' },
];

describe("plan", { timeout: 10_000 }, () => {
  test("plan --offline: per step level, summary, when outcome, input hash, action and reason", () => {
    const spec = specFixture(steps);
    const plan = planOffline(spec);
    assert.deepEqual(
      plan.map((p) => [p.name, p.type, p.level, p.when, p.action]),
      [
        ["cni", "helm", 0, "included", "run"],
        ["argocd", "helm", 1, "excluded", "skip"],
        ["patch-it", "patch", 1, "included", "run"],
      ],
    );
    assert.equal(plan[1]?.reason, 'excluded by when: vars.ENV == "prod"');
    assert.equal(plan[0]?.inputHash, spec.stepsByName.get("cni")?.inputHash);
    assert.equal(plan[0]?.summary, "helm cni");
  });

  test("plan --offline is deterministic", () => {
    assert.deepEqual(planOffline(specFixture(steps)), planOffline(specFixture(steps)));
  });

  test("plan --offline redacts secrets spliced into a when: expression", () => {
    const plan = planOffline(
      specFixture([{ name: "a", when: '"tok-12345" == "x"', whenHolds: false }], { secrets: ["tok-12345"] }),
    );
    assert.equal(plan[0]?.reason, 'excluded by when: "***" == "x"');
  });

  test("online plan: assess decides included steps; excluded steps are skipped by when:", async () => {
    const stubs = new StubExecutors().on("cni", () => ({ action: "upgrade", reason: "revision 3 -> cilium@1.18.4" }));
    const plan = await planOnline(specFixture(steps), stubs.map, noExtras);
    assert.deepEqual(
      plan.map((p) => [p.name, p.action, p.decidedBy]),
      [
        ["cni", "upgrade", "assess"],
        ["argocd", "skip", "when"],
        ["patch-it", "install", "assess"],
      ],
    );
    assert.equal(plan[0]?.reason, "revision 3 -> cilium@1.18.4");
    assert.deepEqual(
      stubs.calls.map((c) => c.kind),
      ["assess", "assess"],
      "only assess, never apply/destroy",
    );
  });

  test("online plan: journal-resumable steps are skip with the resume reason, without assessing them", async () => {
    const spec = specFixture(steps);
    const store = new MemoryRecordStore();
    await runSpec(spec, {
      mode: "apply",
      executors: new StubExecutors().map,
      context: noExtras,
      journal: Journal.forSpec(spec, store),
    });
    const writes = store.calls.write;
    const stubs = new StubExecutors();
    const plan = await planOnline(spec, stubs.map, noExtras, Journal.forSpec(spec, store));
    assert.deepEqual(
      plan.map((p) => [p.action, p.reason]),
      [
        ["skip", RESUME_REASON],
        ["skip", 'excluded by when: vars.ENV == "prod"'],
        ["skip", RESUME_REASON],
      ],
    );
    assert.equal(stubs.calls.length, 0);
    assert.equal(store.calls.write, writes, "a plan never writes the record");
  });

  test("online plan: a failing assess is reported on its step, not thrown, and redacted", async () => {
    const stubs = new StubExecutors().on("cni", () => Promise.reject(new Error("forbidden: token abc-secret-1")));
    const plan = await planOnline(specFixture(steps, { secrets: ["abc-secret-1"] }), stubs.map, noExtras);
    assert.equal(plan[0]?.decidedBy, "error");
    assert.equal(plan[0]?.error, "forbidden: token ***");
    assert.equal(plan[2]?.decidedBy, "assess");
  });

  test("online plan: assess calls run in parallel, capped", async () => {
    const many = Array.from({ length: 10 }, (_, i) => ({ name: `s${i}` }));
    const stubs = new StubExecutors();
    for (const s of many)
      stubs.on(s.name, async () => {
        await tick();
        return { action: "create", reason: "absent" };
      });
    const plan = await planOnline(specFixture(many), stubs.map, noExtras, undefined, { parallelism: 3 });
    assert.equal(stubs.maxRunning, 3);
    assert.deepEqual(
      plan.map((p) => p.name),
      many.map((s) => s.name),
      "document order",
    );
  });
});
