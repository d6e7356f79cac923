/**
 * Khook side by side with @pulumi/kubernetes, as real programs use them (issue 21 §3): the real
 * pulumi-resource-kubernetes (built by the toolchain from the v4.25.0 commit, its schema matching
 * the pinned npm package @pulumi/kubernetes 4.25.0) and the dynamic Khook in one program, against
 * the same cluster, both from the same kubeconfig.
 *
 * Order is proved by the cluster and by the engine's event log (`--event-log`, which operation
 * finished before which started), never by timing: the bootstrap creates the namespace the
 * @pulumi/kubernetes resources live in, so they could not exist before it.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { lateToolBuilt, testChartPath, testCluster } from "../harness/index.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { KHOOK_TYPE } from "./support/pulumi-specs.js";

/**
 * The toolchain's pulumi-resource-kubernetes, which global setup builds after the rest of the
 * toolchain (LATE_TOOLS); its build failure, when it failed. The engine finds it on PATH: plugin
 * acquisition is off and PULUMI_HOME is fresh, so no other copy can be used.
 */
function kubernetesProviderBuilt(): void {
  lateToolBuilt("pulumi-kubernetes");
}

interface EngineEvent {
  resourcePreEvent?: { metadata: { op: string; urn: string } };
  resOutputsEvent?: { metadata: { op: string; urn: string } };
}

/** The engine's events of one command, in order. */
function events(file: string): EngineEvent[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as EngineEvent);
}

/** `--event-log` is registered only when PULUMI_DEBUG_COMMANDS is set (pkg/cmd/pulumi/operations/up.go). */
function withEventLog(project: { env: NodeJS.ProcessEnv }): void {
  project.env.PULUMI_DEBUG_COMMANDS = "true";
}

/** Index of the first event of `kind` for the resource whose URN ends with `::name` and has the given type. */
function at(evs: EngineEvent[], kind: "resourcePreEvent" | "resOutputsEvent", type: string, name: string): number {
  const i = evs.findIndex((e) => {
    const urn = e[kind]?.metadata.urn ?? "";
    return urn.endsWith(`::${name}`) && urn.includes(`::${type}::`);
  });
  assert.ok(i >= 0, `no ${kind} for ${type} ${name}`);
  return i;
}

const BOOT_NS_SPEC = (ns: string): string => `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: interop-boot
state:
  namespace: default
steps:
  - name: namespace
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: Namespace
            metadata:
              name: ${ns}
`;

const ORDER_PROGRAM = `"use strict";
const fs = require("fs");
const pulumi = require("@pulumi/pulumi");
const k8s = require("@pulumi/kubernetes");
const { Khook } = require("khook");
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const kubeconfig = fs.readFileSync(a.kubeconfigFile, "utf8");
const k = new k8s.Provider("k", { kubeconfig });
const boot = new Khook("boot", { specFile: "./boot.khook.yaml", kubeconfig });
const cm = new k8s.core.v1.ConfigMap("after-boot", {
  metadata: { name: "after-boot", namespace: a.ns },
  data: { made: "by @pulumi/kubernetes" },
}, { provider: k, dependsOn: [boot] });
const release = new k8s.helm.v3.Release("config-chart", {
  name: "config-chart",
  chart: a.chart,
  namespace: a.ns,
  values: { data: { from: "helm.v3.Release" } },
}, { provider: k, dependsOn: [boot] });
// No dependsOn: the dependency is the Khook's outputs flowing into the ConfigMap's inputs.
const report = new k8s.core.v1.ConfigMap("boot-report", {
  metadata: { name: "boot-report", namespace: a.ns },
  data: {
    spec: boot.specName,
    runStatus: boot.runStatus,
    steps: boot.steps.apply((steps) => steps.map((s) => s.name + "=" + s.status).join(",")),
  },
}, { provider: k });
exports.configMap = cm.metadata.name;
exports.release = release.status.status;
exports.report = report.metadata.name;
`;

test(
  "@pulumi/kubernetes resources that dependsOn a Khook or read its outputs: up creates them after the bootstrap; destroy removes them before it",
  { timeout: 900_000 },
  async (t) => {
    kubernetesProviderBuilt();
    const { project, kubeconfig, namespace, cluster } = await pulumiFixture(t, { program: ORDER_PROGRAM });
    const ns = `${namespace}-boot`;
    t.after(() => cluster.deleteNamespace(ns).catch(() => undefined));
    project.write("boot.khook.yaml", BOOT_NS_SPEC(ns));
    project.write(
      "args.json",
      JSON.stringify({ ns, kubeconfigFile: kubeconfig, chart: testChartPath("khook-test-config") }),
    );
    withEventLog(project);
    await project.init();

    const upLog = path.join(project.dir, "up-events.jsonl");
    const up = await project.ok(["up", "--yes", "--event-log", upLog]);
    const upEvents = events(upLog);
    const bootDone = at(upEvents, "resOutputsEvent", KHOOK_TYPE, "boot");
    assert.ok(bootDone < at(upEvents, "resourcePreEvent", "kubernetes:core/v1:ConfigMap", "after-boot"), up.output);
    assert.ok(bootDone < at(upEvents, "resourcePreEvent", "kubernetes:helm.sh/v3:Release", "config-chart"), up.output);
    assert.ok(bootDone < at(upEvents, "resourcePreEvent", "kubernetes:core/v1:ConfigMap", "boot-report"), up.output);
    assert.equal((await cluster.configMap(ns, "after-boot"))?.data?.made, "by @pulumi/kubernetes");
    assert.deepEqual(
      (await cluster.configMap(ns, "boot-report"))?.data,
      { spec: "interop-boot", runStatus: "succeeded", steps: "namespace=ok" },
      "the Khook's outputs reached the @pulumi/kubernetes resource",
    );
    const chartMap = await cluster.configMap(ns, "config-chart-config");
    assert.equal(
      chartMap?.data?.from,
      "helm.v3.Release",
      "the chart's ConfigMap is in the namespace the bootstrap created",
    );
    assert.equal((await project.outputs()).release, "deployed");

    await project.ok(["preview", "--expect-no-changes"]);

    const downLog = path.join(project.dir, "destroy-events.jsonl");
    const down = await project.ok(["destroy", "--yes", "--event-log", downLog]);
    const downEvents = events(downLog);
    const bootGone = at(downEvents, "resourcePreEvent", KHOOK_TYPE, "boot");
    assert.ok(at(downEvents, "resOutputsEvent", "kubernetes:core/v1:ConfigMap", "after-boot") < bootGone, down.output);
    assert.ok(
      at(downEvents, "resOutputsEvent", "kubernetes:helm.sh/v3:Release", "config-chart") < bootGone,
      down.output,
    );
    assert.ok(at(downEvents, "resOutputsEvent", "kubernetes:core/v1:ConfigMap", "boot-report") < bootGone, down.output);
    const left = await cluster.get<{ status?: { phase?: string } }>(`/api/v1/namespaces/${ns}`);
    assert.ok(
      left === undefined || left.status?.phase === "Terminating",
      "the bootstrap's namespace is torn down last",
    );
  },
);

const CRD_SPEC = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: interop-crd
state:
  namespace: \${NS}
steps:
  - name: crd
    apply:
      manifests:
        - inline: |
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata:
              name: widgets.interop.khook.io
            spec:
              group: interop.khook.io
              scope: Namespaced
              names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
              versions:
                - name: v1
                  served: true
                  storage: true
                  schema:
                    openAPIV3Schema:
                      type: object
                      properties:
                        spec:
                          type: object
                          properties:
                            size: { type: string }
  - name: config
    apply:
      namespace: \${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: in-their-namespace
            data:
              a: "1"
`;

const CRD_PROGRAM = `"use strict";
const fs = require("fs");
const k8s = require("@pulumi/kubernetes");
const { Khook } = require("khook");
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const kubeconfig = fs.readFileSync(a.kubeconfigFile, "utf8");
const k = new k8s.Provider("k", { kubeconfig });
const ns = new k8s.core.v1.Namespace("apps", { metadata: { name: a.ns } }, { provider: k });
// No dependsOn: the namespace's name, an output of @pulumi/kubernetes, is the Khook's input.
const boot = new Khook("boot", { specFile: "./boot.khook.yaml", vars: { NS: ns.metadata.name }, kubeconfig });
const widget = new k8s.apiextensions.CustomResource("widget", {
  apiVersion: "interop.khook.io/v1",
  kind: "Widget",
  metadata: { name: "w1", namespace: ns.metadata.name },
  spec: { size: "large" },
}, { provider: k, dependsOn: [boot] });
exports.widget = widget.metadata.name;
`;

test(
  "a Khook that depends on a namespace from @pulumi/kubernetes, and a custom resource of the CRD it installs, in one up",
  { timeout: 900_000 },
  async (t) => {
    kubernetesProviderBuilt();
    const { project, kubeconfig, namespace, cluster } = await pulumiFixture(t, {
      program: CRD_PROGRAM,
      files: { "boot.khook.yaml": CRD_SPEC },
    });
    const ns = `${namespace}-apps`;
    t.after(() => cluster.deleteNamespace(ns).catch(() => undefined));
    // A failed run must not leave the cluster-scoped CRD behind for the rest of the suite.
    t.after(
      async () =>
        void (await (
          await testCluster()
        ).kubectl(["delete", "crd", "widgets.interop.khook.io", "--ignore-not-found", "--wait=false"])),
    );
    project.write("args.json", JSON.stringify({ ns, kubeconfigFile: kubeconfig }));
    withEventLog(project);
    await project.init();

    const upLog = path.join(project.dir, "up-events.jsonl");
    const up = await project.ok(["up", "--yes", "--event-log", upLog]);
    const upEvents = events(upLog);
    assert.ok(
      at(upEvents, "resOutputsEvent", "kubernetes:core/v1:Namespace", "apps") <
        at(upEvents, "resourcePreEvent", KHOOK_TYPE, "boot"),
      up.output,
    );
    assert.ok(
      at(upEvents, "resOutputsEvent", KHOOK_TYPE, "boot") <
        at(upEvents, "resourcePreEvent", "kubernetes:interop.khook.io/v1:Widget", "widget"),
      up.output,
    );
    assert.equal((await cluster.configMap(ns, "in-their-namespace"))?.data?.a, "1");
    const widget = await cluster.get<{ spec: { size: string } }>(
      `/apis/interop.khook.io/v1/namespaces/${ns}/widgets/w1`,
    );
    assert.equal(widget?.spec.size, "large");

    const downLog = path.join(project.dir, "destroy-events.jsonl");
    const down = await project.ok(["destroy", "--yes", "--event-log", downLog]);
    const downEvents = events(downLog);
    assert.ok(
      at(downEvents, "resOutputsEvent", "kubernetes:interop.khook.io/v1:Widget", "widget") <
        at(downEvents, "resourcePreEvent", KHOOK_TYPE, "boot"),
      "the custom resource goes before the bootstrap removes its CRD",
    );
    assert.ok(
      at(downEvents, "resOutputsEvent", KHOOK_TYPE, "boot") <
        at(downEvents, "resourcePreEvent", "kubernetes:core/v1:Namespace", "apps"),
      down.output,
    );
    assert.equal(
      await cluster
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.interop.khook.io")
        .then(
          (c) =>
            c === undefined ||
            (c as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp !== undefined,
        ),
      true,
      "the bootstrap removed its CRD",
    );
  },
);
