/**
 * Runs the loader fuzz in a worker thread with two safety nets, and reports figures:
 * - a per-input budget: the worker names each input before it starts it; one that runs longer than
 *   the budget is stopped (the worker is terminated) and reported with its exact input;
 * - a heap cap on the worker: an input that needs more is reported the same way.
 * Both bounds are far above what any input is measured to need (see DEFAULT_BOUNDS), so they catch
 * hangs and blow-ups without ever depending on how busy the machine is.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { LoaderInput } from "./inputs.js";

export interface WorkerRequest {
  repoRoot: string;
  seed: number;
  runs: number;
  timeLimitMs?: number;
}

export type WorkerMessage =
  | { type: "input"; input: LoaderInput }
  | {
      type: "done";
      numRuns: number;
      numShrinks: number;
      times: number[];
      byKind: Record<string, number>;
      maxHeapBytes: number;
      valid: number;
      failure?: { input: LoaderInput; message: string };
    };

export interface FuzzBounds {
  /** Wall time one input (three CLI commands) may take before it counts as a hang. */
  inputBudgetMs: number;
  /** The worker's old-generation heap cap. */
  heapLimitMb: number;
}

/**
 * Inputs take a few milliseconds (the slowest measured: tens of ms on a loaded 2-core machine), and
 * the worker's heap stays under ~150 MB. 20 s and 1 GB are >100x and ~7x above that: only a real
 * hang (an unbounded loop, a catastrophic regex) or a blow-up (an alias bomb) reaches them.
 */
export const DEFAULT_BOUNDS: FuzzBounds = { inputBudgetMs: 20_000, heapLimitMb: 1024 };

export interface FuzzReport {
  seed: number;
  inputs: number;
  shrinks: number;
  valid: number;
  byKind: Record<string, number>;
  medianInputMs: number;
  p99InputMs: number;
  maxInputMs: number;
  maxHeapMb: number;
  wallMs: number;
  failure?: { reason: "invariant" | "over-budget" | "crash"; input: LoaderInput; message: string };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function runLoaderFuzz(
  repoRoot: string,
  request: Omit<WorkerRequest, "repoRoot">,
  bounds: FuzzBounds = DEFAULT_BOUNDS,
): Promise<FuzzReport> {
  const started = performance.now();
  const worker = new Worker(path.join(__dirname, "worker.js"), {
    workerData: { ...request, repoRoot } satisfies WorkerRequest,
    resourceLimits: { maxOldGenerationSizeMb: bounds.heapLimitMb },
    stdout: true,
    stderr: true,
  });
  // The CLI writes to its own streams; anything the worker prints itself is kept for a crash report.
  let workerOutput = "";
  worker.stdout.on("data", (d: Buffer) => (workerOutput = (workerOutput + d.toString()).slice(-2000)));
  worker.stderr.on("data", (d: Buffer) => (workerOutput = (workerOutput + d.toString()).slice(-2000)));

  return new Promise((resolve) => {
    let current: LoaderInput | undefined;
    let inputs = 0;
    let settled = false;
    let watchdog: NodeJS.Timeout | undefined;
    const empty = (failure: FuzzReport["failure"]): FuzzReport => ({
      seed: request.seed,
      inputs,
      shrinks: 0,
      valid: 0,
      byKind: {},
      medianInputMs: 0,
      p99InputMs: 0,
      maxInputMs: 0,
      maxHeapMb: 0,
      wallMs: performance.now() - started,
      ...(failure !== undefined ? { failure } : {}),
    });
    const finish = (report: FuzzReport): void => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      void worker.terminate();
      resolve(report);
    };
    const arm = (): void => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        finish(
          empty({
            reason: "over-budget",
            input: current ?? { kind: "template", spec: "", env: {}, set: [] },
            message: `an input ran longer than ${bounds.inputBudgetMs} ms`,
          }),
        );
      }, bounds.inputBudgetMs);
    };
    arm();
    worker.on("message", (m: WorkerMessage) => {
      if (m.type === "input") {
        current = m.input;
        inputs++;
        arm();
        return;
      }
      const sorted = [...m.times].sort((a, b) => a - b);
      finish({
        seed: request.seed,
        inputs: m.numRuns,
        shrinks: m.numShrinks,
        valid: m.valid,
        byKind: m.byKind,
        medianInputMs: percentile(sorted, 50),
        p99InputMs: percentile(sorted, 99),
        maxInputMs: sorted[sorted.length - 1] ?? 0,
        maxHeapMb: m.maxHeapBytes / 2 ** 20,
        wallMs: performance.now() - started,
        ...(m.failure !== undefined ? { failure: { reason: "invariant" as const, ...m.failure } } : {}),
      });
    });
    worker.on("error", (e) => {
      const message = `${(e as NodeJS.ErrnoException).code ?? ""} ${e.message}\n${workerOutput}`.trim();
      finish(empty({ reason: "crash", input: current ?? { kind: "template", spec: "", env: {}, set: [] }, message }));
    });
    worker.on("exit", (code) => {
      if (!settled)
        finish(
          empty({
            reason: "crash",
            input: current ?? { kind: "template", spec: "", env: {}, set: [] },
            message: `the worker exited with ${code} before it reported\n${workerOutput}`,
          }),
        );
    });
  });
}

/** One line of figures for a run. */
export function describeReport(r: FuzzReport): string {
  const kinds = Object.entries(r.byKind)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
  return `seed ${r.seed}: ${r.inputs} inputs (${kinds}; ${r.valid} valid) in ${(r.wallMs / 1000).toFixed(1)} s; per input median ${r.medianInputMs.toFixed(1)} ms, p99 ${r.p99InputMs.toFixed(1)} ms, max ${r.maxInputMs.toFixed(1)} ms; worker heap max ${r.maxHeapMb.toFixed(0)} MB${r.shrinks > 0 ? `; ${r.shrinks} shrinks` : ""}`;
}
