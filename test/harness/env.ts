// The contract between global setup (in the test runner's main process) and the test files
// (in child processes): environment variables, mirrored into a JSON file for processes that do
// not inherit the runner's environment.
//
//   KHOOK_TEST_KUBECONFIG     kubeconfig with cluster-admin on the test cluster (also KUBECONFIG)
//   PATH                      tool bin dirs first: kubectl, helm, kustomize, pulumi,
//                             pulumi-language-nodejs, pulumi-resource-pulumi-nodejs, node
//   KHOOK_TEST_ENV_FILE       the JSON file below
//   KHOOK_TEST_CLUSTER_LOGS   directory of the component logs (harness-started cluster only)
//   KHOOK_TEST_SETUP_ERROR    set when global setup failed: every testCluster() call fails with it
//   KHOOK_TEST_SEA            the single executable global setup built (dist/sea/khook)
//   KHOOK_TEST_SEA_ERROR      set instead when building it failed
//   KHOOK_TEST_LATE_TOOLS_ERRORS  JSON {unit: why} of the tools built after the rest (LATE_TOOLS: the lab's
//                             operators, pulumi-resource-kubernetes) that were not built: the tests that
//                             need one fail with its reason (lateToolBuilt in index.ts)
//   HELM_CONFIG_HOME, HELM_CACHE_HOME, HELM_DATA_HOME, HELM_REGISTRY_CONFIG,
//   HELM_REPOSITORY_CONFIG, HELM_REPOSITORY_CACHE   isolated per test run
import fs from "node:fs";
import path from "node:path";
import { toolBinDirs } from "./toolchain";
import { isAlive, runDir, writeFileAtomic } from "./util";

export interface TestEnvFile {
  /** pid of the process that owns the run (the test runner); the file is ignored once it is gone. */
  ownerPid: number;
  env: Record<string, string>;
  external: boolean;
  clusterDir?: string;
  startSeconds?: number;
}

/** The fixed, well-known location of the current run's env file. */
export function defaultEnvFile(): string {
  return path.join(runDir(), "test-env.json");
}

export function writeTestEnv(f: TestEnvFile, file = defaultEnvFile()): void {
  writeFileAtomic(file, `${JSON.stringify(f, null, 2)}\n`, 0o600);
}

export function readTestEnv(): TestEnvFile | undefined {
  const candidates = [process.env["KHOOK_TEST_ENV_FILE"], defaultEnvFile()].filter((x): x is string => Boolean(x));
  for (const file of candidates) {
    try {
      const f = JSON.parse(fs.readFileSync(file, "utf8")) as TestEnvFile;
      if (isAlive(f.ownerPid)) return f;
    } catch {
      /* missing or unreadable */
    }
  }
  return undefined;
}

let applied = false;

/**
 * Makes sure this process has the run's environment: inherited from global setup normally,
 * else loaded from the env file (e.g. a test file run directly with `node --test`).
 */
export function ensureTestEnv(): void {
  if (applied) return;
  applied = true;
  if (process.env["KHOOK_TEST_KUBECONFIG"] || process.env["KHOOK_TEST_SETUP_ERROR"]) return;
  const f = readTestEnv();
  if (!f) return;
  for (const [k, v] of Object.entries(f.env)) process.env[k] = v;
}

/** PATH with every built tool first (and the running node), followed by the inherited PATH. */
export function toolPathVar(base = process.env["PATH"] ?? ""): string {
  const first = [...toolBinDirs(), path.dirname(process.execPath)];
  const rest = base.split(path.delimiter).filter((p) => p !== "" && !first.includes(p));
  return [...first, ...rest].join(path.delimiter);
}

/** The environment to run tools with: PATH with the tools first, KUBECONFIG = the test cluster. */
export function toolEnv(): NodeJS.ProcessEnv {
  ensureTestEnv();
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: toolPathVar() };
  const kc = process.env["KHOOK_TEST_KUBECONFIG"];
  if (kc) env["KUBECONFIG"] = kc;
  return env;
}
