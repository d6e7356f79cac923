/**
 * helm-wait-readiness-rules: khook's own wait for `wait: true` helm steps settles each object
 * by helm's --wait rules (helm v3 pkg/kube/ready.go). One case per rule and per way it holds
 * or fails; every "ready" case has a near twin that is not.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { hasReadinessRule, readiness, scaledIntOrPercent } from "../../provider/helm/readiness.js";
import type { KubeObject } from "../../provider/kubectl/types.js";

const obj = (spec: unknown, status: unknown, generation = 1): KubeObject =>
  ({ metadata: { name: "x", generation }, spec, status }) as KubeObject;
const ready = (o: KubeObject | undefined, apiVersion: string, kind: string): boolean =>
  readiness(o, apiVersion, kind).ready;
const why = (o: KubeObject | undefined, apiVersion: string, kind: string): string => {
  const r = readiness(o, apiVersion, kind);
  return r.ready ? "ready" : r.why;
};

describe("helm-wait-readiness-rules", () => {
  test("only the kinds helm --wait looks at have a rule; Jobs and ConfigMaps are ready once they exist", () => {
    for (const [v, k] of [
      ["apps/v1", "Deployment"],
      ["apps/v1", "StatefulSet"],
      ["apps/v1", "DaemonSet"],
      ["apps/v1", "ReplicaSet"],
      ["v1", "ReplicationController"],
      ["v1", "Pod"],
      ["v1", "PersistentVolumeClaim"],
      ["v1", "Service"],
      ["apiextensions.k8s.io/v1", "CustomResourceDefinition"],
    ] as const) {
      assert.equal(hasReadinessRule(v, k), true, `${v} ${k}`);
    }
    for (const [v, k] of [
      ["batch/v1", "Job"],
      ["v1", "ConfigMap"],
      ["v1", "Pod2"],
      ["example.com/v1", "Deployment"],
    ] as const) {
      assert.equal(hasReadinessRule(v, k), false, `${v} ${k}`);
      assert.equal(ready(obj({}, {}), v, k), true);
    }
    assert.equal(why(undefined, "v1", "ConfigMap"), "not found", "an object that is gone is never ready");
  });

  test("Deployment: every replica updated and enough of them ready, by the strategy's maxUnavailable", () => {
    const D = (replicas: number, status: Record<string, number>, strategy?: unknown, generation = 1): KubeObject =>
      obj({ replicas, ...(strategy ? { strategy } : {}) }, { observedGeneration: 1, ...status }, generation);
    assert.equal(ready(D(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 2 }), "apps/v1", "Deployment"), true);
    assert.equal(
      why(D(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 1 }), "apps/v1", "Deployment"),
      "1 of 2 replicas ready (needs 2)",
    );
    assert.equal(
      why(D(2, { replicas: 3, updatedReplicas: 1, readyReplicas: 3 }), "apps/v1", "Deployment"),
      "1 of 2 replicas updated",
    );
    // Old replicas still counted in readyReplicas do not make the new ones ready.
    assert.equal(
      why(D(2, { replicas: 3, updatedReplicas: 2, readyReplicas: 2 }), "apps/v1", "Deployment"),
      "1 of 2 replicas ready (needs 2)",
    );
    // 25% of 4 rounds down to 1 unavailable allowed: 3 ready is enough; Recreate allows none.
    assert.equal(ready(D(4, { replicas: 4, updatedReplicas: 4, readyReplicas: 3 }), "apps/v1", "Deployment"), true);
    assert.equal(
      ready(D(4, { replicas: 4, updatedReplicas: 4, readyReplicas: 3 }, { type: "Recreate" }), "apps/v1", "Deployment"),
      false,
    );
    assert.equal(
      ready(
        D(
          4,
          { replicas: 4, updatedReplicas: 4, readyReplicas: 2 },
          { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 2 } },
        ),
        "apps/v1",
        "Deployment",
      ),
      true,
    );
    assert.equal(
      ready(
        D(
          4,
          { replicas: 4, updatedReplicas: 4, readyReplicas: 3 },
          { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } },
        ),
        "apps/v1",
        "Deployment",
      ),
      true,
      "surge 0 and unavailable 0 means 1 unavailable",
    );
    assert.match(
      why(D(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 2 }, undefined, 2), "apps/v1", "Deployment"),
      /not observed generation 2/,
    );
    assert.equal(
      ready(obj({ replicas: 2, paused: true }, {}), "apps/v1", "Deployment"),
      true,
      "helm does not wait on a paused Deployment",
    );
    assert.equal(
      ready(
        obj({}, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1 }),
        "apps/v1",
        "Deployment",
      ),
      true,
      "replicas default to 1",
    );
  });

  test("StatefulSet: updated up to the partition, all replicas ready, revisions equal when not partitioned; OnDelete is not waited on", () => {
    const S = (spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject =>
      obj(spec, { observedGeneration: 1, ...status });
    const done = { updatedReplicas: 3, readyReplicas: 3, currentRevision: "r2", updateRevision: "r2" };
    assert.equal(ready(S({ replicas: 3 }, done), "apps/v1", "StatefulSet"), true);
    assert.equal(
      why(S({ replicas: 3 }, { ...done, readyReplicas: 2 }), "apps/v1", "StatefulSet"),
      "2 of 3 replicas ready",
    );
    assert.equal(
      why(S({ replicas: 3 }, { ...done, updatedReplicas: 1 }), "apps/v1", "StatefulSet"),
      "1 of 3 replicas updated",
    );
    assert.match(
      why(S({ replicas: 3 }, { ...done, currentRevision: "r1" }), "apps/v1", "StatefulSet"),
      /revision r2 is still rolling out/,
    );
    assert.equal(
      ready(
        S(
          { replicas: 3, updateStrategy: { rollingUpdate: { partition: 2 } } },
          { ...done, updatedReplicas: 1, currentRevision: "r1" },
        ),
        "apps/v1",
        "StatefulSet",
      ),
      true,
    );
    assert.equal(
      ready(S({ replicas: 3, updateStrategy: { type: "OnDelete" } }, { updatedReplicas: 0 }), "apps/v1", "StatefulSet"),
      true,
    );
  });

  test("DaemonSet: every scheduled pod updated, ready up to maxUnavailable (rounded up); OnDelete is not waited on", () => {
    const S = (spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject =>
      obj(spec, { observedGeneration: 1, ...status });
    assert.equal(
      ready(S({}, { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberReady: 2 }), "apps/v1", "DaemonSet"),
      true,
      "maxUnavailable defaults to 1",
    );
    assert.equal(
      why(S({}, { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberReady: 1 }), "apps/v1", "DaemonSet"),
      "1 of 3 pods ready (needs 2)",
    );
    assert.equal(
      why(S({}, { desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberReady: 3 }), "apps/v1", "DaemonSet"),
      "2 of 3 pods updated",
    );
    assert.equal(
      ready(
        S(
          { updateStrategy: { rollingUpdate: { maxUnavailable: "10%" } } },
          { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberReady: 2 },
        ),
        "apps/v1",
        "DaemonSet",
      ),
      true,
      "10% of 3 rounds up to 1",
    );
    assert.equal(
      ready(S({ updateStrategy: { type: "OnDelete" } }, { desiredNumberScheduled: 3 }), "apps/v1", "DaemonSet"),
      true,
    );
  });

  test("ReplicaSet and ReplicationController: all replicas ready", () => {
    for (const [v, k] of [
      ["apps/v1", "ReplicaSet"],
      ["v1", "ReplicationController"],
    ] as const) {
      assert.equal(ready(obj({ replicas: 2 }, { observedGeneration: 1, readyReplicas: 2 }), v, k), true);
      assert.equal(
        why(obj({ replicas: 2 }, { observedGeneration: 1, readyReplicas: 1 }), v, k),
        "1 of 2 replicas ready",
      );
    }
  });

  test("Pod: the Ready condition only, as helm (a pod that Succeeded is never Ready)", () => {
    assert.equal(
      ready(obj({}, { phase: "Running", conditions: [{ type: "Ready", status: "True" }] }), "v1", "Pod"),
      true,
    );
    assert.equal(
      why(obj({}, { phase: "Running", conditions: [{ type: "Ready", status: "False" }] }), "v1", "Pod"),
      "pod is Running, not Ready",
    );
    assert.equal(
      why(
        obj({}, { phase: "Succeeded", conditions: [{ type: "Ready", status: "False", reason: "PodCompleted" }] }),
        "v1",
        "Pod",
      ),
      "pod is Succeeded, not Ready",
    );
  });

  test("PersistentVolumeClaim: Bound", () => {
    assert.equal(ready(obj({}, { phase: "Bound" }), "v1", "PersistentVolumeClaim"), true);
    assert.equal(why(obj({}, { phase: "Pending" }), "v1", "PersistentVolumeClaim"), "claim is Pending, not Bound");
  });

  test("Service: a cluster IP; a LoadBalancer also an ingress address or external IPs; ExternalName always", () => {
    assert.equal(ready(obj({ clusterIP: "10.0.0.1" }, {}), "v1", "Service"), true);
    assert.equal(ready(obj({ clusterIP: "None" }, {}), "v1", "Service"), true, "headless");
    assert.equal(why(obj({}, {}), "v1", "Service"), "no cluster IP assigned yet");
    assert.equal(
      why(obj({ type: "LoadBalancer", clusterIP: "10.0.0.1" }, { loadBalancer: {} }), "v1", "Service"),
      "the load balancer has no ingress address yet",
    );
    assert.equal(
      ready(
        obj({ type: "LoadBalancer", clusterIP: "10.0.0.1" }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } }),
        "v1",
        "Service",
      ),
      true,
    );
    assert.equal(
      ready(obj({ type: "LoadBalancer", clusterIP: "10.0.0.1", externalIPs: ["1.2.3.4"] }, {}), "v1", "Service"),
      true,
    );
    assert.equal(ready(obj({ type: "ExternalName" }, {}), "v1", "Service"), true);
  });

  test("CustomResourceDefinition: Established (or names refused, which never will be)", () => {
    const crd = (conditions: unknown[]): KubeObject => obj({}, { conditions });
    assert.equal(
      ready(crd([{ type: "Established", status: "True" }]), "apiextensions.k8s.io/v1", "CustomResourceDefinition"),
      true,
    );
    assert.equal(
      why(crd([{ type: "Established", status: "False" }]), "apiextensions.k8s.io/v1", "CustomResourceDefinition"),
      "not Established yet",
    );
    assert.equal(
      ready(crd([{ type: "NamesAccepted", status: "False" }]), "apiextensions.k8s.io/v1", "CustomResourceDefinition"),
      true,
    );
  });

  test("IntOrString scaling: integers as is, percentages rounded down or up, anything else the default", () => {
    assert.equal(scaledIntOrPercent(3, 10, 0, false), 3);
    assert.equal(scaledIntOrPercent("3", 10, 0, false), 3);
    assert.equal(scaledIntOrPercent("25%", 10, 0, false), 2);
    assert.equal(scaledIntOrPercent("25%", 10, 0, true), 3);
    assert.equal(scaledIntOrPercent(undefined, 10, 7, true), 7);
    assert.equal(scaledIntOrPercent("x", 10, 7, true), 7);
  });
});
