/**
 * The loaded spec is never mutated: each run works with a child of the spec's redactor, so a
 * secret an executor learns is masked in everything that run produces and leaves the spec as it was.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runSpec } from "../../provider/engine/run.js";
import type { RunEvent } from "../../provider/engine/run-types.js";
import { MASK, Redactor } from "../../provider/redact.js";
import type { StepContext } from "../../provider/steps/contract.js";
import { noExtras, resultOf, specFixture, StubExecutors } from "./support/engine-fixtures.js";

describe("a child redactor per run", () => {
  test("a child masks its parent's secrets (also ones added later) and its own; the parent never learns the child's", () => {
    const parent = new Redactor();
    parent.add("parent-secret");
    const child = parent.child();
    child.add("child-secret");
    parent.add("later-secret");
    assert.equal(child.redact("parent-secret child-secret later-secret"), `${MASK} ${MASK} ${MASK}`);
    assert.equal(parent.redact("parent-secret child-secret"), `${MASK} child-secret`);
    assert.ok(!parent.forms().includes("child-secret"));
  });

  test("what an executor adds to ctx.redactor is masked in the run's logs, reasons and errors, and the spec's redactor is unchanged", async () => {
    const spec = specFixture([{ name: "a" }, { name: "b" }]);
    const before = spec.redactor.forms();
    const contexts: StepContext[] = [];
    const stubs = new StubExecutors()
      .on("a", ({ ctx }) => {
        contexts.push(ctx);
        ctx.redactor.add("learned-at-run-time");
        ctx.log("the token is learned-at-run-time");
        return { status: "ok", reason: "used learned-at-run-time" };
      })
      .on("b", ({ ctx }) => {
        contexts.push(ctx);
        throw new Error("b saw learned-at-run-time");
      });
    const events: RunEvent[] = [];
    const result = await runSpec(spec, {
      mode: "apply",
      executors: stubs.map,
      context: noExtras,
      onEvent: (e) => events.push(e),
    });
    const everything = JSON.stringify({ events, result });
    assert.ok(!everything.includes("learned-at-run-time"), everything);
    assert.equal(resultOf(result, "a").reason, `used ${MASK}`);
    assert.equal(resultOf(result, "b").error, `b saw ${MASK}`);
    assert.deepEqual(spec.redactor.forms(), before, "the loaded spec's redactor is not mutated");
    assert.equal(spec.redactor.redact("learned-at-run-time"), "learned-at-run-time");

    // The next run starts from the spec's redactor again, with its own child.
    const again = new StubExecutors().on("a", ({ ctx }) => {
      contexts.push(ctx);
      return { status: "ok", reason: ctx.redactor.redact("learned-at-run-time") };
    });
    const second = await runSpec(spec, { mode: "apply", executors: again.map, context: noExtras });
    assert.equal(resultOf(second, "a").reason, "learned-at-run-time");
    assert.notEqual(contexts[0]!.redactor, contexts[2]!.redactor);
    assert.equal(contexts[0]!.redactor, contexts[1]!.redactor, "one redactor per run, shared by its steps");
  });
});
