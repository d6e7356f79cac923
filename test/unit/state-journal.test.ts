/** The journal's write discipline and its lease, against the in-memory store. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { KhookError } from "../../provider/errors.js";
import { Redactor } from "../../provider/redact.js";
import { clearLease, currentRun, Journal, type JournalOptions } from "../../provider/state/journal.js";
import { currentPidSpace, pidAlive, startTimeField } from "../../provider/state/process-identity.js";
import {
  assessLease,
  describeLeaseHolder,
  leaseHolderState,
  newLease,
  type Lease,
  type LeaseSelf,
} from "../../provider/state/lease.js";
import { parseRecord, serializeRecord, type StateRecord } from "../../provider/state/record.js";
import { PermanentStoreError } from "../../provider/state/store.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";
import { deferred, tick } from "./support/engine-fixtures.js";

const T0 = new Date("2026-01-01T00:00:00.000Z");
const me: LeaseSelf = { id: "run-me", holder: "alice", host: "laptop", pid: 100 };
const other: LeaseSelf = { id: "run-other", holder: "bob", host: "ci-runner-3", pid: 4242 };
/** Where `me` runs: a pid namespace of one boot. */
const mySpace = { host: "laptop", pidNamespace: "pid:[4026531836]", bootId: "3f1c0c6e-boot" } as const;

function journal(store: MemoryRecordStore, opts: Partial<JournalOptions> = {}): Journal {
  return new Journal(store, {
    spec: "demo",
    specHash: "sha256:s",
    stepNames: ["a", "b", "c"],
    redactor: new Redactor(),
    khookVersion: "9.9.9",
    self: me,
    now: () => T0,
    isAlive: () => true,
    unlockCommand: "khook unlock -f demo.yaml",
    ...opts,
  });
}

const ok = { status: "ok" as const, reason: "done", attempts: 1, durationMs: 3 };

function stored(store: MemoryRecordStore): StateRecord {
  const r = parseRecord(store.json ?? "");
  assert.ok(r.ok, store.json);
  return r.record;
}

/** A record as another run left it: step `a` ok, and (optionally) its lease. */
function recordHeldBy(lease: Lease | undefined): string {
  const record: StateRecord = {
    format: 1,
    spec: "demo",
    specHash: "sha256:s",
    khookVersion: "9.9.9",
    command: "apply",
    runStatus: "running",
    startedAt: T0.toISOString(),
    updatedAt: T0.toISOString(),
    steps: {
      a: { inputHash: "ha", status: "ok", reason: "done", attempts: 1, durationMs: 1, finishedAt: T0.toISOString() },
    },
    ...(lease ? { lease } : {}),
  };
  return serializeRecord(record);
}

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
    store.beforeWrite = () => (store.calls.write === 2 ? gate.promise : undefined);
    const j = journal(store);
    await j.open();
    await j.beginRun();
    j.recordStep({ name: "a", inputHash: "ha" }, ok);
    j.recordStep({ name: "b", inputHash: "hb" }, ok);
    j.recordStep({ name: "c", inputHash: "hc" }, ok);
    await tick();
    assert.equal(store.calls.write, 2, "the claim, then one write in flight");
    gate.resolve();
    assert.equal(await j.finish("succeeded"), undefined);
    assert.equal(store.calls.write, 3);
    const r = stored(store);
    assert.deepEqual(Object.keys(r.steps), ["a", "b", "c"]);
    assert.equal(r.runStatus, "succeeded");
    assert.equal(r.khookVersion, "9.9.9");
  });

  test("a permanent write error is reported by finish and stops further attempts", async () => {
    const store = new MemoryRecordStore();
    const j = journal(store);
    await j.open();
    await j.beginRun();
    store.failWrites = new PermanentStoreError('forbidden to update Secret "x" in namespace "y"');
    j.recordStep({ name: "a", inputHash: "ha" }, ok);
    assert.match((await j.finish("succeeded")) ?? "", /forbidden to update Secret "x" in namespace "y"/);
    assert.equal(store.calls.write, 2);
  });

  test("a transient error is wrapped with the store's description", async () => {
    const store = new MemoryRecordStore(undefined, 'Secret "x" in namespace "y"');
    const j = journal(store);
    await j.open();
    await j.beginRun();
    store.failWrites = new Error("ECONNRESET");
    assert.equal(await j.finish("failed"), 'cannot write the state record (Secret "x" in namespace "y"): ECONNRESET');
  });

  test("no lease, no run: a claim that cannot be written throws before anything runs, naming the store's problem", async () => {
    for (const failure of [
      new PermanentStoreError(
        'cannot create Secret "x" in namespace "y" (the state record): namespace "y" does not exist',
      ),
      new Error("ECONNRESET"),
    ]) {
      const store = new MemoryRecordStore(undefined, 'Secret "x" in namespace "y"');
      store.failWrites = failure;
      const j = journal(store);
      await j.open();
      await assert.rejects(j.beginRun(), (e: unknown) => {
        assert.ok(e instanceof KhookError);
        assert.equal(e.exitCode, 1);
        assert.match(e.message, /Secret "x" in namespace "y".*Nothing was changed/);
        return true;
      });
      assert.equal(j.leaseLost.aborted, false);
    }
  });

  test("deleteRecord waits for writes in flight, so nothing recreates the record afterwards", async () => {
    const store = new MemoryRecordStore("{}");
    const gate = deferred();
    store.beforeWrite = () => (store.calls.write === 2 ? gate.promise : undefined);
    const j = journal(store);
    await j.open();
    await j.beginRun();
    j.recordStep({ name: "a", inputHash: "ha" }, ok);
    const del = j.deleteRecord();
    j.recordStep({ name: "b", inputHash: "hb" }, ok); // ignored: the journal is closed
    gate.resolve();
    await del;
    await tick();
    assert.equal(store.exists, false);
    assert.equal(store.calls.write, 2);
  });

  test("readRecord reads afresh and rejects unreadable records", async () => {
    const store = new MemoryRecordStore("nope");
    await assert.rejects(journal(store).readRecord(), /unreadable/);
    assert.equal(await journal(new MemoryRecordStore()).readRecord(), undefined);
  });
});

describe("state: the lease on the record", () => {
  test("a run claims the lease before anything runs (holder, host, pid, start time, renewal deadline) and its final write releases it", async () => {
    const store = new MemoryRecordStore();
    const j = journal(store, { leaseDurationMs: 90_000 });
    await j.open();
    await j.beginRun();
    assert.equal(store.calls.write, 1, "the claim is written before beginRun returns");
    const lease = stored(store).lease;
    assert.deepEqual(lease, {
      id: "run-me",
      holder: "alice",
      host: "laptop",
      pid: 100,
      command: "apply",
      startedAt: T0.toISOString(),
      renewDeadline: "2026-01-01T00:01:30.000Z",
    });
    assert.equal(await j.finish("succeeded"), undefined);
    assert.equal(stored(store).lease, undefined);
  });

  test("a second run fails fast naming the holder and how to unlock, and writes nothing", async () => {
    const store = new MemoryRecordStore(recordHeldBy(newLease(other, "apply", T0)));
    const before = store.json;
    const j = journal(store);
    await j.open();
    await assert.rejects(j.beginRun(), (e: unknown) => {
      assert.ok(e instanceof KhookError);
      assert.equal(e.exitCode, 1);
      assert.match(
        e.message,
        /locked by another khook run: bob on ci-runner-3 \(pid 4242, khook apply started 2026-01-01T00:00:00.000Z\)/,
      );
      assert.match(e.message, /khook unlock -f demo\.yaml/);
      return true;
    });
    assert.equal(store.calls.write, 0);
    assert.equal(store.json, before);
  });

  test("a lease on another host is never judged by its pid: it holds until its deadline", () => {
    const lease = newLease(other, "apply", T0);
    assert.equal(assessLease(lease, { ...me, pid: 9 }, T0, () => false).kind, "held");
    assert.equal(assessLease(lease, me, new Date(Date.parse(lease.renewDeadline) + 1), () => true).kind, "expired");
  });

  test("an expired lease is taken over with a warning", async () => {
    const store = new MemoryRecordStore(recordHeldBy(newLease(other, "apply", new Date(T0.getTime() - 10 * 60_000))));
    const j = journal(store);
    await j.open();
    await j.beginRun();
    assert.equal(stored(store).lease?.id, "run-me");
    const [warning, ...rest] = j.takeWarnings();
    assert.deepEqual(rest, []);
    assert.match(
      warning ?? "",
      /took over the lease .* held by bob on ci-runner-3 \(pid 4242.*it was not renewed after/,
    );
    assert.ok(j.isResumable({ name: "a", inputHash: "ha" }), "the steps the other run recorded still resume");
  });

  test("a lease held by a process of this pid namespace and boot that is no longer alive is taken over at once (kill -9)", async () => {
    const store = new MemoryRecordStore(recordHeldBy(newLease({ ...other, ...mySpace }, "apply", T0)));
    const j = journal(store, { self: { ...me, ...mySpace }, isAlive: (pid) => pid !== 4242 });
    await j.open();
    await j.beginRun();
    assert.equal(stored(store).lease?.id, "run-me");
    assert.match(
      j.takeWarnings().join("\n"),
      /its process is no longer running \(same host, pid namespace and boot as this run\)/,
    );
  });

  test("a live run's lease is never taken: a dead pid concludes nothing unless the holder ran in this pid namespace of this boot", () => {
    const self: LeaseSelf = { ...me, ...mySpace };
    const dead = (): boolean => false;
    const holder = (space: Partial<LeaseSelf>): Lease => newLease({ ...other, ...space }, "apply", T0);
    // The same host name proves nothing: a host-network container, a hostNetwork pod.
    assert.equal(
      assessLease(holder({ host: "laptop" }), self, T0, dead).kind,
      "held",
      "a lease without a pid namespace (an older khook, no /proc)",
    );
    assert.equal(
      assessLease(holder({ ...mySpace, pidNamespace: "pid:[4026532999]" }), self, T0, dead).kind,
      "held",
      "another pid namespace",
    );
    assert.equal(
      assessLease(holder({ ...mySpace, bootId: "another-boot" }), self, T0, dead).kind,
      "held",
      "another boot of the same kernel",
    );
    assert.equal(
      assessLease(holder(mySpace), { ...me }, T0, dead).kind,
      "held",
      "this run cannot tell its own pid namespace",
    );
    assert.equal(assessLease(holder(mySpace), self, T0, dead).kind, "abandoned");
    // Every uncertain case still expires.
    const expiry = new Date(Date.parse(holder({ host: "laptop" }).renewDeadline) + 1);
    assert.equal(assessLease(holder({ host: "laptop" }), self, expiry, () => true).kind, "expired");
  });

  test("a live run's lease is never taken: the holder's start time tells a reused pid from the holder", () => {
    const asked: [number, string | undefined][] = [];
    const lease = newLease({ ...other, ...mySpace, processStart: "777" }, "apply", T0);
    assessLease(lease, { ...me, ...mySpace }, T0, (pid, start) => (asked.push([pid, start]), true));
    assert.deepEqual(asked, [[4242, "777"]]);
    // The real probe, on this very process: alive under its own start time, gone under another.
    const space = currentPidSpace();
    if (space === undefined) return; // no /proc of our own: the fields are absent and nothing is judged by pid
    assert.equal(pidAlive(process.pid, space.processStart), true);
    assert.equal(
      pidAlive(process.pid, String(Number(space.processStart) + 1)),
      false,
      "a pid running another process is a dead holder",
    );
    assert.equal(currentRun().pidNamespace, space.pidNamespace);
    assert.match(space.pidNamespace, /^pid:\[\d+\]$/);
  });

  test("khook status says when a recorded holder is gone: a dead pid in this pid space, an expired lease; elsewhere it cannot see", () => {
    const self: LeaseSelf = { ...me, ...mySpace };
    const here = newLease({ ...other, ...mySpace }, "apply", T0);
    const elsewhere = newLease(other, "apply", T0);
    const later = new Date(Date.parse(here.renewDeadline) + 1);
    assert.deepEqual(
      leaseHolderState(here, self, T0, () => false),
      { state: "holder-gone", seen: true },
    );
    assert.deepEqual(
      leaseHolderState(here, self, T0, () => true),
      { state: "live", seen: true },
    );
    assert.deepEqual(
      leaseHolderState(elsewhere, self, T0, () => false),
      { state: "live", seen: false },
    );
    assert.deepEqual(
      leaseHolderState(elsewhere, self, later, () => true),
      { state: "expired", seen: false },
    );
    assert.match(
      describeLeaseHolder(here, { state: "holder-gone", seen: true }),
      /^bob on laptop \(pid 4242, .*\), but that process is no longer running .*takes it over at once/,
    );
    assert.match(
      describeLeaseHolder(elsewhere, { state: "expired", seen: false }),
      /but the lease expired at 2026-01-01T00:01:30\.000Z .*the next khook run takes it over/,
    );
    assert.match(
      describeLeaseHolder(here, { state: "live", seen: true }),
      /lease renewed until 2026-01-01T00:01:30\.000Z \(that process is running\)/,
    );
    assert.match(
      describeLeaseHolder(elsewhere, { state: "live", seen: false }),
      /cannot see that process from here, so the lease holds until it expires/,
    );
  });

  test("a live run's lease is never taken: /proc/<pid>/stat's start time is read past a command holding spaces and parentheses", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    assert.equal(startTimeField(`4242 (a ) b) ${fields.join(" ")}`), "22");
  });

  test("two runs racing for a free record: exactly one claims it, the other fails naming it", async () => {
    const store = new MemoryRecordStore();
    const a = journal(store);
    const b = journal(store, { self: other });
    await Promise.all([a.open(), b.open()]);
    const results = await Promise.allSettled([a.beginRun(), b.beginRun()]);
    assert.deepEqual(results.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
    const loser = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    const winner = stored(store).lease;
    assert.ok(winner);
    assert.match(String(loser.reason), new RegExp(`locked by another khook run: ${winner.holder} on ${winner.host}`));
  });

  test("a conflict whose re-read shows the lease still ours writes again (never blind, never lost)", async () => {
    const store = new MemoryRecordStore();
    const j = journal(store);
    await j.open();
    await j.beginRun();
    // Someone touches the record without taking the lease (e.g. a label edit bumps the version).
    store.put(store.json!);
    j.recordStep({ name: "a", inputHash: "ha" }, ok);
    assert.equal(await j.finish("succeeded"), undefined);
    assert.deepEqual(Object.keys(stored(store).steps), ["a"]);
    assert.ok(store.calls.read >= 2, "the conflict was re-read");
  });

  test("a run whose lease was taken over stops writing and ends with a journal error naming the new holder", async () => {
    const store = new MemoryRecordStore();
    const j = journal(store);
    await j.open();
    await j.beginRun();
    const theirs = recordHeldBy(newLease(other, "apply", T0));
    store.put(theirs);
    j.recordStep({ name: "b", inputHash: "hb" }, ok);
    const err = await j.finish("succeeded");
    assert.match(err ?? "", /lost its lease on the state record .*now held by bob on ci-runner-3/);
    assert.ok(j.leaseLost.aborted, "the engine is told to start nothing more");
    assert.equal(store.json, theirs, "the other run's record is untouched");
  });

  test("khook unlock clears the lease, keeps the steps, and says whose it was; the holder then stops writing", async () => {
    const store = new MemoryRecordStore();
    const j = journal(store);
    await j.open();
    await j.beginRun();
    j.recordStep({ name: "a", inputHash: "ha" }, ok);
    await j.flush();
    const cleared = await clearLease(store);
    assert.equal(cleared?.holder, "alice");
    assert.equal(stored(store).lease, undefined);
    assert.deepEqual(Object.keys(stored(store).steps), ["a"]);
    assert.equal(await clearLease(store), undefined, "nothing to clear twice");
    j.recordStep({ name: "b", inputHash: "hb" }, ok);
    assert.match((await j.finish("succeeded")) ?? "", /lost its lease .*it was cleared \(khook unlock\)/);
    assert.deepEqual(Object.keys(stored(store).steps), ["a"]);
  });

  test("a record deleted by someone else mid-run is recreated with only the steps this run executed, with a warning", async () => {
    const store = new MemoryRecordStore(recordHeldBy(undefined));
    const j = journal(store);
    await j.open();
    await j.beginRun();
    assert.ok(j.isResumable({ name: "a", inputHash: "ha" }));
    store.remove();
    j.recordStep({ name: "b", inputHash: "hb" }, ok);
    assert.equal(await j.finish("succeeded"), undefined);
    assert.deepEqual(Object.keys(stored(store).steps), ["b"], "the deleted record's entry for a is not resurrected");
    assert.match(j.takeWarnings().join("\n"), /deleted by someone else during this run; khook recreated it/);
  });

  test("the lease is renewed on a timer while a long step runs", async () => {
    const store = new MemoryRecordStore();
    let t = T0.getTime();
    const renewed = deferred();
    store.beforeWrite = () => (store.calls.write === 2 ? renewed.resolve() : undefined);
    const j = journal(store, { now: () => new Date((t += 1000)), renewIntervalMs: 5, leaseDurationMs: 60_000 });
    await j.open();
    await j.beginRun();
    const first = stored(store).lease!.renewDeadline;
    await renewed.promise;
    await j.flush();
    assert.ok(stored(store).lease!.renewDeadline > first, "the deadline moved forward");
    await j.finish("succeeded");
  });
});

describe("state: the lease under the Pulumi provider", () => {
  test("a Pulumi update on a held record fails naming the holder and the khook unlock --record command (no spec file to name)", async () => {
    const { runSpec } = await import("../../provider/engine/run.js");
    const { failureMessage } = await import("../../provider/pulumi/outputs.js");
    const { unlockCommand } = await import("../../provider/operations.js");
    const { specFixture, StubExecutors, noExtras } = await import("./support/engine-fixtures.js");
    const location = { namespace: "kube-system", name: "khook-state-demo" };
    const spec = specFixture([{ name: "a" }], { name: "demo", state: location });
    assert.equal(spec.file, undefined, "an inline Pulumi spec has no file");
    const store = new MemoryRecordStore(recordHeldBy(newLease(other, "apply", new Date(Date.now()))));
    const stubs = new StubExecutors();
    const journal = Journal.forSpec(spec, store, { unlockCommand: unlockCommand(spec, location) });
    const result = await runSpec(spec, { mode: "apply", executors: stubs.map, context: noExtras, journal });
    assert.equal(result.status, "failed");
    assert.equal(stubs.calls.length, 0, "nothing ran");
    const message = failureMessage("bootstrap", spec, result, "apply");
    assert.match(message, /locked by another khook run: bob on ci-runner-3 \(pid 4242/);
    assert.match(message, /khook unlock --record kube-system\/khook-state-demo/);
  });
});

describe("state: the record's owner data (a shell's, stored and carried, never read)", () => {
  const owner = { project: "infra", stack: "dev", token: "t-1" };
  const recordIn = (store: MemoryRecordStore): StateRecord => {
    const r = parseRecord(store.json ?? "");
    assert.ok(r.ok);
    return r.record;
  };

  test("a run with an owner stamps it with its first write; a destroy and a run without one (the CLI) keep it", async () => {
    const store = new MemoryRecordStore();
    const claimed = journal(store, { owner });
    await claimed.open();
    await claimed.beginRun();
    assert.deepEqual(recordIn(store).owner, owner, "the claim carries the owner");
    await claimed.finish("succeeded");

    const cli = journal(store);
    await cli.open();
    await cli.beginRun();
    await cli.finish("succeeded");
    assert.deepEqual(recordIn(store).owner, owner, "a run that claims nothing keeps the owner");

    const teardown = journal(store);
    await teardown.open();
    await teardown.beginDestroy(["a"]);
    assert.deepEqual(recordIn(store).owner, owner);
  });
});
