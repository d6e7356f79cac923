/**
 * A killed provider and a Ctrl-C:
 *  1. the dynamic provider process dies mid-`up` (OOM, a kill): the CLI
 *     records the create as failed, and the next `up` runs create again;
 *  2. one Ctrl-C while a wait step and a helm install run: the provider
 *     aborts both (the helm child is terminated), writes the journal
 *     `cancelled` and rejects with a partial state, so the CLI exits cleanly
 *     with no pending operation (provider/pulumi/cancel.ts);
 * and each time the next `up` resumes from the journal, which was written
 * after every completed step: nothing completed is applied again. On both
 * shells, the dynamic resource and the native provider (whose `Cancel` is a
 * method of its provider, native.ts), and with the native provider served by
 * the single executable, where signals and Cancel reach a bundled server.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { RESUME_REASON } from "../../provider/state/record.js";
import type { StepOutput } from "../../provider/pulumi/wire.js";
import { onShell, pulumiFixture, SHELLS } from "./support/pulumi-env.js";
import { testChartPath } from "../harness/index.js";
import { descendants, KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { clearPendingOperations, gateStep, upUntil } from "./support/pulumi-runs.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

/** A helm install that never becomes ready (its pods can never be scheduled); the second run leaves it out. */
const SLOW_CHART = `  - name: slow-chart
    needs: [gate-one]
    when: vars.get("HELM", "on") == "on"
    timeout: 5m
    helm:
      chart: ./charts/never-ready
      namespace: \${NS}
      wait: true
`;
const SPEC = spec(
  "killed",
  configMapStep("alpha", { a: "1" }) +
    gateStep("gate-one", "alpha") +
    gateStep("gate-two", "gate-one") +
    SLOW_CHART +
    configMapStep("omega", { o: "1" }, "    needs: [gate-two]\n"),
);

/** The never-ready test chart, as files of the Pulumi project. */
function chartFiles(): Record<string, string> {
  const dir = testChartPath("khook-test-never-ready");
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else out[path.join("charts", "never-ready", r)] = fs.readFileSync(path.join(dir, r), "utf8");
    }
  };
  walk(".");
  return out;
}

/** Waits until helm runs under `pid`; returns its pids. */
async function helmRunning(pid: number): Promise<number[]> {
  for (;;) {
    const helm = descendants(pid, /\bhelm\b.*\b(install|upgrade)\b/);
    if (helm.length > 0) return helm;
    await sleep(250);
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const RECORD = "khook-state-killed";

for (const shell of [...SHELLS, "sea"] as const)
  test(
    onShell(
      shell,
      "a killed provider, then one Ctrl-C mid-run: each time up resumes from the journal without repeating completed steps",
    ),
    { timeout: 900_000 },
    async (t) => {
      const {
        project,
        kubeconfig,
        namespace: ns,
        cluster,
      } = await pulumiFixture(t, {
        program: KHOOK_PROGRAM,
        files: { "boot.khook.yaml": SPEC, ...chartFiles() },
        shell,
      });
      project.write(
        "args.json",
        programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
      );
      await project.init();

      // 1. Kill the provider process while gate-one waits.
      const first = await upUntil(project, cluster, ns, RECORD, (r) => r.steps.alpha?.status === "ok", shell);
      assert.equal(first.providers.length, 1, `one ${shell} provider under pulumi ${first.pulumiPid}`);
      process.kill(first.providers[0]!, "SIGKILL");
      const r1 = await first.done;
      assert.notEqual(r1.code, 0, r1.output);
      const alphaVersion = (await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion;
      assert.ok(alphaVersion);
      const rec1 = await cluster.record(ns, RECORD);
      await clearPendingOperations(project); // none expected: the CLI saw the create fail

      // 2. Open gate-one; up resumes alpha and now waits at gate-two while helm installs: press Ctrl-C once.
      await cluster.createConfigMap(ns, "gate-one", { open: "yes" });
      const second = await upUntil(
        project,
        cluster,
        ns,
        RECORD,
        (r) => r.steps["gate-one"]?.status === "ok" && r.steps["gate-one"]!.finishedAt > rec1!.updatedAt,
        shell,
      );
      assert.equal(second.providers.length, 1);
      const helm = await helmRunning(second.pulumiPid);
      process.kill(second.pulumiPid, "SIGINT");
      const r2 = await second.done;
      assert.notEqual(r2.code, 0, r2.output);
      assert.match(r2.output, /khook apply of boot was cancelled/, r2.output);
      assert.match(
        r2.output,
        /stopped by pulumi's cancellation \(Ctrl-C\): running steps were aborted and the journal written/,
        r2.output,
      );
      assert.match(r2.output, /run `pulumi up` again to resume/, r2.output);
      assert.deepEqual(helm.filter(alive), [], "the helm child was terminated");
      assert.equal(alive(second.providers[0]!), false, "the provider exited");
      assert.equal(await clearPendingOperations(project), 0, "a clean cancellation leaves no pending operation");
      const rec2 = await cluster.record(ns, RECORD);
      assert.equal(rec2!.runStatus, "cancelled", "the journal says cancelled");
      assert.equal(rec2!.steps.alpha!.finishedAt, rec1!.steps.alpha!.finishedAt, "alpha resumed in the second run");
      assert.equal(rec2!.steps["gate-one"]!.status, "ok");
      assert.notEqual(rec2!.steps["gate-two"]?.status, "ok");
      const [partial] = await project.khookResources();
      assert.equal(partial?.outputs.runStatus, "cancelled", "the stack keeps the partial state");

      // 3. Open gate-two and leave the never-ready chart out; up resumes everything completed and finishes.
      await cluster.createConfigMap(ns, "gate-two", { open: "yes" });
      project.write(
        "args.json",
        programArgs({
          args: { specFile: "./boot.khook.yaml", vars: { NS: ns, HELM: "off" } },
          kubeconfigFile: kubeconfig,
        }),
      );
      const again = await project.ok(["up", "--yes", "--skip-preview"]);
      const out = await project.outputs();
      assert.equal(out.runStatus, "succeeded");
      assert.deepEqual(
        (out.steps as StepOutput[]).map((s) => [s.name, s.status, s.status === "skipped" ? s.reason : ""]),
        [
          ["alpha", "skipped", RESUME_REASON],
          ["gate-one", "skipped", RESUME_REASON],
          ["gate-two", "ok", ""],
          ["slow-chart", "skipped", (out.steps as StepOutput[])[3]!.reason],
          ["omega", "ok", ""],
        ],
        again.output,
      );
      assert.equal(
        (await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion,
        alphaVersion,
        "alpha was applied once",
      );
      const rec3 = await cluster.record(ns, RECORD);
      assert.equal(rec3!.steps.alpha!.finishedAt, rec1!.steps.alpha!.finishedAt);
      assert.equal(rec3!.steps["gate-one"]!.finishedAt, rec2!.steps["gate-one"]!.finishedAt);
      assert.equal(rec3!.runStatus, "succeeded");

      await project.ok(["destroy", "--yes", "--skip-preview"]);
    },
  );
