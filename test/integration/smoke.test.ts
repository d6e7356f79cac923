// Smoke tests that prove the test toolchain: the kwok cluster's controllers, helm against the
// three chart sources, and pulumi fully offline. If these fail, no other integration test can pass.
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import {
  startChartRepo,
  startOciRegistry,
  testChartPath,
  testCluster,
  toolEnv,
  toolPath,
  withNamespace,
  TEST_FAIL_ANNOTATION,
} from "../harness/index.js";
import { run } from "../harness/util.js";
import { runPulumiSmoke } from "./smoke-pulumi.js";

async function kube(t: TestContext, prefix: string) {
  const cluster = await testCluster();
  const ns = await withNamespace(t, prefix);
  const k = async (args: string[], input?: string): Promise<string> => {
    const r = await cluster.kubectl(args, input === undefined ? {} : { input });
    assert.equal(r.code, 0, `kubectl ${args.join(" ")} failed:\n${r.stdout}${r.stderr}`);
    return r.stdout.trim();
  };
  return { cluster, ns, k };
}

const json = (o: unknown) => JSON.stringify(o);

describe("smoke: cluster", () => {
  test("a Deployment becomes Available and its pods Ready", { timeout: 120_000 }, async (t) => {
    const { ns, k } = await kube(t, "smoke-deploy");
    await k(
      ["apply", "-n", ns, "-f", "-"],
      json({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "web", image: "registry.invalid/web:1" }] },
          },
        },
      }),
    );
    await k(["wait", "-n", ns, "--for=condition=Available", "deployment/web", "--timeout=60s"]);
    await k(["wait", "-n", ns, "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=60s"]);
    const ready = await k(["get", "deployment/web", "-n", ns, "-o", "jsonpath={.status.readyReplicas}"]);
    assert.equal(ready, "2");
  });

  test("a Job completes; a Job whose pod carries the failure annotation fails", { timeout: 120_000 }, async (t) => {
    const { ns, k } = await kube(t, "smoke-job");
    const job = (name: string, annotations: Record<string, string>) => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { annotations },
          spec: { restartPolicy: "Never", containers: [{ name: "run", image: "registry.invalid/job:1" }] },
        },
      },
    });
    await k(["apply", "-n", ns, "-f", "-"], json(job("ok", {})));
    await k(["apply", "-n", ns, "-f", "-"], json(job("bad", { [TEST_FAIL_ANNOTATION]: "true" })));
    await k(["wait", "-n", ns, "--for=condition=Complete", "job/ok", "--timeout=60s"]);
    await k(["wait", "-n", ns, "--for=condition=Failed", "job/bad", "--timeout=60s"]);
    const okFailed = await k(["get", "job/ok", "-n", ns, "-o", "jsonpath={.status.failed}"]);
    assert.ok(okFailed === "" || okFailed === "0", `job ok should have no failed pods, has ${okFailed}`);
  });

  test("deleting a namespace finalizes", { timeout: 120_000 }, async (t) => {
    const cluster = await testCluster();
    const k = async (args: string[], input?: string) => {
      const r = await cluster.kubectl(args, input === undefined ? {} : { input });
      assert.equal(r.code, 0, `kubectl ${args.join(" ")} failed:\n${r.stdout}${r.stderr}`);
      return r.stdout.trim();
    };
    const ns = `smoke-nsdel-${process.pid}-${Date.now().toString(36)}`;
    t.after(() => cluster.kubectl(["delete", "namespace", ns, "--ignore-not-found", "--wait=false"]));
    await k(["create", "namespace", ns]);
    await k(["create", "configmap", "c", "-n", ns, "--from-literal=a=b"]);
    await k(["create", "deployment", "d", "-n", ns, "--image=registry.invalid/d:1"]);
    await k(["wait", "-n", ns, "--for=condition=Available", "deployment/d", "--timeout=60s"]);
    await k(["delete", "namespace", ns, "--wait=false"]);
    await k(["wait", "--for=delete", `namespace/${ns}`, "--timeout=90s"]);
    const r = await cluster.kubectl(["get", "namespace", ns]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /NotFound|not found/);
  });

  test("a CRD is established and a custom resource of it is served", { timeout: 120_000 }, async (t) => {
    const { cluster, ns, k } = await kube(t, "smoke-crd");
    const group = `smoke${process.pid}.khook.io`;
    const crdName = `widgets.${group}`;
    t.after(() => cluster.kubectl(["delete", "crd", crdName, "--ignore-not-found", "--wait=false"]));
    await k(
      ["apply", "-f", "-"],
      json({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: crdName },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: "object",
                  properties: { spec: { type: "object", properties: { size: { type: "integer" } } } },
                },
              },
            },
          ],
        },
      }),
    );
    await k(["wait", "--for=condition=Established", `crd/${crdName}`, "--timeout=60s"]);
    await k(
      ["apply", "-n", ns, "-f", "-"],
      json({ apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w1" }, spec: { size: 3 } }),
    );
    const size = await k(["get", `widgets.${group}`, "w1", "-n", ns, "-o", "jsonpath={.spec.size}"]);
    assert.equal(size, "3");
  });
});

describe("smoke: helm", () => {
  test("helm installs a chart from a path, an HTTP repository and an OCI registry", { timeout: 240_000 }, async (t) => {
    const { cluster, ns } = await kube(t, "smoke-helm");
    const auth = { username: "khook", password: "s3cret-pass" };
    const repo = await startChartRepo({ basicAuth: auth });
    t.after(() => repo.close());
    const oci = await startOciRegistry(auth);
    t.after(() => oci.close());
    const env = oci.helmEnv; // private helm homes with the registry login in place
    const helm = async (args: string[]) => {
      const r = await run(toolPath("helm"), [...args, "--kubeconfig", cluster.kubeconfig], { env, timeoutMs: 180_000 });
      assert.equal(r.code, 0, `helm ${args.join(" ")} failed:\n${r.stdout}${r.stderr}`);
      return r.stdout;
    };

    // The version helm sees must be the real one: the chart's kubeVersion constraint depends on it.
    const v = await cluster.kubectl(["version", "-o", "json"]);
    assert.match(JSON.parse(v.stdout).serverVersion.gitVersion, /^v1\.\d+\.\d+/);

    await helm(["install", "from-path", testChartPath("khook-test-app"), "-n", ns, "--wait", "--timeout", "90s"]);

    await helm(["repo", "add", "khook-smoke", repo.url, "--username", auth.username, "--password", auth.password]);
    await helm([
      "install",
      "from-repo",
      "khook-smoke/khook-test-app",
      "--version",
      "0.1.0",
      "-n",
      ns,
      "--wait",
      "--timeout",
      "90s",
    ]);
    // Basic auth is enforced: anonymous requests were refused.
    const anon = await fetch(`${repo.url}/index.yaml`);
    assert.equal(anon.status, 401);

    await helm([
      "install",
      "from-oci",
      `${oci.url}/khook-test-app`,
      "--version",
      "0.1.0",
      "--plain-http",
      "-n",
      ns,
      "--wait",
      "--timeout",
      "90s",
    ]);

    const list = JSON.parse(await helm(["list", "-n", ns, "-o", "json"])) as {
      name: string;
      status: string;
      chart: string;
    }[];
    const names = list.map((r) => r.name).sort();
    assert.deepEqual(names, ["from-oci", "from-path", "from-repo"]);
    for (const r of list) {
      assert.equal(r.status, "deployed", `${r.name}: ${r.status}`);
      assert.equal(r.chart, "khook-test-app-0.1.0");
    }
    const avail = await cluster.kubectl([
      "get",
      "deploy",
      "-n",
      ns,
      "-o",
      "jsonpath={.items[*].status.availableReplicas}",
    ]);
    assert.equal(avail.stdout.trim(), "1 1 1");
  });

  test("the toolchain is on PATH for subprocesses", async () => {
    const env = toolEnv();
    for (const tool of [
      "kubectl",
      "helm",
      "kustomize",
      "pulumi",
      "pulumi-language-nodejs",
      "pulumi-resource-pulumi-nodejs",
    ]) {
      const r = await run("sh", ["-c", `command -v ${tool}`], { env });
      assert.equal(r.code, 0, `${tool} is not on the harness PATH`);
      assert.equal(r.stdout.trim(), toolPath(tool));
    }
  });
});

describe("smoke: pulumi", () => {
  test("a dynamic resource: pulumi up, preview (no changes), destroy, offline", { timeout: 300_000 }, async (t) => {
    await testCluster(); // the integration environment must be up (PATH, toolchain)
    await runPulumiSmoke(t);
  });
});
