/**
 * Lifecycle hooks (issue 12): what a hook adds to a step, measured on the real
 * pipeline (provider/hooks, StepHooks.render) with real parts and no cluster:
 *
 * - one exec function over 200 objects: the example add-labels function (node),
 *   and a `cat` function (the identity: the floor of spawning any process);
 * - one webhook round trip per step: a pre-apply webhook on a real HTTP server on
 *   loopback answering "no changes", over a step of 10 objects.
 *
 * Each figure is the median over RUNS runs after ten warm-up runs, minus the same render
 * without hooks. Figures, not assertions.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { StepHooks, type AttemptIo } from "../provider/hooks/step-hooks.js";
import { loadSpec } from "../provider/load-spec.js";
import { HookServer } from "../test/harness/hook-server.js";
import { childTicks, TICKS_PER_SECOND } from "./startup.js";

const RUNS = 21;
const FUNCTION_TARGET_MS = 150;
const WEBHOOK_TARGET_MS = 10;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function configMaps(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `cm-${i}`, namespace: "bench", labels: { app: "bench" } },
    data: { index: String(i), payload: "x".repeat(200) },
  }));
}

function stepHooks(dir: string, hooksYaml: string): StepHooks {
  const file = path.join(dir, `spec-${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(
    file,
    `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: bench\nhooks:\n${hooksYaml}steps:\n  - name: cms\n    apply:\n      manifests:\n        - inline: "{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}"\n`,
  );
  const spec = loadSpec({ file, env: {} });
  return new StepHooks(spec, spec.steps[0]!, "apply", spec.redactor);
}

interface Figure {
  /** Median wall time of one render. */
  wallMs: number;
  /** Mean CPU of one render: khook's own plus its children's (the function processes); less sensitive to a busy machine. */
  cpuMs: number;
}

async function timeRender(hooks: StepHooks, objects: Record<string, unknown>[]): Promise<Figure> {
  const io: AttemptIo = { signal: new AbortController().signal, log: () => undefined };
  // Warm-up: the JIT, the webhook's keep-alive connection, the page cache for the function.
  for (let i = 0; i < 10; i++) await hooks.render(objects, io, { send: true });
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  const ticks0 = childTicks();
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await hooks.render(objects, io, { send: true });
    times.push(performance.now() - t0);
  }
  const own = process.cpuUsage(cpu0);
  const childMs = ((childTicks() - ticks0) / TICKS_PER_SECOND) * 1000;
  return { wallMs: median(times), cpuMs: ((own.user + own.system) / 1000 + childMs) / RUNS };
}

export async function benchHooks(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-hooks-"));
  const server = await HookServer.start();
  try {
    fs.copyFileSync(path.resolve(__dirname, "../../examples/functions/add-labels"), path.join(dir, "add-labels"));
    fs.writeFileSync(path.join(dir, "identity"), "#!/bin/sh\nexec cat\n");
    for (const f of ["add-labels", "identity"]) fs.chmodSync(path.join(dir, f), 0o755);
    const many = configMaps(200);
    const few = configMaps(10);
    const none = stepHooks(dir, "  - {name: unused, on: [finalize], webhook: {url: 'https://x.example'}}\n");
    const baseMany = await timeRender(none, many);
    const baseFew = await timeRender(none, few);
    const labels = await timeRender(
      stepHooks(
        dir,
        "  - {name: labels, on: [post-render], function: {exec: ./add-labels, config: {data: {team: bench}}}}\n",
      ),
      many,
    );
    const identity = await timeRender(
      stepHooks(dir, "  - {name: identity, on: [post-render], function: {exec: ./identity}}\n"),
      many,
    );
    server.on("pre-apply", { kind: "ok" });
    const webhook = await timeRender(
      stepHooks(dir, `  - {name: audit, on: [pre-apply], webhook: {url: '${server.url}'}}\n`),
      few,
    );
    const row = (label: string, f: Figure, base: Figure, target?: number): string => {
      const wall = f.wallMs - base.wallMs;
      const cpu = f.cpuMs - base.cpuMs;
      return `  ${label.padEnd(66)} ${wall.toFixed(1).padStart(6)} ms wall ${cpu.toFixed(1).padStart(6)} ms cpu${target !== undefined ? `  (target <= ${target} ms wall: ${wall <= target ? "met" : "NOT met"})` : ""}`;
    };
    console.log(
      `== hooks: overhead per step (median wall and mean cpu of ${RUNS} runs after ten warm-up runs, minus the same render without hooks) ==`,
    );
    console.log(row("one exec function over 200 objects (add-labels, node)", labels, baseMany, FUNCTION_TARGET_MS));
    console.log(row("one exec function over 200 objects (cat: the process floor)", identity, baseMany));
    console.log(
      row("one webhook round trip per step (pre-apply, loopback, 10 objects)", webhook, baseFew, WEBHOOK_TARGET_MS),
    );
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
