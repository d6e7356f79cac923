/**
 * Why a teardown's wait does not finish (provider/kubectl/deletion.ts), and who waits for an
 * uninstall (provider/steps/helm/release-storage.ts planUninstall): pure code over objects shaped as the
 * API server and the namespace controller write them (the messages are kube-controller-manager
 * 1.35's own).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { deletionCauses, failingGroupVersions, heldOnlyByDiscovery } from "../../provider/kubectl/deletion.js";
import type { KubeObject } from "../../provider/kubectl/types.js";
import { planUninstall } from "../../provider/steps/helm/release-storage.js";

const DISCOVERY_FAILED =
  "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: stale GroupVersion discovery: metrics.k8s.io/v1beta1";

function terminating(conditions: { type: string; status: string; reason: string; message: string }[]): KubeObject {
  return {
    kind: "Namespace",
    metadata: { name: "app", deletionTimestamp: "2026-11-30T10:00:00Z" },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Terminating", conditions },
  };
}

const ok = (type: string, reason: string) => ({ type, status: "False", reason, message: "fine" });
const DISCOVERY_ONLY = terminating([
  { type: "NamespaceDeletionDiscoveryFailure", status: "True", reason: "DiscoveryFailed", message: DISCOVERY_FAILED },
  ok("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions"),
  ok("NamespaceDeletionContentFailure", "ContentDeleted"),
  ok("NamespaceContentRemaining", "ContentRemoved"),
  ok("NamespaceFinalizersRemaining", "ContentHasNoFinalizers"),
]);
const METRICS_DOWN: KubeObject = {
  kind: "APIService",
  metadata: { name: "v1beta1.metrics.k8s.io" },
  status: {
    conditions: [
      {
        type: "Available",
        status: "False",
        reason: "MissingEndpoints",
        message: 'endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"',
      },
    ],
  },
};

describe("a stalled deletion names its cause", () => {
  test("a Namespace Terminating on a discovery failure: the condition, the group-version, and the APIService that is not available", () => {
    assert.deepEqual(deletionCauses({ subjects: [DISCOVERY_ONLY], apiServices: [METRICS_DOWN] }), [
      `namespace/app: Terminating: NamespaceDeletionDiscoveryFailure: ${DISCOVERY_FAILED}`,
      'apiservice/v1beta1.metrics.k8s.io: not available: MissingEndpoints: endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"; the namespace controller cannot finish deleting namespaces until metrics.k8s.io/v1beta1 serves again or this APIService is removed',
    ]);
  });

  test("content and finalizers that remain are named from the namespace's conditions and the objects themselves", () => {
    const ns = terminating([
      ok("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered"),
      {
        type: "NamespaceContentRemaining",
        status: "True",
        reason: "SomeResourcesRemain",
        message: "Some resources are remaining: configmaps. has 1 resource instances",
      },
      {
        type: "NamespaceFinalizersRemaining",
        status: "True",
        reason: "SomeFinalizersRemain",
        message: "Some content in the namespace has finalizers remaining: khook.test/hold in 1 resource instances",
      },
    ]);
    const held: KubeObject = {
      kind: "ConfigMap",
      metadata: {
        name: "hold",
        namespace: "app",
        deletionTimestamp: "2026-11-30T10:00:01Z",
        finalizers: ["khook.test/hold"],
      },
    };
    assert.deepEqual(deletionCauses({ subjects: [ns, held], apiServices: [] }), [
      "namespace/app: Terminating: NamespaceContentRemaining: Some resources are remaining: configmaps. has 1 resource instances",
      "namespace/app: Terminating: NamespaceFinalizersRemaining: Some content in the namespace has finalizers remaining: khook.test/hold in 1 resource instances",
      "configmap/hold -n app: being deleted since 2026-11-30T10:00:01Z, but its finalizers have not cleared: khook.test/hold; the controller that owns them must remove them (or is gone)",
    ]);
  });

  test("an object not being deleted, or one without finalizers, says nothing", () => {
    assert.deepEqual(
      deletionCauses({
        subjects: [
          { kind: "ConfigMap", metadata: { name: "a", namespace: "x" } },
          { kind: "ConfigMap", metadata: { name: "b", namespace: "x", deletionTimestamp: "t" } },
        ],
        apiServices: [],
      }),
      [],
    );
  });

  test("the group-versions a discovery failure names", () => {
    assert.deepEqual(failingGroupVersions(DISCOVERY_FAILED), ["metrics.k8s.io/v1beta1"]);
    assert.deepEqual(
      failingGroupVersions(
        "Discovery failed for some groups, 2 failing: unable to retrieve the complete list of server APIs: a.example.com/v1: x, b.example.com/v2alpha1: y",
      ),
      ["a.example.com/v1", "b.example.com/v2alpha1"],
    );
  });
});

describe("which Terminating namespace a teardown waits for", () => {
  test("held only by a discovery failure (its content gone): not waited for", () => {
    assert.deepEqual(heldOnlyByDiscovery(DISCOVERY_ONLY), {
      groupVersions: ["metrics.k8s.io/v1beta1"],
      message: DISCOVERY_FAILED,
    });
  });

  test("content or finalizers remaining as well: waited for (a later step may tear down the controller they need)", () => {
    const withContent = terminating([
      {
        type: "NamespaceDeletionDiscoveryFailure",
        status: "True",
        reason: "DiscoveryFailed",
        message: DISCOVERY_FAILED,
      },
      { type: "NamespaceContentRemaining", status: "True", reason: "SomeResourcesRemain", message: "configmaps" },
    ]);
    assert.equal(heldOnlyByDiscovery(withContent), undefined);
    assert.equal(heldOnlyByDiscovery({ ...DISCOVERY_ONLY, metadata: { name: "app" } }), undefined, "not Terminating");
  });
});

describe("who waits for an uninstall", () => {
  const manifest = [
    "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n",
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: app\n",
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: kept\n  annotations:\n    helm.sh/resource-policy: keep\n",
  ].join("");

  test("khook waits, for every object helm deletes (kept ones left out, the release's namespace filled in)", () => {
    assert.deepEqual(planUninstall(manifest, ["pre-delete"], "rel-ns"), {
      helmWaits: false,
      objects: [
        { apiVersion: "v1", kind: "Namespace", name: "app", namespace: undefined },
        { apiVersion: "v1", kind: "ConfigMap", name: "a", namespace: "app" },
        { apiVersion: "v1", kind: "ConfigMap", name: "b", namespace: "rel-ns" },
      ],
    });
  });

  test("helm waits when the chart has post-delete hooks (they run after its wait), or when its hooks are not known", () => {
    assert.equal(planUninstall(manifest, ["post-delete"], "rel-ns").helmWaits, true);
    assert.equal(planUninstall(manifest, undefined, "rel-ns").helmWaits, true);
  });
});
