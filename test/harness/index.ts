// The test harness API for khook's integration tests. See docs/toolchain.md.
//
//   const c = await testCluster();             // fails loudly when no cluster is available
//   const ns = await withNamespace(t, "helm");  // unique namespace, deleted after the test
//   await c.kubectl(["-n", ns, "get", "pods"]);
//   toolPath("helm"), toolEnv(), pulumiEnv(dir)
//   startChartRepo(), startOciRegistry({ username, password }), startHttpServer({ "/a.yaml": "..." })
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { componentLogs, readClusterState } from "./cluster";
import type { EgressRecord } from "./egress";
import { readEgressRecords } from "./lab";
import { ensureTestEnv, toolEnv } from "./env";
import { labChartsDir, toolPath, unitBins } from "./toolchain";
import { run, type RunResult } from "./util";

export { toolPath, type ToolName } from "./toolchain";
export { toolEnv } from "./env";
export {
  startChartRepo,
  startHttpServer,
  startOciRegistry,
  packagedTestCharts,
  testChartNames,
  testChartPath,
  helmEnv,
  type BasicAuth,
  type ChartRepoFixture,
  type HttpFixture,
  type HttpServerOptions,
  type OciRegistryFixture,
  type RecordedRequest,
} from "./fixtures";
export type { RunResult } from "./util";
export {
  startCluster,
  stopCluster,
  killComponent,
  restartComponent,
  freezeComponent,
  freezeEtcdPeers,
  thawEtcdPeers,
  thawComponent,
  waitApiReady,
  componentLogs,
  readClusterState,
  type ClusterState,
  type Component,
} from "./cluster";

export { SERVICE_CIDR } from "./cluster";
export { CHART_MIRROR_VAR, startChartMirror, type ChartMirror } from "./chart-mirror";
export type { EgressRecord } from "./egress";

/**
 * The directory of the harness cluster whose kubeconfig this is (it holds cluster.json and the
 * lab's records). Throws for a cluster the harness did not start (KHOOK_TEST_KUBECONFIG pointing
 * at kind or a real cluster): it has no egress proxy or launcher to ask.
 */
export function labClusterDir(kubeconfig: string): string {
  const dir = path.dirname(path.resolve(kubeconfig));
  if (!readClusterState(dir)?.pids.lab) {
    throw new Error(
      `khook: ${kubeconfig} is not a cluster the harness started (no ${path.join(dir, "cluster.json")} with a lab ` +
        "daemon): this test needs the harness's egress proxy and launcher; run it with ./dev test or against ./dev cluster-up's cluster",
    );
  }
  return dir;
}

/** Every CONNECT the egress proxy of the harness cluster at `kubeconfig` answered so far. */
export function egressRecords(kubeconfig: string): EgressRecord[] {
  return readEgressRecords(labClusterDir(kubeconfig));
}

/**
 * Fails the test (throws) when a tool global setup builds late (LATE_TOOLS: the lab's operators,
 * pulumi-resource-kubernetes) was not built, with the reason it gave; else the unit is there.
 */
export function lateToolBuilt(unit: string): void {
  ensureTestEnv();
  const failed = (JSON.parse(process.env["KHOOK_TEST_LATE_TOOLS_ERRORS"] ?? "{}") as Record<string, string>)[unit];
  if (failed !== undefined) throw new Error(`${unit} was not built by the test setup:\n${failed}`);
  for (const bin of unitBins(unit)) toolPath(bin);
}

/** The packaged real chart `name` of the lab's mirror (lab-charts.ts), a .tgz in the tool cache. */
export function labChartFile(name: string): string {
  const dir = path.join(labChartsDir(), "charts");
  const file = fs
    .readdirSync(dir)
    .find((f) => f.startsWith(`${name}-`) && /^-v?\d/.test(f.slice(name.length)) && f.endsWith(".tgz"));
  if (!file) throw new Error(`khook: the lab's mirror has no chart ${name} (in ${dir})`);
  return path.join(dir, file);
}

/** The directory of the lab's manifests `name` (lab-charts.ts LAB_MANIFESTS). */
export function labManifestsDir(name: string): string {
  return path.join(labChartsDir(), "manifests", name);
}

/** The kwok annotation that makes a Job's pod fail (put it on the pod template). */
export const TEST_FAIL_ANNOTATION = "khook.io/test-fail";
/** A Job pod running this image ends Failed too (a khook job: step sets no pod annotations). */
export const TEST_FAIL_IMAGE = "khook.test/fail:1";
/** Pods whose template carries this annotation (a Go duration, e.g. "3s") become Ready only that long after scheduling. */
export const TEST_READY_AFTER_ANNOTATION = "khook.io/test-ready-after";

export interface KubectlOptions {
  /** stdin for the command (e.g. a manifest for `apply -f -`). */
  input?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export interface TestCluster {
  /** Path of a kubeconfig with cluster-admin on the shared test cluster. */
  kubeconfig: string;
  /** Runs kubectl against the test cluster. Never throws on a non-zero exit: check `code`. */
  kubectl(args: string[], opts?: KubectlOptions): Promise<RunResult>;
}

/**
 * The shared test cluster. Throws (the test fails) when global setup could not provide one;
 * integration tests never skip silently.
 */
export async function testCluster(): Promise<TestCluster> {
  ensureTestEnv();
  const setupError = process.env["KHOOK_TEST_SETUP_ERROR"];
  if (setupError) {
    throw new Error(`khook: no test cluster: global setup failed:\n${setupError}`);
  }
  const kubeconfig = process.env["KHOOK_TEST_KUBECONFIG"];
  if (!kubeconfig) {
    throw new Error(
      "khook: no test cluster: KHOOK_TEST_KUBECONFIG is not set. Run integration tests through " +
        "`./dev test` / `npm test` (node --test --test-global-setup=dist/test/harness/global-setup.js), " +
        "or set KHOOK_TEST_KUBECONFIG to the kubeconfig of an existing cluster.",
    );
  }
  if (!fs.existsSync(kubeconfig)) throw new Error(`khook: KHOOK_TEST_KUBECONFIG=${kubeconfig} does not exist`);
  return clusterAt(kubeconfig);
}

/** kubectl for the cluster of `kubeconfig` (e.g. a private cluster a fault-injection test started). */
export function clusterAt(kubeconfig: string): TestCluster {
  const kubectl = toolPath("kubectl");
  return {
    kubeconfig,
    kubectl: (args, opts = {}) =>
      run(kubectl, ["--kubeconfig", kubeconfig, ...args], {
        env: opts.env ?? toolEnv(),
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
        ...(opts.input !== undefined ? { input: opts.input } : {}),
        timeoutMs: opts.timeoutMs ?? 120_000,
      }),
  };
}

type AfterContext = Pick<TestContext, "after"> & { passed?: boolean; name?: string };

/**
 * Creates a uniquely named namespace for the test (`<prefix>-<random>`) and deletes it after the
 * test. When the test failed, the namespace's objects and events and the control plane's log
 * tails are printed first.
 */
export async function withNamespace(t: AfterContext, prefix = "khook-test"): Promise<string> {
  const c = await testCluster();
  const clean =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 48) || "khook-test";
  const name = `${clean}-${randomBytes(4).toString("hex")}`;
  const manifest = JSON.stringify({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "khook.io/test": "true" } },
  });
  const r = await c.kubectl(["create", "-f", "-"], { input: manifest });
  if (r.code !== 0) throw new Error(`khook: cannot create namespace ${name}: ${r.stderr || r.stdout}`);
  t.after(async () => {
    if (t.passed === false) {
      const objs = await c.kubectl(["-n", name, "get", "all,configmaps,secrets,jobs,events", "-o", "wide"]);
      const report = [`----- namespace ${name} (test "${t.name ?? "?"}" failed) -----`, objs.stdout, objs.stderr];
      const logs = process.env["KHOOK_TEST_CLUSTER_LOGS"];
      if (logs) report.push(componentLogs({ logsDir: logs }, 30));
      process.stderr.write(`${report.join("\n")}\n`);
    }
    await c.kubectl(["delete", "namespace", name, "--wait=false", "--ignore-not-found"]);
  });
  return name;
}

/**
 * Environment for running the pulumi CLI (or the Automation API) fully offline: a file backend
 * and PULUMI_HOME under workDir, a fixed passphrase, no plugin downloads, no update check, and
 * the toolchain (pulumi, pulumi-language-nodejs, pulumi-resource-pulumi-nodejs, node) on PATH.
 */
export function pulumiEnv(workDir: string): NodeJS.ProcessEnv {
  const state = path.join(workDir, ".pulumi-state");
  const home = path.join(workDir, ".pulumi-home");
  fs.mkdirSync(state, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  return {
    ...toolEnv(),
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${state}`,
    PULUMI_CONFIG_PASSPHRASE: "khook-test-passphrase",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
    PULUMI_SKIP_CONFIRMATIONS: "true",
    PULUMI_SELF_MANAGED_STATE_NO_LEGACY_WARNING: "true",
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
    PULUMI_COPILOT: "false",
    PULUMI_SUPPRESS_COPILOT_LINK: "true",
    NO_COLOR: "1",
  };
}
