/**
 * The helm rows of the spec's command coverage matrix (and `kubectl apply -k`), each
 * through the real khook CLI against the real cluster, the real helm, the loopback chart
 * repository and OCI registry, and checked with helm itself.
 */
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import { helm } from "../harness/fixtures.js";
import {
  startChartRepo,
  startHttpServer,
  startOciRegistry,
  testChartPath,
  testCluster,
  toolEnv,
  withNamespace,
} from "../harness/index.js";
import { cliEnv, khookSpec, parseRun, runKhook, specDir, stepOf } from "./support/khook-cli.js";

async function helmJson<T>(args: string[], kubeconfig: string): Promise<T> {
  const r = await helm([...args, "-o", "json"], {
    ...toolEnv(),
    KUBECONFIG: kubeconfig,
    HELM_CONFIG_HOME: path.join(os.tmpdir(), "khook-helm-matrix"),
  });
  assert.equal(r.code, 0, `helm ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function apply(t: TestContext, spec: string, files: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}) {
  const cluster = await testCluster();
  const { file } = specDir(spec, files);
  const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(cluster.kubeconfig, env) });
  assert.equal(r.code, 0, `khook apply failed:\n${r.stdout}\n${r.stderr}`);
  void t;
  return { run: parseRun(r), cluster, file };
}

const revisions = async (release: string, ns: string, kubeconfig: string) =>
  (await helmJson<{ revision: number; status: string }[]>(["history", release, "-n", ns], kubeconfig)).map(
    (h) => `${h.revision}:${h.status}`,
  );

describe("command coverage matrix (helm rows)", () => {
  test("helm repo add + helm install/upgrade → helm: (bare name + repo:), upgrade on change, no new revision when unchanged", async (t) => {
    const ns = await withNamespace(t, "hm-repo");
    const repo = await startChartRepo();
    t.after(() => repo.close());
    const spec = (greeting: string) =>
      khookSpec(
        "hm",
        `  - name: web\n    helm:\n      chart: khook-test-config\n      repo: ${repo.url}\n      version: 0.1.0\n      namespace: ${ns}\n      values: { data: { greeting: ${greeting} } }\n`,
      );
    const first = await apply(t, spec("hello"));
    assert.equal(stepOf(first.run, "web").status, "ok");
    await apply(t, spec("changed"));
    const third = await apply(t, spec("changed"));
    assert.match(stepOf(third.run, "web").reason, /no-op|unchanged|already/);
    assert.deepEqual(await revisions("web", ns, first.cluster.kubeconfig), ["1:superseded", "2:deployed"]);
  });

  test("helm install --atomic/--wait/--create-namespace → helm.atomic/wait/createNamespace", async (t) => {
    const ns = `${await withNamespace(t, "hm-opts")}-new`;
    const repo = await startChartRepo();
    t.after(() => repo.close());
    const { cluster } = await apply(
      t,
      khookSpec(
        "hm",
        `  - name: app\n    helm:\n      chart: khook-test-app\n      repo: ${repo.url}\n      namespace: ${ns}\n      createNamespace: true\n      atomic: true\n      wait: true\n`,
      ),
    );
    t.after(() => cluster.kubectl(["delete", "namespace", ns, "--wait=false"]));
    const list = await helmJson<{ name: string; status: string }[]>(["list", "-n", ns], cluster.kubeconfig);
    assert.deepEqual(
      list.map((r) => [r.name, r.status]),
      [["app", "deployed"]],
    );
    assert.equal(
      (
        await cluster.kubectl(["get", "deployment", "-n", ns, "-o", "jsonpath={.items[0].status.availableReplicas}"])
      ).stdout.trim(),
      "1",
    );
  });

  test("helm install -f values.yaml --set k=v → helm.valuesFrom (file and url) + helm.values, merged in order", async (t) => {
    const ns = await withNamespace(t, "hm-values");
    const values = await startHttpServer({ "/values.yaml": "data:\n  fromUrl: url\n  overridden: by-url\n" });
    t.after(() => values.close());
    const { cluster } = await apply(
      t,
      khookSpec(
        "hm",
        `  - name: vals\n    helm:\n      chart: ${testChartPath("khook-test-config")}\n      namespace: ${ns}\n      valuesFrom:\n        - file: ./values/base.yaml\n        - url: ${values.url}/values.yaml\n      values: { data: { overridden: by-values } }\n`,
      ),
      { "values/base.yaml": "data:\n  fromFile: file\n  overridden: by-file\n" },
    );
    const data = JSON.parse(
      (await cluster.kubectl(["get", "configmap", "vals-config", "-n", ns, "-o", "jsonpath={.data}"])).stdout,
    ) as Record<string, string>;
    assert.deepEqual(
      { fromFile: data.fromFile, fromUrl: data.fromUrl, overridden: data.overridden },
      { fromFile: "file", fromUrl: "url", overridden: "by-values" },
    );
  });

  test("helm install oci://... / local chart → helm.chart: oci://... (with auth:) / path", async (t) => {
    const ns = await withNamespace(t, "hm-oci");
    const registry = await startOciRegistry({ username: "khook", password: "oci-pass-word" });
    t.after(() => registry.close());
    const { cluster } = await apply(
      t,
      khookSpec(
        "hm",
        `  - name: from-oci\n    helm:\n      chart: ${registry.url}/khook-test-config:0.1.0\n      namespace: ${ns}\n      auth: { username: khook, password: "\${OCI_PASS}" }\n  - name: from-path\n    helm:\n      chart: ${testChartPath("khook-test-config")}\n      namespace: ${ns}\n`,
      ),
      {},
      { KHOOK_SECRET_OCI_PASS: "oci-pass-word" },
    );
    const list = await helmJson<{ name: string; chart: string }[]>(["list", "-n", ns], cluster.kubeconfig);
    assert.deepEqual(list.map((r) => [r.name, r.chart]).sort(), [
      ["from-oci", "khook-test-config-0.1.0"],
      ["from-path", "khook-test-config-0.1.0"],
    ]);
  });

  test("helm install --username/--password → helm.auth or URL userinfo, against a repository behind basic auth", async (t) => {
    const ns = await withNamespace(t, "hm-auth");
    const repo = await startChartRepo({ basicAuth: { username: "reader", password: "p@ss/w+rd=" } });
    t.after(() => repo.close());
    const host = repo.url.replace(/^http:\/\//, "");
    const { cluster } = await apply(
      t,
      khookSpec(
        "hm",
        `  - name: with-auth\n    helm:\n      chart: khook-test-config\n      repo: ${repo.url}\n      namespace: ${ns}\n      auth: { username: reader, password: "\${PASS}" }\n  - name: with-userinfo\n    helm:\n      chart: khook-test-config\n      repo: http://reader:\${PASS|urlquery}@${host}\n      namespace: ${ns}\n`,
      ),
      {},
      { KHOOK_SECRET_PASS: "p@ss/w+rd=" },
    );
    const list = await helmJson<{ name: string }[]>(["list", "-n", ns], cluster.kubeconfig);
    assert.deepEqual(list.map((r) => r.name).sort(), ["with-auth", "with-userinfo"]);
  });

  test("helm uninstall → delete.release (present, then absent: ignoreNotFound defaults to true)", async (t) => {
    const ns = await withNamespace(t, "hm-uninstall");
    const spec = khookSpec(
      "hm",
      `  - name: rel\n    helm:\n      chart: ${testChartPath("khook-test-config")}\n      namespace: ${ns}\n  - name: remove\n    needs: [rel]\n    delete: { release: rel, namespace: ${ns} }\n  - name: remove-again\n    needs: [remove]\n    delete: { release: rel, namespace: ${ns} }\n`,
    );
    const { run, cluster } = await apply(t, spec);
    assert.match(stepOf(run, "remove").reason, /uninstalled/);
    assert.match(stepOf(run, "remove-again").reason, /not found/);
    assert.deepEqual(await helmJson<unknown[]>(["list", "-n", ns], cluster.kubeconfig), []);
    assert.notEqual(
      (await cluster.kubectl(["get", "configmap", "rel-config", "-n", ns])).code,
      0,
      "the release's resources are gone",
    );
  });

  test("kubectl apply -k → apply.manifests: - kustomize: (local)", async (t) => {
    const ns = await withNamespace(t, "hm-kustomize");
    const { cluster } = await apply(
      t,
      khookSpec("hm", `  - name: overlay\n    apply:\n      manifests:\n        - kustomize: ./k/overlay\n`),
      {
        "k/base/kustomization.yaml": "resources: [cm.yaml]\n",
        "k/base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {tier: base}\n",
        "k/overlay/kustomization.yaml": `namespace: ${ns}\nnamePrefix: prod-\nresources: [../base]\nconfigMapGenerator:\n  - name: generated\n    literals: [mode=overlay]\n`,
      },
    );
    const names = (await cluster.kubectl(["get", "configmaps", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}"]))
      .stdout;
    assert.match(names, /prod-app/);
    assert.match(names, /prod-generated-/);
  });
});
