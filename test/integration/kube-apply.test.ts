/**
 * kubectl-style apply against the real cluster, checked with (and against) the real kubectl.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { type ApplyResult, type KubeObject } from "../../provider/kube/index.js";
import { LAST_APPLIED_ANNOTATION } from "../../provider/kubectl/lastapplied.js";
import { kubeSetup } from "./support/executors.js";

async function setup(t: TestContext) {
  const { cluster, ns, kube, kubectl } = await kubeSetup(t, "kapply");
  const getJson = async (kind: string, name: string, namespace: string | undefined = ns): Promise<KubeObject> =>
    JSON.parse(await kubectl(["get", kind, name, ...(namespace ? ["-n", namespace] : []), "-o", "json"])) as KubeObject;
  /** Runs the real `kubectl apply` on a manifest; returns kubectl's output line. */
  const kubectlApply = (manifest: KubeObject, extra: string[] = []): Promise<string> =>
    kubectl(["apply", ...extra], JSON.stringify(manifest));
  return { cluster, ns, kube, kubectl, getJson, kubectlApply };
}

const cm = (name: string, data: Record<string, string>, meta: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...meta },
  data,
});

function deployment(
  name: string,
  ns: string,
  opts: {
    labels?: Record<string, string>;
    containers?: unknown[];
    replicas?: number;
    extraSpec?: Record<string, unknown>;
  } = {},
): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns, labels: opts.labels ?? { app: name } },
    spec: {
      replicas: opts.replicas ?? 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: opts.containers ?? [{ name: "app", image: "nginx:1.25" }] },
      },
      ...(opts.extraSpec ?? {}),
    },
  };
}

const summary = (r: ApplyResult) => `${r.ref} ${r.action}`;

describe("apply: create, configure, unchanged", () => {
  test("reports created / unchanged / configured like kubectl, and stores last-applied", async (t) => {
    const { ns, kube, getJson } = await setup(t);
    const r1 = await kube.apply(cm("settings", { a: "1" }), { defaultNamespace: ns });
    assert.equal(summary(r1), "configmap/settings created");
    assert.equal(r1.namespace, ns);
    const live1 = await getJson("configmap", "settings");
    const la = JSON.parse(live1.metadata!.annotations![LAST_APPLIED_ANNOTATION]!) as KubeObject;
    assert.deepEqual(la, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { annotations: {}, name: "settings", namespace: ns },
      data: { a: "1" },
    });

    const r2 = await kube.apply(cm("settings", { a: "1" }), { defaultNamespace: ns });
    assert.equal(summary(r2), "configmap/settings unchanged");
    assert.equal(r2.object.metadata?.resourceVersion, live1.metadata?.resourceVersion);

    const r3 = await kube.apply(cm("settings", { a: "2", b: "3" }), { defaultNamespace: ns });
    assert.equal(summary(r3), "configmap/settings configured");
    assert.deepEqual((await getJson("configmap", "settings"))["data"], { a: "2", b: "3" });
    assert.equal(r3.patch?.type, "strategic");
  });

  test("a field removed from the manifest is removed from the live object; fields others set stay", async (t) => {
    const { ns, kube, kubectl, getJson } = await setup(t);
    const v1 = deployment("web", ns, {
      labels: { app: "web", tier: "front" },
      containers: [
        {
          name: "app",
          image: "nginx:1.25",
          env: [
            { name: "A", value: "1" },
            { name: "B", value: "2" },
          ],
          args: ["--x", "--y"],
        },
        { name: "sidecar", image: "busybox:1.36" },
      ],
      extraSpec: { minReadySeconds: 5 },
    });
    assert.equal((await kube.apply(v1)).action, "created");
    await kubectl(["label", "deployment", "web", "-n", ns, "owner=someone-else"]);

    const v2 = deployment("web", ns, {
      labels: { app: "web" },
      containers: [{ name: "app", image: "nginx:1.25", env: [{ name: "A", value: "1" }], args: ["--x"] }],
    });
    assert.equal((await kube.apply(v2)).action, "configured");
    const live = await getJson("deployment", "web");
    assert.deepEqual(
      live.metadata?.labels,
      { app: "web", owner: "someone-else" },
      "tier removed, the other manager's label kept",
    );
    const spec = live["spec"] as {
      minReadySeconds?: number;
      template: { spec: { containers: { name: string; env?: unknown; args?: unknown }[] } };
    };
    assert.equal(spec.minReadySeconds, undefined, "minReadySeconds removed");
    assert.deepEqual(
      spec.template.spec.containers.map((c) => c.name),
      ["app"],
      "the sidecar container removed",
    );
    assert.deepEqual(spec.template.spec.containers[0]!.env, [{ name: "A", value: "1" }], "env B removed");
    assert.deepEqual(spec.template.spec.containers[0]!.args, ["--x"]);
    assert.equal((await kube.apply(v2)).action, "unchanged");
  });
});

describe("apply: interoperates with kubectl apply", () => {
  test("takes over an object last applied by kubectl, and kubectl sees no difference afterwards", async (t) => {
    const { ns, kube, getJson, kubectlApply } = await setup(t);
    const m1 = deployment("api", ns, {
      labels: { app: "api", legacy: "yes" },
      containers: [
        { name: "app", image: "nginx:1.25", ports: [{ containerPort: 80 }, { containerPort: 443 }] },
        { name: "debug", image: "busybox:1.36" },
      ],
    });
    assert.match(await kubectlApply(m1), /deployment\.apps\/api created/);
    // Same manifest: kubectl says unchanged, and so must khook (the annotation encodings agree byte for byte).
    assert.match(await kubectlApply(m1), /deployment\.apps\/api unchanged/);
    const rSame = await kube.apply(m1);
    assert.equal(summary(rSame), "deployment.apps/api unchanged");

    // khook now removes what kubectl had applied.
    const m2 = deployment("api", ns, {
      containers: [{ name: "app", image: "nginx:1.25", ports: [{ containerPort: 80 }] }],
    });
    assert.equal((await kube.apply(m2)).action, "configured");
    const live = await getJson("deployment", "api");
    assert.deepEqual(live.metadata?.labels, { app: "api" });
    const containers = (
      live["spec"] as { template: { spec: { containers: { name: string; ports: { containerPort: number }[] }[] } } }
    ).template.spec.containers;
    assert.deepEqual(
      containers.map((c) => c.name),
      ["app"],
    );
    assert.deepEqual(
      containers[0]!.ports.map((p) => p.containerPort),
      [80],
    );

    // And kubectl, applying what khook applied, finds nothing to do.
    assert.match(await kubectlApply(m2), /deployment\.apps\/api unchanged/);
  });

  test("khook and kubectl report the same action for the same sequence of manifests", async (t) => {
    const { ns, kube, kubectlApply } = await setup(t);
    const seq: KubeObject[] = [
      cm("seq", { a: "1" }, { namespace: ns, labels: { x: "1" } }),
      cm("seq", { a: "1" }, { namespace: ns, labels: { x: "1" } }),
      cm("seq", { a: "1", b: "2" }, { namespace: ns }),
      cm("seq", { b: "2" }, { namespace: ns, annotations: { note: "n" } }),
      cm("seq", { b: "2" }, { namespace: ns, annotations: { note: "n" } }),
    ];
    const theirs: string[] = [];
    const ours: string[] = [];
    for (const m of seq) theirs.push((await kubectlApply(m)).replace(/^configmap\/seq /, ""));
    await kube.delete(
      { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true },
      "seq",
      ns,
    );
    await kube.waitForDeletion(
      { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true },
      "seq",
      ns,
      { timeoutMs: 60_000 },
    );
    for (const m of seq) ours.push((await kube.apply(m)).action);
    assert.deepEqual(ours, theirs);
    assert.deepEqual(ours, ["created", "unchanged", "configured", "configured", "unchanged"]);
  });

  test("kubectl's quirks are kept: an empty list the server drops is 'configured' on every apply", async (t) => {
    const { ns, kube, kubectl, kubectlApply } = await setup(t);
    const name = `khook-quirk-${ns}`;
    t.after(async () => {
      await kubectl(["delete", "clusterrole", name, "--ignore-not-found"]);
    });
    const role: KubeObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules: [],
    };
    const theirs = [await kubectlApply(role), await kubectlApply(role)].map((l) => l.split(" ").pop());
    await kubectl(["delete", "clusterrole", name]);
    const ours = [(await kube.apply(role)).action, (await kube.apply(role)).action];
    assert.deepEqual(theirs, ["created", "configured"]);
    assert.deepEqual(ours, theirs);
  });
});

describe("apply: custom resources, server-side apply, dry run, namespaces", () => {
  const group = `kapply${process.pid}.khook.test`;
  const crd: KubeObject = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wdg"] },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          },
        },
      ],
    },
  };
  const widget = (ns: string, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: `${group}/v1`,
    kind: "Widget",
    metadata: { name: "w1", namespace: ns },
    spec,
  });

  test("a CRD and its custom resources in one batch; re-apply uses a JSON merge patch", async (t) => {
    const { ns, kube, kubectl, getJson } = await setup(t);
    t.after(async () => {
      await kubectl(["delete", "crd", `widgets.${group}`, "--ignore-not-found", "--wait=false"]);
    });
    const results = await kube.applyAll([crd, widget(ns, { size: 3, tags: ["a", "b"], nested: { keep: 1, drop: 2 } })]);
    assert.deepEqual(results.map(summary), [
      `customresourcedefinition.apiextensions.k8s.io/widgets.${group} created`,
      `widget.${group}/w1 created`,
    ]);

    const r = await kube.apply(widget(ns, { size: 3, tags: ["a"], nested: { keep: 1 } }));
    assert.equal(r.action, "configured");
    assert.equal(r.patch?.type, "merge");
    assert.deepEqual(r.patch?.body["spec"], { tags: ["a"], nested: { drop: null } });
    assert.deepEqual((await getJson(`widgets.${group}`, "w1"))["spec"], { size: 3, tags: ["a"], nested: { keep: 1 } });
    assert.equal((await kube.apply(widget(ns, { size: 3, tags: ["a"], nested: { keep: 1 } }))).action, "unchanged");
  });

  test("server-side apply: created / unchanged / configured, field manager khook, conflicts forced", async (t) => {
    const { ns, kube, kubectl, getJson } = await setup(t);
    const r1 = await kube.apply(cm("ssa", { a: "1" }), { defaultNamespace: ns, serverSide: true });
    assert.equal(r1.action, "created");
    const mf = r1.object.metadata?.managedFields as { manager: string; operation: string }[];
    assert.ok(
      mf.some((m) => m.manager === "khook" && m.operation === "Apply"),
      JSON.stringify(mf),
    );
    assert.equal(r1.object.metadata?.annotations?.[LAST_APPLIED_ANNOTATION], undefined, "no client-side annotation");
    assert.equal(
      (await kube.apply(cm("ssa", { a: "1" }), { defaultNamespace: ns, serverSide: true })).action,
      "unchanged",
    );
    // Another manager takes field a; khook's forced apply takes it back, and drops b it no longer applies.
    await kubectl([
      "patch",
      "configmap",
      "ssa",
      "-n",
      ns,
      "--type",
      "merge",
      "-p",
      '{"data":{"a":"theirs"}}',
      "--field-manager",
      "other",
    ]);
    assert.equal(
      (await kube.apply(cm("ssa", { a: "1", b: "2" }), { defaultNamespace: ns, serverSide: true })).action,
      "configured",
    );
    assert.equal(
      (await kube.apply(cm("ssa", { a: "1" }), { defaultNamespace: ns, serverSide: true })).action,
      "configured",
    );
    assert.deepEqual((await getJson("configmap", "ssa"))["data"], { a: "1" });
  });

  test("an object too large for the last-applied annotation (kubectl apply fails on it) applies server-side by itself, and says so", async (t) => {
    const { ns, kube } = await setup(t);
    const big = cm("big", { blob: "x".repeat(300 * 1024) }, { namespace: ns });
    const first = await kube.apply(big);
    assert.deepEqual([first.action, first.serverSideBecauseTooLarge], ["created", true]);
    assert.equal(first.object.metadata?.annotations?.["kubectl.kubernetes.io/last-applied-configuration"], undefined);
    const again = await kube.apply(big);
    assert.deepEqual([again.action, again.serverSideBecauseTooLarge], ["unchanged", true]);
    assert.equal(
      (await kube.apply(big, { serverSide: true })).serverSideBecauseTooLarge,
      undefined,
      "asked for: no note",
    );
  });

  test("dry run shows the result and persists nothing", async (t) => {
    const { ns, kube, cluster } = await setup(t);
    const r1 = await kube.apply(cm("dry", { a: "1" }), { defaultNamespace: ns, dryRun: true });
    assert.equal(r1.action, "created");
    assert.deepEqual(r1.object["data"], { a: "1" });
    assert.notEqual((await cluster.kubectl(["get", "configmap", "dry", "-n", ns])).code, 0, "not created");
    await kube.apply(cm("dry", { a: "1" }), { defaultNamespace: ns });
    const r2 = await kube.apply(cm("dry", { a: "2" }), { defaultNamespace: ns, dryRun: true });
    assert.equal(r2.action, "configured");
    assert.deepEqual(r2.object["data"], { a: "2" });
    const live = await kube.get(r2.resource, "dry", ns);
    assert.deepEqual(live?.["data"], { a: "1" }, "live object untouched");
    const r3 = await kube.apply(cm("dry", { a: "2" }), { defaultNamespace: ns, dryRun: true, serverSide: true });
    assert.equal(r3.action, "configured");
    assert.deepEqual((await kube.get(r2.resource, "dry", ns))?.["data"], { a: "1" });
  });

  test("namespace-less namespaced objects get the default namespace; cluster-scoped ones never get one; owner annotations are added", async (t) => {
    const { ns, kube, kubectl } = await setup(t);
    const roleName = `khook-kapply-${ns}`;
    t.after(async () => {
      await kubectl(["delete", "clusterrole", roleName, "--ignore-not-found"]);
    });
    const owner = { "khook.io/owned-by": "spec/step" };
    const r1 = await kube.apply(cm("plain", { a: "1" }), { defaultNamespace: ns, annotations: owner });
    assert.equal(r1.object.metadata?.namespace, ns);
    assert.equal(r1.object.metadata?.annotations?.["khook.io/owned-by"], "spec/step");
    const role: KubeObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: roleName, namespace: ns },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
    };
    const r2 = await kube.apply(role, { defaultNamespace: ns, annotations: owner });
    assert.equal(summary(r2), `clusterrole.rbac.authorization.k8s.io/${roleName} created`);
    assert.equal(r2.namespace, undefined);
    assert.equal(r2.object.metadata?.namespace, undefined);
    const la = JSON.parse(r2.object.metadata!.annotations![LAST_APPLIED_ANNOTATION]!) as KubeObject;
    assert.equal(la.metadata?.namespace, undefined, "no namespace recorded for a cluster-scoped object");
    assert.equal((await kube.apply(role, { defaultNamespace: ns, annotations: owner })).action, "unchanged");
  });

  test("applyAll keeps input order in its results and reports every failure", async (t) => {
    const { ns, kube } = await setup(t);
    const many = Array.from({ length: 30 }, (_, i) => cm(`many-${i}`, { i: String(i) }, { namespace: ns }));
    const results = await kube.applyAll(many, { concurrency: 8 });
    assert.deepEqual(
      results.map((r) => r.name),
      many.map((m) => m.metadata!.name),
    );
    assert.ok(results.every((r) => r.action === "created"));
    const again = await kube.applyAll(many, { concurrency: 8 });
    assert.ok(again.every((r) => r.action === "unchanged"));
    const bad = [
      cm("ok-1", { a: "1" }, { namespace: ns }),
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "Bad_Name", namespace: ns } },
      cm("ok-2", { a: "1" }, { namespace: ns }),
    ];
    await assert.rejects(kube.applyAll(bad), (e: Error & { failures?: unknown[]; results?: unknown[] }) => {
      assert.equal(e.failures?.length, 1);
      assert.match(e.message, /configmaps "Bad_Name" in namespace/);
      assert.match(e.message, /Invalid/);
      return true;
    });
    assert.ok(await kube.get(results[0]!.resource, "ok-2", ns), "the rest was still applied");
  });
});
