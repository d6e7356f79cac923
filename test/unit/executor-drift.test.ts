/**
 * Each step kind's drift check (StepExecutor.drift), against the recording fake of the cluster:
 * what it calls drifted, in sync or not checkable, that it reads lists and never GETs an object,
 * and that it never writes. The real cluster runs them in test/integration/drift.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { applyExecutor } from "../../provider/steps/apply/executor.js";
import { deleteExecutor } from "../../provider/steps/delete/executor.js";
import { jobExecutor } from "../../provider/steps/job/executor.js";
import { patchExecutor } from "../../provider/steps/patch/executor.js";
import { waitExecutor } from "../../provider/steps/wait/executor.js";
import { LiveReads } from "../../provider/kube/live.js";
import type { DriftContext } from "../../provider/steps/contract.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import type { KubeObject, ResourceType } from "../../provider/kubectl/types.js";
import type { ListOptions, ObjectList } from "../../provider/kube/objects.js";
import { contextFor, loadSteps, stepOf } from "./support/executor-context.js";
import { FakeKube } from "./support/fake-kube.js";

/** The fake, counting reads: the drift check must list, never GET. */
class CountingKube extends FakeKube {
  gets = 0;
  lists = 0;
  override async get(rt: ResourceType, name: string, namespace?: string): Promise<KubeObject | undefined> {
    this.gets++;
    return super.get(rt, name, namespace);
  }
  override async list(rt: ResourceType, opts: ListOptions = {}): Promise<ObjectList> {
    this.lists++;
    return super.list(rt, opts);
  }
}

function driftContext(spec: LoadedSpec, kube: FakeKube, baseline?: { revision?: number }): DriftContext {
  return Object.assign(contextFor(spec, kube), {
    live: new LiveReads(kube),
    recorded: { finishedAt: "2026-01-01T00:00:00.000Z", ...(baseline !== undefined ? { baseline } : {}) },
  });
}

const inline = (text: string): string => `[ { inline: ${JSON.stringify(text)} } ]`;
const CMS =
  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: w}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {token: c2VjcmV0}\n";
const spec = loadSteps(
  `  - name: cms\n    apply: { namespace: apps, manifests: ${inline(CMS)} }\n` +
    `  - name: gone\n    delete: { resource: configmap/old, namespace: apps }\n` +
    `  - name: bump\n    patch: { target: configmap/a, namespace: apps, type: merge, patch: { data: { patched: "yes" } } }\n` +
    `  - name: once\n    job: { image: busybox, namespace: apps }\n` +
    `  - name: ready\n    wait: { for: condition=Ready, on: pods, namespace: apps }\n`,
);

async function applied(kube: FakeKube): Promise<void> {
  await applyExecutor.apply(stepOf(spec, "cms", "apply"), contextFor(spec, kube));
}

describe("drift: apply: steps", () => {
  test("drift-in-sync: objects as applied are in sync, from one list per kind and namespace and no GET", async () => {
    const kube = new CountingKube();
    await applied(kube);
    kube.gets = 0;
    kube.lists = 0;
    const writes = kube.writes.length;
    const d = await applyExecutor.drift(stepOf(spec, "cms", "apply"), driftContext(spec, kube));
    assert.equal(d.state, "in-sync", d.reason);
    assert.equal(d.reason, "3 objects as applied");
    assert.equal(kube.gets, 0, "no GET per object");
    assert.equal(kube.lists, 2, "ConfigMaps and Secrets in apps: one list each");
    assert.equal(kube.writes.length, writes);
    assert.deepEqual(kube.dryRuns, [], "nothing differs, so nothing is dry-run");
  });

  test("drift-changed-and-gone: an edited object names the field, a deleted one is gone", async () => {
    const kube = new CountingKube();
    await applied(kube);
    const a = kube.object("ConfigMap", "a", "apps")!;
    kube.seed({ ...a, data: { k: "edited by hand" } });
    await kube.delete(
      { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true },
      "b",
      "apps",
    );
    const d = await applyExecutor.drift(stepOf(spec, "cms", "apply"), driftContext(spec, kube));
    assert.equal(d.state, "drifted");
    assert.deepEqual(d.drifted, [
      { ref: "configmap/a -n apps", change: "changed", fields: ["data.k"] },
      { ref: "configmap/b -n apps", change: "gone" },
    ]);
    assert.equal(d.reason, "configmap/a -n apps changed (data.k); configmap/b -n apps is gone");
  });

  test("secret-drift-names-keys: a Secret's drift names the key, never the value", async () => {
    const kube = new CountingKube();
    await applied(kube);
    const s = kube.object("Secret", "s", "apps")!;
    kube.seed({ ...s, data: { token: Buffer.from("hand-set-value").toString("base64") } });
    const d = await applyExecutor.drift(stepOf(spec, "cms", "apply"), driftContext(spec, kube));
    assert.equal(d.state, "drifted");
    assert.deepEqual(d.drifted, [{ ref: "secret/s -n apps", change: "changed", fields: ["data.token"] }]);
    const text = JSON.stringify(d);
    for (const v of ["hand-set-value", Buffer.from("hand-set-value").toString("base64"), "c2VjcmV0", 'secret"'])
      assert.ok(!text.includes(v), `${v} leaked: ${text}`);
  });

  test("controller-fields-not-drift: fields the manifest never set (status, labels added by others) are not drift", async () => {
    const kube = new CountingKube();
    await applied(kube);
    const a = kube.object("ConfigMap", "a", "apps")!;
    kube.seed({
      ...a,
      metadata: { ...a.metadata, labels: { "added-by": "a-controller" } },
      status: { seen: true },
    } as KubeObject);
    const d = await applyExecutor.drift(stepOf(spec, "cms", "apply"), driftContext(spec, kube));
    assert.equal(d.state, "in-sync", d.reason);
  });
});

describe("drift: the other kinds", () => {
  test("delete: what it deleted and is back is drift; still absent is in sync", async () => {
    const kube = new CountingKube();
    const step = stepOf(spec, "gone", "delete");
    assert.equal((await deleteExecutor.drift(step, driftContext(spec, kube))).state, "in-sync");
    kube.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "old", namespace: "apps" } });
    const d = await deleteExecutor.drift(step, driftContext(spec, kube));
    assert.equal(d.state, "drifted");
    assert.deepEqual(d.drifted, [{ ref: "configmap/old -n apps", change: "back" }]);
    assert.equal(kube.gets, 0);
  });

  test("patch: a merge patch still held is in sync without a dry run; undone, it names the field; its target gone is drift", async () => {
    const kube = new CountingKube();
    await applied(kube);
    const step = stepOf(spec, "bump", "patch");
    await patchExecutor.apply(step, contextFor(spec, kube));
    const dryRuns = kube.dryRuns.length;
    assert.equal((await patchExecutor.drift(step, driftContext(spec, kube))).state, "in-sync");
    assert.equal(kube.dryRuns.length, dryRuns, "no dry run for a merge patch that holds");
    const a = kube.object("ConfigMap", "a", "apps")!;
    kube.seed({ ...a, data: { k: "v", patched: "no" } });
    const d = await patchExecutor.drift(step, driftContext(spec, kube));
    assert.equal(d.state, "drifted");
    assert.deepEqual(d.drifted, [{ ref: "configmap/a -n apps", change: "changed", fields: ["data.patched"] }]);
    await kube.delete(
      { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true },
      "a",
      "apps",
    );
    assert.equal((await patchExecutor.drift(step, driftContext(spec, kube))).drifted?.[0]?.change, "gone");
  });

  test("job-gone-not-drift: a Job that ran and is gone since is in sync, and says why", async () => {
    const kube = new CountingKube();
    const d = await jobExecutor.drift(stepOf(spec, "once", "job"), driftContext(spec, kube));
    assert.equal(d.state, "in-sync");
    assert.match(d.reason, /job once ran and is gone since \(one-shot Jobs are cleaned up; not drift\)/);
  });

  test("wait: nothing to compare, and it says why", async () => {
    const d = await waitExecutor.drift(stepOf(spec, "ready", "wait"), driftContext(spec, new CountingKube()));
    assert.equal(d.state, "not-checkable");
    assert.match(d.reason, /a wait: step makes nothing/);
  });
});
