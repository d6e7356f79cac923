/** The apply: executor's decisions, against a recording fake of the cluster (test/integration/kube-apply.test.ts and the scenarios run it for real). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { applyExecutor } from "../../provider/steps/apply/executor.js";
import { contextFor, loadSteps, stepOf } from "./support/executor-context.js";
import { FakeKube } from "./support/fake-kube.js";

const CMS =
  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n";
const inline = (text: string): string => `[ { inline: ${JSON.stringify(text)} } ]`;
const spec = loadSteps(
  `  - name: cms\n    apply: { namespace: apps, createNamespace: true, manifests: ${inline(CMS)} }\n` +
    `  - name: once\n    apply: { skipIf: exists, manifests: ${inline(CMS)} }\n` +
    `  - name: ready\n    apply: { waitFor: condition=Ready, manifests: ${inline("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")} }\n` +
    `  - name: crd-later\n    apply: { manifests: ${inline("apiVersion: example.com/v2\nkind: Gadget\nmetadata: {name: g}\n")} }\n`,
);
const OWNER = "khook.io/owned-by";

describe("apply executor", () => {
  test("objects are applied into the step's namespace, created there first when createNamespace is set, and marked: owned-by only on create, applied-by always", async () => {
    const kube = new FakeKube();
    const lines: string[] = [];
    const out = await applyExecutor.apply(stepOf(spec, "cms", "apply"), contextFor(spec, kube, lines));
    assert.equal(out.status, "ok");
    assert.equal(out.reason, "2 created");
    assert.deepEqual(kube.writes, [
      "create namespace/apps",
      "apply(create) configmap/a -n apps",
      "apply(create) configmap/b -n apps",
    ]);
    assert.deepEqual(kube.applyOptions[0]!.createAnnotations, { [OWNER]: "demo/cms" });
    assert.deepEqual(kube.applyOptions[0]!.annotations, { "khook.io/applied-by": "demo/cms" });
    assert.equal(kube.applyOptions[0]!.serverSide, false, "the defaults table's serverSide: false");
    assert.ok(lines.includes("namespace/apps created"));
  });

  test("an object that existed before is adopted, not owned: it never gets owned-by", async () => {
    const kube = new FakeKube();
    kube.seed({ apiVersion: "v1", kind: "Namespace", metadata: { name: "apps" } });
    kube.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" }, data: { k: "old" } });
    const out = await applyExecutor.apply(stepOf(spec, "cms", "apply"), contextFor(spec, kube));
    assert.equal(out.reason, "1 created, 1 configured");
    assert.equal(kube.object("ConfigMap", "a", "apps")!.metadata?.annotations?.[OWNER], undefined);
    assert.equal(kube.object("ConfigMap", "b", "apps")!.metadata?.annotations?.[OWNER], "demo/cms");
  });

  test("skipIf: exists skips only when every object exists; one missing object applies them all", async () => {
    const kube = new FakeKube();
    kube.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } });
    const step = stepOf(spec, "once", "apply");
    assert.equal((await applyExecutor.assess(step, contextFor(spec, kube))).action, "create");
    assert.equal((await applyExecutor.apply(step, contextFor(spec, kube))).status, "ok");
    const writes = kube.writes.length;
    const again = await applyExecutor.apply(step, contextFor(spec, kube));
    assert.equal(again.status, "skipped");
    assert.match(again.reason, /^skipIf: exists — all 2 objects already exist$/);
    assert.equal(kube.writes.length, writes, "a skipped step writes nothing");
  });

  test("waitFor: waits on exactly the applied objects, and a condition that never holds fails the step", async () => {
    const kube = new FakeKube();
    const step = stepOf(spec, "ready", "apply");
    await assert.rejects(applyExecutor.apply(step, contextFor(spec, kube)), /timed out .*no Ready condition yet/);
    kube.beforeWait = () => {
      kube.object("Widget", "w", "default")!["status"] = { conditions: [{ type: "Ready", status: "True" }] };
    };
    const out = await applyExecutor.apply(step, contextFor(spec, kube));
    assert.equal(out.reason, "1 unchanged; condition=Ready met");
  });

  test("plan: a kind the cluster does not serve yet counts as to create; nothing is written by assess", async () => {
    const kube = new FakeKube();
    const a = await applyExecutor.assess(stepOf(spec, "crd-later", "apply"), contextFor(spec, kube));
    assert.deepEqual(a, { action: "create", reason: "1 to create (gadget/g)" });
    const b = await applyExecutor.assess(stepOf(spec, "cms", "apply"), contextFor(spec, kube));
    assert.equal(b.action, "create");
    assert.deepEqual(kube.writes, []);
    assert.ok(
      kube.applyOptions.every((o) => o.dryRun === true),
      "assess only dry-runs",
    );
  });

  test("destroy deletes only what this step created, and leaves adopted and foreign objects alone", async () => {
    const kube = new FakeKube();
    kube.seed({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "apps", annotations: { [OWNER]: "demo/cms" } },
    });
    kube.seed({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "b", namespace: "apps", annotations: { [OWNER]: "other-spec/cms" } },
    });
    const out = await applyExecutor.destroy(stepOf(spec, "cms", "apply"), contextFor(spec, kube));
    assert.equal(out.status, "ok");
    assert.match(out.reason, /^1 deleted, 1 left alone \(not created by this step: configmap\/b -n apps\)$/);
    assert.deepEqual(kube.written("delete"), ["delete configmap/a -n apps"]);
    assert.ok(kube.object("ConfigMap", "b", "apps"));
    assert.ok(
      !kube.writes.some((w) => w.includes("namespace/apps")),
      "a namespace from createNamespace is never deleted",
    );
  });

  test("destroy goes in reverse order: a namespace or CRD listed first is deleted last", async () => {
    const kube = new FakeKube();
    for (const name of ["a", "b"])
      kube.seed({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "apps", annotations: { [OWNER]: "demo/cms" } },
      });
    await applyExecutor.destroy(stepOf(spec, "cms", "apply"), contextFor(spec, kube));
    assert.deepEqual(kube.written("delete"), ["delete configmap/b -n apps", "delete configmap/a -n apps"]);
  });

  test("destroy of objects already gone succeeds with nothing to do", async () => {
    const out = await applyExecutor.destroy(stepOf(spec, "cms", "apply"), contextFor(spec, new FakeKube()));
    assert.deepEqual(out, { status: "skipped", reason: "0 deleted, 2 already absent" });
  });
});
