/**
 * Offline engine benchmark: load + validate + offline plan of generated specs.
 * Targets (issue 2): 1,000 steps in <= 150 ms in-process after warm-up, and a whole
 * `khook validate` process on a 1,000-step spec in <= 0.5 s. Figures, not assertions.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { planOffline } from "../provider/engine/plan.js";
import { loadSpec } from "../provider/spec/load.js";

/** A realistic mix of step types, with fan-in every 10 steps and a few pipelines and when:s. */
export function generateSpec(steps: number): string {
  const lines = ["apiVersion: khook.io/v1", "kind: Khook", "metadata:", "  name: bench", "defaults:", "  timeout: 2m", "state: {}", "steps:"];
  for (let i = 0; i < steps; i++) {
    const needs = i >= 10 && i % 10 === 0 ? `    needs: [s${i - 1}, s${i - 5}, s${i - 10}]\n` : i > 0 && i % 3 === 0 ? `    needs: [s${i - 1}]\n` : "";
    const when = i % 50 === 7 ? `    when: 'vars.get("ENV", "dev") == "prod"'\n` : "";
    const head = `  - name: s${i}\n${needs}${when}`;
    switch (i % 5) {
      case 0:
        lines.push(`${head}    apply:\n      namespace: ns-\${ENV:-dev|lower}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata:\n              name: cm-${i}\n            data:\n              key: "\${APP:-bench|upper|trunc 5}"`);
        break;
      case 1:
        lines.push(`${head}    helm:\n      chart: app-${i}\n      repo: https://charts.example.com\n      version: 1.${i}.0\n      namespace: apps\n      values:\n        replicas: 2\n        image: { tag: "v${i}" }`);
        break;
      case 2:
        lines.push(`${head}    wait:\n      for: jsonpath={.status.conditions[?(@.type=="Ready")].status}=True\n      on: deployment/d-${i}\n      namespace: apps`);
        break;
      case 3:
        lines.push(`${head}    patch:\n      target: deployment/d-${i}\n      namespace: apps\n      type: merge\n      patch:\n        spec: { replicas: 3 }`);
        break;
      default:
        lines.push(`${head}    job:\n      image: busybox:1.36\n      command: ["sh", "-c"]\n      args: ["echo $\${HOME} ${i}"]\n      env: { STEP: "${i}" }`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function timeIt(fn: () => void, runs: number): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

export async function benchOffline(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-"));
  console.log("== offline engine: load + validate + offline plan (median of runs, after warm-up) ==");
  for (const n of [100, 1000, 5000]) {
    const file = path.join(dir, `spec-${n}.yaml`);
    fs.writeFileSync(file, generateSpec(n));
    const run = (): void => {
      planOffline(loadSpec({ file, env: {} }));
    };
    for (let i = 0; i < 3; i++) run();
    const ms = timeIt(run, n >= 5000 ? 5 : 15);
    const target = n === 1000 ? `  (target <= 150 ms: ${ms <= 150 ? "met" : "NOT met"})` : "";
    console.log(`  ${String(n).padStart(5)} steps: ${ms.toFixed(1).padStart(7)} ms  ${((ms * 1000) / n).toFixed(1).padStart(6)} µs/step${target}`);
  }
  const bin = path.resolve(__dirname, "../../bin/khook");
  const file1000 = path.join(dir, "spec-1000.yaml");
  const proc = timeIt(() => {
    execFileSync(process.execPath, [bin, "validate", "-f", file1000], { stdio: "ignore" });
  }, 7);
  const bare = timeIt(() => {
    execFileSync(process.execPath, ["-e", ""], { stdio: "ignore" });
  }, 7);
  console.log(`  khook validate process, 1000 steps: ${proc.toFixed(0)} ms wall (bare node start: ${bare.toFixed(0)} ms)  (target <= 500 ms: ${proc <= 500 ? "met" : "NOT met"})`);
  fs.rmSync(dir, { recursive: true, force: true });
}
