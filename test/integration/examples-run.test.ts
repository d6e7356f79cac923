/**
 * examples-are-applied-and-destroyed: every example that needs nothing outside this machine is
 * applied with the real CLI and destroyed again, on a private cluster of its own (the wait
 * example waits for every pod of every namespace, which a cluster shared with other tests
 * never satisfies). What an example expects of the cluster it was written for (an EKS
 * cluster's aws-node and coredns, a storage class, a PersistentVolume for the KUDO claim, an
 * audit webhook) is provided by the test, and said in the table below. An example that needs
 * the internet says so in its header, and this file says which ones it skips.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  clusterAt,
  startCluster,
  stopCluster,
  toolEnv,
  type ClusterState,
  type TestCluster,
} from "../harness/index.js";
import { HookServer } from "../harness/hook-server.js";
import { repoRoot } from "../harness/util.js";
import { cliEnv, parseRun, runKhook, type CliResult } from "./support/khook-cli.js";

const EXAMPLES = path.join(repoRoot(), "examples");

/** The header line an example that needs the internet carries. */
const INTERNET_HEADER = /^# Needs the internet: \S/m;

interface ExamplePlan {
  /** Why it cannot run here (then its header must say "Needs the internet: ..."). */
  readonly needsInternet?: string;
  /** The test file that runs it instead (against the lab's real operators and chart mirror). */
  readonly runsIn?: string;
  /** Manifests applied (kubectl apply) before the example: what the cluster it was written for has. */
  readonly provide?: string;
  /** kubectl commands run before the example (after `provide`). */
  readonly prepare?: readonly (readonly string[])[];
  /** kubectl commands run after destroy: undo what the example did that khook does not own (and later examples would see). */
  readonly cleanup?: readonly (readonly string[])[];
  /** The phases the example's webhook must have been called for (apply and destroy together). */
  readonly expectHookCalls?: readonly string[];
  /** Extra CLI flags and environment. */
  readonly flags?: readonly string[];
  readonly env?: (ctx: { hookUrl: string }) => NodeJS.ProcessEnv;
}

const deployment = (name: string, ns: string, replicas: number, container = name): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: ${container}, image: "registry.k8s.io/${name}:1"}]}
`;
const daemonSet = (name: string, ns: string): string => `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {matchLabels: {k8s-app: ${name}}}
  template:
    metadata: {labels: {k8s-app: ${name}}}
    spec: {containers: [{name: ${name}, image: "registry.k8s.io/${name}:1"}]}
`;
const storageClass = (name: string): string => `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ${name}}
provisioner: ebs.csi.aws.com
`;
const COREDNS = deployment("coredns", "kube-system", 2);
const statefulSet = (name: string, ns: string): string => `apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}, namespace: ${ns}}
spec:
  serviceName: ${name}
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: ${name}, image: "registry.k8s.io/${name}:1"}]}
`;

/**
 * Every file in examples/ that ends in .khook.yaml, in the order they run: the wait example
 * first (it waits for every pod of the cluster to be Ready, so it must run before the Job
 * examples leave completed pods behind), then those that change coredns.
 */
const PLANS: ReadonlyArray<readonly [string, ExamplePlan]> = [
  [
    "wait.khook.yaml",
    {
      provide: [
        COREDNS,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: argocd}\n",
        deployment("argocd-server", "argocd", 1),
      ].join("---\n"),
      // The no-pressure step waits on worker nodes.
      prepare: [["label", "node", "--all", "node-role.kubernetes.io/worker="]],
    },
  ],
  [
    "rollout.khook.yaml",
    {
      provide: [COREDNS, daemonSet("eks-pod-identity-agent", "kube-system"), statefulSet("postgres", "data")].join(
        "---\n",
      ),
    },
  ],
  [
    "patch.khook.yaml",
    {
      provide: [daemonSet("aws-node", "kube-system"), storageClass("gp2"), storageClass("gp3"), COREDNS].join("---\n"),
      // It makes gp3 the default storage class, which would then be given to the KUDO claim.
      cleanup: [["delete", "storageclass", "gp2", "gp3"]],
    },
  ],
  ["delete.khook.yaml", { provide: daemonSet("aws-node", "kube-system") }],

  [
    "kudo-mysql.khook.yaml",
    {
      // The claim binds to a volume with no storage class, as a cluster without a provisioner needs.
      provide:
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: kudo-mysql-data}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/kudo-mysql}}\n",
    },
  ],
  ["job.khook.yaml", {}],
  [
    "variables.khook.yaml",
    {
      flags: ["--var-file", path.join(EXAMPLES, "vars", "variables.vars.yaml")],
      env: () => ({ KHOOK_SECRET_TOKEN: "example-token-value" }),
    },
  ],
  // The audit webhook is a real HTTP server on loopback (a variable: KHOOK_VAR_AUDIT_URL).
  [
    "hooks.khook.yaml",
    {
      env: ({ hookUrl }) => ({ KHOOK_VAR_AUDIT_URL: hookUrl, PATH: toolEnv()["PATH"] }),
      expectHookCalls: ["pre-apply", "post-apply", "finalize"],
    },
  ],
  ["apply.khook.yaml", { needsInternet: "a url: source downloads metrics-server's components.yaml from GitHub" }],
  ["helm.khook.yaml", { needsInternet: "charts from public helm repositories and ghcr.io" }],
  // These need cert-manager really running and the lab's chart mirror (CHART_MIRROR), and one
  // cert-manager at a time per cluster: they run where the other real-operator tests run.
  ["bootstrap.khook.yaml", { runsIn: "lab-operators.test.ts" }],
  ["demo.khook.yaml", { runsIn: "lab-operators.test.ts" }],
  ["readme.khook.yaml", { runsIn: "lab-operators.test.ts" }],
];

let cluster: TestCluster;
let private_: ClusterState | undefined;
let hooks: HookServer;

before(async () => {
  private_ = await startCluster({ name: `examples-${process.pid}`, watchPid: process.pid });
  cluster = clusterAt(private_.kubeconfig);
  hooks = await HookServer.start();
});

after(async () => {
  await hooks?.close();
  if (private_ !== undefined) {
    await stopCluster(private_);
    fs.rmSync(private_.dir, { recursive: true, force: true });
  }
});

async function khook(args: string[], plan: ExamplePlan): Promise<CliResult> {
  const env = cliEnv(cluster.kubeconfig, plan.env?.({ hookUrl: hooks.url }) ?? {});
  return runKhook([...args, ...(plan.flags ?? [])], { env, cwd: EXAMPLES });
}

describe("examples-are-applied-and-destroyed", () => {
  test("every example is in this file's table, and each one that needs the internet says so in its header", () => {
    const files = fs
      .readdirSync(EXAMPLES)
      .filter((f) => f.endsWith(".khook.yaml"))
      .sort();
    assert.deepEqual(
      [...PLANS.map(([f]) => f)].sort(),
      files,
      "add the new example to PLANS (how to run it here, or why it cannot)",
    );
    for (const [file, plan] of PLANS) {
      const header = fs.readFileSync(path.join(EXAMPLES, file), "utf8").split(/\n(?!#)/)[0]!;
      assert.equal(
        INTERNET_HEADER.test(header),
        plan.needsInternet !== undefined,
        `${file}: its header ${plan.needsInternet ? "must" : "must not"} carry "# Needs the internet: ..."`,
      );
    }
  });

  for (const [file, plan] of PLANS) {
    if (plan.runsIn !== undefined) {
      test(`${file} is run by ${plan.runsIn}`, () => {
        const other = fs.readFileSync(path.join(repoRoot(), "test", "integration", plan.runsIn!), "utf8");
        assert.ok(other.includes(file), `${plan.runsIn} names ${file}`);
      });
      continue;
    }
    if (plan.needsInternet !== undefined) {
      test(
        `${file} is skipped here: it needs the internet (${plan.needsInternet})`,
        { skip: `needs the internet: ${plan.needsInternet}` },
        () => undefined,
      );
      continue;
    }
    test(`${file}: apply converges in one run, and destroy completes`, async () => {
      if (plan.provide !== undefined) {
        const r = await cluster.kubectl(["apply", "-f", "-"], { input: plan.provide });
        assert.equal(r.code, 0, `providing what ${file} expects: ${r.stderr}`);
      }
      for (const args of plan.prepare ?? []) {
        const r = await cluster.kubectl([...args]);
        assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
      }
      const spec = path.join(EXAMPLES, file);
      const applied = await khook(["apply", "-f", spec, "-o", "json"], plan);
      assert.equal(applied.code, 0, `khook apply -f examples/${file}:\n${applied.stdout}\n${applied.stderr}`);
      const run = parseRun(applied);
      assert.equal(run.status, "succeeded", applied.stdout);
      for (const s of run.steps)
        assert.ok(["ok", "skipped"].includes(s.status), `${file}: step ${s.name} is ${s.status}`);
      const destroyed = await khook(["destroy", "-f", spec, "-o", "json"], plan);
      assert.equal(destroyed.code, 0, `khook destroy -f examples/${file}:\n${destroyed.stdout}\n${destroyed.stderr}`);
      if (plan.expectHookCalls !== undefined) {
        const phases = new Set(hooks.requests.map((r) => r.body.phase));
        for (const phase of plan.expectHookCalls)
          assert.ok(
            phases.has(phase),
            `${file}: its webhook was not called for ${phase} (calls: ${[...phases].join(", ") || "none"})`,
          );
      }
      for (const args of plan.cleanup ?? []) {
        const r = await cluster.kubectl([...args]);
        assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
      }
    });
  }
});
