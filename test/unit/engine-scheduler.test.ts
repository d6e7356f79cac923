/**
 * The run engine's scheduling rules, with stub executors (no cluster).
 * Test names quote the spec rule they check.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatDuration } from "../../provider/dsl/duration.js";
import { PermanentHookError } from "../../provider/hooks/step-hooks.js";
import { runSpec, type RunEvent, type RunOptions, type RunResult, type StepResult } from "../../provider/engine/run.js";
import { BoundedConcurrency, Scheduler, type Advance } from "../../provider/engine/scheduler.js";
import { RESUME_REASON } from "../../provider/engine/reasons.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import type { ExecutorRegistry } from "../../provider/steps/contract.js";
import {
  CHAIN,
  deferred,
  noExtras,
  recordingSleep,
  specFixture,
  StubExecutors,
  tick,
  type StepFixture,
  resultOf,
} from "./support/engine-fixtures.js";

function run(
  steps: StepFixture[],
  stubs: StubExecutors,
  extra: Partial<RunOptions> = {},
  secrets: string[] = [],
): Promise<RunResult> & { events: RunEvent[] } {
  const events: RunEvent[] = [];
  const spec = specFixture(steps, { secrets });
  const p = runSpec(spec, {
    mode: "apply",
    executors: stubs.map,
    context: noExtras,
    onEvent: (e) => events.push(e),
    sleep: recordingSleep().sleep,
    ...extra,
  }) as Promise<RunResult> & { events: RunEvent[] };
  p.events = events;
  return p;
}

describe("engine: DAG scheduling", { timeout: 10_000 }, () => {
  test("a step starts the moment all its needs are satisfied (ready queue, not level barriers)", async () => {
    // Levels: [a, b] then [c]. c needs only a. b is slow: c must start while b is still running.
    const releaseB = deferred();
    const stubs = new StubExecutors()
      .on("b", () => releaseB.promise)
      .on("c", () => {
        assert.ok(!stubs.trace.includes("end:b"), "c started only after b ended: level barrier");
        releaseB.resolve();
      });
    const r = await run([{ name: "a" }, { name: "b" }, { name: "c", needs: ["a"] }], stubs);
    assert.equal(r.status, "succeeded");
    assert.ok(stubs.trace.indexOf("start:c") < stubs.trace.indexOf("end:b"));
    assert.deepEqual(
      r.steps.map((s) => s.status),
      ["ok", "ok", "ok"],
    );
  });

  test("a step runs only when all its needs succeeded", async () => {
    const stubs = new StubExecutors();
    const r = await run([{ name: "a" }, { name: "b" }, { name: "c", needs: ["a", "b"] }], stubs);
    const c = stubs.trace.indexOf("start:c");
    assert.ok(c > stubs.trace.indexOf("end:a") && c > stubs.trace.indexOf("end:b"));
    assert.equal(r.status, "succeeded");
  });

  test("parallelism caps how many steps execute at once", async () => {
    const stubs = new StubExecutors();
    for (const n of ["a", "b", "c", "d", "e"]) stubs.on(n, () => tick());
    const r = await run(
      ["a", "b", "c", "d", "e"].map((name) => ({ name })),
      stubs,
      { parallelism: 2 },
    );
    assert.equal(stubs.maxRunning, 2);
    assert.equal(r.status, "succeeded");
  });

  test("parallelism defaults to 8", async () => {
    const stubs = new StubExecutors();
    const names = Array.from({ length: 12 }, (_, i) => `s${i}`);
    for (const n of names) stubs.on(n, () => tick());
    await run(
      names.map((name) => ({ name })),
      stubs,
    );
    assert.equal(stubs.maxRunning, 8);
  });

  test("among ready steps, the earlier one in document order starts first", async () => {
    const stubs = new StubExecutors();
    await run([{ name: "z" }, { name: "a" }, { name: "m" }, { name: "b", needs: ["z"] }], stubs, { parallelism: 1 });
    assert.deepEqual(
      stubs.trace.filter((t) => t.startsWith("start:")),
      ["start:z", "start:a", "start:m", "start:b"],
    );
  });

  test("results are in document order and every step is reported exactly once", async () => {
    const stubs = new StubExecutors();
    const p = run([{ name: "c", needs: ["b"] }, { name: "b", needs: ["a"] }, { name: "a" }], stubs);
    const r = await p;
    assert.deepEqual(
      r.steps.map((s) => s.name),
      ["c", "b", "a"],
    );
    const finished = p.events.flatMap((e) => (e.type === "step-finished" ? [e.result.name] : []));
    assert.deepEqual(finished, ["a", "b", "c"]);
    assert.deepEqual(
      stubs.trace.filter((t) => t.startsWith("start:")),
      ["start:a", "start:b", "start:c"],
    );
  });
});

describe("engine: needs satisfaction", { timeout: 10_000 }, () => {
  test("a step excluded by when: is reported skipped but satisfies needs", async () => {
    const stubs = new StubExecutors();
    const r = await run(
      [
        { name: "a", when: 'vars.ENV == "prod"', whenHolds: false },
        { name: "b", needs: ["a"] },
      ],
      stubs,
    );
    assert.equal(resultOf(r, "a").status, "skipped");
    assert.equal(resultOf(r, "a").reason, 'excluded by when: vars.ENV == "prod"');
    assert.equal(stubs.started("a"), 0);
    assert.equal(resultOf(r, "b").status, "ok");
    assert.equal(r.status, "succeeded");
  });

  test("exclusion keeps ordering transitive: c needs excluded b needs a, so c waits for a", async () => {
    const releaseA = deferred();
    const stubs = new StubExecutors().on("a", () => releaseA.promise);
    const p = run([{ name: "a" }, { name: "b", needs: ["a"], whenHolds: false }, { name: "c", needs: ["b"] }], stubs);
    await tick();
    assert.equal(stubs.started("c"), 0, "c started before a finished");
    releaseA.resolve();
    const r = await p;
    assert.ok(stubs.trace.indexOf("start:c") > stubs.trace.indexOf("end:a"));
    assert.equal(r.status, "succeeded");
  });

  test("skipIf: a step skipped as success satisfies needs", async () => {
    const stubs = new StubExecutors().on("a", () => ({
      status: "skipped",
      reason: "release already installed (skipIf: installed)",
    }));
    const r = await run(
      [
        { name: "a", type: "helm" },
        { name: "b", needs: ["a"] },
      ],
      stubs,
    );
    assert.equal(resultOf(r, "a").status, "skipped");
    assert.equal(resultOf(r, "a").reason, "release already installed (skipIf: installed)");
    assert.equal(resultOf(r, "a").attempts, 1);
    assert.equal(resultOf(r, "b").status, "ok");
    assert.equal(r.status, "succeeded");
  });

  test("a failed step blocks its dependents: they are reported skipped, naming the failed dependency", async () => {
    const stubs = new StubExecutors().on("a", () => {
      throw new Error("boom");
    });
    const r = await run(
      [{ name: "a", onError: "continue" }, { name: "b", needs: ["a"] }, { name: "c", needs: ["b"] }, { name: "d" }],
      stubs,
    );
    assert.equal(resultOf(r, "a").status, "failed");
    assert.equal(resultOf(r, "a").error, "boom");
    assert.deepEqual(
      [resultOf(r, "b").status, resultOf(r, "b").reason],
      ["skipped", 'blocked by failed dependency "a"'],
    );
    assert.deepEqual(
      [resultOf(r, "c").status, resultOf(r, "c").reason],
      ["skipped", 'blocked by failed dependency "a" (via "b")'],
    );
    assert.equal(resultOf(r, "d").status, "ok");
    assert.equal(stubs.started("b") + stubs.started("c"), 0);
    assert.equal(r.status, "failed");
  });

  test("an excluded step whose dependency failed stays excluded but passes the block on", async () => {
    const stubs = new StubExecutors().on("a", () => Promise.reject(new Error("boom")));
    const r = await run(
      [
        { name: "a", onError: "continue" },
        { name: "b", needs: ["a"], whenHolds: false },
        { name: "c", needs: ["b"] },
      ],
      stubs,
    );
    assert.match(resultOf(r, "b").reason, /^excluded by when: /);
    assert.deepEqual(
      [resultOf(r, "c").status, resultOf(r, "c").reason],
      ["skipped", 'blocked by failed dependency "a" (via "b")'],
    );
  });
});

describe("engine: onError", { timeout: 10_000 }, () => {
  test("onError: fail — running steps finish, nothing new starts, every not-yet-run step is reported skipped", async () => {
    const releaseB = deferred();
    const stubs = new StubExecutors()
      .on("a", async () => {
        await tick();
        throw new Error("a broke");
      })
      .on("b", () => releaseB.promise);
    const p = run(
      [
        { name: "a" },
        { name: "b" },
        { name: "c" },
        { name: "d", needs: ["a"] },
        { name: "e", needs: ["b"] },
        { name: "x", whenHolds: false },
      ],
      stubs,
      { parallelism: 2 },
    );
    // a fails while b is running; b must still be allowed to finish.
    while (!stubs.trace.includes("fail:a")) await tick();
    await tick();
    releaseB.resolve();
    const r = await p;
    assert.equal(resultOf(r, "a").status, "failed");
    assert.equal(resultOf(r, "b").status, "ok", "the running step finished");
    for (const n of ["c", "d", "e"]) {
      assert.deepEqual([resultOf(r, n).status, resultOf(r, n).reason], ["skipped", 'not started: step "a" failed'], n);
      assert.equal(stubs.started(n), 0, `${n} started after the failure`);
    }
    assert.match(resultOf(r, "x").reason, /^excluded by when: /);
    assert.equal(r.status, "failed");
  });

  test("onError: continue — the step is marked failed and independent branches go on", async () => {
    const stubs = new StubExecutors().on("a", () => Promise.reject(new Error("nope")));
    const r = await run(
      [{ name: "a", onError: "continue" }, { name: "b" }, { name: "c", needs: ["b"] }, { name: "d", needs: ["a"] }],
      stubs,
      { parallelism: 1 },
    );
    assert.deepEqual(
      r.steps.map((s) => s.status),
      ["failed", "ok", "ok", "skipped"],
    );
    assert.equal(r.status, "failed");
  });
});

describe("engine: retries, retryDelay, timeout", { timeout: 10_000 }, () => {
  test("retries: additional attempts after a failed try; a success on the last attempt is a success", async () => {
    const stubs = new StubExecutors().on("a", ({ attempt }) => {
      if (attempt < 3) throw new Error(`flake ${attempt}`);
      return { status: "ok", reason: "third time lucky" };
    });
    const p = run([{ name: "a", retries: 2, retryDelayMs: 1 }], stubs);
    const r = await p;
    assert.deepEqual(
      [resultOf(r, "a").status, resultOf(r, "a").attempts, resultOf(r, "a").reason],
      ["ok", 3, "third time lucky"],
    );
    const attempts = p.events
      .filter((e) => e.type === "attempt-started")
      .map((e) => (e.type === "attempt-started" ? `${e.attempt}/${e.of}` : ""));
    assert.deepEqual(attempts, ["1/3", "2/3", "3/3"]);
    const failures = p.events.flatMap((e) => (e.type === "attempt-failed" ? [[e.attempt, e.error, e.willRetry]] : []));
    assert.deepEqual(failures, [
      [1, "flake 1", true],
      [2, "flake 2", true],
    ]);
  });

  test("retries exhausted: the step fails with the last attempt's error", async () => {
    const stubs = new StubExecutors().on("a", ({ attempt }) => {
      throw new Error(`fail ${attempt}`);
    });
    const p = run([{ name: "a", retries: 1, retryDelayMs: 1 }], stubs);
    const r = await p;
    assert.deepEqual(
      [resultOf(r, "a").status, resultOf(r, "a").attempts, resultOf(r, "a").error, resultOf(r, "a").reason],
      ["failed", 2, "fail 2", "failed after 2 attempts"],
    );
    const last = p.events.filter((e) => e.type === "attempt-failed").at(-1);
    assert.ok(last && last.type === "attempt-failed" && last.willRetry === false && last.retryInMs === 0);
  });

  test("a permanent failure (a hook function's verdict, a webhook's permanent: true) is not retried", async () => {
    const stubs = new StubExecutors().on("a", () => {
      throw new PermanentHookError("post-render hook limits rejected the step's objects");
    });
    const p = run([{ name: "a", retries: 3, retryDelayMs: 1 }], stubs);
    const r = await p;
    assert.deepEqual(
      [resultOf(r, "a").status, resultOf(r, "a").attempts, resultOf(r, "a").reason],
      ["failed", 1, "failed"],
    );
    const failed = p.events.filter((e) => e.type === "attempt-failed");
    assert.deepEqual(
      failed.map((e) => (e.type === "attempt-failed" ? [e.attempt, e.of, e.willRetry] : [])),
      [[1, 4, false]],
    );
  });

  test("retryDelay: the pause between tries is honoured (injected sleep, no timing)", async () => {
    const rec = recordingSleep();
    const stubs = new StubExecutors().on("a", ({ attempt }) => {
      if (attempt < 3) throw new Error("again");
    });
    const p = run([{ name: "a", retries: 2, retryDelayMs: 30_000 }], stubs, { sleep: rec.sleep });
    await p;
    assert.deepEqual(rec.sleeps, [30_000, 30_000]);
    const retryIn = p.events.flatMap((e) => (e.type === "attempt-failed" ? [e.retryInMs] : []));
    assert.deepEqual(retryIn, [30_000, 30_000]);
  });

  test("timeout is per attempt: an executor that ignores its signal cannot hang the run", async () => {
    let sawAbort = false;
    const stubs = new StubExecutors().on("a", ({ ctx }) => {
      ctx.signal.addEventListener("abort", () => (sawAbort = true));
      return new Promise(() => undefined); // never settles, ignores the signal
    });
    const r = await run([{ name: "a", timeoutMs: 30 }], stubs);
    assert.equal(resultOf(r, "a").status, "failed");
    assert.equal(resultOf(r, "a").error, "timed out after 30ms");
    assert.ok(sawAbort, "the executor's signal fired");
  });

  test("timeout is per attempt: each retry gets the full timeout again", async () => {
    const stubs = new StubExecutors().on("a", ({ attempt, ctx }) => {
      if (attempt === 1) return new Promise(() => undefined);
      assert.ok(ctx.deadline > 0 && ctx.deadline <= 40, `deadline ${ctx.deadline}`);
      return { status: "ok", reason: "second attempt in time" };
    });
    const p = run([{ name: "a", timeoutMs: 40, retries: 1, retryDelayMs: 5 }], stubs);
    const r = await p;
    assert.deepEqual([resultOf(r, "a").status, resultOf(r, "a").attempts], ["ok", 2]);
    const f = p.events.find((e) => e.type === "attempt-failed");
    assert.ok(f && f.type === "attempt-failed" && f.error === "timed out after 40ms" && f.willRetry);
  });

  test("the default timeout reads as in the spec: timed out after 5m", () => {
    assert.equal(formatDuration(300_000), "5m");
    assert.equal(formatDuration(90_000), "1m30s");
    assert.equal(formatDuration(5_400_000), "1h30m");
    assert.equal(formatDuration(1_500), "1.5s");
    assert.equal(formatDuration(250), "250ms");
  });
});

describe("engine: cancellation", { timeout: 10_000 }, () => {
  test("cancel: stop starting steps, abort running attempts, mark the rest skipped (cancelled)", async () => {
    const ac = new AbortController();
    let aborted = false;
    const stubs = new StubExecutors().on("a", ({ ctx }) => {
      ctx.signal.addEventListener("abort", () => (aborted = true));
      ac.abort();
      return new Promise(() => undefined);
    });
    const r = await run([{ name: "a" }, { name: "b", needs: ["a"] }, { name: "c" }], stubs, {
      signal: ac.signal,
      parallelism: 1,
    });
    assert.equal(r.status, "cancelled");
    assert.equal(r.cancelled, true);
    assert.ok(aborted);
    assert.deepEqual(
      [resultOf(r, "a").status, resultOf(r, "a").reason, resultOf(r, "a").error],
      ["failed", "cancelled while running", "cancelled"],
    );
    assert.deepEqual([resultOf(r, "b").status, resultOf(r, "b").reason], ["skipped", "cancelled"]);
    assert.deepEqual([resultOf(r, "c").status, resultOf(r, "c").reason], ["skipped", "cancelled"]);
    assert.equal(stubs.started("b") + stubs.started("c"), 0);
  });

  test("cancel during the pause before a retry ends the step without another attempt", async () => {
    const ac = new AbortController();
    const stubs = new StubExecutors().on("a", () => {
      throw new Error("flaky");
    });
    const r = await run([{ name: "a", retries: 5, retryDelayMs: 60_000 }], stubs, {
      signal: ac.signal,
      sleep: (_ms, signal) => {
        ac.abort();
        return Promise.reject(signal.reason);
      },
    });
    assert.equal(r.status, "cancelled");
    assert.equal(stubs.started("a"), 1);
    assert.deepEqual([resultOf(r, "a").status, resultOf(r, "a").reason], ["failed", "cancelled while running"]);
  });

  test("a signal already aborted before the run starts runs nothing", async () => {
    const stubs = new StubExecutors();
    const r = await run([{ name: "a" }], stubs, { signal: AbortSignal.abort() });
    assert.equal(r.status, "cancelled");
    assert.equal(stubs.calls.length, 0);
    assert.equal(resultOf(r, "a").reason, "cancelled");
  });
});

describe("engine: errors and events", { timeout: 10_000 }, () => {
  test("executor errors are redacted before they reach events and results", async () => {
    const secret = "hunter2-very-secret";
    const stubs = new StubExecutors().on("a", ({ ctx }) => {
      ctx.log(`using token ${secret}`);
      throw new Error(`auth failed for https://user:${secret}@charts.example and token ${secret}`);
    });
    const p = run([{ name: "a" }], stubs, {}, [secret]);
    const r = await p;
    assert.ok(!JSON.stringify(r).includes(secret), JSON.stringify(r));
    assert.ok(!JSON.stringify(p.events).includes(secret), JSON.stringify(p.events));
    assert.match(resultOf(r, "a").error ?? "", /\*\*\*/);
    assert.ok(p.events.some((e) => e.type === "step-log" && e.message === "using token ***"));
  });

  test("events: run-started, step-started, attempt-started, step-finished, run-finished", async () => {
    const stubs = new StubExecutors();
    const p = run([{ name: "a" }, { name: "b", whenHolds: false }], stubs);
    const r = await p;
    assert.deepEqual(
      p.events.map((e) => e.type),
      ["run-started", "step-finished", "step-started", "attempt-started", "step-finished", "run-finished"],
    );
    const last = p.events.at(-1);
    assert.ok(last?.type === "run-finished" && last.result === r);
  });

  test("an executor that throws synchronously fails its step, not the run", async () => {
    const stubs = new StubExecutors();
    const executors: ExecutorRegistry = {
      ...stubs.map,
      apply: {
        type: "apply",
        assess: () => Promise.reject(new Error("x")),
        apply: () => {
          throw new TypeError("sync bug");
        },
        destroy: () => Promise.reject(new Error("x")),
        drift: () => Promise.reject(new Error("x")),
      },
    };
    const r = await run([{ name: "a" }], stubs, { executors });
    assert.deepEqual([resultOf(r, "a").status, resultOf(r, "a").error], ["failed", "sync bug"]);
  });

  test("a throwing event listener does not break the run", async () => {
    const stubs = new StubExecutors();
    const r = await run([{ name: "a" }], stubs, {
      onEvent: () => {
        throw new Error("listener bug");
      },
    });
    assert.equal(r.status, "succeeded");
  });
});

/** The Scheduler's transitions on their own: no executors, no events, no promises. */
describe("engine: the Scheduler's transitions", () => {
  const names = (a: Advance): { resolved: string[]; started: string[] } => ({
    resolved: a.resolved.map((r) => r.step.name),
    started: a.started.map((s) => s.name),
  });
  const ended = (spec: LoadedSpec, name: string, status: StepResult["status"] = "ok"): StepResult => {
    const step = spec.stepsByName.get(name)!;
    return {
      name,
      type: step.type,
      status,
      reason: status,
      attempts: 1,
      durationMs: 0,
      inputHash: step.inputHash,
      ...(status === "failed" ? { error: "boom" } : {}),
    };
  };
  const scheduler = (spec: LoadedSpec, opts: Partial<ConstructorParameters<typeof Scheduler>[1]> = {}): Scheduler =>
    new Scheduler(spec, { mode: "apply", redact: (s) => s, ...opts });

  test("advance starts ready steps in document order up to parallelism; a completion frees a slot and readies its dependents", () => {
    const spec = specFixture([{ name: "a" }, { name: "b" }, { name: "c" }, { name: "d", needs: ["a"] }]);
    const s = scheduler(spec, { parallelism: 2 });
    assert.deepEqual(names(s.advance()), { resolved: [], started: ["a", "b"] });
    assert.equal(s.running, 2);
    assert.deepEqual(names(s.advance()), { resolved: [], started: [] }, "no slot is free");
    const done = s.complete(spec.stepsByName.get("a")!, ended(spec, "a"));
    assert.deepEqual([done.step.name, done.executed, done.resolution.satisfies], ["a", true, true]);
    assert.deepEqual(names(s.advance()), { resolved: [], started: ["c"] }, "c is earlier in document order than d");
    s.complete(spec.stepsByName.get("b")!, ended(spec, "b"));
    assert.deepEqual(names(s.advance()), { resolved: [], started: ["d"] });
    assert.equal(s.done, false);
    s.complete(spec.stepsByName.get("c")!, ended(spec, "c"));
    s.complete(spec.stepsByName.get("d")!, ended(spec, "d"));
    assert.deepEqual(names(s.advance()), { resolved: [], started: [] });
    assert.equal(s.done, true);
    assert.deepEqual(s.finish(), [], "every step resolved");
  });

  test("exclusion, resumption and a failed dependency resolve without running, to a fixpoint, in the order they resolve", () => {
    const spec = specFixture([
      { name: "a", onError: "continue" },
      { name: "x", whenHolds: false },
      { name: "r", needs: ["x"] },
      { name: "b", needs: ["a"] },
      { name: "c", needs: ["b"] },
    ]);
    const s = scheduler(spec, { isResumable: (step) => step.name === "r" });
    assert.deepEqual(names(s.advance()), { resolved: ["x", "r"], started: ["a"] });
    assert.equal(s.byName.get("r")!.result.reason, RESUME_REASON);
    s.complete(spec.stepsByName.get("a")!, ended(spec, "a", "failed"));
    assert.equal(s.stopped, false, "onError: continue does not stop the run");
    assert.deepEqual(names(s.advance()), { resolved: ["b", "c"], started: [] });
    assert.equal(s.byName.get("c")!.result.reason, 'blocked by failed dependency "a" (via "b")');
    assert.equal(s.byName.get("c")!.rootFailure, "a");
    assert.equal(s.done, true);
  });

  test("a resumable step is not resumed by destroy", () => {
    const spec = specFixture([{ name: "a" }]);
    const s = scheduler(spec, { mode: "destroy", isResumable: () => true });
    assert.deepEqual(names(s.advance()), { resolved: [], started: ["a"] });
  });

  test("destroy leaves the steps it is told to leave standing, with their reason, and tears down the rest in order (a Pulumi resource sharing another's record)", () => {
    const spec = specFixture(CHAIN);
    const s = scheduler(spec, { mode: "destroy", leave: new Map([["b", "left to the holder"]]) });
    assert.deepEqual(names(s.advance()), { resolved: [], started: ["c"] });
    s.complete(spec.stepsByName.get("c")!, ended(spec, "c"));
    assert.deepEqual(names(s.advance()), { resolved: ["b"], started: ["a"] });
    assert.deepEqual(
      [s.byName.get("b")!.result.status, s.byName.get("b")!.result.reason],
      ["skipped", "left to the holder"],
    );
  });

  test("apply --repair: a step left as it is resolves at once, satisfied, whatever the record says, and its dependents run", () => {
    const spec = specFixture(CHAIN);
    // The record would resume b and c; a repair leaves a and c and re-runs b (not resumable for it).
    const s = scheduler(spec, {
      leave: new Map([
        ["a", "left as it is"],
        ["c", "left as it is"],
      ]),
      isResumable: (step) => step.name === "c",
    });
    assert.deepEqual(names(s.advance()), { resolved: ["a"], started: ["b"] });
    assert.equal(s.byName.get("a")!.satisfies, true);
    assert.equal(s.byName.get("a")!.result.reason, "left as it is");
    s.complete(spec.stepsByName.get("b")!, ended(spec, "b"));
    assert.deepEqual(names(s.advance()), { resolved: ["c"], started: [] });
    assert.equal(s.byName.get("c")!.result.reason, "left as it is", "left wins over resumed");
    assert.equal(s.done, true);
  });

  test("destroy walks the DAG reversed: a step is ready once every step that needs it resolved", () => {
    const spec = specFixture(CHAIN);
    const s = scheduler(spec, { mode: "destroy" });
    assert.deepEqual(names(s.advance()), { resolved: [], started: ["c"] });
    s.complete(spec.stepsByName.get("c")!, ended(spec, "c", "failed"));
    assert.equal(s.stopped, true, "onError: fail stops the run");
    assert.deepEqual(names(s.advance()), { resolved: [], started: [] });
    const rest = s.finish();
    assert.deepEqual(
      rest.map((r) => [r.step.name, r.executed, r.resolution.result.reason]),
      [
        ["a", false, 'not started: step "c" failed'],
        ["b", false, 'not started: step "c" failed'],
      ],
    );
    assert.deepEqual(s.finish(), [], "finish reports the rest once");
  });

  test("stop: nothing more starts, running steps still complete, and the first reason is the one reported", () => {
    const spec = specFixture([
      { name: "a" },
      { name: "b", needs: ["a"] },
      { name: "x", needs: ["a"], whenHolds: false },
    ]);
    const s = scheduler(spec);
    s.advance();
    s.stop("cancelled");
    s.stop("a later reason");
    assert.equal(s.done, false, "a is still running");
    s.complete(spec.stepsByName.get("a")!, ended(spec, "a"));
    assert.deepEqual(names(s.advance()), { resolved: [], started: [] });
    assert.equal(s.done, true);
    assert.deepEqual(
      s.finish().map((r) => [r.step.name, r.resolution.result.reason]),
      [
        ["b", "cancelled"],
        ["x", 'excluded by when: vars.get("ENABLE_X", "false") == "true"'],
      ],
    );
  });
});

describe("engine: bounded concurrency (steps and the planner's assess calls)", () => {
  test("the limit: parallelism, default 8, whole, at least 1", () => {
    assert.deepEqual(
      [undefined, 3, 2.7, 0, -4].map((p) => new BoundedConcurrency(p).limit),
      [8, 3, 2, 1, 1],
    );
  });

  test("tryTake takes a slot only when one is free; release gives it back", () => {
    const slots = new BoundedConcurrency(2);
    assert.deepEqual([slots.tryTake(), slots.tryTake(), slots.tryTake()], [true, true, false]);
    slots.release();
    assert.equal(slots.inUse, 1);
    assert.equal(slots.tryTake(), true);
    slots.release();
    slots.release();
    assert.throws(() => slots.release(), /without a slot taken/);
  });

  test("forEach runs every item, in order, never more than the limit at once", async () => {
    const slots = new BoundedConcurrency(3);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    await slots.forEach([0, 1, 2, 3, 4, 5, 6], async (i) => {
      order.push(i);
      running++;
      most = Math.max(most, running);
      await tick();
      running--;
    });
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(most, 3);
    assert.equal(slots.inUse, 0);
    await slots.forEach([], () => Promise.reject(new Error("never called")));
  });

  test("forEach: a rejection starts nothing more and is rethrown once the running items settled", async () => {
    const slots = new BoundedConcurrency(2);
    const seen: number[] = [];
    const slow = deferred();
    const p = slots.forEach([0, 1, 2, 3], async (i) => {
      seen.push(i);
      if (i === 0) throw new Error("item 0 failed");
      await slow.promise;
    });
    let settled = false;
    void p.catch(() => undefined).then(() => (settled = true));
    await tick();
    assert.equal(settled, false, "item 1 still runs");
    slow.resolve();
    await assert.rejects(p, /item 0 failed/);
    assert.deepEqual(seen, [0, 1]);
    assert.equal(slots.inUse, 0);
  });
});
