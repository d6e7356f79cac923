/**
 * Offline engine benchmark: load + validate + offline plan of generated specs.
 * Targets (issue 2): 1,000 steps in <= 150 ms in-process after warm-up, and a whole
 * `khook validate` process on a 1,000-step spec in <= 0.5 s. Figures, not assertions.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { planOffline } from "../provider/engine/plan.js";
import { loadSpec } from "../provider/load-spec.js";
import { generateSpec } from "../test/harness/generated-spec.js";

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
    console.log(
      `  ${String(n).padStart(5)} steps: ${ms.toFixed(1).padStart(7)} ms  ${((ms * 1000) / n).toFixed(1).padStart(6)} µs/step${target}`,
    );
  }
  const bin = path.resolve(__dirname, "../../bin/khook");
  const file1000 = path.join(dir, "spec-1000.yaml");
  const proc = timeIt(() => {
    execFileSync(process.execPath, [bin, "validate", "-f", file1000], { stdio: "ignore" });
  }, 7);
  const bare = timeIt(() => {
    execFileSync(process.execPath, ["-e", ""], { stdio: "ignore" });
  }, 7);
  console.log(
    `  khook validate process, 1000 steps: ${proc.toFixed(0)} ms wall (bare node start: ${bare.toFixed(0)} ms)  (target <= 500 ms: ${proc <= 500 ? "met" : "NOT met"})`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
}
