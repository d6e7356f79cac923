/**
 * helm's release records read from the cluster (provider/helm/storage.ts) say what helm says:
 * releases installed and upgraded by the real helm, their Secrets read with the real kube client,
 * compared with `helm history -o json` and `helm get values -o json`.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { KubeClient } from "../../provider/kube/index.js";
import { releaseSelector, storedReleases } from "../../provider/helm/storage.js";
import { helmEnv, testChartPath, testCluster, withNamespace } from "../harness/index.js";
import { helm } from "../harness/fixtures.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const SECRETS = { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true };
const clients: KubeClient[] = [];
after(() => {
  for (const c of clients) c.close();
});

describe("helm release storage", () => {
  test("the history and latest values read from the release Secrets equal helm history and helm get values", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "helm-storage");
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "khook-helm-home-"));
    t.after(() => fs.rmSync(home, { recursive: true, force: true }));
    const env = { ...helmEnv(home), KUBECONFIG: cluster.kubeconfig };
    const chart = testChartPath("khook-demo");
    for (const message of ["first", "second"]) {
      const r = await helm(
        [
          "upgrade",
          "--install",
          "demo",
          chart,
          "-n",
          ns,
          "--set",
          `message=${message}`,
          "--set",
          "nested.token=s3cr3t",
        ],
        env,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    const historyRun = await helm(["history", "demo", "-n", ns, "-o", "json"], env);
    const valuesRun = await helm(["get", "values", "demo", "-n", ns, "-o", "json"], env);
    const manifestRun = await helm(["get", "manifest", "demo", "-n", ns], env);
    assert.equal(manifestRun.code, 0, manifestRun.stderr);
    assert.equal(historyRun.code, 0, historyRun.stderr);
    assert.equal(valuesRun.code, 0, valuesRun.stderr);

    const kube = await KubeClient.connect({ kubeconfigPath: cluster.kubeconfig });
    clients.push(kube);
    const list = await kube.list(SECRETS, { namespace: ns, labelSelector: releaseSelector("demo") });
    const stored = storedReleases(list.items, "demo");
    assert.ok(stored !== undefined, "the Secrets decode");

    const fields = (h: {
      revision: number;
      status: string;
      chart: string;
      app_version: string;
      description: string;
    }) => ({
      revision: h.revision,
      status: h.status,
      chart: h.chart,
      app_version: h.app_version,
      description: h.description,
    });
    assert.deepEqual(
      stored.history?.map(fields),
      (JSON.parse(historyRun.stdout) as Parameters<typeof fields>[0][]).map(fields),
    );
    assert.deepEqual(stored.latestValues, JSON.parse(valuesRun.stdout));
    assert.deepEqual(stored.latestValues, { message: "second", nested: { token: "s3cr3t" } });
    // The manifest a no-op `wait: true` step checks; `helm get manifest` adds a trailing newline.
    assert.equal(stored.latestManifest?.trimEnd(), manifestRun.stdout.trimEnd());
    assert.match(stored.latestManifest ?? "", /second/);
  });

  test("a release that does not exist has no history", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "helm-storage");
    const kube = await KubeClient.connect({ kubeconfigPath: cluster.kubeconfig });
    clients.push(kube);
    const list = await kube.list(SECRETS, { namespace: ns, labelSelector: releaseSelector("absent") });
    assert.deepEqual(storedReleases(list.items, "absent"), { history: undefined, latestValues: {} });
  });
});
