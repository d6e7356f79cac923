/**
 * When khook recovers a pending release by itself (provider/helm/recover.ts), as a table: only
 * when the state record proves that khook's own dead run started that very operation, and its
 * helm is gone. Everything else keeps the refusal with the recovery command.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decidePendingRecovery, type HelmMark, type PendingFacts } from "../../provider/helm/recover.js";
import type { HelmRevision } from "../../provider/helm/release.js";
import { Redactor } from "../../provider/redact.js";
import { Journal } from "../../provider/state/journal.js";
import { helmInFlightOf, parseRecord, withHelmInFlight, type StateRecord } from "../../provider/state/record.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";
import type { LeaseSelf } from "../../provider/state/lease.js";

const rev = (revision: number, status: string): HelmRevision => ({
  revision,
  status,
  chart: "demo-1.0.0",
  updated: "",
  app_version: "",
  description: "",
});
const NOW = Date.parse("2026-11-25T20:00:00Z");

const upgradeMark: HelmMark = {
  run: { id: "dead-run-0001", host: "runner", pid: 100 },
  pid: 101,
  host: "runner",
  until: "2026-11-25T20:05:00Z",
  release: "web",
  namespace: "apps",
  operation: "upgrade",
  revision: 3,
};
/** A pending upgrade the dead run started, its process gone, its helm gone: recovered. */
const upgrade: PendingFacts = {
  release: "web",
  namespace: "apps",
  history: [rev(1, "superseded"), rev(2, "deployed"), rev(3, "pending-upgrade")],
  mark: upgradeMark,
  thisRun: "this-run-0002",
  thisHost: "runner",
  markRunEnded: "process-gone",
  helmHere: { running: false, identified: true },
  now: NOW,
};
const install: PendingFacts = {
  ...upgrade,
  history: [rev(1, "pending-install")],
  mark: { ...upgradeMark, operation: "install", revision: 1 },
};

interface Case {
  rule: string;
  facts: PendingFacts;
  expect: "refuse" | "wait" | "recover";
  match?: RegExp;
}

const cases: Case[] = [
  {
    rule: "a pending upgrade khook's dead run started, its helm gone: rolled back to the last deployed revision",
    facts: upgrade,
    expect: "recover",
    match:
      /^recovering release web \(namespace apps\): pending-upgrade at revision 3 was left by khook run dead-run \(pid 100 on runner, no longer running\), and its helm \(pid 101\) is gone: rolling back to revision 2 \(helm rollback web 2 --namespace apps\)$/,
  },
  {
    rule: "a pending first install khook's dead run started: uninstalled",
    facts: install,
    expect: "recover",
    match: /uninstalling the first install \(helm uninstall web --namespace apps\)$/,
  },
  {
    rule: "the dead run's lease expired (another host): recovered once its helm's time is up",
    facts: {
      ...upgrade,
      markRunEnded: "lease-expired",
      mark: { ...upgradeMark, run: { ...upgradeMark.run, host: "other" }, host: "other" },
      helmHere: undefined,
      now: Date.parse("2026-11-25T20:06:00Z"),
    },
    expect: "recover",
    match: /its lease expired/,
  },
  {
    rule: "no mark in the record (someone else's helm, or no state:): refused",
    facts: { ...upgrade, mark: undefined },
    expect: "refuse",
  },
  {
    rule: "the run that left the mark is not known to be gone: refused",
    facts: { ...upgrade, markRunEnded: undefined },
    expect: "refuse",
    match: /not known to be gone/,
  },
  {
    rule: "this run's own mark (a retry after its helm died): refused",
    facts: { ...upgrade, thisRun: "dead-run-0001" },
    expect: "refuse",
  },
  {
    rule: "the mark names another release: refused",
    facts: { ...upgrade, mark: { ...upgradeMark, release: "api" } },
    expect: "refuse",
  },
  {
    rule: "the pending revision is not the one the dead run started (another client's since): refused",
    facts: { ...upgrade, history: [rev(2, "deployed"), rev(3, "superseded"), rev(4, "pending-upgrade")] },
    expect: "refuse",
    match: /revision 4 .* is not the pending-upgrade of revision 3/,
  },
  {
    rule: "the pending operation is not the one the dead run started (a rollback): refused",
    facts: { ...upgrade, history: [rev(2, "deployed"), rev(3, "pending-rollback")] },
    expect: "refuse",
  },
  {
    rule: "a pending upgrade with no deployed revision to roll back to: refused",
    facts: { ...upgrade, history: [rev(2, "failed"), rev(3, "pending-upgrade")] },
    expect: "refuse",
    match: /no earlier revision was deployed/,
  },
  {
    rule: "the dead run's helm still runs on this host (the same process): wait for it, however long it runs",
    facts: { ...upgrade, helmHere: { running: true, identified: true }, now: Date.parse("2026-11-25T21:00:00Z") },
    expect: "wait",
    match: /its helm \(pid 101\) may still be working: waiting for it to finish$/,
  },
  {
    rule: "a live pid that cannot be told from a later process (no /proc): wait until helm's time is up",
    facts: { ...upgrade, helmHere: { running: true, identified: false } },
    expect: "wait",
    match: /waiting for it to finish, at the latest until 2026-11-25T20:05:00\.000Z$/,
  },
  {
    rule: "such a pid alive past helm's time is not that helm (a reused pid): recovered",
    facts: { ...upgrade, helmHere: { running: true, identified: false }, now: Date.parse("2026-11-25T20:05:01Z") },
    expect: "recover",
  },
  {
    rule: "the dead run's helm on another host, within its time: wait until then",
    facts: { ...upgrade, mark: { ...upgradeMark, host: "other" }, helmHere: undefined },
    expect: "wait",
    match: /which this host cannot see/,
  },
];

describe("decidePendingRecovery: khook recovers a release only its own dead run left pending", () => {
  for (const c of cases) {
    test(c.rule, () => {
      const d = decidePendingRecovery(c.facts);
      assert.equal(d.action, c.expect, JSON.stringify(d));
      if (c.match !== undefined) assert.match(d.action === "refuse" ? d.why : d.line, c.match);
    });
  }

  test("waiting on this host names the pid to watch; on another host there is none, only the time", () => {
    const here = decidePendingRecovery({ ...upgrade, helmHere: { running: true, identified: false } });
    assert.ok(here.action === "wait");
    assert.deepEqual([here.pid, here.until], [101, Date.parse(upgradeMark.until)]);
    const same = decidePendingRecovery({ ...upgrade, helmHere: { running: true, identified: true } });
    assert.ok(same.action === "wait");
    assert.deepEqual([same.pid, same.until], [101, Number.POSITIVE_INFINITY]);
    const there = decidePendingRecovery({ ...upgrade, mark: { ...upgradeMark, host: "other" }, helmHere: undefined });
    assert.ok(there.action === "wait");
    assert.equal(there.pid, undefined);
  });
});

describe("the record keeps a step's helm in flight until the step's entry is written", () => {
  const base: StateRecord = {
    format: 1,
    spec: "s",
    specHash: "h",
    khookVersion: "v",
    command: "apply",
    runStatus: "running",
    startedAt: "",
    updatedAt: "",
    steps: {},
  };
  const mark = { ...upgradeMark, startedAt: "2026-11-25T19:59:00Z" };

  test("a mark survives the record's JSON, and a malformed one is dropped", () => {
    const text = JSON.stringify({
      ...withHelmInFlight(base, "web", mark),
      helmInFlight: { web: mark, bad: { ...mark, pid: "x" } },
    });
    const parsed = parseRecord(text);
    assert.ok(parsed.ok);
    assert.deepEqual(helmInFlightOf(parsed.record, "web"), mark);
    assert.equal(helmInFlightOf(parsed.record, "bad"), undefined);
  });

  test("clearing the last mark removes the field; a step named __proto__ is a plain key", () => {
    const cleared = withHelmInFlight(withHelmInFlight(base, "web", mark), "web", undefined);
    assert.equal("helmInFlight" in cleared, false);
    const odd = withHelmInFlight(base, "__proto__", mark);
    assert.deepEqual(helmInFlightOf(odd, "__proto__"), mark);
    assert.equal(helmInFlightOf(base, "__proto__"), undefined);
    assert.equal(helmInFlightOf(odd, "toString"), undefined);
  });
});

describe("the journal: a step's helm mark is written when helm starts and cleared when the step is recorded", () => {
  const T0 = new Date("2026-01-01T00:00:00.000Z");
  // Two runs of one machine: same host, pid namespace and boot, so a dead pid is known dead (lease.ts).
  const space = { pidNamespace: "pid:[4026531836]", bootId: "boot-1" };
  const me: LeaseSelf = { id: "run-me", holder: "alice", host: "laptop", pid: 100, ...space };
  const dead: LeaseSelf = { id: "run-dead", holder: "alice", host: "laptop", pid: 4242, ...space };
  const journal = (
    store: MemoryRecordStore,
    self: LeaseSelf,
    isAlive: (pid: number) => boolean = () => true,
  ): Journal =>
    new Journal(store, {
      spec: "demo",
      specHash: "sha256:s",
      stepNames: ["web", "other"],
      redactor: new Redactor(),
      khookVersion: "9.9.9",
      self,
      now: () => T0,
      isAlive,
    });
  const stored = (store: MemoryRecordStore): StateRecord => {
    const r = parseRecord(store.json ?? "");
    assert.ok(r.ok);
    return r.record;
  };
  const start = {
    pid: 555,
    host: "laptop",
    startedAt: T0.toISOString(),
    until: "2026-01-01T00:10:00.000Z",
    release: "web",
    namespace: "apps",
    operation: "upgrade" as const,
    revision: 3,
  };
  /** A journal of run `self` that claimed the record and started helm for step web. */
  async function startedHelm(store: MemoryRecordStore, self: LeaseSelf, mark = start): Promise<Journal> {
    const j = journal(store, self);
    await j.open();
    await j.beginRun();
    await j.stepRecord("web").helmStarted(mark);
    return j;
  }

  test("the mark names this run and lands in the record at once; recording the step clears it", async () => {
    const store = new MemoryRecordStore();
    const j = await startedHelm(store, me);
    assert.deepEqual(helmInFlightOf(stored(store), "web"), {
      run: { id: "run-me", host: "laptop", pid: 100, ...space },
      ...start,
    });
    j.recordStep({ name: "web", inputHash: "h" }, { status: "ok", reason: "done", attempts: 1, durationMs: 1 });
    assert.equal(await j.flush(), undefined);
    assert.equal(helmInFlightOf(stored(store), "web"), undefined);
  });

  test("a run that took over from a dead run sees that run's mark and that its process is gone; a step it does not start keeps the mark", async () => {
    const store = new MemoryRecordStore();
    await startedHelm(store, dead);
    // kill -9: the first run never writes again.
    const second = journal(store, me, (pid) => pid !== 4242);
    await second.open();
    await second.beginRun();
    const seen = second.stepRecord("web").previousHelm();
    assert.equal(seen?.mark.run.id, "run-dead");
    assert.equal(seen?.runEnded, "process-gone");
    assert.equal(second.stepRecord("other").previousHelm(), undefined);
    second.recordNotStarted({ name: "web", inputHash: "h" }, "blocked");
    await second.finish("failed");
    assert.equal(
      helmInFlightOf(stored(store), "web")?.run.id,
      "run-dead",
      "kept for the next run that gets to the step",
    );
  });

  test("a mark whose run is alive elsewhere and still holds nothing this run took over is not proven gone", async () => {
    const store = new MemoryRecordStore();
    const first = await startedHelm(store, { ...dead, host: "ci-runner" }, { ...start, host: "ci-runner" });
    await first.finish("failed"); // released the lease without clearing the mark (as if its last entry write was lost)
    const second = journal(store, me);
    await second.open();
    await second.beginRun();
    assert.equal(second.stepRecord("web").previousHelm()?.runEnded, undefined);
  });
});
