/**
 * A destroy that waits says why, on a private control plane (an unavailable aggregated API stalls
 * every namespace deletion of its cluster, which the shared test cluster must never see):
 *
 * - A chart whose release includes a Namespace is torn down while an aggregated API is unavailable:
 *   a real APIService whose Service is headless (`clusterIP: None`) and has no endpoints, so the
 *   aggregator marks it unavailable and the namespace controller cannot finish any namespace
 *   (`NamespaceDeletionDiscoveryFailure ... <group>/v1beta1`). helm's own `uninstall --wait` burnt the
 *   step's whole deadline on that Namespace, failed with `context deadline exceeded`, and the step
 *   torn down next was skipped. khook leaves that Namespace to the namespace controller, names why
 *   in one line, and the teardown goes on.
 * - A chart object whose finalizer nobody clears: khook keeps waiting (content may need a controller
 *   a later step removes), says what blocks it, and the timed-out step's error ends with the causes.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toolPath } from "../harness/index.js";
import { privateCluster } from "../harness/private-cluster.js";
import { cliEnv, runKhook, specDir } from "./support/khook-cli.js";

const { state, kubectl } = privateCluster("stall-destroy");

const GROUP = "stall.khook.test";

/** An APIService for GROUP/v1beta1 served by a headless Service without endpoints: never available. */
const UNAVAILABLE_API = `apiVersion: v1
kind: Namespace
metadata:
  name: broken-api
---
apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: broken-api
spec:
  clusterIP: None
  selector:
    app: nothing-runs-this
  ports:
    - name: https
      port: 443
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.${GROUP}
spec:
  group: ${GROUP}
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service:
    name: api
    namespace: broken-api
    port: 443
`;

/** A chart whose release holds a Namespace and a ConfigMap in it (with `finalizer`, one that nobody clears). */
function chart(namespace: string, finalizer?: string): Record<string, string> {
  return {
    "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    "app/templates/namespace.yaml": `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${namespace}\n`,
    "app/templates/config.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: ${namespace}\n${finalizer !== undefined ? `  finalizers: [${finalizer}]\n` : ""}data:\n  a: "1"\n`,
  };
}

/** `base` (a ConfigMap), then `app` (the chart) which needs it: a destroy tears `app` down first, then `base`. */
function spec(name: string, recordNs: string, timeout: string): string {
  return `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: ${name}
state:
  namespace: ${recordNs}
steps:
  - name: base
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: base-${name}
              namespace: ${recordNs}
  - name: app
    needs: [base]
    timeout: ${timeout}
    helm:
      chart: ./app
      release: ${name}
      namespace: ${recordNs}
`;
}

interface Summary {
  outcome: string;
  steps: { name: string; status: string; reason: string; error?: string }[];
}

const env = () => cliEnv(state().kubeconfig, { KHOOK_HELM: toolPath("helm") });

function parse(r: { code: number; stdout: string; stderr: string }): Summary {
  try {
    return JSON.parse(r.stdout) as Summary;
  } catch {
    assert.fail(`not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

describe("destroys that say why they wait", { timeout: 600_000 }, () => {
  test("a chart's Namespace held Terminating by an unavailable aggregated API: the destroy names the condition and the API, leaves it to the namespace controller, and tears the next step down", async () => {
    await kubectl(["create", "namespace", "rec-a"]);
    const { file } = specDir(spec("chartns", "rec-a", "60s"), chart("stall-app"));
    const applied = await runKhook(["apply", "-f", file, "-o", "json"], { env: env() });
    assert.equal(applied.code, 0, applied.stderr);

    await kubectl(["apply", "-f", "-"], UNAVAILABLE_API);
    try {
      await kubectl(["wait", "--for=condition=Available=False", `apiservice/v1beta1.${GROUP}`, "--timeout=60s"]);
      const r = await runKhook(["destroy", "-f", file, "-o", "json"], { env: env() });
      const s = parse(r);
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      assert.equal(s.outcome, "ok");
      const app = s.steps.find((x) => x.name === "app")!;
      assert.equal(app.status, "ok", JSON.stringify(app));
      assert.match(
        app.reason,
        new RegExp(
          `namespace/stall-app is left Terminating: .*${GROUP.replace(/\./g, "\\.")}/v1beta1 does not answer discovery \\(NamespaceDeletionDiscoveryFailure: `,
        ),
      );
      assert.match(r.stderr, /\[app\] namespace\/stall-app is left Terminating/, "said in one line");
      assert.deepEqual(s.steps.find((x) => x.name === "base")?.status, "ok", "the step torn down next is not skipped");
      assert.equal(
        await kubectl(["get", "configmap", "base-chartns", "-n", "rec-a", "--ignore-not-found", "-o", "name"]),
        "",
      );
      // What khook said is what the cluster holds: the namespace is Terminating on that condition.
      const condition = await kubectl([
        "get",
        "namespace",
        "stall-app",
        "-o",
        'jsonpath={.status.phase} {.status.conditions[?(@.type=="NamespaceDeletionDiscoveryFailure")].status}',
      ]);
      assert.equal(condition, "Terminating True");
    } finally {
      await kubectl(["delete", "apiservice", `v1beta1.${GROUP}`, "--ignore-not-found"]);
    }
    // With the APIService gone, the namespace controller finishes the namespace by itself.
    await kubectl(["wait", "--for=delete", "namespace/stall-app", "--timeout=120s"]);
  });

  test("a finalizer nobody clears: the destroy keeps waiting, says what blocks it, and the timed-out step's error ends with the causes", async () => {
    await kubectl(["create", "namespace", "rec-b"]);
    const { file } = specDir(spec("finalizer", "rec-b", "20s"), chart("stall-hold", "khook.test/hold"));
    const applied = await runKhook(["apply", "-f", file, "-o", "json"], { env: env() });
    assert.equal(applied.code, 0, applied.stderr);
    try {
      const r = await runKhook(["destroy", "-f", file, "-o", "json"], { env: env() });
      const s = parse(r);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(s.outcome, "step-failed");
      const app = s.steps.find((x) => x.name === "app")!;
      assert.equal(app.status, "failed");
      assert.match(
        app.error ?? "",
        /what blocks it:\n(.|\n)*configmap\/config -n stall-hold: being deleted since \S+, but its finalizers have not cleared: khook\.test\/hold/,
      );
      assert.match(r.stderr, /\[app\] blocked: configmap\/config -n stall-hold: being deleted/);
      assert.equal(s.steps.find((x) => x.name === "base")?.status, "skipped", "what app needs stays while app stays");
    } finally {
      await kubectl([
        "patch",
        "configmap",
        "config",
        "-n",
        "stall-hold",
        "--type=merge",
        "-p",
        '{"metadata":{"finalizers":null}}',
      ]);
    }
    await kubectl(["wait", "--for=delete", "namespace/stall-hold", "--timeout=120s"]);
    // The next destroy finishes what is left.
    const again = await runKhook(["destroy", "-f", file, "-o", "json"], { env: env() });
    assert.equal(again.code, 0, again.stderr);
  });
});
