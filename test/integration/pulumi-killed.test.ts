/**
 * A killed provider: the dynamic provider process dies mid-`up` (what a second
 * Ctrl-C does), leaving a pending operation. Once it is cleared, `up` runs
 * create again — and resumes from the journal, which was written after every
 * completed step.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { RESUME_REASON } from "../../provider/state/record.js";
import type { StepOutput } from "../../provider/pulumi/wire.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { descendants, KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

const SPEC = spec(
  "killed",
  configMapStep("alpha", { a: "1" }) +
    configMapStep("beta", { b: "1" }) +
    // Blocks until the test opens the gate (a ConfigMap named "gate" with open: "yes").
    `  - name: gate
    needs: [alpha, beta]
    timeout: 5m
    wait:
      for: jsonpath={.data.open}=yes
      on: configmap/gate
      namespace: \${NS}
` +
    configMapStep("omega", { o: "1" }, "    needs: [gate]\n"),
);

test("a killed provider: clear the pending operation, and up resumes from the journal", { timeout: 900_000 }, async (t) => {
  const { project, kubeconfig, namespace: ns, cluster } = await pulumiFixture(t, { program: KHOOK_PROGRAM, files: { "boot.khook.yaml": SPEC } });
  project.write("args.json", programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }));
  await project.init();

  let pulumiPid = 0;
  const upPromise = project.run(["up", "--yes", "--skip-preview"], { onSpawn: (pid) => (pulumiPid = pid) });

  // Wait until alpha and beta are journaled and the gate step is running.
  const deadline = Date.now() + 300_000;
  let rec = await cluster.record(ns, "khook-state-killed");
  while (!(rec?.steps.alpha?.status === "ok" && rec.steps.beta?.status === "ok")) {
    assert.ok(Date.now() < deadline, "alpha and beta were never journaled");
    await sleep(250);
    rec = await cluster.record(ns, "khook-state-killed");
  }
  const providers = descendants(pulumiPid, /dynamic-provider/);
  assert.equal(providers.length, 1, `one dynamic provider process under pulumi (${pulumiPid})`);
  process.kill(providers[0]!, "SIGKILL");
  const killed = await upPromise;
  assert.notEqual(killed.code, 0, killed.output);
  const versions = await cluster.versions(ns, ["alpha", "beta"]);
  assert.ok(versions.alpha && versions.beta);
  assert.equal((await cluster.configMap(ns, "omega")), undefined);

  // The state has a pending create; clear it the documented way (export, drop, import).
  const exported = JSON.parse(await project.exportText()) as { deployment: { pending_operations?: unknown[] } };
  assert.ok((exported.deployment.pending_operations ?? []).length > 0, "a pending operation was left behind");
  exported.deployment.pending_operations = [];
  const file = path.join(project.dir, "cleared.json");
  fs.writeFileSync(file, JSON.stringify(exported));
  await project.ok(["stack", "import", "--file", file]);

  // Open the gate and run up again: create runs, and resumes from the journal.
  await cluster.createConfigMap(ns, "gate", { open: "yes" });
  const again = await project.ok(["up", "--yes", "--skip-preview"]);
  const out = await project.outputs();
  assert.equal(out.runStatus, "succeeded");
  assert.deepEqual(
    (out.steps as StepOutput[]).map((s) => [s.name, s.status, s.status === "skipped" ? s.reason : ""]),
    [["alpha", "skipped", RESUME_REASON], ["beta", "skipped", RESUME_REASON], ["gate", "ok", ""], ["omega", "ok", ""]],
    again.output,
  );
  assert.deepEqual(await cluster.versions(ns, ["alpha", "beta"]), versions, "completed steps were not re-run");
  const rec2 = await cluster.record(ns, "khook-state-killed");
  assert.equal(rec2!.steps.alpha!.finishedAt, rec!.steps.alpha!.finishedAt);
  assert.equal(rec2!.runStatus, "succeeded");

  await project.ok(["destroy", "--yes", "--skip-preview"]);
});
