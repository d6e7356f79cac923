/**
 * Benchmark: `pulumi preview` and a no-op `pulumi up` of a 100-step Khook,
 * against the same commands on a baseline program with one trivial dynamic
 * resource. The difference is what khook adds (program-time spec reading and
 * bundling, the provider's check and diff, the larger property maps).
 * Target, for the dynamic resource and the native provider alike: +0.16 s for
 * preview and +0.28 s for a no-op up.
 *
 * The native provider (`khook:index:Khook`) is measured both ways it ships:
 * from source (the pulumi-resource-khook launcher on PATH) and as the single
 * executable (dist/sea/khook under the plugin's name on PATH).
 *
 * Wall time on a shared machine moves with its load; the CPU time of each
 * command (pulumi and every process it waited for: the program, the
 * providers) moves far less, so it is printed beside it.
 *
 * Real pulumi CLI, file backend, the local test cluster (the 100 steps are
 * applied once, so the no-op up has state to compare against).
 *
 * What the Khook's data alone costs: a trivial dynamic resource that carries the Khook's inputs
 * and outputs (the spec text, the plan, the steps; copied from its state) runs in the same rounds.
 * Its overhead over the baseline is what Pulumi spends moving and storing those property maps
 * (protobuf Structs in the program and the provider, the state file, the outputs printed); the
 * dynamic resource's overhead over it is khook's own code.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { clusterAlive, clusterDir, readClusterState, startCluster, stopCluster } from "../test/harness/cluster.js";
import { testCluster } from "../test/harness/index.js";
import { ensureToolchain } from "../test/harness/toolchain.js";
import { ensureSea } from "../test/harness/sea.js";
import { pulumiTools, useShell } from "../test/integration/support/pulumi-env.js";
import { ClusterView } from "../test/integration/support/pulumi-kube.js";
import { KHOOK_PROGRAM, programArgs, PulumiProject } from "../test/integration/support/pulumi-project.js";
import { configMapStep, spec } from "../test/integration/support/pulumi-specs.js";
import { childTicks, TICKS_PER_SECOND } from "./startup.js";

const STEPS = 100;
const RUNS = Number(process.env.KHOOK_BENCH_RUNS ?? "7");
/** The overheads over the trivial dynamic resource that both shells are held to. */
const TARGET_MS = { preview: 160, up: 280 };

const BASELINE_PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");
const provider = {
  async create(inputs) { return { id: "trivial", outs: inputs }; },
  async diff() { return { changes: false }; },
};
class Trivial extends pulumi.dynamic.Resource {
  constructor(name, props, opts) { super(provider, name, props, opts); }
}
exports.value = new Trivial("trivial", { value: "x" }).id;
`;

/**
 * A trivial dynamic resource with the Khook's inputs and outputs (data.json beside the program:
 * `inputs` as they are in the Khook's state, `outputs` those it adds), exporting what the Khook
 * program exports. create reads the outputs at run time, so the provider's closure stays small.
 */
const DATA_PROGRAM = `"use strict";
const fs = require("fs");
const pulumi = require("@pulumi/pulumi");
const { inputs, outputs } = JSON.parse(fs.readFileSync("data.json", "utf8"));
const provider = {
  async create(ins) { return { id: "data", outs: { ...ins, ...JSON.parse(require("fs").readFileSync("data.json", "utf8")).outputs } }; },
  async diff() { return { changes: false }; },
};
class Data extends pulumi.dynamic.Resource {
  constructor(name, props, opts) { super(provider, name, props, opts); }
}
const unset = Object.fromEntries(Object.keys(outputs).map((k) => [k, undefined]));
const data = new Data("data", { ...inputs, ...unset, kubeconfig: pulumi.secret(inputs.kubeconfig) }, { additionalSecretOutputs: ["kubeconfig"] });
for (const k of ["steps", "runStatus", "recordNamespace", "recordName", "recordUpdatedAt", "engineVersion", "plan"]) exports[k] = data[k];
`;

/** The Khook's inputs (its kubeconfig in plain text, as the program gives it) and the outputs it adds, from its state. */
async function khookData(project: PulumiProject, kubeconfig: string): Promise<string> {
  const [res] = await project.khookResources();
  if (!res) throw new Error("no Khook in the stack");
  const inputs: Record<string, unknown> = { ...res.inputs, kubeconfig: fs.readFileSync(kubeconfig, "utf8") };
  delete inputs.__provider;
  const outputs = Object.fromEntries(Object.entries(res.outputs).filter(([k]) => !(k in res.inputs)));
  return JSON.stringify({ inputs, outputs });
}

/** A realistic 100-step spec: ConfigMaps in ten chains of ten. */
export function hundredStepSpec(): string {
  let steps = "";
  for (let i = 0; i < STEPS; i++) {
    const name = `step-${String(i).padStart(3, "0")}`;
    const needs = i >= 10 ? `    needs: [step-${String(i - 10).padStart(3, "0")}]\n` : "";
    steps += configMapStep(name, { index: String(i), chain: String(i % 10) }, needs);
  }
  return spec("bench-hundred", steps);
}

/** Wall and CPU time of one pulumi command (CPU: pulumi and every process it waited for). */
async function timedCpu(project: PulumiProject, args: string[]): Promise<{ wall: number; cpu: number }> {
  const ticks = childTicks();
  const t0 = performance.now();
  await project.ok(args);
  return { wall: performance.now() - t0, cpu: ((childTicks() - ticks) / TICKS_PER_SECOND) * 1000 };
}

async function timed(project: PulumiProject, args: string[]): Promise<number> {
  return (await timedCpu(project, args)).wall;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Figures {
  preview: number;
  up: number;
  /** The fastest runs: noise on a shared machine only ever adds time. */
  previewMin: number;
  upMin: number;
  /** CPU time, median. */
  previewCpu: number;
  upCpu: number;
}

/**
 * Medians over RUNS rounds; each round runs the same command on every project
 * back to back, so a load spike on the machine hits both sides alike.
 */
async function measure(projects: PulumiProject[]): Promise<Figures[]> {
  for (const p of projects) await timed(p, ["preview"]); // warm caches (and khook's summary memo)
  const preview: { wall: number; cpu: number }[][] = projects.map(() => []);
  const up: { wall: number; cpu: number }[][] = projects.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (const [j, p] of projects.entries()) preview[j]!.push(await timedCpu(p, ["preview", "--expect-no-changes"]));
    for (const [j, p] of projects.entries()) up[j]!.push(await timedCpu(p, ["up", "--yes", "--expect-no-changes"]));
  }
  const wall = (xs: { wall: number }[]): number[] => xs.map((x) => x.wall);
  const cpu = (xs: { cpu: number }[]): number[] => xs.map((x) => x.cpu);
  return projects.map((_, j) => ({
    preview: median(wall(preview[j]!)),
    up: median(wall(up[j]!)),
    previewMin: Math.min(...wall(preview[j]!)),
    upMin: Math.min(...wall(up[j]!)),
    previewCpu: median(cpu(preview[j]!)),
    upCpu: median(cpu(up[j]!)),
  }));
}

/** khook's previews with the summary memo off: every provider process loads the spec. */
async function measureCold(project: PulumiProject): Promise<number> {
  project.env.KHOOK_PULUMI_MEMO = "off";
  try {
    const xs: number[] = [];
    for (let i = 0; i < RUNS; i++) xs.push(await timed(project, ["preview", "--expect-no-changes"]));
    return median(xs);
  } finally {
    delete project.env.KHOOK_PULUMI_MEMO;
  }
}

/** The provider's own work for the spec, in a fresh process: module loading, check and diff, memo off. */
async function providerWork(project: PulumiProject): Promise<{ coldMs: number; warmMs: number }> {
  const [res] = await project.khookResources();
  if (!res) throw new Error("no Khook in the stack");
  const inputs: Record<string, unknown> = { ...res.inputs };
  const outputs: Record<string, unknown> = { ...res.outputs };
  for (const o of [inputs, outputs]) {
    delete o.kubeconfig; // ciphertext in an export; check and diff do not need it
    delete o.secretVars;
  }
  const file = path.join(project.dir, "provider-work.json");
  fs.writeFileSync(file, JSON.stringify({ inputs, outputs }));
  const script = `
    const t = () => Number(process.hrtime.bigint()) / 1e6;
    const { inputs, outputs } = JSON.parse(require("fs").readFileSync(${JSON.stringify(file)}, "utf8"));
    (async () => {
      const t0 = t();
      const h = require(${JSON.stringify(path.join(__dirname, "..", "provider", "pulumi", "handlers.js"))});
      let c = await h.check(inputs, inputs);
      await h.diff("id", outputs, { ...c.inputs, __provider: "x" });
      const cold = t() - t0;
      const t1 = t();
      c = await h.check(inputs, inputs);
      await h.diff("id", outputs, { ...c.inputs, __provider: "x" });
      process.stdout.write(JSON.stringify({ coldMs: cold, warmMs: t() - t1, failures: c.failures.length }));
    })();`;
  const out = execFileSync(process.execPath, ["-e", script], {
    env: { ...process.env, KHOOK_PULUMI_MEMO: "off" },
    encoding: "utf8",
  });
  const r = JSON.parse(out) as { coldMs: number; warmMs: number; failures: number };
  if (r.failures > 0) throw new Error("check failed on the benchmark spec");
  return r;
}

const s = (ms: number): string => `${(ms / 1000).toFixed(2)}s`;
const signed = (ms: number): string => `${ms >= 0 ? "+" : "-"}${(Math.abs(ms) / 1000).toFixed(2)}s`;

/** The test cluster when one is running (npm test's global setup, the demo's), else a private one. */
async function benchCluster(): Promise<{ kubeconfig: string; stop: () => Promise<void> }> {
  try {
    const { kubeconfig } = await testCluster();
    return { kubeconfig, stop: async () => undefined };
  } catch {
    const demo = readClusterState(clusterDir("demo"));
    if (demo && clusterAlive(demo)) return { kubeconfig: demo.kubeconfig, stop: async () => undefined };
    await ensureToolchain({ only: ["etcd", "kubernetes", "kwok", "pulumi"] });
    const c = await startCluster({ name: `bench-${process.pid}`, watchPid: process.pid });
    return { kubeconfig: c.kubeconfig, stop: () => stopCluster(c) };
  }
}

export async function benchPulumi(): Promise<void> {
  const { kubeconfig, stop } = await benchCluster();
  const tools = pulumiTools();
  const cluster = await ClusterView.open(kubeconfig);
  const ns = `khook-bench-${process.pid}`;
  const baseline = new PulumiProject(tools, { name: "khook-bench-baseline", program: BASELINE_PROGRAM });
  const khook = new PulumiProject(tools, {
    name: "khook-bench",
    program: KHOOK_PROGRAM,
    files: { "boot.khook.yaml": hundredStepSpec() },
  });
  const dataOnly = new PulumiProject(tools, { name: "khook-bench-data", program: DATA_PROGRAM });
  const native = new PulumiProject(tools, {
    name: "khook-bench-native",
    program: KHOOK_PROGRAM,
    files: { "boot.khook.yaml": hundredStepSpec() },
  });
  useShell(native, "native");
  process.env.KHOOK_TEST_SEA = await ensureSea(() => undefined);
  const sea = new PulumiProject(tools, {
    name: "khook-bench-sea",
    program: KHOOK_PROGRAM,
    files: { "boot.khook.yaml": hundredStepSpec() },
  });
  useShell(sea, "sea");
  const projects: [PulumiProject, string][] = [
    [khook, ns],
    [native, `${ns}-native`],
    [sea, `${ns}-sea`],
  ];
  try {
    for (const [project, namespace] of projects) {
      // Each its own namespace: another project's stack may not take a bootstrap over (provider/pulumi/owner.ts).
      await cluster.createNamespace(namespace);
      project.write(
        "args.json",
        programArgs({
          args: { specFile: "./boot.khook.yaml", vars: { NS: namespace }, parallelism: 16 },
          kubeconfigFile: kubeconfig,
        }),
      );
      await project.init();
    }
    await baseline.init();
    await baseline.ok(["up", "--yes", "--skip-preview"]);
    const t0 = performance.now();
    await khook.ok(["up", "--yes", "--skip-preview"]);
    const firstUp = performance.now() - t0;
    await native.ok(["up", "--yes", "--skip-preview"]);
    await sea.ok(["up", "--yes", "--skip-preview"]);
    dataOnly.write("data.json", await khookData(khook, kubeconfig));
    await dataOnly.init();
    await dataOnly.ok(["up", "--yes", "--skip-preview"]);

    const [b, k, n, e, d] = (await measure([baseline, khook, native, sea, dataOnly])) as [
      Figures,
      Figures,
      Figures,
      Figures,
      Figures,
    ];
    const cold = await measureCold(khook);
    const p = await providerWork(khook);
    const stateBytes = (await khook.exportText()).length;

    const rows: [string, number, number, number, number, number][] = [
      ["preview (median)", TARGET_MS.preview, b.preview, k.preview, n.preview, e.preview],
      ["preview (fastest)", TARGET_MS.preview, b.previewMin, k.previewMin, n.previewMin, e.previewMin],
      ["preview (cpu)", TARGET_MS.preview, b.previewCpu, k.previewCpu, n.previewCpu, e.previewCpu],
      ["no-op up (median)", TARGET_MS.up, b.up, k.up, n.up, e.up],
      ["no-op up (fastest)", TARGET_MS.up, b.upMin, k.upMin, n.upMin, e.upMin],
      ["no-op up (cpu)", TARGET_MS.up, b.upCpu, k.upCpu, n.upCpu, e.upCpu],
    ];
    process.stdout.write(
      `\npulumi: ${STEPS}-step Khook vs one trivial dynamic resource (${RUNS} interleaved rounds, load average ${os.loadavg()[0]!.toFixed(1)}): ` +
        `the dynamic resource, and the native khook:index:Khook from source and as the single executable; ` +
        `target for each: ${signed(TARGET_MS.preview)} preview / ${signed(TARGET_MS.up)} no-op up over the baseline ` +
        `(cpu rows: pulumi and every process it waited for)\n`,
    );
    process.stdout.write(
      `  ${"command".padEnd(20)} ${"baseline".padStart(9)} ${"dynamic".padStart(9)} ${"extra".padStart(9)}      ${"native".padStart(9)} ${"extra".padStart(9)} ${"sea".padStart(15)} ${"extra".padStart(9)} ${"target".padStart(15)}\n`,
    );
    const verdict = (extra: number, target: number): string => (extra <= target ? "ok" : "OVER").padEnd(4);
    for (const [name, target, base, kh, nat, exe] of rows) {
      const extra = kh - base;
      process.stdout.write(
        `  ${name.padEnd(20)} ${s(base).padStart(9)} ${s(kh).padStart(9)} ${signed(extra).padStart(9)}  ${verdict(extra, target)}` +
          ` ${s(nat).padStart(9)} ${signed(nat - base).padStart(9)}  ${verdict(nat - base, target)}` +
          ` ${s(exe).padStart(9)} ${signed(exe - base).padStart(9)}  ${verdict(exe - base, target)} ${signed(target).padStart(9)}\n`,
      );
    }
    process.stdout.write(
      `  the Khook's inputs and outputs on a trivial dynamic resource (its data alone): preview ${s(d.preview)} (cpu ${signed(d.previewCpu - b.previewCpu)} over the baseline), ` +
        `no-op up ${s(d.up)} (cpu ${signed(d.upCpu - b.upCpu)}); the dynamic resource over its data alone, cpu: preview ${signed(k.previewCpu - d.previewCpu)}, no-op up ${signed(k.upCpu - d.upCpu)}\n`,
    );
    process.stdout.write(
      `  pulumi preview, summary memo off: ${s(cold)} (${signed(cold - b.preview)} over the baseline)\n`,
    );
    process.stdout.write(`  first apply of ${STEPS} steps: ${s(firstUp)}\n`);
    process.stdout.write(
      `  the provider's own work (fresh process, memo off): ${p.coldMs.toFixed(0)}ms for module loading + check + diff, then ${p.warmMs.toFixed(0)}ms per check + diff\n`,
    );
    process.stdout.write(`  state size (stack export): ${(stateBytes / 1024).toFixed(0)} KiB\n`);
    for (const [project] of projects) await project.ok(["destroy", "--yes", "--skip-preview"]);
  } finally {
    await baseline.cleanup();
    await dataOnly.cleanup();
    for (const [project, namespace] of projects) {
      await project.cleanup();
      await cluster.deleteNamespace(namespace).catch(() => undefined);
    }
    cluster.close();
    await stop();
  }
}

if (require.main === module) {
  benchPulumi().catch((e) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
