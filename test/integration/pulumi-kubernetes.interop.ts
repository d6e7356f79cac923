/**
 * NOT IN THE SUITE YET (the file name does not end in .test.ts): it needs the toolchain's
 * pulumi-resource-kubernetes, which is built only on demand (`./dev toolchain --only
 * pulumi-kubernetes`) until its cold build is measured to fit CI's budget, and it has not yet
 * run green (issue 21 §3). Run it by hand with the tool built:
 *   node --test --test-global-setup=dist/test/harness/global-setup.js dist/test/integration/pulumi-kubernetes.interop.js
 *
 * Khook side by side with @pulumi/kubernetes, as real programs use them: the
 * real pulumi-resource-kubernetes (built by the toolchain, its schema matching
 * the pinned npm package) and the dynamic Khook against the same cluster, from
 * the same kubeconfig.
 *
 * Order is proved by the cluster, not by timing: the bootstrap creates the
 * namespace the @pulumi/kubernetes resources live in (so they could not exist
 * before it), and the engine's event log (`--event-log`) shows which operation
 * finished before which started.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { testChartPath } from "../harness/index.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { KHOOK_TYPE } from "./support/pulumi-specs.js";

interface EngineEvent {
  resourcePreEvent?: { metadata: { op: string; urn: string } };
  resOutputsEvent?: { metadata: { op: string; urn: string } };
}

/** The engine's events of one command, in order. */
function events(file: string): EngineEvent[] {
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as EngineEvent);
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
exports.configMap = cm.metadata.name;
exports.release = release.status.status;
`;

test("@pulumi/kubernetes resources that dependsOn a Khook: up creates them after the bootstrap; destroy removes them before it", { timeout: 900_000 }, async (t) => {
  const { project, kubeconfig, namespace, cluster } = await pulumiFixture(t, { program: ORDER_PROGRAM });
  const ns = `${namespace}-boot`;
  t.after(() => cluster.deleteNamespace(ns).catch(() => undefined));
  project.write("boot.khook.yaml", BOOT_NS_SPEC(ns));
  project.write("args.json", JSON.stringify({ ns, kubeconfigFile: kubeconfig, chart: testChartPath("khook-test-config") }));
  await project.init();

  const upLog = path.join(project.dir, "up-events.jsonl");
  const up = await project.ok(["up", "--yes", "--event-log", upLog]);
  const upEvents = events(upLog);
  const bootDone = at(upEvents, "resOutputsEvent", KHOOK_TYPE, "boot");
  assert.ok(bootDone < at(upEvents, "resourcePreEvent", "kubernetes:core/v1:ConfigMap", "after-boot"), up.output);
  assert.ok(bootDone < at(upEvents, "resourcePreEvent", "kubernetes:helm.sh/v3:Release", "config-chart"), up.output);
  assert.equal((await cluster.configMap(ns, "after-boot"))?.data?.made, "by @pulumi/kubernetes");
  const chartMap = await cluster.get<{ metadata: { labels?: Record<string, string> } }>(`/api/v1/namespaces/${ns}/secrets/sh.helm.release.v1.config-chart.v1`);
  assert.ok(chartMap, "the helm release is recorded in the namespace the bootstrap created");
  assert.equal((await project.outputs()).release, "deployed");

  const downLog = path.join(project.dir, "destroy-events.jsonl");
  const down = await project.ok(["destroy", "--yes", "--event-log", downLog]);
  const downEvents = events(downLog);
  const bootGone = at(downEvents, "resourcePreEvent", KHOOK_TYPE, "boot");
  assert.ok(at(downEvents, "resOutputsEvent", "kubernetes:core/v1:ConfigMap", "after-boot") < bootGone, down.output);
  assert.ok(at(downEvents, "resOutputsEvent", "kubernetes:helm.sh/v3:Release", "config-chart") < bootGone, down.output);
  const left = await cluster.get<{ status?: { phase?: string } }>(`/api/v1/namespaces/${ns}`);
  assert.ok(left === undefined || left.status?.phase === "Terminating", "the bootstrap's namespace is torn down last");
});

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
const boot = new Khook("boot", { specFile: "./boot.khook.yaml", vars: { NS: ns.metadata.name }, kubeconfig }, { dependsOn: [ns] });
const widget = new k8s.apiextensions.CustomResource("widget", {
  apiVersion: "interop.khook.io/v1",
  kind: "Widget",
  metadata: { name: "w1", namespace: ns.metadata.name },
  spec: { size: "large" },
}, { provider: k, dependsOn: [boot] });
exports.widget = widget.metadata.name;
`;

test("a Khook that depends on a namespace from @pulumi/kubernetes, and a custom resource of the CRD it installs, in one up", { timeout: 900_000 }, async (t) => {
  const { project, kubeconfig, namespace, cluster } = await pulumiFixture(t, { program: CRD_PROGRAM, files: { "boot.khook.yaml": CRD_SPEC } });
  const ns = `${namespace}-apps`;
  t.after(() => cluster.deleteNamespace(ns).catch(() => undefined));
  project.write("args.json", JSON.stringify({ ns, kubeconfigFile: kubeconfig }));
  await project.init();

  const upLog = path.join(project.dir, "up-events.jsonl");
  const up = await project.ok(["up", "--yes", "--event-log", upLog]);
  const upEvents = events(upLog);
  assert.ok(at(upEvents, "resOutputsEvent", "kubernetes:core/v1:Namespace", "apps") < at(upEvents, "resourcePreEvent", KHOOK_TYPE, "boot"), up.output);
  assert.ok(at(upEvents, "resOutputsEvent", KHOOK_TYPE, "boot") < at(upEvents, "resourcePreEvent", "kubernetes:interop.khook.io/v1:Widget", "widget"), up.output);
  assert.equal((await cluster.configMap(ns, "in-their-namespace"))?.data?.a, "1");
  const widget = await cluster.get<{ spec: { size: string } }>(`/apis/interop.khook.io/v1/namespaces/${ns}/widgets/w1`);
  assert.equal(widget?.spec.size, "large");

  const downLog = path.join(project.dir, "destroy-events.jsonl");
  const down = await project.ok(["destroy", "--yes", "--event-log", downLog]);
  const downEvents = events(downLog);
  assert.ok(at(downEvents, "resOutputsEvent", "kubernetes:interop.khook.io/v1:Widget", "widget") < at(downEvents, "resourcePreEvent", KHOOK_TYPE, "boot"), "the custom resource goes before the bootstrap removes its CRD");
  assert.ok(at(downEvents, "resOutputsEvent", KHOOK_TYPE, "boot") < at(downEvents, "resourcePreEvent", "kubernetes:core/v1:Namespace", "apps"), down.output);
  assert.equal(await cluster.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.interop.khook.io").then((c) => c === undefined || (c as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp !== undefined), true, "the bootstrap removed its CRD");
});
