/**
 * A fleet of clusters bootstrapped with the Pulumi Automation API: one stack per cluster (named
 * after it), a few at a time, and one report at the end.
 *
 *   node dist/examples/fleet/index.js --kubeconfigs ./kubeconfigs [--concurrency 4]
 *   node dist/examples/fleet/index.js --cluster prod-a=./a.yaml --cluster prod-b=./b.yaml
 *
 * Options:
 *   --kubeconfigs DIR    one kubeconfig file per cluster; the file name (without .yaml/.yml/.kubeconfig) is the cluster's name
 *   --cluster NAME=FILE  a cluster and its kubeconfig (repeatable; with or instead of --kubeconfigs)
 *   --spec FILE          the khook spec (default: bootstrap.khook.yaml next to this program)
 *   --concurrency N      clusters in flight at once (default 4)
 *   --work DIR           per-stack working directories, and the file backend unless
 *                        PULUMI_BACKEND_URL is set (default ./.khook-fleet). A stack's Node.js
 *                        dynamic provider starts there, so @pulumi/pulumi must resolve from it.
 *   --json FILE          also write the report as JSON
 *
 * PULUMI_CONFIG_PASSPHRASE must be set (the file backend encrypts the stacks' secrets with it:
 * the kubeconfigs are secret inputs). The pulumi CLI comes from PATH.
 *
 * Why it is safe to run again, and to run on a schedule: each cluster keeps khook's record (its
 * journal) and lease, so a re-run does only what is left. A cluster that failed (unreachable,
 * a step failed) is reported and the others carry on; the exit status is 1 when any cluster
 * failed, and the next run finishes it while the others have nothing to do. Each `up` refreshes
 * first: khook reads its record in the cluster, so a stack whose record says everything is done
 * changes nothing, and a record lost or rolled back in the cluster is noticed and re-applied.
 *
 * In a project that installs khook from npm, import it by name: `import { Khook } from "khook"`.
 */
import fs from "node:fs";
import path from "node:path";
import { LocalWorkspace, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
// This program lives inside the khook package, so it imports the SDK by path.
import { Khook, type KhookStep } from "../../sdk/index.js";
import { textTable } from "./table.js";

const PROJECT = "khook-fleet";
const KHOOK_TYPE = "pulumi-nodejs:dynamic/khook:Khook";

interface Options {
  clusters: { name: string; kubeconfig: string }[];
  spec: string;
  concurrency: number;
  work: string;
  json?: string;
}

/** One line of the report. */
export interface ClusterReport {
  cluster: string;
  stack: string;
  result: "ok" | "failed";
  durationMs: number;
  /** What the Pulumi engine did with the Khook resource: create, update, same (nothing to do), or none (never reached). */
  operation: string;
  /** Steps khook ran in this update. */
  applied: number;
  /** Steps already done according to the cluster's record: not run again. */
  resumed: number;
  /** The error's first line (failed clusters only). */
  error?: string;
}

class UsageError extends Error {}

/** bootstrap.khook.yaml next to the program; in this repository the program runs from dist/, the spec stays in examples/. */
function defaultSpec(): string {
  const here = path.join(__dirname, "bootstrap.khook.yaml");
  return fs.existsSync(here)
    ? here
    : path.resolve(__dirname, "..", "..", "..", "examples", "fleet", "bootstrap.khook.yaml");
}

function parseArgs(argv: string[]): Options {
  const clusters: Options["clusters"] = [];
  let spec = defaultSpec();
  let concurrency = 4;
  let work = path.resolve(".khook-fleet");
  let json: string | undefined;
  const value = (i: number): string => {
    const v = argv[i + 1];
    if (v === undefined) throw new UsageError(`${argv[i]} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i]!;
    if (flag === "--kubeconfigs") {
      const dir = value(i);
      for (const f of fs.readdirSync(dir).sort()) {
        if (!fs.statSync(path.join(dir, f)).isFile()) continue;
        clusters.push({ name: f.replace(/\.(ya?ml|kubeconfig)$/, ""), kubeconfig: path.join(dir, f) });
      }
    } else if (flag === "--cluster") {
      const m = /^([^=]+)=(.+)$/.exec(value(i));
      if (!m) throw new UsageError(`--cluster ${value(i)}: expected NAME=KUBECONFIG`);
      clusters.push({ name: m[1]!, kubeconfig: m[2]! });
    } else if (flag === "--spec") spec = path.resolve(value(i));
    else if (flag === "--concurrency") {
      concurrency = Number(value(i));
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new UsageError(`--concurrency ${value(i)}: expected a whole number of at least 1`);
    } else if (flag === "--work") work = path.resolve(value(i));
    else if (flag === "--json") json = path.resolve(value(i));
    else throw new UsageError(`unknown option ${flag}`);
  }
  if (clusters.length === 0) throw new UsageError("no clusters: give --kubeconfigs DIR or --cluster NAME=KUBECONFIG");
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const c of clusters) {
    // A stack name is the cluster's name, so it must be one.
    if (!/^[A-Za-z0-9_.-]+$/.test(c.name))
      problems.push(`cluster "${c.name}": a stack name allows letters, digits, "_", "." and "-" only`);
    if (seen.has(c.name)) problems.push(`cluster "${c.name}" is given twice`);
    seen.add(c.name);
    if (!fs.existsSync(c.kubeconfig)) problems.push(`cluster "${c.name}": kubeconfig ${c.kubeconfig} does not exist`);
  }
  if (!fs.existsSync(spec)) problems.push(`spec ${spec} does not exist`);
  if (!process.env.PULUMI_CONFIG_PASSPHRASE && process.env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) {
    problems.push("PULUMI_CONFIG_PASSPHRASE is not set: the file backend needs it to encrypt the kubeconfigs");
  }
  if (problems.length > 0) throw new UsageError(problems.join("\n"));
  return { clusters, spec, concurrency, work, ...(json !== undefined ? { json } : {}) };
}

/** Runs `task` over `items`, at most `limit` at a time; results in the items' order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function say(cluster: string, line: string): void {
  process.stderr.write(`[${cluster}] ${line}\n`);
}

/** The stack of one cluster: an inline program with one Khook resource. */
async function stackFor(o: Options, cluster: { name: string; kubeconfig: string }): Promise<Stack> {
  const specText = fs.readFileSync(o.spec, "utf8");
  const kubeconfig = fs.readFileSync(cluster.kubeconfig, "utf8");
  const program = async (): Promise<Record<string, unknown>> => {
    const boot = new Khook("bootstrap", {
      spec: specText,
      baseDir: path.dirname(o.spec),
      vars: { CLUSTER: cluster.name },
      kubeconfig, // a secret input: encrypted in the stack's state
      timeout: "10m",
    });
    return { steps: boot.steps, runStatus: boot.runStatus };
  };
  // One working directory per stack: concurrent stacks never write each other's Pulumi.yaml.
  const workDir = path.join(o.work, "stacks", cluster.name);
  fs.mkdirSync(workDir, { recursive: true });
  const backend = process.env.PULUMI_BACKEND_URL ?? `file://${path.join(o.work, "state")}`;
  if (backend.startsWith("file://")) fs.mkdirSync(backend.slice("file://".length), { recursive: true });
  return LocalWorkspace.createOrSelectStack(
    { projectName: PROJECT, stackName: cluster.name, program },
    { workDir, projectSettings: { name: PROJECT, runtime: "nodejs", backend: { url: backend } } },
  );
}

/** The first line worth showing of a failed update: the provider's own message, not Pulumi's summary of it. */
function firstErrorLine(diagnostics: readonly string[], e: unknown): string {
  const lines = diagnostics
    .flatMap((d) => d.split("\n"))
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const first = lines.find((l) => !/^(update failed|one or more errors occurred)/i.test(l));
  if (first !== undefined) return first;
  return (
    (e instanceof Error ? e.message : String(e))
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "") ?? "unknown error"
  );
}

async function bootstrap(o: Options, cluster: { name: string; kubeconfig: string }): Promise<ClusterReport> {
  const t0 = Date.now();
  let operation = "none";
  const diagnostics: string[] = [];
  const onEvent = (ev: EngineEvent): void => {
    const done = ev.resOutputsEvent?.metadata;
    if (done?.type === KHOOK_TYPE && done.op !== "refresh") operation = done.op;
    const d = ev.diagnosticEvent;
    if (d?.severity === "error") diagnostics.push(d.message);
  };
  say(cluster.name, "up");
  try {
    const stack = await stackFor(o, cluster);
    const up = await stack.up({ refresh: true, onEvent });
    const steps = (up.outputs.steps?.value ?? []) as KhookStep[];
    const included = steps.filter((s) => s.when === "included");
    // "same": the engine did not call khook at all (after the refresh read the record, nothing was left to do).
    const ran = operation === "create" || operation === "update";
    const applied = ran ? included.filter((s) => s.attempts > 0).length : 0;
    const report: ClusterReport = {
      cluster: cluster.name,
      stack: cluster.name,
      result: "ok",
      durationMs: Date.now() - t0,
      operation,
      applied,
      resumed: included.length - applied,
    };
    say(cluster.name, `ok: ${applied} applied, ${report.resumed} resumed`);
    return report;
  } catch (e) {
    const error = firstErrorLine(diagnostics, e);
    say(cluster.name, `failed: ${error}`);
    return {
      cluster: cluster.name,
      stack: cluster.name,
      result: "failed",
      durationMs: Date.now() - t0,
      operation,
      applied: 0,
      resumed: 0,
      error,
    };
  }
}

function table(rows: readonly ClusterReport[]): string {
  const head = ["CLUSTER", "RESULT", "TIME", "PULUMI", "APPLIED", "RESUMED", "ERROR"];
  const cells = rows.map((r) => [
    r.cluster,
    r.result,
    `${(r.durationMs / 1000).toFixed(1)}s`,
    r.operation,
    String(r.applied),
    String(r.resumed),
    r.error ?? "",
  ]);
  return textTable(head, cells);
}

async function main(argv: string[]): Promise<number> {
  let o: Options;
  try {
    o = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`fleet: ${e.message}\n`);
    return 2;
  }
  const reports = await mapLimited(o.clusters, o.concurrency, (c) => bootstrap(o, c));
  const failed = reports.filter((r) => r.result === "failed");
  process.stdout.write(
    `${table(reports)}\n\n${reports.length - failed.length} of ${reports.length} clusters ok${failed.length > 0 ? `; failed: ${failed.map((r) => r.cluster).join(", ")} (run again: it resumes)` : ""}\n`,
  );
  if (o.json !== undefined)
    fs.writeFileSync(
      o.json,
      `${JSON.stringify({ clusters: reports, ok: reports.length - failed.length, failed: failed.length }, null, 2)}\n`,
    );
  return failed.length > 0 ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (e: unknown) => {
      process.stderr.write(`fleet: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
