/**
 * The live check's cost (issue 30): `khook plan --live` beside a plain `khook plan` of the same
 * applied spec, whole processes, median of three, on the 100-step spec of the Pulumi benchmark
 * (ConfigMaps in ten chains of ten) and the 1,000-step scale spec (ConfigMaps, merge patches and
 * waits). The live check reads a list per kind and namespace, never a GET per object; the figure
 * says how many lists it made. Figures, not assertions.
 *
 * Uses KHOOK_TEST_KUBECONFIG when set, else starts (and stops) a local cluster with the harness.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startCluster, stopCluster, type ClusterState } from "../test/harness/cluster.js";
import { CONTROL_PLANE, ensureToolchain, toolPath } from "../test/harness/toolchain.js";
import { hundredStepSpec } from "./pulumi.js";
import { scaleSpec } from "./scale.js";

const RUNS = 3;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function benchDrift(): Promise<void> {
  let cluster: ClusterState | undefined;
  let kubeconfig = process.env.KHOOK_TEST_KUBECONFIG;
  if (kubeconfig === undefined) {
    await ensureToolchain({ only: CONTROL_PLANE, log: () => undefined });
    cluster = await startCluster({ name: `bench-drift-${process.pid}`, watchPid: process.pid, log: () => undefined });
    kubeconfig = cluster.kubeconfig;
  }
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  const kubectl = (args: string[]): void => {
    spawnSync(toolPath("kubectl"), args, { env, stdio: "ignore" });
  };
  const bin = path.resolve(__dirname, "../../bin/khook");
  const khook = (args: string[]): string =>
    execFileSync(process.execPath, [bin, ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 << 20,
    }).toString();
  const timed = (args: string[]): number => {
    const t0 = performance.now();
    khook(args);
    return performance.now() - t0;
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-drift-"));
  const namespaces: string[] = [];
  try {
    console.log(`== drift: khook plan --live beside khook plan, whole processes, median of ${RUNS} ==`);
    // The 100-step spec names its namespace ${NS}; the scale spec writes it in.
    const specs: [string, (ns: string) => string, (ns: string) => string[]][] = [
      ["100-step spec (ConfigMaps)", () => hundredStepSpec(), (ns) => ["--set", `NS=${ns}`]],
      ["1,000-step scale spec", (ns) => scaleSpec(ns, true), () => []],
    ];
    for (const [what, text, varsFor] of specs) {
      const ns = `bench-drift-${namespaces.length}-${process.pid}`;
      namespaces.push(ns);
      kubectl(["create", "namespace", ns]);
      const file = path.join(dir, `${ns}.yaml`);
      fs.writeFileSync(file, text(ns));
      const vars = varsFor(ns);
      khook(["apply", "-f", file, ...vars]);
      const plain = median(Array.from({ length: RUNS }, () => timed(["plan", "-f", file, ...vars])));
      const live = median(Array.from({ length: RUNS }, () => timed(["plan", "--live", "-f", file, ...vars])));
      const report = JSON.parse(khook(["plan", "--live", "-f", file, ...vars, "-o", "json"])) as {
        counts: Record<string, number>;
        lists: number;
      };
      console.log(
        `  ${what.padEnd(28)} plan ${(plain / 1000).toFixed(2).padStart(5)} s   plan --live ${(live / 1000).toFixed(2).padStart(5)} s  (+${((live - plain) / 1000).toFixed(2)} s; ${report.lists} list request${report.lists === 1 ? "" : "s"}; ${report.counts["in-sync"]} in sync, ${report.counts["drifted"]} drifted, ${report.counts["not-checkable"]} not checkable)`,
      );
    }
  } finally {
    for (const ns of namespaces) kubectl(["delete", "namespace", ns, "--wait=false"]);
    fs.rmSync(dir, { recursive: true, force: true });
    if (cluster !== undefined) await stopCluster(cluster);
  }
}
