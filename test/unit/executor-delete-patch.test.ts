/** The delete: and patch: executors' decisions, against a recording fake of the cluster. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { KubeApiError } from "../../provider/kube/api-errors.js";
import { deleteExecutor } from "../../provider/steps/delete/executor.js";
import { patchExecutor } from "../../provider/steps/patch/executor.js";
import { contextFor, loadSteps, stepOf } from "./support/executor-context.js";
import { FakeKube } from "./support/fake-kube.js";

const CM = (name: string): string => `apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: ${name}}\\n`;
const spec = loadSteps(
  `  - name: by-manifests\n    delete: { namespace: apps, manifests: [ { inline: "${CM("a")}---\\n${CM("b")}" } ] }\n` +
    `  - name: strict\n    delete: { ignoreNotFound: false, manifests: [ { inline: "${CM("a")}" } ] }\n` +
    `  - name: by-name\n    delete: { resource: daemonset/aws-node, namespace: kube-system }\n` +
    `  - name: by-selector\n    delete: { resource: pods, allNamespaces: true, selector: app=old }\n` +
    `  - name: scale\n    patch: { target: deployment/web, namespace: apps, patch: { spec: { replicas: 3 } } }\n` +
    `  - name: in-default\n    patch: { target: deployment/web, patch: { spec: { replicas: 1 } } }\n` +
    `  - name: widget\n    patch: { target: widget/w, patch: { spec: { size: 2 } } }\n`,
);
const pod = (name: string, namespace: string, app: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace, labels: { app } },
});
const deployment = (namespace: string, replicas: number) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace },
  spec: { replicas },
});

describe("delete executor", () => {
  test("by manifests: deletes what exists, waits until it is gone, and counts the absent as success", async () => {
    const kube = new FakeKube();
    kube.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" } });
    const step = stepOf(spec, "by-manifests", "delete");
    assert.deepEqual(await deleteExecutor.assess(step, contextFor(spec, kube)), {
      action: "delete",
      reason: "1 to delete: configmap/a -n apps",
    });
    const out = await deleteExecutor.apply(step, contextFor(spec, kube));
    assert.deepEqual(out, { status: "ok", reason: "1 deleted, 1 already absent" });
    assert.deepEqual(kube.writes, ["delete configmap/a -n apps", "wait-deleted configmap/a -n apps"]);
  });

  test("ignoreNotFound: false fails on an absent object, naming it, and deletes nothing", async () => {
    const kube = new FakeKube();
    const step = stepOf(spec, "strict", "delete");
    assert.match(
      (await deleteExecutor.assess(step, contextFor(spec, kube))).reason,
      /configmap\/a -n default not found: the step will fail \(ignoreNotFound: false\)/,
    );
    await assert.rejects(
      deleteExecutor.apply(step, contextFor(spec, kube)),
      /not found: configmap\/a -n default \(ignoreNotFound: false\)/,
    );
    assert.deepEqual(kube.writes, []);
  });

  test("by kind/name: deletes that object in the step's namespace only", async () => {
    const kube = new FakeKube();
    kube.seed({ apiVersion: "apps/v1", kind: "DaemonSet", metadata: { name: "aws-node", namespace: "kube-system" } });
    kube.seed({ apiVersion: "apps/v1", kind: "DaemonSet", metadata: { name: "aws-node", namespace: "other" } });
    await deleteExecutor.apply(stepOf(spec, "by-name", "delete"), contextFor(spec, kube));
    assert.deepEqual(kube.written("delete"), ["delete daemonset/aws-node -n kube-system"]);
    assert.ok(kube.object("DaemonSet", "aws-node", "other"));
  });

  test("by selector in all namespaces: deletes exactly the matching objects", async () => {
    const kube = new FakeKube();
    kube.seed(pod("p1", "a", "old"));
    kube.seed(pod("p2", "b", "old"));
    kube.seed(pod("keep", "a", "new"));
    const out = await deleteExecutor.apply(stepOf(spec, "by-selector", "delete"), contextFor(spec, kube));
    assert.equal(out.reason, "2 deleted");
    assert.deepEqual(kube.written("delete").sort(), ["delete pod/p1 -n a", "delete pod/p2 -n b"]);
    assert.ok(kube.object("Pod", "keep", "a"));
  });

  test("destroy of a delete step undoes nothing and touches nothing", async () => {
    const kube = new FakeKube();
    kube.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" } });
    assert.equal(
      (await deleteExecutor.destroy(stepOf(spec, "by-manifests", "delete"), contextFor(spec, kube))).status,
      "skipped",
    );
    assert.deepEqual(kube.writes, []);
  });
});

describe("patch executor", () => {
  test("patches the target in the step's namespace; assess is a dry run that says whether anything changes", async () => {
    const kube = new FakeKube();
    kube.seed(deployment("apps", 1));
    const step = stepOf(spec, "scale", "patch");
    assert.deepEqual(await patchExecutor.assess(step, contextFor(spec, kube)), {
      action: "configure",
      reason: "strategic patch changes deployment/web",
    });
    assert.deepEqual(kube.writes, [], "assess writes nothing");
    assert.deepEqual(await patchExecutor.apply(step, contextFor(spec, kube)), {
      status: "ok",
      reason: "deployment/web patched",
    });
    assert.deepEqual(
      kube.writes,
      ["patch(strategic) deployment/web -n apps"],
      "type defaults to strategic (the defaults table)",
    );
    assert.deepEqual(await patchExecutor.assess(step, contextFor(spec, kube)), {
      action: "no-op",
      reason: "deployment/web already matches the patch",
    });
  });

  test("a target without namespace: is in namespace default (the defaults table), not the context's", async () => {
    const kube = new FakeKube();
    kube.contextNamespace = "ctx-ns";
    kube.seed(deployment("default", 3));
    await patchExecutor.apply(stepOf(spec, "in-default", "patch"), contextFor(spec, kube));
    assert.deepEqual(kube.writes, ["patch(strategic) deployment/web -n default"]);
  });

  test("a missing target fails with what to do", async () => {
    await assert.rejects(
      patchExecutor.apply(stepOf(spec, "scale", "patch"), contextFor(spec, new FakeKube())),
      /deployment\/web in namespace apps does not exist; a patch target must exist \(order this step after whatever creates it with needs:\)/,
    );
  });

  test("a strategic patch a custom resource refuses comes back with the hint to use type: merge", async () => {
    const kube = new FakeKube();
    kube.seed({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "default" } });
    kube.failNext.set(
      "patch",
      new KubeApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/merge-patch+json",
        { name: "w" },
      ),
    );
    await assert.rejects(
      patchExecutor.apply(stepOf(spec, "widget", "patch"), contextFor(spec, kube)),
      /hint: strategic merge patches do not work on custom resources; use type: merge/,
    );
  });

  test("destroy never undoes a patch: the object is not khook's", async () => {
    const kube = new FakeKube();
    kube.seed(deployment("apps", 3));
    assert.equal(
      (await patchExecutor.destroy(stepOf(spec, "scale", "patch"), contextFor(spec, kube))).status,
      "skipped",
    );
    assert.deepEqual(kube.writes, []);
  });
});
