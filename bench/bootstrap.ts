/**
 * The benchmark that matters (issue 13): khook against the shell script it replaces, on the same
 * realistic bootstrap (bench/bootstrap/: six charts from a loopback chart repository with
 * dependencies, three waited for; a CRD waited for until Established, then a custom resource of
 * it; a ConfigMap set; a patch; a rollout restart and its status; a Job).
 *
 * Three rounds, interleaved (script, khook, khook with state:), each into fresh namespaces on the
 * same cluster; medians and ratios for the first run into a clean cluster, a re-run with nothing
 * changed without state:, and a re-run with state:. Whole processes, wall time. Figures, not assertions.
 * Targets: khook/script <= 0.6 (first run), <= 0.3 (re-run without state), <= 0.05 (with state).
 *
 * Uses KHOOK_TEST_KUBECONFIG when set, else starts (and stops) a local cluster with the harness.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startCluster, stopCluster, type ClusterState } from "../test/harness/cluster.js";
import { toolPathVar } from "../test/harness/env.js";
import { helmEnv, startChartRepo } from "../test/harness/fixtures.js";
import { CLIENT_TOOLS, CONTROL_PLANE, ensureToolchain, toolPath } from "../test/harness/toolchain.js";

/** Three rounds; KHOOK_BENCH_ROUNDS=1 for a quick look while changing the benchmark. */
const ROUNDS = Number(process.env["KHOOK_BENCH_ROUNDS"] ?? 3);
const TARGETS = { first: 0.6, rerun: 0.3, rerunState: 0.05 };

interface Run {
  ms: number;
  out: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function benchBootstrap(): Promise<void> {
  let cluster: ClusterState | undefined;
  let kubeconfig = process.env.KHOOK_TEST_KUBECONFIG;
  await ensureToolchain({
    only: [...CONTROL_PLANE, ...CLIENT_TOOLS.filter((t) => t === "helm")],
    log: () => undefined,
  });
  if (kubeconfig === undefined) {
    cluster = await startCluster({
      name: `bench-bootstrap-${process.pid}`,
      watchPid: process.pid,
      log: () => undefined,
    });
    kubeconfig = cluster.kubeconfig;
  }
  const repo = await startChartRepo();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-bootstrap-"));
  const benchDir = path.resolve(__dirname, "../../bench/bootstrap");
  const bin = path.resolve(__dirname, "../../bin/khook");
  const base = {
    ...helmEnv(dir),
    PATH: toolPathVar(),
    KUBECONFIG: kubeconfig,
    KHOOK_HELM: toolPath("helm"),
    REPO: repo.url,
  };
  const suffixes: string[] = [];

  // Asynchronous: the chart repository is served from this process.
  const timed = (label: string, command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("error", reject);
      child.on("close", (code, signal) => {
        const ms = performance.now() - t0;
        if (code !== 0) reject(new Error(`${label} failed (exit ${code ?? signal}):\n${out}`));
        else resolve({ ms, out });
      });
    });
  const script = (suffix: string): Promise<Run> =>
    timed(`bootstrap.sh (${suffix})`, "bash", [path.join(benchDir, "bootstrap.sh")], { ...base, SUFFIX: suffix });
  const khook = (suffix: string, state: boolean): Promise<Run> =>
    timed(
      `khook apply (${suffix})`,
      process.execPath,
      [bin, "apply", "-f", path.join(benchDir, "bootstrap.khook.yaml")],
      {
        ...base,
        KHOOK_VAR_SUFFIX: suffix,
        KHOOK_VAR_REPO: repo.url,
        ...(state ? { KHOOK_VAR_USE_STATE: "true" } : {}),
        CI: "1",
      },
    );
  const revisions = (suffix: string): string => {
    const r = spawnSync(
      toolPath("helm"),
      ["list", "-A", "-o", "json", "--filter", "^(ingress|cert-manager|secrets|monitoring|gitops)$"],
      { env: base, encoding: "utf8" },
    );
    const releases = (JSON.parse(r.stdout || "[]") as { namespace: string; revision: string }[]).filter((x) =>
      x.namespace.endsWith(`-${suffix}`),
    );
    return releases.map((x) => x.revision).join(",");
  };

  // Earlier sections delete their namespaces without waiting: measure on a settled cluster, not
  // beside an API server and etcd still busy deleting them (that load falls on both contestants).
  const terminating = spawnSync(
    toolPath("kubectl"),
    ["get", "namespaces", "--field-selector", "status.phase=Terminating", "-o", "name"],
    { env: base, encoding: "utf8" },
  )
    .stdout.split("\n")
    .filter(Boolean);
  if (terminating.length > 0)
    spawnSync(toolPath("kubectl"), ["wait", "--for=delete", "--timeout=180s", ...terminating], {
      env: base,
      stdio: "ignore",
    });

  const figures = {
    scriptFirst: [] as number[],
    scriptRerun: [] as number[],
    khookFirst: [] as number[],
    khookRerun: [] as number[],
    stateFirst: [] as number[],
    stateRerun: [] as number[],
  };
  let revisionNote = "";
  try {
    console.log(
      `== the bootstrap against the script it replaces (bench/bootstrap/; ${ROUNDS} rounds, interleaved, whole processes, median) ==`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      const tag = `${process.pid.toString(36)}${round}`;
      const [s, k, j] = [`s${tag}`, `k${tag}`, `j${tag}`];
      suffixes.push(s, k, j);
      figures.scriptFirst.push((await script(s)).ms);
      figures.scriptRerun.push((await script(s)).ms);
      figures.khookFirst.push((await khook(k, false)).ms);
      figures.khookRerun.push((await khook(k, false)).ms);
      figures.stateFirst.push((await khook(j, true)).ms);
      figures.stateRerun.push((await khook(j, true)).ms);
      if (round === 0) revisionNote = `helm revisions after the re-run: script ${revisions(s)}; khook ${revisions(k)}`;
      console.log(
        `  round ${round + 1}: script ${(figures.scriptFirst[round]! / 1000).toFixed(1)} s / ${(figures.scriptRerun[round]! / 1000).toFixed(1)} s; khook ${(figures.khookFirst[round]! / 1000).toFixed(1)} s / ${(figures.khookRerun[round]! / 1000).toFixed(1)} s; with state: ${(figures.stateFirst[round]! / 1000).toFixed(1)} s / ${(figures.stateRerun[round]! / 1000).toFixed(2)} s`,
      );
    }
    const row = (what: string, khookMs: number, scriptMs: number, target: number): void => {
      const ratio = khookMs / scriptMs;
      console.log(
        `  ${what.padEnd(36)} khook ${(khookMs / 1000).toFixed(2).padStart(6)} s   script ${(scriptMs / 1000).toFixed(2).padStart(6)} s   khook/script ${ratio.toFixed(3)}  (target <= ${target}: ${ratio <= target ? "met" : "NOT met"})`,
      );
    };
    row("first run, into a clean cluster", median(figures.khookFirst), median(figures.scriptFirst), TARGETS.first);
    row("re-run, nothing changed, no state:", median(figures.khookRerun), median(figures.scriptRerun), TARGETS.rerun);
    row(
      "re-run, nothing changed, with state:",
      median(figures.stateRerun),
      median(figures.scriptRerun),
      TARGETS.rerunState,
    );
    console.log(
      `  (khook's first run with state: ${(median(figures.stateFirst) / 1000).toFixed(2)} s; ${revisionNote})`,
    );
  } finally {
    const k = (args: string[]): void => void spawnSync(toolPath("kubectl"), args, { env: base, stdio: "ignore" });
    for (const suffix of suffixes) {
      k([
        "delete",
        "namespace",
        ...["platform", "ingress", "cert", "secrets", "monitoring", "gitops"].map((n) => `${n}-${suffix}`),
        "--wait=false",
        "--ignore-not-found",
      ]);
      k(["delete", "crd", `issuers.${suffix}.bench.khook.io`, "--wait=false", "--ignore-not-found"]);
      k(["delete", "secret", "-n", "default", `khook-state-bench-${suffix}`, "--ignore-not-found"]);
    }
    await repo.close();
    fs.rmSync(dir, { recursive: true, force: true });
    if (cluster !== undefined) await stopCluster(cluster);
  }
}
