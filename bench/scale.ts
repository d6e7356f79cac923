/**
 * Scale (issue 13): a 1,000-step spec applied and destroyed on a local cluster — wall time, the
 * process's peak memory and the API requests per step — and the same spec with state: re-run,
 * which resumes with one read and one write of the record (test/integration/scale.test.ts asserts
 * that count). Each operation runs in its own process (bench/scale-run.ts) so the peak memory is
 * khook's alone. Figures, not assertions.
 *
 * Uses KHOOK_TEST_KUBECONFIG when set, else starts (and stops) a local cluster with the harness.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCluster, stopCluster, type ClusterState } from "../test/harness/cluster.js";
import { CONTROL_PLANE, ensureToolchain, toolPath } from "../test/harness/toolchain.js";
import type { ScaleRunReport } from "./scale-run.js";

const STEPS = 1000;

/** STEPS steps in one namespace: ConfigMaps, with patches and waits on them, in chained levels. */
export function scaleSpec(ns: string, withState: boolean): string {
  const steps: string[] = [];
  for (let i = 0; i < STEPS; i++) {
    // Patches and waits act on the ConfigMap of an apply step fifty or more steps back, which they need.
    const cm = i - (i % 10) - 50;
    const patchOrWait = i % 10 >= 8 && cm >= 0;
    const needs = patchOrWait ? `    needs: [s${cm}]\n` : i >= 50 ? `    needs: [s${i - 50}]\n` : "";
    const head = `  - name: s${i}\n${needs}`;
    if (patchOrWait && i % 10 === 8) {
      steps.push(
        `${head}    patch:\n      target: configmap/cm-${cm}\n      namespace: ${ns}\n      type: merge\n      patch: {data: {patched: "yes"}}\n`,
      );
    } else if (patchOrWait) {
      steps.push(
        `${head}    wait:\n      for: jsonpath={.data.index}=${cm}\n      on: configmap/cm-${cm}\n      namespace: ${ns}\n`,
      );
    } else {
      steps.push(
        `${head}    apply:\n      namespace: ${ns}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: cm-${i}}\n            data: {index: "${i}"}\n`,
      );
    }
  }
  return `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: scale-${ns}\n${withState ? `state:\n  namespace: ${ns}\n` : ""}steps:\n${steps.join("")}`;
}

function runOperation(kubeconfig: string, specFile: string, operation: "apply" | "destroy"): Promise<ScaleRunReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, "scale-run.js"), kubeconfig, specFile, operation], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(JSON.parse(out) as ScaleRunReport)
        : reject(new Error(`scale-run ${operation} exited ${code}: ${out}`)),
    );
  });
}

export async function benchScale(): Promise<void> {
  let cluster: ClusterState | undefined;
  let kubeconfig = process.env.KHOOK_TEST_KUBECONFIG;
  if (kubeconfig === undefined) {
    await ensureToolchain({ only: CONTROL_PLANE, log: () => undefined });
    cluster = await startCluster({ name: `bench-scale-${process.pid}`, watchPid: process.pid, log: () => undefined });
    kubeconfig = cluster.kubeconfig;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-scale-"));
  const kubectl = (args: string[]): Promise<void> =>
    new Promise((resolve) =>
      spawn(toolPath("kubectl"), args, { env: { ...process.env, KUBECONFIG: kubeconfig }, stdio: "ignore" }).on(
        "close",
        () => resolve(),
      ),
    );
  const namespaces: string[] = [];
  try {
    console.log(`== scale: a ${STEPS}-step spec (ConfigMaps, patches, waits), whole processes ==`);
    const row = (what: string, r: ScaleRunReport): void => {
      const requests = Object.values(r.requests).reduce((a, b) => a + b, 0);
      console.log(
        `  ${what.padEnd(34)} ${(r.ms / 1000).toFixed(2).padStart(6)} s  peak RSS ${r.maxRssMb.toFixed(0).padStart(4)} MB  ${requests} API requests (${(requests / STEPS).toFixed(2)} per step)  ${r.status}${r.failures.length > 0 ? `\n    ${r.failures.join("\n    ")}` : ""}`,
      );
    };
    for (const withState of [false, true]) {
      const ns = `bench-scale-${withState ? "state" : "plain"}-${process.pid}`;
      namespaces.push(ns);
      await kubectl(["create", "namespace", ns]);
      const file = path.join(dir, `${ns}.yaml`);
      fs.writeFileSync(file, scaleSpec(ns, withState));
      const applied = await runOperation(kubeconfig, file, "apply");
      row(`apply${withState ? " (state:)" : ""}`, applied);
      if (withState) {
        const rerun = await runOperation(kubeconfig, file, "apply");
        row("re-run (state:, all resumed)", rerun);
        const record = Object.entries(rerun.requests).filter(([k]) => k.includes("/secrets/khook-state-"));
        const reads = record.filter(([k]) => k.startsWith("GET ")).reduce((a, [, n]) => a + n, 0);
        const writes = record.filter(([k]) => /^(PUT|POST|PATCH) /.test(k)).reduce((a, [, n]) => a + n, 0);
        const other = Object.values(rerun.requests).reduce((a, b) => a + b, 0) - reads - writes;
        const met = reads === 1 && writes === 1 && other === 0;
        console.log(
          `  resumed re-run: ${reads} read, ${writes} write of the record, ${other} other requests  (target 1 read, 1 write, nothing else: ${met ? "met" : "NOT met"})`,
        );
      }
      row(`destroy${withState ? " (state:)" : ""}`, await runOperation(kubeconfig, file, "destroy"));
    }
  } finally {
    for (const ns of namespaces) await kubectl(["delete", "namespace", ns, "--wait=false"]);
    fs.rmSync(dir, { recursive: true, force: true });
    if (cluster !== undefined) await stopCluster(cluster);
  }
}
