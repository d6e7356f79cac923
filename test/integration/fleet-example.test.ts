/**
 * examples/fleet/: the Automation API program that bootstraps a fleet, one stack per cluster,
 * against three real private clusters with the real pulumi CLI and a file backend.
 *
 *  1. One cluster's API server is down: the run reports two clusters ok and that one failed
 *     (with why), exits 1, and the others were bootstrapped all the same.
 *  2. The API server is back: a re-run does work on that cluster only. The other two resume
 *     entirely from their records: the engine did not call khook for them (`same` after the
 *     refresh read the record), and no object of theirs, nor their record, was written again.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  clusterAt,
  killComponent,
  pulumiEnv,
  restartComponent,
  startCluster,
  stopCluster,
  type ClusterState,
} from "../harness/index.js";
import { run, type RunResult } from "../harness/util.js";
import { khookRoot, linkKhook } from "./support/pulumi-project.js";

/** The report the program writes with --json (examples/fleet/index.ts ClusterReport). */
interface ClusterReport {
  cluster: string;
  result: "ok" | "failed";
  operation: string;
  applied: number;
  resumed: number;
  durationMs: number;
  error?: string;
}

// "alpha" sorts first and goes down: the run must carry on past it to the other two.
const NAMES = ["alpha", "bravo", "charlie"] as const;
type Name = (typeof NAMES)[number];
const DOWN: Name = "alpha";
const STEPS = 2; // examples/fleet/bootstrap.khook.yaml

const clusters = new Map<Name, ClusterState>();
let work = "";
let allPassed = true;

before(async () => {
  // Started side by side: each is a few processes that mostly wait on each other.
  const started = await Promise.all(
    NAMES.map((n) => startCluster({ name: `fleet-${n}-${process.pid}`, watchPid: process.pid })),
  );
  NAMES.forEach((n, i) => clusters.set(n, started[i]!));
  work = fs.mkdtempSync(path.join(os.tmpdir(), "khook-fleet-"));
  // Where a user's project would have its node_modules: the stacks' dynamic providers start below it.
  linkKhook(work);
  fs.mkdirSync(path.join(work, "kubeconfigs"));
  for (const [n, c] of clusters) fs.copyFileSync(c.kubeconfig, path.join(work, "kubeconfigs", `${n}.yaml`));
});

after(async () => {
  await Promise.all([...clusters.values()].map((c) => stopCluster(c)));
  if (allPassed) {
    for (const c of clusters.values()) fs.rmSync(c.dir, { recursive: true, force: true });
    if (work) fs.rmSync(work, { recursive: true, force: true });
  }
});

function cluster(n: Name): ClusterState {
  const c = clusters.get(n);
  assert.ok(c, `cluster ${n} did not start`);
  return c;
}

async function fleet(reportFile: string): Promise<{ r: RunResult; report: ClusterReport[] }> {
  const program = path.join(khookRoot(), "dist", "examples", "fleet", "index.js");
  const env = { ...pulumiEnv(work), KUBECONFIG: "/dev/null" }; // never an ambient cluster
  const r = await run(
    process.execPath,
    [
      program,
      "--kubeconfigs",
      path.join(work, "kubeconfigs"),
      "--concurrency",
      "2",
      "--work",
      path.join(work, "fleet"),
      "--json",
      reportFile,
    ],
    {
      cwd: work,
      env,
      timeoutMs: 600_000,
    },
  );
  const report = fs.existsSync(reportFile)
    ? (JSON.parse(fs.readFileSync(reportFile, "utf8")) as { clusters: ClusterReport[] }).clusters
    : [];
  return { r, report };
}

function row(report: readonly ClusterReport[], n: Name): ClusterReport {
  const found = report.find((x) => x.cluster === n);
  assert.ok(found, `the report has no line for ${n}: ${JSON.stringify(report)}`);
  return found;
}

/** The table line of one cluster in the printed report. */
function tableLine(stdout: string, n: Name): string {
  const line = stdout.split("\n").find((l) => l.startsWith(`${n} `));
  assert.ok(line, `the printed report has no line for ${n}:\n${stdout}`);
  return line;
}

/** resourceVersions of what the spec writes, and of khook's record, in one cluster. */
async function versions(n: Name): Promise<Record<string, string>> {
  const kubectl = clusterAt(cluster(n).kubeconfig).kubectl;
  const out: Record<string, string> = {};
  for (const [key, args] of Object.entries({
    namespace: ["get", "namespace", "platform"],
    configmap: ["-n", "platform", "get", "configmap", "cluster-info"],
    record: ["-n", "default", "get", "secret", "khook-state-fleet-bootstrap"],
  })) {
    const r = await kubectl([...args, "-o", "jsonpath={.metadata.resourceVersion}"]);
    assert.equal(r.code, 0, `${n}: kubectl ${args.join(" ")}: ${r.stderr}`);
    out[key] = r.stdout;
  }
  return out;
}

async function clusterName(n: Name): Promise<string> {
  const r = await clusterAt(cluster(n).kubeconfig).kubectl([
    "-n",
    "platform",
    "get",
    "configmap",
    "cluster-info",
    "-o",
    "jsonpath={.data.cluster}",
  ]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

test(
  "a fleet run carries on past an unreachable cluster, and its re-run finishes only that cluster",
  { timeout: 900_000 },
  async (t) => {
    t.after(() => {
      if ((t as { passed?: boolean }).passed === false) allPassed = false;
    });
    const show = (r: RunResult): string =>
      `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}\nkept: ${work}`;

    await killComponent(cluster(DOWN), "kube-apiserver");
    const first = await fleet(path.join(work, "report-1.json"));
    assert.equal(first.r.code, 1, `one cluster failed, so the run exits 1\n${show(first.r)}`);
    assert.equal(first.report.length, 3, show(first.r));
    const down = row(first.report, DOWN);
    assert.equal(down.result, "failed", show(first.r));
    assert.match(
      down.error ?? "",
      new RegExp(`cannot reach the Kubernetes API server at ${cluster(DOWN).server.replace(/[.]/g, "\\.")}`),
      show(first.r),
    );
    assert.match(tableLine(first.r.stdout, DOWN), /\bfailed\b.*cannot reach the Kubernetes API server/);
    assert.match(first.r.stdout, /2 of 3 clusters ok; failed: alpha/);
    for (const n of ["bravo", "charlie"] as const) {
      const ok = row(first.report, n);
      assert.deepEqual(
        { result: ok.result, operation: ok.operation, applied: ok.applied, resumed: ok.resumed },
        { result: "ok", operation: "create", applied: STEPS, resumed: 0 },
        show(first.r),
      );
      assert.match(tableLine(first.r.stdout, n), /^\S+\s+ok\s/);
      assert.equal(await clusterName(n), n, `${n} was bootstrapped with its own name`);
    }
    const before = { bravo: await versions("bravo"), charlie: await versions("charlie") };

    await restartComponent(cluster(DOWN), "kube-apiserver");
    const second = await fleet(path.join(work, "report-2.json"));
    assert.equal(second.r.code, 0, show(second.r));
    assert.deepEqual(
      Object.fromEntries(
        second.report.map((x) => [
          x.cluster,
          { result: x.result, operation: x.operation, applied: x.applied, resumed: x.resumed },
        ]),
      ),
      {
        alpha: { result: "ok", operation: "create", applied: STEPS, resumed: 0 },
        bravo: { result: "ok", operation: "same", applied: 0, resumed: STEPS },
        charlie: { result: "ok", operation: "same", applied: 0, resumed: STEPS },
      },
      show(second.r),
    );
    assert.match(second.r.stdout, /3 of 3 clusters ok\n/);
    assert.equal(await clusterName(DOWN), DOWN);
    for (const n of ["bravo", "charlie"] as const) {
      assert.deepEqual(await versions(n), before[n], `${n}: nothing written again, not even the record`);
    }
  },
);
