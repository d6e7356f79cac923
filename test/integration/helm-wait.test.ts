/**
 * `wait: true` on a helm step, waited by khook's watches (helm --wait polls every 2 s),
 * against the real cluster and real helm. helm runs through a wrapper that records its
 * arguments, so each test sees who waited: khook (no --wait) or helm (--wait).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import {
  startChartRepo,
  testChartPath,
  testCluster,
  toolPath,
  withNamespace,
  type ChartRepoFixture,
} from "../harness/index.js";
import type { LoadedStep } from "../../provider/dsl/loaded.js";
import { helmExecutor } from "../../provider/steps/helm/executor.js";
import { executorContext, specFromSteps } from "./support/executors.js";
import { cliEnv, khookSpec, runKhook, specDir } from "./support/khook-cli.js";

type HelmStep = Extract<LoadedStep, { type: "helm" }>;

const work = fs.mkdtempSync(path.join(os.tmpdir(), "khook-helm-wait-"));
let repo: ChartRepoFixture | undefined;
after(async () => {
  await repo?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

/** A helm that appends each invocation's arguments (one JSON line) to a log, then runs the real one. */
function recordingHelm(): { bin: string; calls: () => string[][] } {
  const dir = fs.mkdtempSync(path.join(work, "helm-"));
  const log = path.join(dir, "calls.jsonl");
  const bin = path.join(dir, "helm");
  fs.writeFileSync(
    bin,
    `#!/bin/sh\nnode -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- "$@" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(toolPath("helm"))} "$@"\n`,
    { mode: 0o755 },
  );
  return {
    bin,
    calls: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as string[])
        : [],
  };
}

/** Values that keep khook-deploy's pod Pending: no node carries this label. */
const NOWHERE = `{ nodeSelector: { khook.io/nowhere: "true" } }`;

/** The calls that installed or upgraded the release (not dry runs). */
const installs = (calls: string[][]) =>
  calls.filter((c) => (c[0] === "install" || c[0] === "upgrade") && !c.some((a) => a.startsWith("--dry-run")));

function helmStep(
  name: string,
  ns: string,
  chartYaml: string,
  extra = "",
): { spec: ReturnType<typeof specFromSteps>; step: HelmStep } {
  const spec = specFromSteps(
    `  - name: ${name}\n    helm:\n${chartYaml.replace(/^/gm, "      ")}\n      namespace: ${ns}\n      wait: true\n${extra.replace(/^/gm, "      ")}\n`,
    { name: "helm-wait-it" },
  );
  return { spec, step: spec.steps[0] as HelmStep };
}

async function deployment(ns: string, name: string): Promise<{ replicas: number; ready: number }> {
  const out = await (await testCluster()).kubectl(["-n", ns, "get", "deployment", name, "-o", "json"]);
  assert.equal(out.code, 0, out.stderr);
  const d = JSON.parse(out.stdout) as { spec: { replicas: number }; status: { readyReplicas?: number } };
  return { replicas: d.spec.replicas, ready: d.status.readyReplicas ?? 0 };
}

describe("helm-wait-ready-before-success", () => {
  test("a local chart without hooks: helm runs without --wait, and the step ends only once every replica is ready", async (t) => {
    const ns = await withNamespace(t, "helm-wait");
    const helm = recordingHelm();
    const { spec, step } = helmStep("web", ns, `chart: ${testChartPath("khook-deploy")}\nvalues: { replicas: 3 }`);
    const out = await helmExecutor.apply(step, await executorContext({ spec, tools: { helm: helm.bin } }));
    assert.equal(out.status, "ok", out.reason);
    assert.deepEqual(await deployment(ns, "web"), { replicas: 3, ready: 3 });
    const [install, ...more] = installs(helm.calls());
    assert.equal(more.length, 0);
    assert.ok(
      install !== undefined && !install.includes("--wait"),
      `helm was not asked to wait: ${JSON.stringify(install)}`,
    );
  });

  test("a repository chart is pulled once and installed from that archive, and khook waits", async (t) => {
    const ns = await withNamespace(t, "helm-wait");
    repo ??= await startChartRepo();
    const helm = recordingHelm();
    const { spec, step } = helmStep(
      "web",
      ns,
      `chart: khook-deploy\nrepo: ${repo.url}\nversion: 0.1.0\nvalues: { replicas: 2 }`,
    );
    const out = await helmExecutor.apply(step, await executorContext({ spec, tools: { helm: helm.bin } }));
    assert.equal(out.status, "ok", out.reason);
    assert.deepEqual(await deployment(ns, "web"), { replicas: 2, ready: 2 });
    const calls = helm.calls();
    assert.equal(calls.filter((c) => c[0] === "pull").length, 1);
    const [install] = installs(calls);
    assert.ok(
      install !== undefined && !install.includes("--wait") && !install.includes("--repo"),
      JSON.stringify(install),
    );
    assert.match(install[2] ?? "", /khook-deploy-0\.1\.0\.tgz$/, "installed from the pulled archive");
  });

  test("a release that never becomes ready fails at the step's timeout naming the object, and the unchanged re-run waits again instead of passing", async (t) => {
    const ns = await withNamespace(t, "helm-wait");
    const { spec, step } = helmStep("stuck", ns, `chart: ${testChartPath("khook-deploy")}\nvalues: ${NOWHERE}`);
    const message = new RegExp(
      `^release stuck \\(namespace ${ns}\\) is installed but not ready after [0-9.]+s: deployment/stuck: 0 of 1 replicas ready \\(needs 1\\)\\. See why with kubectl describe -n ${ns} deployment/stuck; the next run waits again\nwhat blocks it:\n {2}- pod/stuck-[a-z0-9-]+: cannot be scheduled: 0/\\d+ nodes are available: \\d+ node\\(s\\) didn't match Pod's node affinity/selector[^\n]*$`,
    );
    const expected = (e: unknown): boolean => e instanceof Error && message.test(e.message);
    await assert.rejects(helmExecutor.apply(step, await executorContext({ spec, timeoutMs: 4000 })), expected);
    // Same chart and values: a no-op for helm, but not a success while the Deployment is not ready.
    const assessed = await helmExecutor.assess(step, await executorContext({ spec }));
    assert.equal(assessed.action, "no-op", assessed.reason);
    await assert.rejects(helmExecutor.apply(step, await executorContext({ spec, timeoutMs: 3000 })), expected);
  });
});

describe("helm-wait-timeout-names-objects", () => {
  test("through khook apply, the step's timeout reports the objects that are not ready (khook's wait ends before the engine's timer), first run and unchanged re-run", async (t) => {
    const ns = await withNamespace(t, "helm-wait");
    const cluster = await testCluster();
    const steps = `  - name: stuck\n    timeout: 4s\n    helm:\n      chart: ${testChartPath("khook-deploy")}\n      namespace: ${ns}\n      wait: true\n      values: ${NOWHERE}\n`;
    const { file } = specDir(khookSpec("helm-wait-cli", steps));
    const env = cliEnv(cluster.kubeconfig, { KHOOK_HELM: toolPath("helm") });
    for (const run of ["first run", "unchanged re-run"]) {
      const r = await runKhook(["apply", "-f", file], { env });
      assert.equal(r.code, 1, `${run}: ${r.stdout}${r.stderr}`);
      const output = r.stdout + r.stderr;
      assert.match(
        output,
        new RegExp(
          `Error: step stuck failed: release stuck \\(namespace ${ns}\\) is installed but not ready after [0-9.]+m?s: deployment/stuck: 0 of 1 replicas ready \\(needs 1\\)\\. See why with kubectl describe -n ${ns} deployment/stuck; the next run waits again\nwhat blocks it:\n {2}- pod/stuck-[a-z0-9-]+: cannot be scheduled: `,
        ),
        `${run}: ${output}`,
      );
      // The progress lines say what is pending while it waits.
      assert.match(output, /\[stuck\] deployment\/stuck: 0 of 1 replicas ready \(needs 1\)/, `${run}: ${output}`);
    }
  });
});

describe("helm-wait-cancellable", () => {
  test("an abort during khook's wait ends the step at once with the abort's reason", async (t) => {
    const ns = await withNamespace(t, "helm-wait");
    const { spec, step } = helmStep("stuck", ns, `chart: ${testChartPath("khook-deploy")}\nvalues: ${NOWHERE}`);
    const ctl = new AbortController();
    const ctx = await executorContext({
      spec,
      signal: ctl.signal,
      onLog: (line) =>
        void (/^waiting for the objects of release stuck/.test(line) && ctl.abort(new Error("cancelled by the test"))),
    });
    await assert.rejects(helmExecutor.apply(step, ctx), /cancelled by the test/);
    assert.ok(
      ctx.logs.some((l) => /^waiting for the objects of release stuck/.test(l)),
      ctx.logs.join("\n"),
    );
  });
});

describe("helm-wait-hooks-keep-helm-wait", () => {
  test("a chart with a post-install hook, and an atomic step, keep helm's own --wait", async (t) => {
    const ns = await withNamespace(t, "helm-wait");
    const chart = testChartPath("khook-test-hooked");
    const hooked = recordingHelm();
    const a = helmStep("hooked", ns, `chart: ${chart}`);
    assert.equal(
      (await helmExecutor.apply(a.step, await executorContext({ spec: a.spec, tools: { helm: hooked.bin } }))).status,
      "ok",
    );
    assert.ok(installs(hooked.calls())[0]?.includes("--wait"), JSON.stringify(installs(hooked.calls())));

    const atomic = recordingHelm();
    const b = helmStep("atomic", ns, `chart: ${testChartPath("khook-deploy")}`, "atomic: true");
    assert.equal(
      (await helmExecutor.apply(b.step, await executorContext({ spec: b.spec, tools: { helm: atomic.bin } }))).status,
      "ok",
    );
    assert.ok(installs(atomic.calls())[0]?.includes("--atomic"), JSON.stringify(installs(atomic.calls())));
  });
});
