/**
 * The rollout: executor against the real cluster (kwok runs the pods),
 * compared with the real `kubectl rollout` where it helps.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { type KubeObject } from "../../provider/kube/index.js";
import { RESTARTED_AT } from "../../provider/kubectl/rollout.js";
import type { RolloutAction } from "../../provider/steps/rollout/definition.js";
import { executorContext, kubeSetup, loadedStep } from "./support/executors.js";
import { rolloutExecutor } from "../../provider/steps/rollout/executor.js";

const setup = (t: TestContext) => kubeSetup(t, "rollout");

const step = (action: RolloutAction) => loadedStep("rollout", action, "r");

const context = (timeoutMs = 120_000) => executorContext({ timeoutMs });

async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 50));
}

const workload = (
  kind: "Deployment" | "DaemonSet" | "StatefulSet",
  name: string,
  extraSpec = "",
  podSpecExtra = "",
) => `apiVersion: apps/v1
kind: ${kind}
metadata: {name: ${name}}
spec:
${kind === "DaemonSet" ? "" : "  replicas: 2\n"}${kind === "StatefulSet" ? `  serviceName: ${name}\n` : ""}  selector: {matchLabels: {app: ${name}}}
${extraSpec}  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: [{name: c, image: "nginx:1.25"}]
${podSpecExtra}`;

describe("rollout status", () => {
  test("a Deployment created during the wait: succeeds once kubectl's completeness rules hold", async (t) => {
    const { ns, kube, kubectl } = await setup(t);
    const s = step({ status: "deployment/web", namespace: ns });
    const plan = await rolloutExecutor.assess(s, await context());
    assert.deepEqual(plan, { action: "wait", reason: `deployment/web in namespace ${ns} does not exist yet` });
    const ctx = await context();
    const logs = ctx.logs;
    const waiting = rolloutExecutor.apply(s, ctx);
    await until(() => logs.some((l) => l.includes("deployment/web does not exist yet")));
    await kubectl(["apply", "-n", ns], workload("Deployment", "web"));
    const out = await waiting;
    assert.deepEqual(out, { status: "ok", reason: 'deployment "web" successfully rolled out' });
    // kubectl agrees, and the status fields satisfy its rules.
    assert.match(
      await kubectl(["rollout", "status", "deployment/web", "-n", ns, "--timeout=5s"]),
      /successfully rolled out/,
    );
    const d = (await kube.get(await kube.resolveResource("deploy"), "web", ns)) as KubeObject;
    const st = d["status"] as {
      updatedReplicas: number;
      availableReplicas: number;
      replicas: number;
      observedGeneration: number;
    };
    assert.equal(st.updatedReplicas, 2);
    assert.equal(st.availableReplicas, 2);
    assert.ok(st.observedGeneration >= d.metadata!.generation!);
    assert.deepEqual(await rolloutExecutor.assess(s, await context()), {
      action: "no-op",
      reason: 'deployment "web" successfully rolled out',
    });
  });

  test("a Deployment that exceeds its progress deadline fails without waiting for the step timeout", async (t) => {
    const { ns, kubectl } = await setup(t);
    // No node matches, so the pods stay Pending and the deployment controller gives up after 1s.
    await kubectl(
      ["apply", "-n", ns],
      workload(
        "Deployment",
        "stuck",
        "  progressDeadlineSeconds: 1\n",
        '      nodeSelector: {khook.test/nowhere: "true"}\n',
      ),
    );
    await assert.rejects(
      rolloutExecutor.apply(step({ status: "deployment/stuck", namespace: ns }), await context(300_000)),
      /deployment "stuck" exceeded its progress deadline/,
    );
  });

  test("DaemonSet and StatefulSet", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(["apply", "-n", ns], workload("DaemonSet", "agent"));
    await kubectl(["apply", "-n", ns], workload("StatefulSet", "db"));
    const ds = await rolloutExecutor.apply(step({ status: "daemonset/agent", namespace: ns }), await context());
    assert.equal(ds.reason, 'daemon set "agent" successfully rolled out');
    const sts = await rolloutExecutor.apply(step({ status: "statefulset/db", namespace: ns }), await context());
    assert.equal(sts.reason, "partitioned roll out complete: 2 new pods have been updated...");
    assert.match(
      await kubectl(["rollout", "status", "statefulset/db", "-n", ns, "--timeout=5s"]),
      /partitioned roll out complete: 2 new pods have been updated/,
    );
  });

  test("a DaemonSet with the OnDelete strategy cannot report rollout status", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(["apply", "-n", ns], workload("DaemonSet", "ondelete", "  updateStrategy: {type: OnDelete}\n"));
    await assert.rejects(
      rolloutExecutor.apply(step({ status: "daemonset/ondelete", namespace: ns }), await context()),
      /only available for RollingUpdate strategy type/,
    );
  });
});

describe("rollout restart", () => {
  test("sets restartedAt on the pod template like kubectl, which rolls out a new ReplicaSet", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(["apply", "-n", ns], workload("Deployment", "api"));
    await rolloutExecutor.apply(step({ status: "deployment/api", namespace: ns }), await context());
    const s = step({ restart: "deployment/api", namespace: ns });
    assert.deepEqual(await rolloutExecutor.assess(s, await context()), {
      action: "restart",
      reason: `deployment/api in namespace ${ns} (2 replicas) gets a new restartedAt`,
    });
    const out = await rolloutExecutor.apply(s, await context());
    assert.match(out.reason, /^deployment\.apps\/api restarted \(restartedAt \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/);
    const at = await kubectl([
      "get",
      "deploy",
      "api",
      "-n",
      ns,
      "-o",
      `jsonpath={.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}`,
    ]);
    assert.match(at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(!Number.isNaN(Date.parse(at)));
    assert.equal(RESTARTED_AT, "kubectl.kubernetes.io/restartedAt");
    await rolloutExecutor.apply(step({ status: "deployment/api", namespace: ns }), await context());
    const rs = await kubectl(["get", "replicasets", "-n", ns, "-l", "app=api", "-o", "name"]);
    assert.equal(rs.split("\n").length, 2, "a second ReplicaSet was rolled out");
  });

  test("restart of a DaemonSet and a StatefulSet", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(["apply", "-n", ns], workload("DaemonSet", "agent"));
    await kubectl(["apply", "-n", ns], workload("StatefulSet", "db"));
    for (const target of ["daemonset/agent", "statefulset/db"]) {
      await rolloutExecutor.apply(step({ restart: target, namespace: ns }), await context());
      const at = await kubectl([
        "get",
        target,
        "-n",
        ns,
        "-o",
        `jsonpath={.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}`,
      ]);
      assert.match(at, /Z$/, target);
    }
  });

  test("refuses a paused Deployment, a missing target, and kinds without rollouts", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(["apply", "-n", ns], workload("Deployment", "paused", "  paused: true\n"));
    await assert.rejects(
      rolloutExecutor.apply(step({ restart: "deployment/paused", namespace: ns }), await context()),
      /can't restart paused deployment/,
    );
    await assert.rejects(
      rolloutExecutor.apply(step({ restart: "deployment/missing", namespace: ns }), await context()),
      /not found/,
    );
    await assert.rejects(
      rolloutExecutor.apply(step({ restart: "configmap/x", namespace: ns }), await context()),
      /supports deployment, daemonset and statefulset, not configmap/,
    );
    await assert.rejects(
      rolloutExecutor.apply(step({ status: "deployments", namespace: ns }), await context()),
      /needs TYPE\/NAME/,
    );
    assert.deepEqual(await rolloutExecutor.destroy(step({ restart: "deployment/x", namespace: ns }), await context()), {
      status: "skipped",
      reason: "rollout steps have nothing to undo",
    });
  });
});
