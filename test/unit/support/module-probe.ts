/**
 * Which modules a khook process loads: start-up cost is paid per module, so tests count modules
 * (never milliseconds) to keep the heavy ones off the paths that do not need them.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The modules worth keeping off a path, by what they are. */
export const HEAVY: Record<string, RegExp> = {
  "ajv's schema compiler": /node_modules\/ajv\/dist\/(core|compile)/,
  // The definitions the schema is generated from are read at build time only.
  "the definition library (typebox)": /node_modules\/typebox\//,
  "the CEL library": /node_modules\/@marcbachmann\/cel-js\//,
  "the Go template functions": /provider\/(spec\/pipeline|gotemplate)\//,
  "the positioned YAML parser": /node_modules\/yaml\//,
  "@kubernetes/client-node": /node_modules\/@kubernetes\//,
  "the kube client": /provider\/kube\/client/,
  Pulumi: /node_modules\/@pulumi\//,
  // The registry (steps/index.js) and each kind's load-time half (kind.js) are not executors: a
  // kind requires its executor on first use.
  "the executors": /provider\/steps\/(?!index\.js$)(?![^/]+\/kind\.js$)/,
  "the hook runners": /provider\/hooks\/(function|webhook)\.js$|^(node:)?child_process$/,
};

/** The names of HEAVY entries (all, or those given) that the modules include. */
export function heavyLoaded(modules: readonly string[], names: readonly string[] = Object.keys(HEAVY)): string[] {
  return names.filter((name) => modules.some((m) => HEAVY[name]!.test(m)));
}

/** Script text that records every resolved `require` (CommonJS or ESM) in the Set `loaded`. */
export const RECORD_LOADED_MODULES = `
const Module = require("node:module");
const loaded = new Set();
const load = Module._load;
Module._load = function (request, parent, isMain) {
  try { loaded.add(Module._resolveFilename(request, parent, isMain)); } catch {}
  return load.apply(this, arguments);
};
`;

/** Records every resolved `require` and writes them as JSON when the process exits. */
const PRELOAD = `${RECORD_LOADED_MODULES}
process.on("exit", () => require("node:fs").writeFileSync(process.env.KHOOK_TEST_MODULES_OUT, JSON.stringify([...loaded])));
`;

export interface ProbedRun {
  code: number;
  output: string;
  modules: string[];
}

/** Runs `node <args>` (e.g. the real bin/khook) with the probe preloaded; resolves with what it loaded. */
export function modulesLoadedByProcess(args: readonly string[], env: NodeJS.ProcessEnv): Promise<ProbedRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-module-probe-"));
  const preload = path.join(dir, "probe.js");
  const out = path.join(dir, "modules.json");
  fs.writeFileSync(preload, PRELOAD);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--require", preload, ...args], {
      env: { ...env, KHOOK_TEST_MODULES_OUT: out },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve({ code: code ?? 1, output, modules: JSON.parse(fs.readFileSync(out, "utf8")) as string[] });
      } catch (e) {
        reject(new Error(`the probed process wrote no module list (exit ${code}):\n${output}\n${String(e)}`));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
