import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseAggregated } from "../../provider/kube/discovery.js";
import { matchKind, matchResource, parseResourceArg, splitTarget } from "../../provider/kubectl/resourceref.js";
import type { ApiResource } from "../../provider/kubectl/types.js";

function r(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[] = [],
  singular = kind.toLowerCase(),
): ApiResource {
  return { group, version, resource, kind, namespaced, singular, shortNames, verbs: ["get", "list"], categories: [] };
}

/** Ordered like discovery: core first, then groups in priority order, preferred version first. */
const catalog: ApiResource[] = [
  r("", "v1", "pods", "Pod", true, ["po"]),
  r("", "v1", "services", "Service", true, ["svc"]),
  r("", "v1", "namespaces", "Namespace", false, ["ns"]),
  r("", "v1", "events", "Event", true, ["ev"]),
  r("", "v1", "configmaps", "ConfigMap", true, ["cm"]),
  r("apps", "v1", "deployments", "Deployment", true, ["deploy"]),
  r("apps", "v1", "daemonsets", "DaemonSet", true, ["ds"]),
  r("apps", "v1", "statefulsets", "StatefulSet", true, ["sts"]),
  r("events.k8s.io", "v1", "events", "Event", true, ["ev"]),
  r("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, ["hpa"]),
  r("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, ["hpa"]),
  r("storage.k8s.io", "v1", "storageclasses", "StorageClass", false, ["sc"]),
  r("example.com", "v1", "widgets", "Widget", true, ["wd"]),
  r("example.com", "v1beta1", "widgets", "Widget", true, ["wd"]),
  r("other.io", "v1", "widgets", "Widget", false),
];

function resolve(arg: string): string | undefined {
  const hit = matchResource(catalog, arg);
  return hit && `${hit.group}/${hit.version}/${hit.resource}`;
}

describe("resource strings, kubectl-style", () => {
  test("plural, singular, short name and kind all name pods", () => {
    for (const a of ["pods", "pod", "po", "Pod", "PODS", "Pods"]) assert.equal(resolve(a), "/v1/pods", a);
  });
  test("deployments", () => {
    for (const a of [
      "deployments",
      "deployment",
      "deploy",
      "deployments.apps",
      "deployment.apps",
      "deploy.apps",
      "deployment.v1.apps",
      "deployments.v1.apps",
      "Deployment.apps",
      "Deployment.v1.apps",
    ]) {
      assert.equal(resolve(a), "apps/v1/deployments", a);
    }
  });
  test("groups with dots: resource.group and resource.version.group", () => {
    assert.equal(resolve("storageclasses.storage.k8s.io"), "storage.k8s.io/v1/storageclasses");
    assert.equal(resolve("storageclass.storage.k8s.io"), "storage.k8s.io/v1/storageclasses");
    assert.equal(resolve("storageclass.v1.storage.k8s.io"), "storage.k8s.io/v1/storageclasses");
    assert.equal(resolve("sc"), "storage.k8s.io/v1/storageclasses");
  });
  test("the core group wins an ambiguous name, like kubectl", () => {
    assert.equal(resolve("events"), "/v1/events");
    assert.equal(resolve("ev"), "/v1/events");
    assert.equal(resolve("events.events.k8s.io"), "events.k8s.io/v1/events");
  });
  test("the preferred version wins unless one is named", () => {
    assert.equal(resolve("hpa"), "autoscaling/v2/horizontalpodautoscalers");
    assert.equal(resolve("hpa.v1.autoscaling"), "autoscaling/v1/horizontalpodautoscalers");
    assert.equal(resolve("widgets"), "example.com/v1/widgets");
    assert.equal(resolve("widgets.v1beta1.example.com"), "example.com/v1beta1/widgets");
    assert.equal(resolve("widgets.other.io"), "other.io/v1/widgets");
  });
  test("unknown names do not resolve", () => {
    for (const a of ["gadgets", "deployments.extensions", "pods.apps", "deployment.v2.apps", "", "po.v1"])
      assert.equal(resolve(a), undefined, a);
  });
  test("parseResourceArg interpretations, most specific first", () => {
    assert.deepEqual(parseResourceArg("pods"), [{ resource: "pods" }]);
    assert.deepEqual(parseResourceArg("deployments.apps"), [{ resource: "deployments", group: "apps" }]);
    assert.deepEqual(parseResourceArg("deployment.v1.apps"), [
      { resource: "deployment", version: "v1", group: "apps" },
      { resource: "deployment", group: "v1.apps" },
    ]);
  });
});

describe("type/name targets", () => {
  test("splits kind/name", () => {
    assert.deepEqual(splitTarget("daemonset/aws-node"), { ok: true, type: "daemonset", name: "aws-node" });
    assert.deepEqual(splitTarget("storageclass/gp3"), { ok: true, type: "storageclass", name: "gp3" });
    assert.deepEqual(splitTarget("deployments.apps/coredns"), { ok: true, type: "deployments.apps", name: "coredns" });
    assert.deepEqual(splitTarget("pods"), { ok: true, type: "pods", name: undefined });
  });
  test("rejects malformed targets with a reason", () => {
    for (const bad of ["", "/x", "deploy/", "a/b/c"]) {
      const p = splitTarget(bad);
      assert.equal(p.ok, false, bad);
      if (!p.ok) assert.ok(p.message.length > 0);
    }
  });
  test("resolves the type of a target", () => {
    const t = splitTarget("daemonset/aws-node");
    assert.ok(t.ok);
    if (t.ok) assert.equal(matchResource(catalog, t.type)?.kind, "DaemonSet");
  });
});

describe("apiVersion + kind", () => {
  test("exact, case-sensitive kind in that group-version", () => {
    assert.equal(matchKind(catalog, "apps", "v1", "Deployment")?.resource, "deployments");
    assert.equal(matchKind(catalog, "", "v1", "Pod")?.resource, "pods");
    assert.equal(matchKind(catalog, "apps", "v1", "deployment"), undefined);
    assert.equal(matchKind(catalog, "apps", "v2", "Deployment"), undefined);
    assert.equal(matchKind(catalog, "example.com", "v1beta1", "Widget")?.version, "v1beta1");
  });
});

describe("aggregated discovery documents", () => {
  test("parse groups, versions, scope, short names and singular names", () => {
    const doc = {
      kind: "APIGroupDiscoveryList",
      apiVersion: "apidiscovery.k8s.io/v2",
      items: [
        {
          metadata: { name: "apps" },
          versions: [
            {
              version: "v1",
              resources: [
                {
                  resource: "deployments",
                  responseKind: { group: "", version: "", kind: "Deployment" },
                  scope: "Namespaced",
                  singularResource: "deployment",
                  shortNames: ["deploy"],
                  verbs: ["get", "list", "watch"],
                  subresources: [{ subresource: "status" }],
                },
              ],
            },
          ],
        },
        {
          metadata: {},
          versions: [
            {
              version: "v1",
              resources: [
                {
                  resource: "namespaces",
                  responseKind: { kind: "Namespace" },
                  scope: "Cluster",
                  singularResource: "namespace",
                },
              ],
            },
          ],
        },
      ],
    };
    const out = parseAggregated(doc);
    assert.deepEqual(
      out.map((x) => [x.group, x.version, x.resource, x.kind, x.namespaced, x.singular, x.shortNames]),
      [
        ["apps", "v1", "deployments", "Deployment", true, "deployment", ["deploy"]],
        ["", "v1", "namespaces", "Namespace", false, "namespace", []],
      ],
    );
    assert.equal(matchResource(out, "deploy")?.kind, "Deployment");
    assert.equal(matchResource(out, "ns")?.kind, undefined);
    assert.equal(matchResource(out, "namespace")?.kind, "Namespace");
  });
});
