/** The wait: and rollout: executors' decisions, against a recording fake of the cluster (test/integration/wait.test.ts and rollout.test.ts run them for real). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { rolloutExecutor } from "../../provider/steps/rollout/executor.js";
import { waitExecutor } from "../../provider/steps/wait/executor.js";
import { contextFor, loadSteps, stepOf } from "./support/executor-context.js";
import { FakeKube } from "./support/fake-kube.js";

const spec = loadSteps(
  "  - name: pods-ready\n    wait: { for: condition=Ready, on: pods, namespace: apps, selector: app=web }\n" +
    "  - name: gone\n    wait: { for: delete, on: configmap/old }\n" +
    "  - name: phase\n    wait: { for: 'jsonpath={.status.phase}=Running', on: pod/p1, namespace: apps }\n" +
    "  - name: widgets\n    wait: { for: condition=Ready, on: gadgets.example.com }\n" +
    "  - name: restart\n    rollout: { restart: deployment/web, namespace: apps }\n" +
    "  - name: status\n    rollout: { status: deployment/web, namespace: apps }\n",
);
const readyPod = (name: string, ready: boolean) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "apps", labels: { app: "web" } },
  status: {
    phase: "Running",
    conditions: [{ type: "Ready", status: ready ? "True" : "False", reason: ready ? "" : "ContainersNotReady" }],
  },
});
const web = (extra: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "apps", generation: 2 },
  spec: { replicas: 2, ...extra },
  status: { observedGeneration: 1 },
});

describe("wait executor", () => {
  test("assess says no-op when the condition already holds on every match, and what is missing when not", async () => {
    const kube = new FakeKube();
    kube.seed(readyPod("p1", true));
    const step = stepOf(spec, "pods-ready", "wait");
    assert.deepEqual(await waitExecutor.assess(step, contextFor(spec, kube)), {
      action: "no-op",
      reason: "condition=Ready already holds on 1 object (pods in namespace apps matching app=web)",
    });
    kube.seed(readyPod("p2", false));
    assert.match(
      (await waitExecutor.assess(step, contextFor(spec, kube))).reason,
      /^condition=Ready on pods in namespace apps matching app=web: 1 of 2 not ready \(pod\/p2: Ready is False \(ContainersNotReady\)\)$/,
    );
  });

  test("apply waits until every match meets the condition, and names what was still missing when it times out", async () => {
    const kube = new FakeKube();
    kube.seed(readyPod("p1", false));
    const step = stepOf(spec, "pods-ready", "wait");
    await assert.rejects(waitExecutor.apply(step, contextFor(spec, kube)), /pod\/p1: Ready is False/);
    kube.beforeWait = () => kube.seed(readyPod("p1", true));
    assert.deepEqual(await waitExecutor.apply(step, contextFor(spec, kube)), {
      status: "ok",
      reason: "condition=Ready holds on 1 object (pods in namespace apps matching app=web)",
    });
    assert.deepEqual(kube.writes, [], "a wait never writes");
  });

  test("no match yet is waited for, not an error (unlike kubectl's 'no matching resources found')", async () => {
    const kube = new FakeKube();
    kube.beforeWait = () => kube.seed(readyPod("late", true));
    assert.equal((await waitExecutor.apply(stepOf(spec, "pods-ready", "wait"), contextFor(spec, kube))).status, "ok");
  });

  test("for: delete holds when nothing matches, in the context's namespace when none is given", async () => {
    const kube = new FakeKube();
    kube.contextNamespace = "ctx";
    kube.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "old", namespace: "default" } });
    const step = stepOf(spec, "gone", "wait");
    assert.deepEqual(await waitExecutor.assess(step, contextFor(spec, kube)), {
      action: "no-op",
      reason: "nothing matches configmap/old in namespace ctx (already gone)",
    });
    assert.deepEqual(await waitExecutor.apply(step, contextFor(spec, kube)), {
      status: "ok",
      reason: "nothing matches configmap/old in namespace ctx any more",
    });
  });

  test("jsonpath conditions compare the value kubectl prints", async () => {
    const kube = new FakeKube();
    kube.seed({ ...readyPod("p1", true), status: { phase: "Pending" } });
    const step = stepOf(spec, "phase", "wait");
    assert.match(
      (await waitExecutor.assess(step, contextFor(spec, kube))).reason,
      /\{\.status\.phase\} is "Pending", not "Running"/,
    );
    kube.beforeWait = () => kube.seed(readyPod("p1", true));
    assert.equal(
      (await waitExecutor.apply(step, contextFor(spec, kube))).reason,
      "jsonpath={.status.phase}=Running holds on pod/p1 in namespace apps",
    );
  });

  test("a resource type the cluster does not serve yet is a plan to wait, not a failure", async () => {
    const a = await waitExecutor.assess(stepOf(spec, "widgets", "wait"), contextFor(spec, new FakeKube()));
    assert.equal(a.action, "wait");
    assert.match(a.reason, /^condition=Ready on gadgets\.example\.com: the resource type is not served yet/);
  });
});

describe("rollout executor", () => {
  test("restart patches the pod template's restartedAt, like kubectl rollout restart", async () => {
    const kube = new FakeKube();
    kube.seed(web());
    const out = await rolloutExecutor.apply(stepOf(spec, "restart", "rollout"), contextFor(spec, kube));
    assert.match(out.reason, /^deployment\.apps\/web restarted \(restartedAt \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/);
    assert.deepEqual(kube.writes, ["patch(strategic) deployment/web -n apps"]);
    const annotations = (
      kube.object("Deployment", "web", "apps")!["spec"] as {
        template: { metadata: { annotations: Record<string, string> } };
      }
    ).template.metadata.annotations;
    assert.ok(annotations["kubectl.kubernetes.io/restartedAt"]);
  });

  test("restart refuses a paused deployment and a missing one, saying what to do, and writes nothing", async () => {
    const kube = new FakeKube();
    const step = stepOf(spec, "restart", "rollout");
    await assert.rejects(
      rolloutExecutor.apply(step, contextFor(spec, kube)),
      /deployments\.apps "web" not found in namespace "apps": rollout restart needs an existing Deployment \(order this step after whatever creates it with needs:\)/,
    );
    kube.seed(web({ paused: true }));
    await assert.rejects(
      rolloutExecutor.apply(step, contextFor(spec, kube)),
      /can't restart paused deployment "web" \(run rollout resume first\)/,
    );
    assert.deepEqual(kube.writes, []);
  });

  test("status waits for kubectl's completeness rules and fails at once on an exceeded progress deadline", async () => {
    const kube = new FakeKube();
    kube.seed(web());
    const step = stepOf(spec, "status", "rollout");
    assert.deepEqual(await rolloutExecutor.assess(step, contextFor(spec, kube)), {
      action: "wait",
      reason: "Waiting for deployment spec update to be observed...",
    });
    kube.beforeWait = () =>
      kube.seed({ ...web(), status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 } });
    assert.deepEqual(await rolloutExecutor.apply(step, contextFor(spec, kube)), {
      status: "ok",
      reason: 'deployment "web" successfully rolled out',
    });
    kube.beforeWait = () =>
      kube.seed({
        ...web(),
        status: { observedGeneration: 2, conditions: [{ type: "Progressing", reason: "ProgressDeadlineExceeded" }] },
      });
    await assert.rejects(
      rolloutExecutor.apply(step, contextFor(spec, kube)),
      /deployment "web" exceeded its progress deadline/,
    );
  });

  test("wait-names-its-blocking-cause: a rollout that times out ends its error with what blocks it, found by following the deployment to its pods", async () => {
    const kube = new FakeKube();
    const d = kube.seed({
      ...web(),
      status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 0 },
    });
    const rs = kube.seed({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: "web-1",
        namespace: "apps",
        ownerReferences: [{ uid: d.metadata?.uid, kind: "Deployment", name: "web" }],
      },
      spec: { replicas: 2 },
    });
    kube.seed({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "web-1-a",
        namespace: "apps",
        ownerReferences: [{ uid: rs.metadata?.uid, kind: "ReplicaSet", name: "web-1" }],
      },
      status: {
        phase: "Pending",
        containerStatuses: [
          {
            name: "main",
            state: { waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "web:nope"' } },
          },
        ],
      },
    });
    await assert.rejects(
      rolloutExecutor.apply(stepOf(spec, "status", "rollout"), contextFor(spec, kube)),
      (e: Error) => {
        assert.match(
          e.message,
          /2 updated replicas are available\.\.\.\nwhat blocks it:\n {2}- pod\/web-1-a: container main is waiting: ImagePullBackOff \(Back-off pulling image "web:nope"\)$/,
        );
        return true;
      },
    );
  });

  test("destroy has nothing to undo", async () => {
    assert.equal(
      (await rolloutExecutor.destroy(stepOf(spec, "restart", "rollout"), contextFor(spec, new FakeKube()))).status,
      "skipped",
    );
  });
});
