/** Driving a `pulumi up` that is interrupted mid-run: gate steps, waiting on the journal, pending operations. */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { KhookShell } from "./pulumi-env.js";
import type { ClusterView, StoredRecordJson } from "./pulumi-kube.js";
import { descendants, type PulumiProject, type PulumiRun } from "./pulumi-project.js";

/** A step that blocks until the test opens it (a ConfigMap with open: "yes"). */
export function gateStep(name: string, needs: string): string {
  return `  - name: ${name}
    needs: [${needs}]
    timeout: 5m
    wait:
      for: jsonpath={.data.open}=yes
      on: configmap/${name}
      namespace: \${NS}
`;
}

/** Waits (by polling the journal) until `done` holds for the record. */
export async function journaled(
  cluster: ClusterView,
  ns: string,
  record: string,
  done: (r: StoredRecordJson) => boolean,
): Promise<StoredRecordJson> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const rec = await cluster.record(ns, record);
    if (rec && done(rec)) return rec;
    assert.ok(Date.now() < deadline, `the journal never got there: ${JSON.stringify(rec?.steps)}`);
    await sleep(250);
  }
}

/** The command line of each shell's provider process: @pulumi/pulumi's dynamic provider, khook's native one (bin/pulumi-resource-khook runs it), or the single executable under the plugin's name. */
const PROVIDER_PROCESS: Record<KhookShell, RegExp> = {
  dynamic: /dynamic-provider/,
  native: /native-main\.js/,
  sea: /\/pulumi-resource-khook /,
};

/** Starts `up`, waits until `ready` holds for the journal and the provider is running, then hands over the pulumi pid and the provider pids. */
export async function upUntil(
  project: PulumiProject,
  cluster: ClusterView,
  ns: string,
  record: string,
  ready: (r: StoredRecordJson) => boolean,
  shell: KhookShell = "dynamic",
): Promise<{ done: Promise<PulumiRun>; pulumiPid: number; providers: number[] }> {
  let pulumiPid = 0;
  const done = project.run(["up", "--yes", "--skip-preview"], { onSpawn: (pid) => (pulumiPid = pid) });
  await journaled(cluster, ns, record, ready);
  await sleep(500); // the gate step is now waiting
  return { done, pulumiPid, providers: descendants(pulumiPid, PROVIDER_PROCESS[shell]) };
}

/** Clears the stack's pending operations (what a killed provider leaves); returns how many there were. */
export async function clearPendingOperations(project: PulumiProject): Promise<number> {
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
