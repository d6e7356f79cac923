/**
 * Resume from the state record, and the journal as the engine drives it,
 * against an in-memory record store (the Secret store has its own tests).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runSpec } from "../../provider/engine/run.js";
import path from "node:path";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { specText, tempSpecDir } from "./support/spec-files.js";
import { Journal } from "../../provider/state/journal.js";
import { parseRecord, RESUME_REASON, type StateRecord } from "../../provider/state/record.js";
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
  journaledApply,
} from "./support/engine-fixtures.js";

const RESUME = "unchanged since it succeeded in a previous run (state record)";

const apply = journaledApply;

describe("state: keyed hashes of steps with secrets", { timeout: 10_000 }, () => {
  const steps =
    "  - name: creds\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Secret\n            metadata: {name: creds}\n            stringData: {pin: '${PIN}'}\n  - name: plain\n    wait: { for: delete, on: pods }\n";
  const load = (pin: string): LoadedSpec =>
    loadSpec({
      file: path.join(tempSpecDir({ "spec.yaml": specText(steps) }), "spec.yaml"),
      env: { KHOOK_SECRET_PIN: pin },
    });

  test("keyed-hash-resume: the key lives in the record; the next run with the same secret resumes, a rotated secret re-runs the step", async () => {
    const store = new MemoryRecordStore();
    const first = await apply(load("4711"), new StubExecutors(), store);
    assert.equal(first.status, "succeeded");
    const record = storedRecord(store);
    assert.ok(record.hashKey !== undefined && record.hashKey.length > 0, "the record keeps the key");
    assert.match(record.steps["creds"]!.inputHash, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.match(record.steps["plain"]!.inputHash, /^sha256:/);
    assert.equal(
      resultOf(first, "creds").inputHash,
      record.steps["creds"]!.inputHash,
      "what is printed is the keyed hash",
    );
    const second = new StubExecutors();
    const resumed = await apply(load("4711"), second, store);
    assert.equal(second.calls.length, 0, "nothing re-runs");
    assert.equal(storedRecord(store).hashKey, record.hashKey, "the key is kept");
    assert.equal(resultOf(resumed, "creds").reason, RESUME);
    const third = new StubExecutors();
    await apply(load("4712"), third, store);
    assert.deepEqual(
      third.calls.map((c) => c.step.name),
      ["creds"],
    );
  });

  test("keyed-hash-resume: a spec without secrets writes no key", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture(CHAIN), new StubExecutors(), store);
    assert.equal(storedRecord(store).hashKey, undefined);
  });
});

describe("state: objects webhooks added", { timeout: 10_000 }, () => {
  test("webhook-additions-recorded: objects a webhook added are kept in the record across runs and handed to destroy; a successful destroy drops them", async () => {
    const store = new MemoryRecordStore();
    const extra = { apiVersion: "v1", kind: "ConfigMap", name: "extra", namespace: "apps" };
    const other = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", name: "r", namespace: "apps" };
    await apply(
      specFixture([{ name: "a" }]),
      new StubExecutors().on("a", () => ({ status: "ok", reason: "applied", added: [extra] })),
      store,
    );
    assert.deepEqual(storedRecord(store).steps["a"]?.added, [extra]);
    // A changed step whose hook now adds something else: both stay listed, so destroy still finds the first.
    await apply(
      specFixture([{ name: "a", version: 2 }]),
      new StubExecutors().on("a", () => ({ status: "ok", reason: "applied", added: [other] })),
      store,
    );
    assert.deepEqual(storedRecord(store).steps["a"]?.added, [extra, other]);
    const failing = new StubExecutors().on("a", () => Promise.reject(new Error("cannot delete")));
    const spec = specFixture([{ name: "a", version: 2, onError: "continue" as const }]);
    await runSpec(spec, {
      mode: "destroy",
      executors: failing.map,
      context: noExtras,
      journal: Journal.forSpec(spec, store),
      sleep: recordingSleep().sleep,
    });
    assert.deepEqual(failing.calls[0]!.ctx.recordedAdditions, [extra, other], "destroy is told what webhooks added");
    assert.deepEqual(storedRecord(store).steps["a"]?.added, [extra, other], "a failed destroy keeps them listed");
    const ok = new StubExecutors();
    const done = await runSpec(spec, {
      mode: "destroy",
      executors: ok.map,
      context: noExtras,
      journal: Journal.forSpec(spec, store),
      sleep: recordingSleep().sleep,
    });
    assert.equal(done.status, "succeeded");
    assert.deepEqual(ok.calls[0]!.ctx.recordedAdditions, [extra, other]);
  });
});

describe("state: resume", { timeout: 10_000 }, () => {
  test("the resume reason is the spec's text, verbatim", () => {
    assert.equal(RESUME_REASON, RESUME);
  });

  test("a step recorded ok with the same input hash is skipped with the resume reason, without calling its executor, and satisfies needs", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture(CHAIN), new StubExecutors(), store);
    const second = new StubExecutors();
    const r = await apply(specFixture(CHAIN), second, store);
    assert.equal(r.status, "succeeded");
    assert.equal(second.calls.length, 0);
    for (const s of r.steps) assert.deepEqual([s.status, s.reason, s.attempts], ["skipped", RESUME, 0]);
  });

  test("change detection is per step: editing one step re-runs that step and only that step", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture(CHAIN), new StubExecutors(), store);
    const second = new StubExecutors();
    const edited = specFixture([{ name: "a" }, { name: "b", needs: ["a"], version: 2 }, { name: "c", needs: ["b"] }]);
    const r = await apply(edited, second, store);
    assert.deepEqual(
      r.steps.map((s) => s.status),
      ["skipped", "ok", "skipped"],
    );
    assert.deepEqual(
      second.calls.map((c) => c.step.name),
      ["b"],
    );
    assert.equal(resultOf(r, "c").reason, RESUME, "a changed step never forces its dependents to re-run");
    assert.equal(storedRecord(store).steps["b"]?.inputHash, edited.stepsByName.get("b")?.inputHash);
  });

  test("failed and skipped steps re-run", async () => {
    const store = new MemoryRecordStore();
    const first = new StubExecutors()
      .on("a", () => Promise.reject(new Error("first run fails")))
      .on("b", () => ({ status: "skipped", reason: "skipIf: exists" }));
    const spec = [{ name: "a", onError: "continue" as const }, { name: "b" }];
    await apply(specFixture(spec), first, store);
    assert.equal(storedRecord(store).steps["a"]?.status, "failed");
    assert.equal(storedRecord(store).steps["b"]?.status, "skipped");
    const second = new StubExecutors();
    const r = await apply(specFixture(spec), second, store);
    assert.deepEqual(second.calls.map((c) => c.step.name).sort(), ["a", "b"]);
    assert.deepEqual(
      r.steps.map((s) => s.status),
      ["ok", "ok"],
    );
  });

  test("when: is re-evaluated every run and wins over the record", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture([{ name: "argocd" }]), new StubExecutors(), store);
    const r = await apply(
      specFixture([{ name: "argocd", when: 'vars.ENV == "prod"', whenHolds: false }]),
      new StubExecutors(),
      store,
    );
    assert.equal(resultOf(r, "argocd").reason, 'excluded by when: vars.ENV == "prod"');
  });

  test("an excluded step keeps its recorded ok: nothing happened to its objects", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture([{ name: "argocd" }]), new StubExecutors(), store);
    await apply(specFixture([{ name: "argocd", whenHolds: false }]), new StubExecutors(), store);
    const third = new StubExecutors();
    const r = await apply(specFixture([{ name: "argocd" }]), third, store);
    assert.equal(resultOf(r, "argocd").reason, RESUME);
  });

  test("renaming a step re-runs it: the name keys the record", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture([{ name: "cni", inputHash: "sha256:same" }]), new StubExecutors(), store);
    const second = new StubExecutors();
    await apply(specFixture([{ name: "cilium", inputHash: "sha256:same" }]), second, store);
    assert.equal(second.started("cilium"), 1);
    // The old entry is kept untouched: renaming back still resumes.
    assert.equal(storedRecord(store).steps["cni"]?.status, "ok");
    const third = new StubExecutors();
    const r = await apply(specFixture([{ name: "cni", inputHash: "sha256:same" }]), third, store);
    assert.equal(resultOf(r, "cni").reason, RESUME);
  });

  test("scheduling is not an input: changing needs, timeout, retries, retryDelay or onError does not re-run a completed step", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture([{ name: "a" }, { name: "b" }]), new StubExecutors(), store);
    const second = new StubExecutors();
    await apply(
      specFixture([
        { name: "a" },
        { name: "b", needs: ["a"], timeoutMs: 1000, retries: 3, retryDelayMs: 1, onError: "continue" },
      ]),
      second,
      store,
    );
    assert.equal(second.calls.length, 0);
  });

  test("a step blocked by a failed dependency keeps its previous ok entry (it did not run)", async () => {
    const store = new MemoryRecordStore();
    await apply(specFixture(CHAIN), new StubExecutors(), store);
    const second = new StubExecutors().on("a", () => Promise.reject(new Error("a changed and broke")));
    const r = await apply(
      specFixture([
        { name: "a", version: 2 },
        { name: "b", needs: ["a"] },
        { name: "c", needs: ["b"] },
      ]),
      second,
      store,
    );
    assert.equal(resultOf(r, "b").reason, 'not started: step "a" failed');
    const rec = storedRecord(store);
    assert.equal(rec.steps["a"]?.status, "failed");
    assert.equal(rec.steps["b"]?.status, "ok");
    assert.equal(rec.runStatus, "failed");
  });
});

describe("state: the journal as the engine writes it", { timeout: 10_000 }, () => {
  test("the record says running at the start and is written after every step (interrupted runs resume from the last completed step)", async () => {
    const store = new MemoryRecordStore();
    const snapshots: StateRecord[] = [];
    store.beforeWrite = (json) => {
      const p = parseRecord(json);
      if (p.ok) snapshots.push(p.record);
    };
    const stubs = new StubExecutors();
    // Each step awaits a macrotask so every write lands before the next step finishes.
    for (const n of ["a", "b", "c"]) stubs.on(n, () => tick());
    await apply(specFixture(CHAIN), stubs, store);
    assert.equal(snapshots[0]?.runStatus, "running");
    assert.deepEqual(Object.keys(snapshots[0]?.steps ?? {}), []);
    const progress = snapshots.map((s) => Object.keys(s.steps).join(","));
    assert.ok(progress.includes("a") && progress.includes("a,b") && progress.includes("a,b,c"), progress.join(" | "));
    assert.equal(snapshots.at(-1)?.runStatus, "succeeded");
    assert.ok(snapshots.at(-1)?.finishedAt);
  });

  test("writes are serialized and coalesced: one in flight, the latest state goes next", async () => {
    const store = new MemoryRecordStore();
    const gate = deferred();
    let inFlight = 0;
    let maxInFlight = 0;
    store.beforeWrite = async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (store.calls.write === 2) await gate.promise; // hold the first write after the claim
      inFlight--;
    };
    const names = Array.from({ length: 20 }, (_, i) => ({ name: `s${i}` }));
    const p = apply(specFixture(names), new StubExecutors(), store);
    await tick();
    gate.resolve();
    await p;
    assert.equal(maxInFlight, 1);
    assert.ok(
      store.calls.write <= 4,
      `${store.calls.write} writes (the claim included) for 20 steps finishing while one write was in flight`,
    );
    assert.equal(Object.keys(storedRecord(store).steps).length, 20);
  });

  test("a resumed re-run of an unchanged 200-step spec reads the record once and writes it at most twice", async () => {
    const steps = Array.from({ length: 200 }, (_, i) => ({
      name: `step-${i}`,
      ...(i > 0 ? { needs: [`step-${i - 1}`] } : {}),
    }));
    const store = new MemoryRecordStore();
    await apply(specFixture(steps), new StubExecutors(), store);
    store.calls.read = 0;
    store.calls.write = 0;
    const second = new StubExecutors();
    const r = await apply(specFixture(steps), second, store);
    assert.equal(r.status, "succeeded");
    assert.equal(second.calls.length, 0, "no executor (and so no cluster) calls");
    assert.equal(store.calls.read, 1);
    assert.ok(store.calls.write <= 2, `${store.calls.write} writes`);
    assert.equal(storedRecord(store).runStatus, "succeeded");
  });

  test("no lease, no run: a record that cannot be claimed (RBAC, a missing namespace) fails the run before the first step, naming why", async () => {
    const store = new MemoryRecordStore();
    store.failWrites = new PermanentStoreError(
      'cannot create Secret "khook-state-fixture" in namespace "nope" (the state record): namespace "nope" does not exist',
    );
    const stubs = new StubExecutors();
    const r = await apply(specFixture(CHAIN), stubs, store);
    assert.equal(stubs.calls.length, 0, "no step ran without the lease");
    assert.deepEqual(
      r.steps.map((s) => s.status),
      ["skipped", "skipped", "skipped"],
    );
    assert.match(r.steps[0]!.reason, /not started: the state record could not be claimed/);
    assert.equal(r.status, "failed");
    assert.match(r.journalError ?? "", /namespace "nope" does not exist.*Nothing was changed/);
    assert.equal(store.calls.write, 1, "one claim, no further attempts");
  });

  test("a run that succeeds but cannot write its record after the claim fails (exit 1) and says why", async () => {
    const store = new MemoryRecordStore();
    const stubs = new StubExecutors().on("a", () => {
      store.failWrites = new PermanentStoreError(
        'forbidden to update Secret "khook-state-fixture" in namespace "default" (the state record)',
      );
    });
    const r = await apply(specFixture(CHAIN), stubs, store);
    assert.deepEqual(
      r.steps.map((s) => s.status),
      ["ok", "ok", "ok"],
    );
    assert.equal(r.status, "failed");
    assert.match(r.journalError ?? "", /forbidden to update Secret "khook-state-fixture" in namespace "default"/);
    assert.equal(
      store.calls.write,
      2,
      "the claim, then one failed write: a permanent error stops further write attempts",
    );
  });

  test("a transient write failure is healed by a later successful write", async () => {
    const store = new MemoryRecordStore();
    const stubs = new StubExecutors()
      .on("a", () => {
        store.failWrites = new Error("connection reset");
      })
      .on("b", () => {
        store.failWrites = undefined;
      });
    const r = await apply(specFixture(CHAIN.slice(0, 2)), stubs, store);
    assert.equal(r.status, "succeeded");
    assert.equal(r.journalError, undefined);
    assert.equal(storedRecord(store).runStatus, "succeeded");
  });

  test("a run that lost its lease stops: it starts nothing more, cancels what runs, and fails naming who holds the lease now", async () => {
    // With a store that can watch the record (the Secret store does), the loss is known at once.
    const store = new MemoryRecordStore();
    let theirs = "";
    const stubs = new StubExecutors().on("a", async ({ ctx }) => {
      // Another run takes the record over while a runs (e.g. it judged this run dead).
      const rec = storedRecord(store);
      theirs = JSON.stringify({
        ...rec,
        lease: { ...rec.lease, id: "run-other", holder: "bob", host: "ci-runner-3", pid: 4242 },
      });
      store.put(theirs);
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason as Error)));
    });
    const r = await apply(specFixture(CHAIN), stubs, store);
    assert.equal(r.status, "failed", "exit 1, not the 130 of a cancellation");
    assert.equal(r.cancelled, false);
    assert.deepEqual([resultOf(r, "a").status, resultOf(r, "a").reason], ["failed", "cancelled while running"]);
    assert.equal(stubs.started("b") + stubs.started("c"), 0, "no step starts after the lease is lost");
    for (const name of ["b", "c"])
      assert.deepEqual(
        [resultOf(r, name).status, resultOf(r, name).reason],
        ["skipped", "not started: this run lost its lease on the state record"],
      );
    assert.match(
      r.journalError ?? "",
      /lost its lease on the state record \(memory record\): it is now held by bob on ci-runner-3 \(pid 4242/,
    );
    assert.equal(store.json, theirs, "the other run's record is untouched");
  });

  test("a run that lost its lease stops: a store without a watch finds out at its next write, and starts nothing after that", async () => {
    const store = new MemoryRecordStore();
    store.watchable = false;
    let theirs = "";
    const stubs = new StubExecutors()
      .on("a", () => {
        const rec = storedRecord(store);
        theirs = JSON.stringify({
          ...rec,
          lease: { ...rec.lease, id: "run-other", holder: "bob", host: "ci-runner-3", pid: 4242 },
        });
        store.put(theirs);
      })
      .on("b", () => new Promise(() => undefined));
    const r = await apply(specFixture(CHAIN), stubs, store);
    assert.equal(r.status, "failed");
    assert.deepEqual(
      [resultOf(r, "b").status, resultOf(r, "b").reason],
      ["failed", "cancelled while running"],
      "b started before the write after a found out; it is cancelled",
    );
    assert.equal(stubs.started("c"), 0);
    assert.deepEqual(
      [resultOf(r, "c").status, resultOf(r, "c").reason],
      ["skipped", "not started: this run lost its lease on the state record"],
    );
    assert.match(r.journalError ?? "", /now held by bob on ci-runner-3/);
    assert.equal(store.json, theirs);
  });

  test("a record that cannot be read (or is not khook's) stops the run before anything runs", async () => {
    const store = new MemoryRecordStore();
    store.failReads = new PermanentStoreError(
      'refusing to use Secret "x" in namespace "default" as the state record: it exists but is not managed by khook',
    );
    const stubs = new StubExecutors();
    const r = await apply(specFixture(CHAIN), stubs, store);
    assert.equal(r.status, "failed");
    assert.equal(stubs.calls.length, 0);
    assert.equal(store.calls.write, 0, "nothing written");
    assert.match(r.journalError ?? "", /refusing to use Secret "x"/);
    for (const s of r.steps) assert.equal(s.status, "skipped");
  });

  test("an unreadable record is replaced with a warning, and every step re-runs", async () => {
    const store = new MemoryRecordStore("{not json");
    const stubs = new StubExecutors();
    const events: string[] = [];
    const r = await apply(specFixture(CHAIN), stubs, store, {
      onEvent: (e) => e.type === "journal-warning" && events.push(e.message),
    });
    assert.equal(r.status, "succeeded");
    assert.equal(stubs.calls.length, 3);
    assert.equal(events.length, 1);
    assert.match(events[0] ?? "", /unreadable/);
    assert.equal(storedRecord(store).runStatus, "succeeded");
  });

  test("cancel writes the journal: completed steps are recorded, the run is marked cancelled", async () => {
    const store = new MemoryRecordStore();
    const ac = new AbortController();
    const stubs = new StubExecutors().on("b", () => {
      ac.abort();
      return new Promise(() => undefined);
    });
    const r = await apply(specFixture(CHAIN), stubs, store, { signal: ac.signal });
    assert.equal(r.status, "cancelled");
    const rec = storedRecord(store);
    assert.equal(rec.runStatus, "cancelled");
    assert.equal(rec.steps["a"]?.status, "ok");
    assert.equal(rec.steps["b"]?.status, "failed");
    assert.deepEqual(
      [rec.steps["c"]?.status, rec.steps["c"]?.reason],
      ["skipped", "cancelled"],
      "a never-started step is recorded with its reason",
    );
    // The next run resumes from the last completed step.
    const next = new StubExecutors();
    await apply(specFixture(CHAIN), next, store);
    assert.deepEqual(
      next.calls.map((c) => c.step.name),
      ["b", "c"],
    );
  });

  test("error text in the record is redacted and truncated", async () => {
    const secret = "s3cr3t-token-value";
    const store = new MemoryRecordStore();
    const stubs = new StubExecutors().on("a", () => Promise.reject(new Error(`${secret} ${"x".repeat(10_000)}`)));
    await apply(specFixture([{ name: "a" }], { secrets: [secret] }), stubs, store);
    const err = storedRecord(store).steps["a"]?.error ?? "";
    assert.ok(!store.json?.includes(secret));
    assert.ok(err.startsWith("*** xxx"));
    assert.ok(Buffer.byteLength(err) <= 2048);
  });
});
