/**
 * A killed provider. Two ways it happens:
 *  1. the dynamic provider process dies mid-`up` (OOM, a kill): the CLI
 *     records the create as failed;
 *  2. a second Ctrl-C: the CLI exits at once, killing the provider, and the
 *     stack is left with a pending operation that has to be cleared.
 * Either way the next `up` runs create again — and resumes from the journal,
 * which was written after every completed step.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { RESUME_REASON, type StateRecord } from "../../provider/state/record.js";
import type { StepOutput } from "../../provider/pulumi/wire.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import type { ClusterView } from "./support/pulumi-kube.js";
import { descendants, KHOOK_PROGRAM, programArgs, type PulumiProject, type PulumiRun } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

/** A step that blocks until the test opens it (a ConfigMap with open: "yes"). */
function gateStep(name: string, needs: string): string {
  return `  - name: ${name}
    needs: [${needs}]
    timeout: 5m
    wait:
      for: jsonpath={.data.open}=yes
      on: configmap/${name}
      namespace: \${NS}
`;
}

const SPEC = spec("killed", configMapStep("alpha", { a: "1" }) + gateStep("gate-one", "alpha") + gateStep("gate-two", "gate-one") + configMapStep("omega", { o: "1" }, "    needs: [gate-two]\n"));
const RECORD = "khook-state-killed";

async function journaled(cluster: ClusterView, ns: string, done: (r: StateRecord) => boolean): Promise<StateRecord> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const rec = await cluster.record(ns, RECORD);
    if (rec && done(rec)) return rec;
    assert.ok(Date.now() < deadline, `the journal never got there: ${JSON.stringify(rec?.steps)}`);
    await sleep(250);
  }
}

/** Starts `up`, waits until `ready` holds for the journal and the provider is running, then hands over the pulumi pid and the provider pids. */
async function upUntil(project: PulumiProject, cluster: ClusterView, ns: string, ready: (r: StateRecord) => boolean): Promise<{ done: Promise<PulumiRun>; pulumiPid: number; providers: number[] }> {
  let pulumiPid = 0;
  const done = project.run(["up", "--yes", "--skip-preview"], { onSpawn: (pid) => (pulumiPid = pid) });
  await journaled(cluster, ns, ready);
  await sleep(500); // the gate step is now waiting
  return { done, pulumiPid, providers: descendants(pulumiPid, /dynamic-provider/) };
}

async function clearPendingOperations(project: PulumiProject): Promise<number> {
  const exported = JSON.parse(await project.exportText()) as { deployment: { pending_operations?: unknown[] } };
  const n = (exported.deployment.pending_operations ?? []).length;
  if (n > 0) {
    exported.deployment.pending_operations = [];
    const file = path.join(project.dir, "cleared.json");
    fs.writeFileSync(file, JSON.stringify(exported));
    await project.ok(["stack", "import", "--file", file]);
  }
  return n;
}

test("a killed provider: up resumes from the journal (provider killed; second Ctrl-C with a pending operation)", { timeout: 900_000 }, async (t) => {
  const { project, kubeconfig, namespace: ns, cluster } = await pulumiFixture(t, { program: KHOOK_PROGRAM, files: { "boot.khook.yaml": SPEC } });
  project.write("args.json", programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }));
  await project.init();

  // 1. Kill the provider process while gate-one waits.
  const first = await upUntil(project, cluster, ns, (r) => r.steps.alpha?.status === "ok");
  assert.equal(first.providers.length, 1, `one dynamic provider under pulumi ${first.pulumiPid}`);
  process.kill(first.providers[0]!, "SIGKILL");
  const r1 = await first.done;
  assert.notEqual(r1.code, 0, r1.output);
  const alphaVersion = (await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion;
  assert.ok(alphaVersion);
  const rec1 = await cluster.record(ns, RECORD);
  await clearPendingOperations(project); // none expected: the CLI saw the create fail

  // 2. Open gate-one; up resumes alpha and now waits at gate-two: press Ctrl-C twice.
  await cluster.createConfigMap(ns, "gate-one", { open: "yes" });
  const second = await upUntil(project, cluster, ns, (r) => r.steps["gate-one"]?.status === "ok" && r.steps["gate-one"]!.finishedAt > rec1!.updatedAt);
  assert.equal(second.providers.length, 1);
  process.kill(second.pulumiPid, "SIGINT");
  await sleep(1000);
  process.kill(second.pulumiPid, "SIGINT");
  const r2 = await second.done;
  assert.notEqual(r2.code, 0, r2.output);
  await sleep(500);
  assert.throws(() => process.kill(second.providers[0]!, 0), "the second Ctrl-C killed the provider");
  const pending = await clearPendingOperations(project);
  assert.ok(pending > 0, `a pending operation was left behind:\n${r2.output}`);
  const rec2 = await cluster.record(ns, RECORD);
  assert.equal(rec2!.steps.alpha!.finishedAt, rec1!.steps.alpha!.finishedAt, "alpha resumed in the second run");

  // 3. Open gate-two; up resumes everything completed and finishes.
  await cluster.createConfigMap(ns, "gate-two", { open: "yes" });
  const again = await project.ok(["up", "--yes", "--skip-preview"]);
  const out = await project.outputs();
  assert.equal(out.runStatus, "succeeded");
  assert.deepEqual(
    (out.steps as StepOutput[]).map((s) => [s.name, s.status, s.status === "skipped" ? s.reason : ""]),
    [["alpha", "skipped", RESUME_REASON], ["gate-one", "skipped", RESUME_REASON], ["gate-two", "ok", ""], ["omega", "ok", ""]],
    again.output,
  );
  assert.equal((await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion, alphaVersion, "alpha was applied once");
  const rec3 = await cluster.record(ns, RECORD);
  assert.equal(rec3!.steps.alpha!.finishedAt, rec1!.steps.alpha!.finishedAt);
  assert.equal(rec3!.steps["gate-one"]!.finishedAt, rec2!.steps["gate-one"]!.finishedAt);
  assert.equal(rec3!.runStatus, "succeeded");

  await project.ok(["destroy", "--yes", "--skip-preview"]);
});
