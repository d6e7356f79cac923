/** Runs the real khook CLI (bin/khook) as a subprocess, the way a person or CI does. */
import { spawn, type ChildProcess } from "node:child_process";
import { toolPath } from "../../harness/index.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { repoRoot } from "../../harness/util.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export const KHOOK_BIN = path.join(repoRoot(), "bin", "khook");

export interface CliOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
  /** A command that runs khook (`node bin/khook ...` follows it as its arguments), e.g. unshare. */
  prefix?: string[];
}

/** The environment a test gives khook: only what it sets, plus PATH and the kubeconfig. */
export function cliEnv(kubeconfig: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KUBECONFIG: kubeconfig,
    CI: "true",
    NO_COLOR: "1",
    ...extra,
  };
}

export function startKhook(
  args: string[],
  opts: CliOptions = {},
): { child: ChildProcess; done: Promise<CliResult>; output: () => string } {
  const argv = [...(opts.prefix ?? []), process.execPath, KHOOK_BIN, ...args];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin!.end(opts.input ?? "");
  const done = new Promise<CliResult>((resolve) =>
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 128 + 9 : 1), stdout, stderr })),
  );
  return { child, done, output: () => stdout + stderr };
}

export function runKhook(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return startKhook(args, opts).done;
}

/** A temp directory holding `spec.yaml` and the files it references. */
export function specDir(spec: string, files: Record<string, string> = {}): { dir: string; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-it-"));
  for (const [rel, content] of Object.entries({ "spec.yaml": spec, ...files })) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return { dir, file: path.join(dir, "spec.yaml") };
}

export function khookSpec(name: string, steps: string, extra = ""): string {
  return `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: ${name}\n${extra}steps:\n${steps}`;
}

export interface JsonStep {
  name: string;
  type: string;
  status: "ok" | "failed" | "skipped";
  reason: string;
  attempts: number;
  durationMs: number;
  error?: string;
}

export function parseRun(r: CliResult): { status: string; steps: JsonStep[] } {
  try {
    return JSON.parse(r.stdout) as { status: string; steps: JsonStep[] };
  } catch {
    throw new Error(`khook did not print JSON (exit ${r.code}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
}

export function stepOf(run: { steps: JsonStep[] }, name: string): JsonStep {
  const s = run.steps.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no step ${name} in ${JSON.stringify(run.steps.map((x) => x.name))}`);
  return s;
}

/** Resolves once the running khook has printed something matching `pattern`; rejects if it exits first. */
export function outputMatches(proc: ReturnType<typeof startKhook>, pattern: RegExp): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (pattern.test(proc.output())) {
        clearInterval(check);
        resolve();
      }
    }, 50);
    proc.done.then(() => {
      clearInterval(check);
      if (pattern.test(proc.output())) resolve();
      else reject(new Error(`khook exited before printing ${String(pattern)}:\n${proc.output()}`));
    }, reject);
  });
}

// Spec building blocks shared by the CLI scenario tests.
export const indent = (text: string, n: number) => text.replace(/^/gm, " ".repeat(n));
export const cm = (name: string, ns: string, data = 'a: "1"') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  ${data}\n`;
export const applyStep = (name: string, manifest: string, extra = "") =>
  `  - name: ${name}\n${extra}    apply:\n      manifests:\n        - inline: |\n${indent(manifest, 12)}\n`;
/** A json-patch `test` fails until the ConfigMap's data.ready is "yes": a step the test can make pass. */
export const gateStep = (name: string, ns: string, extra = "") =>
  `  - name: ${name}\n${extra}    patch:\n      target: configmap/gate\n      namespace: ${ns}\n      type: json\n      patch:\n        - { op: test, path: /data/ready, value: "yes" }\n`;

/** first -> blocked (waits until the gate ConfigMap says ready) -> `last`: a run that stops in the middle. */
export const gatedChain = (ns: string, last: string) =>
  `${applyStep("first", cm("first", ns))}  - name: blocked\n    needs: [first]\n    wait:\n      for: jsonpath={.data.ready}=yes\n      on: configmap/gate\n      namespace: ${ns}\n${applyStep(last, cm(last, ns), "    needs: [blocked]\n")}`;

/** A `state:` block keeping the record in namespace `ns`. */
export const stateIn = (ns: string) => `state:\n  namespace: ${ns}\n`;

/**
 * Resolves when the record Secret `secret` in `ns` holds step `step` as ok: a `kubectl get --watch`
 * on the Secret, so a test acts right after a running khook recorded a step, without polling.
 */
export function stepRecorded(kubeconfig: string, ns: string, secret: string, step: string): Promise<void> {
  return recordShows(kubeconfig, ns, secret, `step ${step} recorded ok`, (rec) => rec.steps?.[step]?.status === "ok");
}

/** The parts of the state record tests watch for. */
export interface WatchedRecord {
  steps?: Record<string, { status?: string }>;
  helmInFlight?: Record<string, { pid?: number; revision?: number; operation?: string }>;
}

/** Resolves once the record Secret holds a record for which `holds` is true (a watch, as stepRecorded). */
export function recordShows(
  kubeconfig: string,
  ns: string,
  secret: string,
  what: string,
  holds: (record: WatchedRecord) => boolean,
): Promise<void> {
  const args = [
    "--kubeconfig",
    kubeconfig,
    "get",
    "secrets",
    "-n",
    ns,
    "--watch",
    `--field-selector=metadata.name=${secret}`,
    "-o",
    'jsonpath={.data.record\\.json}{"\\n"}',
  ];
  const child = spawn(toolPath("kubectl"), args, { stdio: ["ignore", "pipe", "pipe"] });
  let buffered = "";
  let stderr = "";
  return new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buffered += d;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        if (holds(JSON.parse(Buffer.from(line, "base64").toString("utf8")) as WatchedRecord)) {
          child.kill();
          resolve();
        }
      }
    });
    child.on("exit", () => reject(new Error(`kubectl get --watch ended before the record showed ${what}: ${stderr}`)));
  });
}
