// Node test runner global setup (--test-global-setup=dist/test/harness/global-setup.js).
// Runs once in the runner's main process, before any test file:
//   1. builds what is missing of the toolchain (all of it; only the client tools when
//      KHOOK_TEST_KUBECONFIG points at an existing cluster), then the LATE_TOOLS with what is left
//      of the budget, one by one (a failure fails only the tests that need that tool: KHOOK_TEST_LATE_TOOLS_ERRORS),
//   2. starts the shared test cluster (unless KHOOK_TEST_KUBECONFIG is set),
//   3. exports the env contract (see env.ts) to the test processes and to the env file.
// A failure does not abort the run: it is printed loudly and recorded in KHOOK_TEST_SETUP_ERROR,
// so unit tests still run and every integration test fails with the reason.
import fs from "node:fs";
import path from "node:path";
import {
  componentLogs,
  pruneStaleTestClusters,
  readClusterState,
  startCluster,
  stopCluster,
  type ClusterState,
} from "./cluster";
import { defaultEnvFile, toolPathVar, writeTestEnv } from "./env";
import { ensureSea } from "./sea";
import { LATE_TOOLS, defaultUnits, ensureToolchain } from "./toolchain";
import { runDir } from "./util";

let cluster: ClusterState | undefined;
let envFile: string | undefined;

const log = (s: string) => process.stderr.write(`${s}\n`);

export async function globalSetup(): Promise<void> {
  const t0 = Date.now();
  const userKubeconfig = process.env["KHOOK_TEST_KUBECONFIG"];
  const external = Boolean(userKubeconfig);
  const exported: Record<string, string> = {};
  const runHome = path.join(runDir(), `test-${process.pid}`);
  try {
    if (external && !fs.existsSync(userKubeconfig!)) {
      throw new Error(`KHOOK_TEST_KUBECONFIG=${userKubeconfig} does not exist`);
    }
    const { budgetStartedAt } = await ensureToolchain({ only: defaultUnits(external), log });
    // Tools only some tests need, each with what the builds above left of the budget; a failure fails only the
    // tests that need that tool (lateToolBuilt in index.ts reads why).
    const lateErrors: Record<string, string> = {};
    for (const id of LATE_TOOLS) {
      try {
        await ensureToolchain({ only: [id], log, budgetStartedAt });
      } catch (e) {
        const msg =
          `${(e as Error).message}\n` +
          `(build it alone with \`./dev toolchain --only ${id}\`, or give the cold build more time with KHOOK_TOOLCHAIN_BUDGET_MIN; ` +
          `Go's build cache keeps what was compiled, so the next run resumes)`;
        log(`\nkhook test setup: ${id} not built; the tests that need it will fail:\n${msg}\n`);
        lateErrors[id] = msg.slice(0, 10_000);
      }
    }
    if (Object.keys(lateErrors).length > 0) exported["KHOOK_TEST_LATE_TOOLS_ERRORS"] = JSON.stringify(lateErrors);
    // Per-run helm homes: tests never read or write the user's helm config, repos or logins.
    fs.mkdirSync(runHome, { recursive: true });
    const h = path.join(runHome, "helm");
    Object.assign(exported, {
      HELM_CONFIG_HOME: path.join(h, "config"),
      HELM_CACHE_HOME: path.join(h, "cache"),
      HELM_DATA_HOME: path.join(h, "data"),
      HELM_REGISTRY_CONFIG: path.join(h, "registry", "config.json"),
      HELM_REPOSITORY_CONFIG: path.join(h, "config", "repositories.yaml"),
      HELM_REPOSITORY_CACHE: path.join(h, "cache", "repository"),
    });
    let kubeconfig: string;
    if (external) {
      kubeconfig = path.resolve(userKubeconfig!);
      log(`khook test setup: using the existing cluster in KHOOK_TEST_KUBECONFIG=${kubeconfig}`);
    } else {
      await pruneStaleTestClusters();
      cluster = await startCluster({
        name: `test-${process.pid}`,
        watchPid: process.pid,
        log,
      });
      kubeconfig = cluster.kubeconfig;
      exported["KHOOK_TEST_CLUSTER_LOGS"] = cluster.logsDir;
    }
    exported["KHOOK_TEST_KUBECONFIG"] = kubeconfig;
    exported["KUBECONFIG"] = kubeconfig;
    exported["PATH"] = toolPathVar();
  } catch (e) {
    const msg = (e as Error).message;
    log(
      [
        "",
        "=".repeat(100),
        "khook test setup FAILED: no test cluster is available; every integration test will fail.",
        msg,
        "=".repeat(100),
        "",
      ].join("\n"),
    );
    exported["KHOOK_TEST_SETUP_ERROR"] = msg.slice(0, 20_000);
    // Never let a test fall back to the user's own cluster.
    exported["KUBECONFIG"] = "/dev/null";
  }
  // The single executable, once per run, for its tests (test/integration/sea.test.ts, image.test.ts).
  try {
    exported["KHOOK_TEST_SEA"] = await ensureSea(log);
  } catch (e) {
    log(`khook test setup: ${(e as Error).message}`);
    exported["KHOOK_TEST_SEA_ERROR"] = (e as Error).message.slice(0, 20_000);
  }
  envFile = defaultEnvFile();
  exported["KHOOK_TEST_ENV_FILE"] = envFile;
  Object.assign(process.env, exported);
  writeTestEnv(
    {
      ownerPid: process.pid,
      env: exported,
      external,
      ...(cluster ? { clusterDir: cluster.dir, startSeconds: cluster.startSeconds ?? 0 } : {}),
    },
    envFile,
  );
  if (!exported["KHOOK_TEST_SETUP_ERROR"]) log(`khook test setup: ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}

export async function globalTeardown(): Promise<void> {
  if (cluster) {
    const failed = Boolean(process.exitCode) && process.exitCode !== 0;
    if (failed) {
      log("\nkhook test teardown: tests failed; control plane component logs follow.");
      log(componentLogs(cluster, 80));
    }
    const s = readClusterState(cluster.dir);
    await stopCluster(cluster.dir);
    if (!failed && s) fs.rmSync(cluster.dir, { recursive: true, force: true });
    else if (failed) log(`khook test teardown: full logs kept in ${cluster.logsDir}`);
    cluster = undefined;
  }
  fs.rmSync(path.join(runDir(), `test-${process.pid}`), { recursive: true, force: true });
  if (envFile) {
    try {
      const f = JSON.parse(fs.readFileSync(envFile, "utf8")) as { ownerPid: number };
      if (f.ownerPid === process.pid) fs.rmSync(envFile, { force: true });
    } catch {
      /* already gone */
    }
  }
}
