/**
 * The wait: executor against the real cluster (kwok runs the pods), and
 * waitForObjects (apply.waitFor). Waits are watch-driven; tests synchronize on
 * the executor's own progress lines, never on elapsed time.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { WaitTimeoutError, waitForObjects, type KubeObject } from "../../provider/kube/index.js";
import type { WaitAction } from "../../provider/steps/wait/definition.js";
import { parseWaitFor } from "../../provider/kubectl/waitfor.js";
import { executorContext, kubeSetup, loadedStep } from "./support/executors.js";
import { waitExecutor } from "../../provider/steps/wait/executor.js";

const setup = (t: TestContext) => kubeSetup(t, "wait");

const step = (action: WaitAction) => loadedStep("wait", action, "w");

const context = (timeoutMs = 120_000, signal?: AbortSignal) =>
  executorContext({ timeoutMs, ...(signal ? { signal } : {}) });

async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 50));
}

const deployment = (name: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: c, image: "nginx:1.25"}]}
`;

describe("wait: condition and jsonpath", () => {
  test("condition=Ready on pods matching a selector: waits for them to appear and become Ready", async (t) => {
    const { ns, kube, kubectl } = await setup(t);
    const s = step({ for: "condition=Ready", on: "pods", namespace: ns, selector: "app=web" });
    const before = await waitExecutor.assess(s, await context());
    assert.equal(before.action, "wait");
    assert.match(before.reason, /no matching pods yet/);

    const ctx = await context();
    const logs = ctx.logs;
    const waiting = waitExecutor.apply(s, ctx);
    await until(() => logs.some((l) => l.includes("no matching pods yet")));
    await kubectl(["apply", "-n", ns], deployment("web", 2));
    const out = await waiting;
    assert.equal(out.status, "ok");
    // The ReplicaSet creates the pods in batches, so the wait may legitimately see one or both.
    assert.match(out.reason, /condition=Ready holds on [12] objects? \(pods in namespace .* matching app=web\)/);
    await kubectl(["rollout", "status", "deployment/web", "-n", ns, "--timeout=120s"]);
    const pods = await kube.list(await kube.resolveResource("pods"), { namespace: ns, labelSelector: "app=web" });
    for (const p of pods.items) {
      const ready = (p["status"] as { conditions: { type: string; status: string }[] }).conditions.find(
        (c) => c.type === "Ready",
      );
      assert.equal(ready?.status, "True");
    }
    const afterwards = await waitExecutor.assess(s, await context());
    assert.equal(afterwards.action, "no-op");
    assert.match(afterwards.reason, /already holds on 2 objects/);
  });

  test("jsonpath with a filter on a kind/name target that does not exist yet", async (t) => {
    const { ns, kubectl } = await setup(t);
    const s = step({
      for: 'jsonpath={.status.conditions[?(@.type=="Available")].status}=True',
      on: "deployment/late",
      namespace: ns,
    });
    const ctx = await context();
    const logs = ctx.logs;
    const waiting = waitExecutor.apply(s, ctx);
    await until(() => logs.some((l) => l.includes("deployment/late does not exist yet")));
    await kubectl(["apply", "-n", ns], deployment("late", 1));
    const out = await waiting;
    assert.match(
      out.reason,
      /jsonpath=\{\.status\.conditions\[\?\(@\.type=="Available"\)\]\.status\}=True holds on deployment\/late/,
    );
    // kubectl agrees that the condition holds now.
    assert.equal(
      await kubectl([
        "get",
        "deploy",
        "late",
        "-n",
        ns,
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Available")].status}',
      ]),
      "True",
    );
    assert.equal((await waitExecutor.assess(s, await context())).action, "no-op");
  });

  test("jsonpath value and existence forms, relaxed syntax, on a cluster-scoped target", async (t) => {
    const { cluster } = await setup(t);
    const node = (await cluster.kubectl(["get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"])).stdout.trim();
    for (const f of [
      "jsonpath=status.capacity",
      "jsonpath={.metadata.labels.type}=kwok",
      `jsonpath=.metadata.name=${node}`,
      "condition=Ready",
    ]) {
      const out = await waitExecutor.apply(
        step({ for: f, on: `node/${node}`, namespace: "ignored-for-cluster-scoped" }),
        await context(),
      );
      assert.equal(out.status, "ok", f);
    }
  });

  test("a condition that never holds times out with what was last seen", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(["create", "configmap", "cm", "-n", ns, "--from-literal=phase=Pending"]);
    const s = step({ for: "jsonpath={.data.phase}=Running", on: "configmap/cm", namespace: ns });
    await assert.rejects(waitExecutor.apply(s, await context(3000)), (e: unknown) => {
      assert.ok(e instanceof WaitTimeoutError, String(e));
      assert.match(e.message, /timed out after .* waiting for jsonpath=\{\.data\.phase\}=Running on configmap\/cm/);
      assert.match(e.message, /\{\.data\.phase\} is "Pending", not "Running"/);
      return true;
    });
    const plan = await waitExecutor.assess(s, await context());
    assert.equal(plan.action, "wait");
    assert.match(plan.reason, /is "Pending", not "Running"/);
  });

  test("the step's cancellation signal stops a wait", async (t) => {
    const { ns } = await setup(t);
    const ac = new AbortController();
    const ctx = await context(120_000, ac.signal);
    const logs = ctx.logs;
    const waiting = waitExecutor.apply(step({ for: "condition=Ready", on: "pod/never", namespace: ns }), ctx);
    await until(() => logs.some((l) => l.includes("does not exist yet")));
    ac.abort(new Error("run cancelled"));
    await assert.rejects(waiting, /run cancelled/);
  });
});

describe("wait: delete", () => {
  test("every matching resource is gone (objects held by a finalizer keep it waiting)", async (t) => {
    const { ns, kubectl } = await setup(t);
    for (const n of ["d1", "d2"]) {
      await kubectl(
        ["apply", "-n", ns],
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, labels: {doomed: "yes"}, finalizers: [khook.test/hold]}\ndata: {a: "1"}\n`,
      );
    }
    const s = step({ for: "delete", on: "configmaps", namespace: ns, selector: "doomed=yes" });
    assert.match((await waitExecutor.assess(s, await context())).reason, /2 still exist: configmap\/d1, configmap\/d2/);
    await kubectl(["delete", "configmap", "-n", ns, "-l", "doomed=yes", "--wait=false"]);
    const ctx = await context();
    const logs = ctx.logs;
    const waiting = waitExecutor.apply(s, ctx);
    await until(() => logs.some((l) => l.includes("still exist")));
    for (const n of ["d1", "d2"])
      await kubectl(["patch", "configmap", n, "-n", ns, "--type", "merge", "-p", '{"metadata":{"finalizers":null}}']);
    const out = await waiting;
    assert.match(out.reason, /nothing matches configmaps in namespace .* matching doomed=yes any more/);
    assert.equal((await waitExecutor.assess(s, await context())).action, "no-op");
  });

  test("delete of something already absent holds at once", async (t) => {
    const { ns } = await setup(t);
    const out = await waitExecutor.apply(
      step({ for: "delete", on: "deployment/never-existed", namespace: ns }),
      await context(),
    );
    assert.equal(out.status, "ok");
  });

  test("destroy has nothing to undo", async () => {
    assert.deepEqual(await waitExecutor.destroy(step({ for: "delete", on: "pods" }), undefined as never), {
      status: "skipped",
      reason: "wait steps have nothing to undo",
    });
  });
});

describe("apply.waitFor: exactly the applied objects", () => {
  test("waits on several objects of several types with one watch per type and namespace", async (t) => {
    const { ns, kube, kubectl } = await setup(t);
    await kubectl(["apply", "-n", ns], deployment("a1", 1));
    await kubectl(["apply", "-n", ns], deployment("a2", 1));
    const DEPLOY = await kube.resolveResource("deploy");
    const CM = await kube.resolveResource("cm");
    const p = parseWaitFor("jsonpath={.metadata.name}", { allowDelete: false });
    assert.ok(p.ok);
    const refs = [
      { resource: DEPLOY, name: "a1", namespace: ns },
      { resource: DEPLOY, name: "a2", namespace: ns },
      { resource: CM, name: "later", namespace: ns },
    ];
    const progress: string[] = [];
    const waiting = waitForObjects(kube, refs, p.condition, {
      timeoutMs: 120_000,
      onProgress: (m) => progress.push(m),
    });
    await until(() => progress.some((l) => l.includes("configmap/later: does not exist yet")));
    await kubectl(["create", "configmap", "later", "-n", ns]);
    await waiting;
    const ready = parseWaitFor("condition=Available", { allowDelete: false });
    assert.ok(ready.ok);
    await waitForObjects(kube, refs.slice(0, 2), ready.condition, { timeoutMs: 120_000 });
    const objs = await Promise.all(["a1", "a2"].map((n) => kube.get(DEPLOY, n, ns)));
    for (const o of objs as KubeObject[]) {
      assert.ok(
        (o["status"] as { conditions: { type: string; status: string }[] }).conditions.some(
          (c) => c.type === "Available" && c.status === "True",
        ),
      );
    }
  });
});
