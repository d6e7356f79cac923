/**
 * A throwaway Pulumi project for the integration tests and the demo: a
 * directory with Pulumi.yaml, a CommonJS program, the files it references,
 * and a node_modules in which `khook` is this checkout and `@pulumi` is the
 * repository's — so the program and the dynamic provider (which resolves
 * `khook/provider/pulumi/handlers` from the program's directory) both load this
 * build, as they would an installed package. The backend is a local file
 * backend private to the project; nothing reaches the network (automatic
 * plugin acquisition is off).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { KHOOK_TYPE, NATIVE_TYPE } from "./pulumi-specs.js";

export interface PulumiTools {
  /** The pulumi binary. */
  pulumi: string;
  /** Environment for pulumi (PATH with the language host and the nodejs dynamic provider shim). */
  env: NodeJS.ProcessEnv;
}

export interface PulumiRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout + stderr. */
  output: string;
}

export interface ProjectOptions {
  /** The project name (Pulumi.yaml `name`). */
  name?: string;
  /** The program, CommonJS (index.js). Ignored with `bare`. */
  program: string;
  /**
   * Write only `files`: no Pulumi.yaml, program, package.json or linked
   * node_modules (the consumer test lays the project out like a user would).
   */
  bare?: boolean;
  /** More files, relative to the project directory. */
  files?: Record<string, string>;
  stack?: string;
  /** Where the project goes (default: a new temp directory). */
  dir?: string;
  /** Where the file backend keeps its state (default: <dir>/.state). */
  stateDir?: string;
}

/** The repository root: the nearest directory above this file with package.json named khook. */
export function khookRoot(): string {
  let dir = __dirname;
  for (;;) {
    const pj = path.join(dir, "package.json");
    if (fs.existsSync(pj) && (JSON.parse(fs.readFileSync(pj, "utf8")) as { name?: string }).name === "khook")
      return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the khook package above ${__dirname}`);
    dir = up;
  }
}

/** Makes `khook` and `@pulumi/pulumi` resolvable from `dir` the way an npm install would. */
export function linkKhook(dir: string): void {
  const root = khookRoot();
  const nm = path.join(dir, "node_modules");
  fs.mkdirSync(nm, { recursive: true });
  const link = (name: string, target: string): void => {
    const p = path.join(nm, name);
    try {
      if (fs.realpathSync(p) === fs.realpathSync(target)) return;
      fs.rmSync(p, { recursive: true, force: true });
    } catch {
      // absent
    }
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.symlinkSync(target, p, "dir");
  };
  link("khook", root);
  link("@pulumi", path.join(root, "node_modules", "@pulumi"));
}

export class PulumiProject {
  readonly dir: string;
  readonly stateDir: string;
  readonly stack: string;
  readonly env: NodeJS.ProcessEnv;
  /** Everything every pulumi command printed, in order: the secrets test greps it. */
  readonly transcript: string[] = [];
  private readonly pulumiBin: string;

  constructor(tools: PulumiTools, opts: ProjectOptions) {
    this.dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "khook-pulumi-it-"));
    this.stateDir = opts.stateDir ?? path.join(this.dir, ".state");
    this.stack = opts.stack ?? "test";
    this.pulumiBin = tools.pulumi;
    fs.mkdirSync(this.stateDir, { recursive: true });
    fs.mkdirSync(this.dir, { recursive: true });
    if (!opts.bare) this.layOut(opts);
    for (const [rel, content] of Object.entries(opts.files ?? {})) this.write(rel, content);
    this.env = {
      ...tools.env,
      PULUMI_BACKEND_URL: `file://${this.stateDir}`,
      PULUMI_HOME: path.join(this.stateDir, ".pulumi-home"),
      PULUMI_CONFIG_PASSPHRASE: tools.env.PULUMI_CONFIG_PASSPHRASE ?? "khook-test-passphrase",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_SKIP_CONFIRMATIONS: "true",
      PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
      PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
      PULUMI_SUPPRESS_COPILOT_LINK: "true",
      NO_COLOR: "1",
    };
  }

  /** Pulumi.yaml, a CommonJS program (no ts-node), package.json, and node_modules linking this checkout. */
  private layOut(opts: ProjectOptions): void {
    fs.writeFileSync(
      path.join(this.dir, "Pulumi.yaml"),
      `name: ${opts.name ?? "khook-it"}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\ndescription: khook integration test\n`,
    );
    fs.writeFileSync(path.join(this.dir, "index.js"), opts.program);
    fs.writeFileSync(
      path.join(this.dir, "package.json"),
      `${JSON.stringify({ name: opts.name ?? "khook-it", private: true, main: "index.js" }, null, 2)}\n`,
    );
    linkKhook(this.dir);
  }

  write(rel: string, content: string): void {
    const p = path.join(this.dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }

  /** Runs pulumi in the project. Never throws on a non-zero exit. */
  run(
    args: string[],
    opts: {
      timeoutMs?: number;
      onSpawn?: (pid: number) => void;
      input?: string;
      onOutput?: (sofar: string) => void;
    } = {},
  ): Promise<PulumiRun> {
    const full = [...args, "--color", "never"];
    return new Promise((resolve, reject) => {
      const child = spawn(this.pulumiBin, full, { cwd: this.dir, env: this.env, stdio: ["pipe", "pipe", "pipe"] });
      if (child.pid !== undefined) opts.onSpawn?.(child.pid);
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
        opts.onOutput?.(stdout + stderr);
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
        opts.onOutput?.(stdout + stderr);
      });
      child.stdin.end(opts.input ?? "");
      const timer = setTimeout(() => {
        stderr += `\n[pulumi ${args.join(" ")} timed out after ${opts.timeoutMs} ms; killed]\n`;
        child.kill("SIGKILL");
      }, opts.timeoutMs ?? 600_000);
      child.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        const r = {
          code: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1),
          stdout,
          stderr,
          output: `${stdout}${stderr}`,
        };
        // The command line as typed, minus values (a config value may be a secret): only what pulumi printed is checked.
        this.transcript.push(
          `$ pulumi ${args.map((a) => (a.length > 64 || a.includes("\n") ? "<value>" : a)).join(" ")}\n${r.output}`,
        );
        resolve(r);
      });
    });
  }

  /** Runs pulumi and fails with its whole output unless it exits 0. */
  async ok(args: string[], opts: { timeoutMs?: number } = {}): Promise<PulumiRun> {
    const r = await this.run(args, opts);
    if (r.code !== 0) throw new Error(`pulumi ${args.join(" ")} exited ${r.code}:\n${r.output}`);
    return r;
  }

  async init(config: Record<string, string> = {}, secretConfig: Record<string, string> = {}): Promise<void> {
    await this.ok(["login", `file://${this.stateDir}`]);
    await this.ok(["stack", "init", this.stack]);
    for (const [k, v] of Object.entries(config)) await this.ok(["config", "set", k, v]);
    for (const [k, v] of Object.entries(secretConfig)) await this.ok(["config", "set", "--secret", k, v]);
  }

  /** `pulumi stack output --json --show-secrets`. */
  async outputs(): Promise<Record<string, unknown>> {
    const r = await this.ok(["stack", "output", "--json", "--show-secrets"]);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  }

  /** `pulumi stack export` (secrets stay ciphertext). */
  async exportText(): Promise<string> {
    return (await this.ok(["stack", "export"])).stdout;
  }

  /** The Khook resources in the exported state, dynamic and native. */
  async khookResources(): Promise<
    {
      urn: string;
      type: string;
      inputs: Record<string, unknown>;
      outputs: Record<string, unknown>;
      initErrors?: string[];
    }[]
  > {
    const doc = JSON.parse(await this.exportText()) as {
      deployment?: {
        resources?: {
          urn: string;
          type: string;
          inputs: Record<string, unknown>;
          outputs: Record<string, unknown>;
          initErrors?: string[];
        }[];
      };
    };
    return (doc.deployment?.resources ?? []).filter((r) => r.type === KHOOK_TYPE || r.type === NATIVE_TYPE);
  }

  /** Removes the stack and the project directory (the cluster objects are the test's business). */
  async cleanup(): Promise<void> {
    await this.run(["stack", "rm", "--yes", "--force", this.stack]).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The outputs a program reads from its Khook (the native resource is declared with them unset, so the engine fills them in). */
const KHOOK_OUTPUTS = [
  "specName",
  "steps",
  "runStatus",
  "recordNamespace",
  "recordName",
  "recordUpdatedAt",
  "engineVersion",
  "plan",
  "drift",
];

/**
 * `khook(name, args, opts)` in a test program: the dynamic `Khook` of the npm package, or, when
 * the pulumi command runs with KHOOK_TEST_SHELL=native (pulumi-env.ts `useShell`), the native
 * provider's `khook:index:Khook` with the same arguments, so one test proves a behaviour on both.
 */
export const DECLARE_KHOOK = `const khook = (name, args, opts) =>
  process.env.KHOOK_TEST_SHELL === "native"
    ? new pulumi.CustomResource("${NATIVE_TYPE}", name, { ...args, ${KHOOK_OUTPUTS.map((o) => `${o}: undefined`).join(", ")} }, opts)
    : new (require("khook").Khook)(name, args, opts);`;

/**
 * A generic Khook program. Reads its arguments from args.json next to it at
 * program time, so a test edits arguments by rewriting that file. The
 * kubeconfig input, when `kubeconfigFile` is set, is that file's content.
 */
export const KHOOK_PROGRAM = `"use strict";
const fs = require("fs");
const pulumi = require("@pulumi/pulumi");
${DECLARE_KHOOK}
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const args = { ...a.args };
if (a.kubeconfigFile) args.kubeconfig = fs.readFileSync(a.kubeconfigFile, "utf8");
if (a.secretVars) args.secretVars = pulumi.secret(a.secretVars);
const boot = khook(a.name || "boot", args, a.opts || {});
exports.steps = boot.steps;
exports.runStatus = boot.runStatus;
exports.recordNamespace = boot.recordNamespace;
exports.recordName = boot.recordName;
exports.recordUpdatedAt = boot.recordUpdatedAt;
exports.engineVersion = boot.engineVersion;
exports.plan = boot.plan;
`;

export interface ProgramArgs {
  name?: string;
  /** Resource options (JSON): deleteBeforeReplace, aliases, ... */
  opts?: Record<string, unknown>;
  /** KhookArgs without secrets and kubeconfig. */
  args: Record<string, unknown>;
  kubeconfigFile?: string;
  secretVars?: Record<string, string>;
}

export function programArgs(a: ProgramArgs): string {
  return `${JSON.stringify(a, null, 2)}\n`;
}

/** The pids of `pid`'s descendants whose command line matches `pattern` (Linux /proc). */
export function descendants(pid: number, pattern: RegExp): number[] {
  const children = new Map<number, number[]>();
  const cmdline = new Map<number, string>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
      cmdline.set(Number(entry), fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" "));
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  const visit = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      if (pattern.test(cmdline.get(c) ?? "")) out.push(c);
      visit(c);
    }
  };
  visit(pid);
  return out;
}
