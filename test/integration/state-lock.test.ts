/**
 * The lease on the state record, end to end: the real khook CLI against the
 * real cluster, checked with kubectl. Two concurrent applies, an expired lease,
 * and a manual unlock.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { describe, test, type TestContext } from "node:test";
import { RESUME_REASON } from "../../provider/state/record.js";
import { testCluster, withNamespace } from "../harness/index.js";
import {
  applyStep,
  cliEnv,
  cm,
  gatedChain,
  khookSpec,
  outputMatches,
  parseRun,
  runKhook,
  specDir,
  startKhook,
  stateIn,
  stepOf,
  stepRecorded,
} from "./support/khook-cli.js";

interface RecordJson {
  runStatus: string;
  lease?: {
    id: string;
    holder: string;
    host: string;
    pid: number;
    pidNamespace?: string;
    bootId?: string;
    command: string;
    startedAt: string;
    renewDeadline: string;
  };
  steps: Record<string, { status: string }>;
}

async function setup(t: TestContext, spec: string) {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "lock");
  const kubectl = async (args: string[]): Promise<string> => {
    const r = await cluster.kubectl(args);
    assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const env = cliEnv(cluster.kubeconfig);
  const khook = (args: string[]) => runKhook(args, { env });
  const secretName = `khook-state-${spec}`;
  const record = async (): Promise<RecordJson> => {
    const b64 = await kubectl(["get", "secret", secretName, "-n", ns, "-o", "jsonpath={.data.record\\.json}"]);
    return JSON.parse(Buffer.from(b64, "base64").toString("utf8")) as RecordJson;
  };
  /** A record as another machine's run left it: its lease, and step `cm` done. */
  const plantRecord = async (lease: NonNullable<RecordJson["lease"]>) => {
    const at = lease.startedAt;
    const json = JSON.stringify({
      format: 1,
      spec,
      specHash: "sha256:earlier",
      khookVersion: "0.0.1",
      command: "apply",
      runStatus: "running",
      startedAt: at,
      updatedAt: at,
      lease,
      steps: {},
    });
    await kubectl(["create", "secret", "generic", secretName, "-n", ns, `--from-literal=record.json=${json}`]);
    await kubectl([
      "label",
      "secret",
      secretName,
      "-n",
      ns,
      "app.kubernetes.io/managed-by=khook",
      `khook.io/spec=${spec}`,
    ]);
  };
  return { cluster, ns, kubectl, env, khook, record, plantRecord };
}

/** Runs khook as pid 50000 of a fresh pid namespace (and user namespace, so no privilege is needed). */
const IN_NEW_PID_NAMESPACE = [
  "unshare",
  "-Urpf",
  "--mount-proc",
  "sh",
  "-c",
  'echo 49999 > /proc/sys/kernel/ns_last_pid && "$0" "$@"; exit $?',
];

function canUnsharePid(): boolean {
  return spawnSync("unshare", ["-Urpf", "--mount-proc", "true"]).status === 0;
}

/** The pid of a process that has exited (and was reaped), so nothing of this run has it now. */
async function exitedPid(): Promise<number> {
  const child = spawn("true");
  await new Promise((resolve) => child.on("close", resolve));
  return child.pid!;
}

const minutesFromNow = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
const lease = (renewDeadline: string) => ({
  id: "another-run",
  holder: "bob",
  host: "ci-runner-3",
  pid: 4242,
  command: "apply",
  startedAt: "2026-01-01T00:00:00.000Z",
  renewDeadline,
});

describe("the lease on the state record", { timeout: 180_000 }, () => {
  test("two concurrent applies: the second fails fast (exit 1) naming the holder, the first completes, and the record is consistent", async (t) => {
    const { ns, kubectl, env, khook, record } = await setup(t, "overlap");
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const { file } = specDir(khookSpec("overlap", gatedChain(ns, "last"), stateIn(ns)));
    const first = startKhook(["apply", "-f", file, "-o", "json"], { env });
    await outputMatches(first, /\[blocked\] started/);

    const second = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(second.code, 1, second.stderr);
    assert.match(
      second.stderr,
      new RegExp(
        `locked by another khook run: \\S+ on ${os.hostname().replace(/[.]/g, "\\.")} \\(pid ${first.child.pid}, khook apply started`,
      ),
    );
    assert.match(second.stderr, new RegExp(`khook unlock -f ${file.replace(/[.]/g, "\\.")}`));
    assert.deepEqual(
      parseRun(second).steps.map((s) => s.status),
      ["skipped", "skipped", "skipped"],
      "the second run started nothing",
    );
    const during = await record();
    assert.equal(during.lease?.pid, first.child.pid, "the second run did not touch the record");
    assert.equal(during.steps.first?.status, "ok");

    await kubectl(["patch", "configmap", "gate", "-n", ns, "--type", "merge", "-p", '{"data":{"ready":"yes"}}']);
    const done = await first.done;
    assert.equal(done.code, 0, done.stderr);
    const after = await record();
    assert.equal(after.runStatus, "succeeded");
    assert.equal(after.lease, undefined, "the lease is released by the last write");
    assert.deepEqual(Object.fromEntries(Object.entries(after.steps).map(([k, v]) => [k, v.status])), {
      first: "ok",
      blocked: "ok",
      last: "ok",
    });
  });

  test("a run that lost its lease stops: cleared by khook unlock, it starts nothing more, writes nothing more, and fails (exit 1) saying so; the next run resumes what was recorded", async (t) => {
    const { ns, kubectl, env, khook, record } = await setup(t, "cleared");
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const { file } = specDir(khookSpec("cleared", gatedChain(ns, "last"), stateIn(ns)));
    const run = startKhook(["apply", "-f", file, "-o", "json"], { env });
    await outputMatches(run, /\[blocked\] started/);
    await stepRecorded(env["KUBECONFIG"]!, ns, "khook-state-cleared", "first");
    const unlocked = await khook(["unlock", "-f", file]);
    assert.equal(unlocked.code, 0, unlocked.stderr);
    assert.match(unlocked.stdout, new RegExp(`the lease was held by \\S+ on \\S+ \\(pid ${run.child.pid},`));
    const cleared = await record();

    await kubectl(["patch", "configmap", "gate", "-n", ns, "--type", "merge", "-p", '{"data":{"ready":"yes"}}']);
    const r = await run.done;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /Error: this run lost its lease on the state record .*: it was cleared \(khook unlock\)/);
    assert.deepEqual(await record(), cleared, "nothing was written after the lease was cleared");
    // A run that lost its lease stops: it learns of the unlock at once (a watch on the record), so the
    // step running then is cancelled and the one after it never starts.
    assert.deepEqual(
      [stepOf(parseRun(r), "blocked").status, stepOf(parseRun(r), "blocked").reason],
      ["failed", "cancelled while running"],
    );
    assert.deepEqual(
      [stepOf(parseRun(r), "last").status, stepOf(parseRun(r), "last").reason],
      ["skipped", "not started: this run lost its lease on the state record"],
    );
    assert.equal(
      (await kubectl(["get", "configmap", "-n", ns, "-o", "name"])).split("\n").includes("configmap/last"),
      false,
      "the lost run created nothing more",
    );

    const again = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(again.code, 0, again.stderr);
    const rerun = parseRun(again);
    assert.equal(stepOf(rerun, "first").reason, RESUME_REASON, "first resumes: it was recorded before the unlock");
    assert.equal(stepOf(rerun, "blocked").status, "ok");
    assert.equal(stepOf(rerun, "last").status, "ok");
  });

  test("a live run's lease is never taken: a run in another pid namespace on this very host holds it until it ends", async (t) => {
    if (!canUnsharePid()) return t.skip("unshare -Urpf (unprivileged user and pid namespaces) is not available here");
    const { ns, kubectl, env, khook, record } = await setup(t, "pidns");
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const { file } = specDir(khookSpec("pidns", gatedChain(ns, "last"), stateIn(ns)));
    // The first run: same host name, same boot, its own pid namespace, and a pid (50000) that runs nothing out here.
    const first = startKhook(["apply", "-f", file, "-o", "json"], { env, prefix: IN_NEW_PID_NAMESPACE });
    await outputMatches(first, /\[blocked\] started/);
    const held = await record();
    assert.equal(held.lease?.pid, 50_000);
    assert.equal(held.lease?.host, os.hostname());
    assert.notEqual(held.lease?.pidNamespace, fs.readlinkSync("/proc/self/ns/pid"));

    const second = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, /locked by another khook run: \S+ on \S+ \(pid 50000, khook apply started/);
    assert.equal((await record()).lease?.id, held.lease?.id, "the live run keeps its lease");
    const status = await khook(["status", "-f", file]);
    assert.match(
      status.stdout,
      /Locked: +by .*\(pid 50000, .*khook cannot see that process from here, so the lease holds until it expires/,
    );

    await kubectl(["patch", "configmap", "gate", "-n", ns, "--type", "merge", "-p", '{"data":{"ready":"yes"}}']);
    const done = await first.done;
    assert.equal(done.code, 0, done.stderr);
    assert.equal((await record()).runStatus, "succeeded");
  });

  test("a live run's lease is never taken: a dead pid of another pid namespace on this very host proves nothing", async (t) => {
    const { ns, khook, plantRecord } = await setup(t, "deadpid");
    const deadPid = await exitedPid();
    const here = {
      pidNamespace: fs.readlinkSync("/proc/self/ns/pid"),
      bootId: fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
    };
    const deadline = minutesFromNow(30);
    await plantRecord({
      ...lease(deadline),
      host: os.hostname(),
      pid: deadPid,
      ...here,
      pidNamespace: "pid:[4026000001]",
    });
    const { file } = specDir(khookSpec("deadpid", applyStep("cm", cm("cm", ns)), stateIn(ns)));
    const elsewhere = await khook(["apply", "-f", file]);
    assert.equal(elsewhere.code, 1, "another pid namespace: the pid proves nothing, the lease holds");
    assert.match(elsewhere.stderr, new RegExp(`locked by another khook run: bob on \\S+ \\(pid ${deadPid},`));
  });

  test("khook status says when a recorded holder is gone: a dead pid of this pid namespace and boot, whose lease the next run takes over at once", async (t) => {
    const { ns, khook, record, plantRecord } = await setup(t, "deadhere");
    const deadPid = await exitedPid();
    const here = {
      pidNamespace: fs.readlinkSync("/proc/self/ns/pid"),
      bootId: fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
    };
    await plantRecord({ ...lease(minutesFromNow(30)), host: os.hostname(), pid: deadPid, ...here });
    const { file } = specDir(khookSpec("deadhere", applyStep("cm", cm("cm", ns)), stateIn(ns)));
    const status = await khook(["status", "-f", file, "-o", "json"]);
    assert.equal((JSON.parse(status.stdout) as { leaseHolder?: string }).leaseHolder, "holder-gone");
    const text = await khook(["status", "-f", file]);
    assert.match(
      text.stdout,
      new RegExp(`Locked: +by bob on \\S+ \\(pid ${deadPid}, .*\\), but that process is no longer running`),
    );
    const taken = await khook(["apply", "-f", file]);
    assert.equal(taken.code, 0, taken.stderr);
    assert.match(
      taken.stderr,
      /took over the lease .*its process is no longer running \(same host, pid namespace and boot as this run\)/,
    );
    assert.equal((await record()).steps.cm?.status, "ok");
  });

  test("khook status says when a recorded holder is gone: an expired lease", async (t) => {
    const { ns, khook, plantRecord } = await setup(t, "expiredstatus");
    await plantRecord(lease("2026-01-01T00:01:30.000Z"));
    const { file } = specDir(khookSpec("expiredstatus", applyStep("cm", cm("cm", ns)), stateIn(ns)));
    const status = await khook(["status", "-f", file]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      /Locked: +by bob on ci-runner-3 \(pid 4242, .*\), but the lease expired at 2026-01-01T00:01:30\.000Z/,
    );
    assert.equal(
      (JSON.parse((await khook(["status", "-f", file, "-o", "json"])).stdout) as { leaseHolder?: string }).leaseHolder,
      "expired",
    );
  });

  test("no lease, no run: when the record's namespace does not exist, apply fails before the first step, naming the namespace and the fix", async (t) => {
    const { ns, kubectl, khook } = await setup(t, "nons");
    const missing = `${ns}-missing`;
    const { file } = specDir(khookSpec("nons", applyStep("cm", cm("cm", ns)), stateIn(missing)));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `namespace "${missing}" does not exist — create it \\(kubectl create namespace ${missing}\\), or set state.namespace`,
      ),
    );
    assert.match(r.stderr, /Nothing was changed/);
    assert.deepEqual(
      parseRun(r).steps.map((s) => [s.status, s.reason]),
      [["skipped", "not started: the state record could not be claimed"]],
    );
    assert.equal(
      await kubectl(["get", "configmap", "cm", "-n", ns, "--ignore-not-found", "-o", "name"]),
      "",
      "nothing ran",
    );
  });

  test("an expired lease is taken over with a warning", async (t) => {
    const { ns, khook, record, plantRecord } = await setup(t, "expired");
    await plantRecord(lease("2026-01-01T00:01:30.000Z"));
    const { file } = specDir(khookSpec("expired", applyStep("cm", cm("cm", ns)), stateIn(ns)));
    const r = await khook(["apply", "-f", file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /warning: took over the lease on the state record .* held by bob on ci-runner-3 \(pid 4242, khook apply started 2026-01-01T00:00:00\.000Z\): it was not renewed after 2026-01-01T00:01:30\.000Z/,
    );
    const after = await record();
    assert.equal(after.runStatus, "succeeded");
    assert.equal(after.lease, undefined);
    assert.equal(after.steps.cm?.status, "ok");
  });

  test("khook unlock clears a live lease by hand and says whose it was; status shows the lock; the next apply runs", async (t) => {
    const { ns, khook, record, plantRecord } = await setup(t, "unlock");
    const deadline = minutesFromNow(30);
    await plantRecord(lease(deadline));
    const { file } = specDir(khookSpec("unlock", applyStep("cm", cm("cm", ns)), stateIn(ns)));

    const refused = await khook(["apply", "-f", file]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      new RegExp(
        `locked by another khook run: bob on ci-runner-3 \\(pid 4242, khook apply started 2026-01-01T00:00:00\\.000Z\\), lease renewed until ${deadline.replace(/[.]/g, "\\.")}`,
      ),
    );

    const status = await khook(["status", "-f", file]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /Locked: +by bob on ci-runner-3 \(pid 4242/);

    const unlocked = await khook(["unlock", "-f", file]);
    assert.equal(unlocked.code, 0, unlocked.stderr);
    assert.match(
      unlocked.stdout,
      new RegExp(
        `Unlocked the state record secret/khook-state-unlock in namespace ${ns}: the lease was held by bob on ci-runner-3 \\(pid 4242`,
      ),
    );
    assert.match(unlocked.stderr, /had not expired/);
    assert.equal((await record()).lease, undefined);
    assert.equal((await record()).runStatus, "running", "unlock touches nothing but the lease");

    // --record names the record without a spec (a Pulumi resource's record).
    const again = await khook(["unlock", "--record", `${ns}/khook-state-unlock`]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /is not locked; nothing to do/);

    const applied = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(stepOf(parseRun(applied), "cm").status, "ok");
  });
});
