/**
 * wait-names-its-blocking-cause, on the real cluster: the field's classic stalls, made by the
 * real scheduler, the real PersistentVolume binder and kwok (which holds a pod in
 * ImagePullBackOff for the image khook.test/unpullable:1, test/harness/kwok/stages.yaml).
 * Each wait is bounded by a short step deadline and must end with an error that names the
 * cause; while it waits, the cause is logged once as a `blocked:` line.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { waitExecutor } from "../../provider/steps/wait/executor.js";
import { executorContext, kubeSetup, loadedStep } from "./support/executors.js";

const setup = (t: TestContext) => kubeSetup(t, "stall");

/** Long enough for the stall monitor to look twice (every third of it), short enough for the suite. */
const DEADLINE_MS = 24_000;

function deployment(name: string, pod: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
${pod.replace(/^/gm, "      ")}
`;
}

/** Waits for condition=Available on the deployment; returns the error and the progress lines. */
async function stalledWait(ns: string, name: string): Promise<{ error: Error; logs: string[] }> {
  const ctx = await executorContext({ timeoutMs: DEADLINE_MS });
  const step = loadedStep("wait", { for: "condition=Available", on: `deployment/${name}`, namespace: ns }, "available");
  const error = await waitExecutor.apply(step, ctx).then(
    () => assert.fail(`deployment/${name} became Available; the test needs it stuck`),
    (e: unknown) => e as Error,
  );
  return { error, logs: ctx.logs };
}

describe("wait-names-its-blocking-cause (real cluster)", () => {
  test("an unbound claim: the timeout names the claim and the binder's reason, not only 'Available is False'", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(
      ["apply", "-n", ns],
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
    );
    await kubectl(
      ["apply", "-n", ns],
      deployment(
        "mysql",
        "containers: [{name: mysql, image: mysql:8}]\nvolumes: [{name: data, persistentVolumeClaim: {claimName: data}}]",
      ),
    );
    const { error, logs } = await stalledWait(ns, "mysql");
    assert.match(error.message, /Available is False/);
    assert.match(
      error.message,
      /what blocks it:\n {2}- pod\/mysql-[a-z0-9-]+: persistentvolumeclaim\/data is not bound \(no persistent volumes available for this claim and no storage class is set\)/,
    );
    assert.ok(
      logs.some((l) => /^blocked: pod\/mysql-[a-z0-9-]+: persistentvolumeclaim\/data is not bound/.test(l)),
      `a blocked: line while waiting; got:\n${logs.join("\n")}`,
    );
    assert.equal(logs.filter((l) => l.startsWith("blocked:")).length, 1, "each distinct cause is logged once");
  });

  test("an image that cannot be pulled: the container's ImagePullBackOff", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(
      ["apply", "-n", ns],
      deployment("web", 'containers: [{name: web, image: "khook.test/unpullable:1"}]'),
    );
    const { error } = await stalledWait(ns, "web");
    assert.match(
      error.message,
      /what blocks it:\n {2}- pod\/web-[a-z0-9-]+: container web is waiting: ImagePullBackOff \(Back-off pulling image "khook\.test\/unpullable:1"\)/,
    );
  });

  test("an unschedulable pod: the scheduler's reason", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(
      ["apply", "-n", ns],
      deployment(
        "pinned",
        'nodeSelector: {khook.io/no-such-node: "true"}\ncontainers: [{name: pinned, image: "nginx:1.25"}]',
      ),
    );
    const { error } = await stalledWait(ns, "pinned");
    assert.match(
      error.message,
      /what blocks it:\n {2}- pod\/pinned-[a-z0-9-]+: cannot be scheduled: 0\/\d+ nodes are available: \d+ node\(s\) didn't match Pod's node affinity\/selector/,
    );
  });
});
