/**
 * The loader fuzz's worker thread: runs fast-check over the CLI in-process and tells the parent
 * (run.ts) which input it is on before each one, so that the parent can stop an input that runs
 * over its budget and name it. The parent also caps this thread's heap.
 */
import { performance } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import fc from "fast-check";
import { checkLoaderInput, createWorkspace } from "./check.js";
import { loaderInputs, type LoaderInput } from "./inputs.js";
import type { WorkerRequest, WorkerMessage } from "./run.js";

async function fuzz(request: WorkerRequest): Promise<void> {
  const post = (m: WorkerMessage): void => parentPort!.postMessage(m);
  const workspace = createWorkspace(request.repoRoot);
  const times: number[] = [];
  const byKind: Record<string, number> = {};
  let maxHeapBytes = 0;
  let valid = 0;
  try {
    const details = await fc.check(
      fc.asyncProperty(loaderInputs(workspace.examplesDir), async (input: LoaderInput) => {
        post({ type: "input", input });
        const t0 = performance.now();
        const { violations, exitCode } = await checkLoaderInput(input, workspace);
        times.push(performance.now() - t0);
        maxHeapBytes = Math.max(maxHeapBytes, getHeapStatistics().used_heap_size);
        byKind[input.kind] = (byKind[input.kind] ?? 0) + 1;
        if (exitCode === 0) valid++;
        if (violations.length > 0) throw new Error(violations.join("\n"));
      }),
      {
        seed: request.seed,
        numRuns: request.runs,
        ...(request.timeLimitMs !== undefined
          ? { interruptAfterTimeLimit: request.timeLimitMs, markInterruptAsFailure: false }
          : {}),
      },
    );
    const counterexample = details.counterexample?.[0];
    post({
      type: "done",
      numRuns: details.numRuns,
      numShrinks: details.numShrinks,
      times,
      byKind,
      maxHeapBytes,
      valid,
      ...(details.failed && counterexample !== undefined
        ? {
            failure: {
              input: counterexample,
              message:
                details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance),
            },
          }
        : {}),
    });
  } finally {
    workspace.dispose();
  }
}

void fuzz(workerData as WorkerRequest);
