/**
 * helm: options against the real cluster with the real helm: atomic rollback
 * of a failing upgrade, wait (kwok makes the Deployment Available),
 * createNamespace, and skipIf: installed.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { testChartPath, testCluster, toolEnv, toolPath, withNamespace } from "../harness/index.js";
import { run } from "../harness/util.js";
import type { LoadedSpec, LoadedStep } from "../../provider/dsl/loaded.js";
import { helmExecutor } from "../../provider/steps/helm/executor.js";
import type { StepContext } from "../../provider/steps/contract.js";
import { executorContext, specFromSteps } from "./support/executors.js";

type HelmStep = Extract<LoadedStep, { type: "helm" }>;

function loadStep(stepYaml: string, env: Record<string, string> = {}): { spec: LoadedSpec; step: HelmStep } {
  const spec = specFromSteps(stepYaml, { name: "helm-it", env });
  return { spec, step: spec.steps[0] as HelmStep };
}

const context = (spec: LoadedSpec, deadline = 180_000): Promise<StepContext> =>
  executorContext({ spec, timeoutMs: deadline });

async function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const cluster = await testCluster();
  return run(toolPath("helm"), [...args, "--kubeconfig", cluster.kubeconfig], { env: toolEnv() });
}

async function history(
  release: string,
  ns: string,
): Promise<{ revision: number; status: string; description: string }[]> {
  const r = await helm(["history", release, "-n", ns, "-o", "json"]);
  if (r.code !== 0 && /not found/.test(r.stderr)) return [];
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as { revision: number; status: string; description: string }[];
}

async function kubectlOut(args: string[]): Promise<string> {
  const r = await (await testCluster()).kubectl(args);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

const DEMO = testChartPath("khook-demo");

function demoStep(ns: string, extra: string, values: Record<string, string>): string {
  const v = Object.entries(values)
    .map(([k, x]) => `        ${k}: ${JSON.stringify(x)}\n`)
    .join("");
  return `  - name: demo\n    helm:\n      chart: ${DEMO}\n      namespace: ${ns}\n${extra}      values:\n${v}`;
}

describe("helm: atomic, and failed releases", () => {
  test("atomic: a failing upgrade is rolled back, and the step fails with helm's reason", async (t) => {
    const ns = await withNamespace(t, "helm-atomic");
    const good = loadStep(demoStep(ns, "      atomic: true\n", { message: "good", extraName: "demo-extra" }));
    await helmExecutor.apply(good.step, await context(good.spec));

    // An object name the API server rejects: helm has recorded revision 2 by then.
    const bad = loadStep(demoStep(ns, "      atomic: true\n", { message: "bad", extraName: "Invalid_Name" }));
    await assert.rejects(helmExecutor.apply(bad.step, await context(bad.spec)), (e: Error) => {
      assert.match(e.message, /helm upgrade demo \(namespace .*\) failed/);
      assert.match(e.message, /rolled back/i);
      assert.match(e.message, /Invalid_Name/);
      return true;
    });
    const h = await history("demo", ns);
    assert.deepEqual(
      h.map((r) => [r.revision, r.status]),
      [
        [1, "superseded"],
        [2, "failed"],
        [3, "deployed"],
      ],
    );
    assert.match(h[2]!.description, /Rollback to 1/);
    assert.equal(
      await kubectlOut(["-n", ns, "get", "configmap", "demo-config", "-o", "jsonpath={.data.message}"]),
      "good",
    );
  });

  test("without atomic the failed revision stays, and a failed release is upgraded on the next run", async (t) => {
    const ns = await withNamespace(t, "helm-failed");
    const good = loadStep(demoStep(ns, "", { message: "good", extraName: "demo-extra" }));
    await helmExecutor.apply(good.step, await context(good.spec));
    const bad = loadStep(demoStep(ns, "", { message: "bad", extraName: "Invalid_Name" }));
    await assert.rejects(helmExecutor.apply(bad.step, await context(bad.spec)), /helm upgrade demo .*failed/);
    assert.deepEqual(
      (await history("demo", ns)).map((r) => r.status),
      ["deployed", "failed"],
    );

    const fixed = loadStep(demoStep(ns, "", { message: "fixed", extraName: "demo-extra" }));
    const plan = await helmExecutor.assess(fixed.step, await context(fixed.spec));
    assert.deepEqual(plan, {
      action: "upgrade",
      reason: "revision 2 (khook-demo-0.1.0, failed) -> khook-demo@0.1.0 (the last revision failed)",
    });
    const out = await helmExecutor.apply(fixed.step, await context(fixed.spec));
    assert.match(out.reason, /^upgraded to revision 3 \(khook-demo-0\.1\.0, deployed\)/);
    assert.equal(
      await kubectlOut(["-n", ns, "get", "configmap", "demo-config", "-o", "jsonpath={.data.message}"]),
      "fixed",
    );
  });
});

describe("helm: wait", () => {
  test("wait: the step succeeds only once the chart's Deployment is Available (kwok runs its pod)", async (t) => {
    const ns = await withNamespace(t, "helm-wait");
    const { spec, step } = loadStep(
      `  - name: web\n    helm:\n      chart: ${testChartPath("khook-deploy")}\n      namespace: ${ns}\n      wait: true\n`,
    );
    const out = await helmExecutor.apply(step, await context(spec));
    assert.match(out.reason, /^installed revision 1 \(khook-deploy-0\.1\.0, deployed\)/);
    // Read right after the step returned: no polling here.
    const available = await kubectlOut([
      "-n",
      ns,
      "get",
      "deployment",
      "web",
      "-o",
      'jsonpath={.status.conditions[?(@.type=="Available")].status}',
    ]);
    assert.equal(available, "True");
    assert.equal(
      await kubectlOut(["-n", ns, "get", "deployment", "web", "-o", "jsonpath={.status.availableReplicas}"]),
      "1",
    );
  });
});

describe("helm: createNamespace", () => {
  test("createNamespace: true creates the missing namespace; without it, the install fails saying the namespace is missing", async (t) => {
    const cluster = await testCluster();
    const ns = `helm-newns-${randomBytes(4).toString("hex")}`;
    t.after(async () => {
      await cluster.kubectl(["delete", "namespace", ns, "--wait=false", "--ignore-not-found"]);
    });
    const without = loadStep(demoStep(ns, "", { message: "x", extraName: "demo-extra" }));
    await assert.rejects(
      helmExecutor.apply(without.step, await context(without.spec)),
      new RegExp(`namespaces? "${ns}" not found`),
    );

    const withNs = loadStep(demoStep(ns, "      createNamespace: true\n", { message: "x", extraName: "demo-extra" }));
    const out = await helmExecutor.apply(withNs.step, await context(withNs.spec));
    assert.match(out.reason, /^installed revision 1/);
    assert.equal(await kubectlOut(["get", "namespace", ns, "-o", "jsonpath={.status.phase}"]), "Active");
  });
});

describe("helm: skipIf: installed", () => {
  test("an existing release is skipped, any version, any values, with its revision in the reason; it is not touched", async (t) => {
    const ns = await withNamespace(t, "helm-skip");
    const pre = await helm(["install", "demo", DEMO, "-n", ns, "--set", "message=pre-existing"]);
    assert.equal(pre.code, 0, pre.stderr);
    const { spec, step } = loadStep(demoStep(ns, "      skipIf: installed\n", { message: "from-khook" }));
    const plan = await helmExecutor.assess(step, await context(spec));
    assert.equal(plan.action, "skip");
    assert.equal(
      plan.reason,
      `release demo (namespace ${ns}) is installed: revision 1 (khook-demo-0.1.0, deployed); skipIf: installed`,
    );
    const out = await helmExecutor.apply(step, await context(spec));
    assert.equal(out.status, "skipped");
    assert.match(out.reason, /revision 1 \(khook-demo-0\.1\.0, deployed\)/);
    assert.equal((await history("demo", ns)).length, 1);
    assert.equal(
      await kubectlOut(["-n", ns, "get", "configmap", "demo-config", "-o", "jsonpath={.data.message}"]),
      "pre-existing",
    );
  });

  test("skipIf: installed still installs a release that does not exist", async (t) => {
    const ns = await withNamespace(t, "helm-skip");
    const { spec, step } = loadStep(demoStep(ns, "      skipIf: installed\n", { message: "fresh" }));
    assert.equal((await helmExecutor.assess(step, await context(spec))).action, "install");
    const out = await helmExecutor.apply(step, await context(spec));
    assert.equal(out.status, "ok");
    assert.match(out.reason, /^installed revision 1/);
  });
});

describe("helm: cancellation", () => {
  test("an abort stops a running helm, removes the run's helm directory, and the next run recovers the release", async (t) => {
    const ns = await withNamespace(t, "helm-cancel");
    // A chart with a hook keeps helm's own --wait (khook waits itself only for hook-free charts),
    // so the process that is waiting when the abort comes is helm.
    const chart = testChartPath("khook-test-hooked");
    const yaml = (values: string) =>
      `  - name: web\n    helm:\n      chart: ${chart}\n      namespace: ${ns}\n      wait: true\n      values: ${values}\n`;
    // No node carries this label: the pod stays Pending and `wait` keeps helm running until it is stopped.
    const { spec, step } = loadStep(yaml(`{ nodeSelector: { khook.io/nowhere: "true" } }`));
    const privateTmp = fs.mkdtempSync(path.join(os.tmpdir(), "khook-cancel-"));
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    const ctl = new AbortController();
    let settled = false; // helm may fail before recording a release: then stop looking
    const abortWhenPending = async () => {
      while (!settled && !ctl.signal.aborted && (await history("web", ns)).at(-1)?.status !== "pending-install") {
        await new Promise((r) => setTimeout(r, 100));
      }
      ctl.abort(new Error("cancelled by the test"));
    };
    try {
      const base = await context(spec);
      const ctx: StepContext = {
        ...base,
        signal: ctl.signal,
        // helm is started right after this line; it then waits (for minutes) on the pod. Stop it once
        // helm has recorded the release as pending-install, however long that takes on a busy machine.
        log: (m: string) => void (/^installing release/.test(m) && abortWhenPending()),
      };
      await assert.rejects(
        helmExecutor.apply(step, ctx).finally(() => (settled = true)),
        /cancelled by the test/,
      );
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    assert.deepEqual(fs.readdirSync(privateTmp), [], "the run's helm directory (and any credentials in it) is gone");
    const h = await history("web", ns);
    assert.deepEqual(
      h.map((r) => r.status),
      ["failed"],
      "helm was stopped (SIGTERM) and recorded the release as failed, not pending",
    );

    const fixed = loadStep(yaml("{}"));
    const out = await helmExecutor.apply(fixed.step, await context(fixed.spec));
    assert.match(out.reason, /^upgraded to revision 2 \(khook-test-hooked-0\.1\.0, deployed\)/);
  });
});

describe("helm: a release stuck in a pending state", () => {
  test("fails with an explanation and the recovery command, and that command recovers it", async (t) => {
    const ns = await withNamespace(t, "helm-pending");
    const cluster = await testCluster();
    const chart = testChartPath("khook-deploy");
    const yaml = `  - name: web\n    helm:\n      chart: ${chart}\n      namespace: ${ns}\n      values: { replicas: 2 }\n`;
    const first = loadStep(`  - name: web\n    helm:\n      chart: ${chart}\n      namespace: ${ns}\n`);
    await helmExecutor.apply(first.step, await context(first.spec));

    // An upgrade that waits forever (unschedulable pod), killed hard while helm holds the release in pending-upgrade.
    const { spawn } = await import("node:child_process");
    const child = spawn(
      toolPath("helm"),
      [
        "upgrade",
        "web",
        chart,
        "-n",
        ns,
        "--wait",
        "--timeout",
        "10m",
        "--set-string",
        "nodeSelector.khook\\.io/nowhere=true",
        "--kubeconfig",
        cluster.kubeconfig,
      ],
      {
        env: toolEnv(),
        stdio: "ignore",
      },
    );
    const exited = new Promise((r) => child.on("exit", r));
    for (;;) {
      const status = (await history("web", ns)).at(-1)?.status;
      if (status === "pending-upgrade") break;
      assert.ok(
        status === "deployed" || status === "superseded",
        `unexpected status ${status} while waiting for pending-upgrade`,
      );
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGKILL");
    await exited;

    const { spec, step } = loadStep(yaml);
    const recovery = `helm rollback web 1 --namespace ${ns}`;
    await assert.rejects(helmExecutor.assess(step, await context(spec)), (e: Error) => e.message.includes(recovery));
    await assert.rejects(helmExecutor.apply(step, await context(spec)), (e: Error) => {
      assert.match(
        e.message,
        new RegExp(
          `release web \\(namespace ${ns}\\) is pending-upgrade at revision 2 \\(khook-deploy-0\\.1\\.0, pending-upgrade\\)`,
        ),
      );
      assert.match(e.message, /still running, or was interrupted/);
      assert.ok(e.message.endsWith(`recover with: ${recovery} — then re-run khook`), e.message);
      return true;
    });
    const r = await helm(["rollback", "web", "1", "--namespace", ns]);
    assert.equal(r.code, 0, r.stderr);
    const out = await helmExecutor.apply(step, await context(spec));
    assert.match(out.reason, /^upgraded to revision 4 \(khook-deploy-0\.1\.0, deployed\)/);
  });
});
