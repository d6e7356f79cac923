/**
 * Removing releases against the real cluster with the real helm:
 * delete.release of a present and of an absent release (waiting until the
 * release's resources are gone), and destroy of a helm: step, which uninstalls
 * only what khook installed.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { testChartPath, testCluster, toolEnv, toolPath, withNamespace } from "../harness/index.js";
import { run } from "../harness/util.js";
import type { LoadedSpec, LoadedStep } from "../../provider/dsl/loaded.js";
import { deleteReleaseExecutor } from "../../provider/steps/delete/uninstall.js";
import { helmExecutor } from "../../provider/steps/helm/executor.js";
import { executorContext, releaseOwnedBy, specFromSteps } from "./support/executors.js";

const load = (stepsYaml: string, name = "helm-it"): LoadedSpec => specFromSteps(stepsYaml, { name });

function stepOf<T extends LoadedStep["type"]>(
  spec: LoadedSpec,
  name: string,
  type: T,
): Extract<LoadedStep, { type: T }> {
  const s = spec.stepsByName.get(name);
  assert.equal(s?.type, type);
  return s as Extract<LoadedStep, { type: T }>;
}

const context = (spec: LoadedSpec) => executorContext({ spec });

async function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const cluster = await testCluster();
  return run(toolPath("helm"), [...args, "--kubeconfig", cluster.kubeconfig], { env: toolEnv() });
}

async function releaseStatus(release: string, ns: string): Promise<string | undefined> {
  const r = await helm(["status", release, "-n", ns, "-o", "json"]);
  if (r.code !== 0 && /not found/.test(r.stderr)) return undefined;
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { info: { status: string } }).info.status;
}

async function exists(ns: string, kindName: string): Promise<boolean> {
  const r = await (await testCluster()).kubectl(["-n", ns, "get", kindName, "--ignore-not-found", "-o", "name"]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim() !== "";
}

describe("delete.release: helm uninstall, then wait until the release's resources are gone", () => {
  test("a present release is uninstalled and its Deployment is gone when the step returns", async (t) => {
    const ns = await withNamespace(t, "helm-del");
    const spec = load(
      `  - name: web\n    helm: { chart: ${testChartPath("khook-deploy")}, namespace: ${ns}, wait: true }\n` +
        `  - name: remove\n    delete: { release: web, namespace: ${ns} }\n`,
    );
    await helmExecutor.apply(stepOf(spec, "web", "helm"), await context(spec));
    assert.ok(await exists(ns, "deployment/web"));

    const del = stepOf(spec, "remove", "delete");
    const plan = await deleteReleaseExecutor.assess(del, await context(spec));
    assert.deepEqual(plan, {
      action: "delete",
      reason: `uninstall release web (namespace ${ns}), revision 1 (khook-deploy-0.1.0, deployed)`,
    });
    const out = await deleteReleaseExecutor.apply(del, await context(spec));
    assert.equal(out.status, "ok");
    assert.equal(
      out.reason,
      `uninstalled release web (namespace ${ns}, was revision 1 (khook-deploy-0.1.0, deployed)); its resources are gone`,
    );
    // Checked right after the step returned, without polling: helm waited.
    assert.equal(await releaseStatus("web", ns), undefined);
    assert.equal(await exists(ns, "deployment/web"), false);

    const again = await deleteReleaseExecutor.apply(del, await context(spec));
    assert.equal(again.reason, `release web not found in namespace ${ns}; nothing to delete`);
  });

  test("an absent release is success (ignoreNotFound defaults to true), and a failure with ignoreNotFound: false", async (t) => {
    const ns = await withNamespace(t, "helm-del");
    const spec = load(
      `  - name: a\n    delete: { release: never-installed, namespace: ${ns} }\n  - name: b\n    delete: { release: never-installed, namespace: ${ns}, ignoreNotFound: false }\n`,
    );
    const a = stepOf(spec, "a", "delete");
    assert.deepEqual(await deleteReleaseExecutor.assess(a, await context(spec)), {
      action: "no-op",
      reason: `release never-installed not found in namespace ${ns}; nothing to delete`,
    });
    assert.equal((await deleteReleaseExecutor.apply(a, await context(spec))).status, "ok");
    await assert.rejects(
      deleteReleaseExecutor.apply(stepOf(spec, "b", "delete"), await context(spec)),
      new RegExp(`release never-installed not found in namespace ${ns} \\(ignoreNotFound: false\\)`),
    );
  });
});

describe("destroy of a helm: step uninstalls the release only if khook installed it", () => {
  test("a release khook installed is uninstalled; a pre-existing one that skipIf: installed found is left alone", async (t) => {
    const ns = await withNamespace(t, "helm-destroy");
    const pre = await helm(["install", "pre", testChartPath("khook-demo"), "-n", ns, "--set", "extraName=pre-extra"]);
    assert.equal(pre.code, 0, pre.stderr);
    const spec = load(
      `  - name: pre\n    helm: { chart: ${testChartPath("khook-demo")}, namespace: ${ns}, skipIf: installed }\n` +
        `  - name: mine\n    helm: { chart: ${testChartPath("khook-demo")}, namespace: ${ns}, values: { extraName: mine-extra } }\n`,
    );
    const preStep = stepOf(spec, "pre", "helm");
    const mine = stepOf(spec, "mine", "helm");
    assert.equal((await helmExecutor.apply(preStep, await context(spec))).status, "skipped");
    assert.equal((await helmExecutor.apply(mine, await context(spec))).status, "ok");

    const kept = await helmExecutor.destroy(preStep, await context(spec));
    assert.equal(kept.status, "skipped");
    assert.match(kept.reason, /was not installed by khook for spec helm-it .*left alone/);
    assert.equal(await releaseStatus("pre", ns), "deployed");

    const gone = await helmExecutor.destroy(mine, await context(spec));
    assert.equal(gone.status, "ok");
    assert.equal(await releaseStatus("mine", ns), undefined);
    assert.equal(await exists(ns, "configmap/mine-config"), false);

    const twice = await helmExecutor.destroy(mine, await context(spec));
    assert.deepEqual(twice, { status: "skipped", reason: `release mine (namespace ${ns}) is not installed` });
  });

  test("a release khook upgraded but did not install stays unowned: destroy leaves it alone", async (t) => {
    const ns = await withNamespace(t, "helm-destroy");
    const pre = await helm(["install", "demo", testChartPath("khook-demo"), "-n", ns]);
    assert.equal(pre.code, 0, pre.stderr);
    const spec = load(
      `  - name: demo\n    helm: { chart: ${testChartPath("khook-demo")}, namespace: ${ns}, values: { message: upgraded-by-khook } }\n`,
    );
    const step = stepOf(spec, "demo", "helm");
    const out = await helmExecutor.apply(step, await context(spec));
    assert.match(out.reason, /^upgraded to revision 2/);
    assert.equal(await releaseOwnedBy("demo", ns, spec.name), false, "upgrading a release does not make it khook's");
    assert.equal((await helmExecutor.destroy(step, await context(spec))).status, "skipped");
    assert.equal(await releaseStatus("demo", ns), "deployed");
  });

  test("a release another spec installed is not this spec's to uninstall", async (t) => {
    const ns = await withNamespace(t, "helm-destroy");
    const yaml = `  - name: demo\n    helm: { chart: ${testChartPath("khook-demo")}, namespace: ${ns} }\n`;
    const a = load(yaml, "spec-a");
    await helmExecutor.apply(stepOf(a, "demo", "helm"), await context(a));
    const b = load(yaml, "spec-b");
    const d = await helmExecutor.destroy(stepOf(b, "demo", "helm"), await context(b));
    assert.equal(d.status, "skipped");
    assert.equal(await releaseStatus("demo", ns), "deployed");
    assert.equal((await helmExecutor.destroy(stepOf(a, "demo", "helm"), await context(a))).status, "ok");
  });
});
