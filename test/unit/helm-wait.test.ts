/**
 * helm-wait-timeout-names-objects, as a unit: khook's wait on a release's objects reports each
 * object that is not ready by its name and its last state, and points `kubectl describe` at
 * exactly those objects (test/integration/helm-wait.test.ts runs it against the real cluster).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WaitTimeoutError } from "../../provider/kube/api-errors.js";
import type { WaitCheck, WaitOptions, WaitScope } from "../../provider/kube/watch.js";
import { waitForRelease } from "../../provider/steps/helm/release-wait.js";
import { contextFor, loadSteps } from "./support/executor-context.js";
import { FakeKube } from "./support/fake-kube.js";

const spec = loadSteps("  - name: pods-ready\n    wait: { for: condition=Ready, on: pods, namespace: apps }\n");
const MANIFEST =
  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n";

/** A cluster whose watch of deployments never delivers anything before the timeout (an outage, say). */
class SilentDeployments extends FakeKube {
  override waitFor<T = true>(scope: WaitScope, check: WaitCheck<T>, opts: WaitOptions): Promise<T> {
    if (scope.resource.resource === "deployments")
      return Promise.reject(new WaitTimeoutError("timed out", "nothing observed yet"));
    return super.waitFor(scope, check, opts);
  }
}

describe("helm-wait-timeout-names-objects (unit)", () => {
  test("an object not ready is named with why; objects without a readiness rule are not waited on", async () => {
    const kube = new FakeKube();
    kube.seed({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "apps", generation: 1 },
      spec: { replicas: 2 },
      status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 1 },
    });
    const lines: string[] = [];
    await assert.rejects(
      waitForRelease(MANIFEST, { name: "web", namespace: "apps" }, contextFor(spec, kube, lines)),
      (e: Error) =>
        /is installed but not ready after [0-9.]+m?s: deployment\/web: 1 of 2 replicas ready \(needs 2\)\. See why with kubectl describe -n apps deployment\/web; the next run waits again$/.test(
          e.message,
        ),
    );
  });

  test("an object whose watch never saw anything is still named, and describe is pointed at it", async () => {
    const kube = new SilentDeployments();
    await assert.rejects(
      waitForRelease(MANIFEST, { name: "web", namespace: "apps" }, contextFor(spec, kube)),
      (e: Error) => {
        assert.match(
          e.message,
          /: deployment\/web: nothing observed yet\. See why with kubectl describe -n apps deployment\/web; the next run waits again$/,
        );
        return true;
      },
    );
  });
});
