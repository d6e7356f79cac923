/**
 * One operation of the scale benchmark in a process of its own (bench/scale.ts spawns it):
 * `scale-run.js KUBECONFIG SPEC apply|destroy` loads the spec, runs the operation with the
 * journal the spec asks for, and prints a JSON report: wall time from the start of the load,
 * the process's peak RSS, and every API request the kube client sent, by method and path.
 */
import { performance } from "node:perf_hooks";
import { KubeClient } from "../provider/kube/index.js";
import { applyOperation, destroyOperation } from "../provider/operations.js";
import { loadSpec } from "../provider/load-spec.js";

export interface ScaleRunReport {
  ms: number;
  maxRssMb: number;
  status: string;
  /** The first failed steps' reasons. */
  failures: string[];
  /** "METHOD path" -> count. */
  requests: Record<string, number>;
}

async function main(): Promise<void> {
  const [kubeconfig, file, operation] = process.argv.slice(2);
  if (kubeconfig === undefined || file === undefined || (operation !== "apply" && operation !== "destroy"))
    throw new Error("usage: scale-run KUBECONFIG SPEC apply|destroy");
  const t0 = performance.now();
  const spec = loadSpec({ file, env: {} });
  const client = await KubeClient.connect({ kubeconfigPath: kubeconfig });
  const run = operation === "apply" ? applyOperation : destroyOperation;
  const result = await run(spec, { target: {}, client, journal: "spec" });
  const ms = performance.now() - t0;
  client.close();
  const report: ScaleRunReport = {
    ms,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    status: result.status,
    failures: result.steps
      .filter((s) => s.status === "failed")
      .slice(0, 3)
      .map((s) => `${s.name}: ${s.reason}`),
    requests: Object.fromEntries(client.requestCounts),
  };
  process.stdout.write(JSON.stringify(report));
}

void main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
