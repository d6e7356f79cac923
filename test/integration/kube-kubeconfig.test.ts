/**
 * The native kubeconfig loader against the real cluster: relative file
 * references, tokenFile, the in-cluster service account, an exec plugin named
 * by a relative path, and KUBECONFIG merging compared with kubectl itself.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import { testCluster, toolEnv, toolPath, withNamespace } from "../harness/index.js";
import { run } from "../harness/util.js";
import { KubeApiError, KubeClient, type ResourceType } from "../../provider/kube/index.js";
import { credentialsFor, loadKubeconfig, selectContext } from "../../provider/kube/kubeconfig.js";

const CM: ResourceType = { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true };

/** The admin kubeconfig's server and (base64) credentials. Kept in memory only, never printed. */
function adminMaterial(kubeconfig: string): { server: string; ca: string; cert: string; key: string } {
  const text = fs.readFileSync(kubeconfig, "utf8");
  const field = (name: string): string => {
    const v = new RegExp(`${name}: (\\S+)`).exec(text)?.[1];
    assert.ok(v, `the test kubeconfig has ${name}`);
    return v;
  };
  return {
    server: field("server"),
    ca: field("certificate-authority-data"),
    cert: field("client-certificate-data"),
    key: field("client-key-data"),
  };
}

function tmpdir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-kubeconfig-int-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function write(file: string, text: string, mode = 0o600): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode });
  return file;
}

function config(server: string, cluster: string, user: string, namespace = "default", context = "x"): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", ${cluster}}}]
users: [{name: u, user: ${user}}]
contexts: [{name: ${context}, context: {cluster: c, user: u, namespace: ${namespace}}}]
current-context: ${context}
`;
}

/** A service account that may read (not write) in `ns`, and a token for it. */
async function readerToken(ns: string): Promise<string> {
  const cluster = await testCluster();
  const ok = async (args: string[]): Promise<string> => {
    const r = await cluster.kubectl(args);
    assert.equal(r.code, 0, `kubectl ${args[0]} ${args[1]}: ${r.stderr}`);
    return r.stdout.trim();
  };
  await ok(["create", "serviceaccount", "reader", "-n", ns]);
  await ok(["create", "rolebinding", "reader", "-n", ns, "--clusterrole=view", `--serviceaccount=${ns}:reader`]);
  return ok(["create", "token", "reader", "-n", ns]);
}

/**
 * A ConfigMap the admin makes in the test's namespace, for the kubeconfig under test to find. Not
 * kube-root-ca.crt: the controller-manager publishes that into a new namespace when it gets to it.
 */
const MARKER = "khook-marker";

/** Makes MARKER in `ns` with the admin kubeconfig, then lists it through `kubeconfigPath`. */
async function listsConfigMaps(kubeconfigPath: string, ns: string): Promise<void> {
  const made = await (await testCluster()).kubectl(["create", "configmap", MARKER, "-n", ns]);
  assert.equal(made.code, 0, made.stderr);
  const kube = await KubeClient.connect({ kubeconfigPath });
  try {
    const l = await kube.list(CM, { namespace: ns });
    assert.ok(
      l.items.some((i) => i.metadata?.name === MARKER),
      `${MARKER} listed through ${kubeconfigPath}`,
    );
  } finally {
    kube.close();
  }
}

describe("kubeconfig against the cluster", () => {
  test("certificate files named relative to the kubeconfig's directory work for khook and for kubectl", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "kcfg-rel");
    const m = adminMaterial(cluster.kubeconfig);
    const dir = tmpdir(t);
    write(path.join(dir, "pki", "ca.crt"), Buffer.from(m.ca, "base64").toString("utf8"));
    write(path.join(dir, "pki", "admin.crt"), Buffer.from(m.cert, "base64").toString("utf8"));
    write(path.join(dir, "pki", "admin.key"), Buffer.from(m.key, "base64").toString("utf8"));
    const file = write(
      path.join(dir, "conf", "config"),
      config(
        m.server,
        "certificate-authority: ../pki/ca.crt",
        "{client-certificate: ../pki/admin.crt, client-key: ../pki/admin.key}",
      ),
    );
    await listsConfigMaps(file, ns);
    const viaKubectl = await run(
      toolPath("kubectl"),
      ["--kubeconfig", file, "-n", ns, "get", "configmap", MARKER, "-o", "name"],
      { env: toolEnv(), cwd: os.tmpdir() },
    );
    assert.equal(viaKubectl.code, 0, viaKubectl.stderr);
  });

  test("tokenFile: the service account token is read from the file", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "kcfg-tokfile");
    const m = adminMaterial(cluster.kubeconfig);
    const dir = tmpdir(t);
    write(path.join(dir, "token"), `${await readerToken(ns)}\n`);
    const file = write(
      path.join(dir, "config"),
      config(m.server, `certificate-authority-data: ${m.ca}`, "{tokenFile: token}", ns),
    );
    await listsConfigMaps(file, ns);
    const kube = await KubeClient.connect({ kubeconfigPath: file });
    try {
      assert.equal(kube.contextNamespace, ns);
      await assert.rejects(
        kube.create(CM, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "denied", namespace: ns } }),
        (e: unknown) => e instanceof KubeApiError && e.status === 403,
      );
    } finally {
      kube.close();
    }
  });

  test("in-cluster: the service account's token and CA authenticate against the API server", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "kcfg-incluster");
    const m = adminMaterial(cluster.kubeconfig);
    const sa = tmpdir(t);
    write(path.join(sa, "token"), await readerToken(ns));
    write(path.join(sa, "ca.crt"), Buffer.from(m.ca, "base64").toString("utf8"));
    write(path.join(sa, "namespace"), ns);
    const url = new URL(m.server);
    const host = {
      env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
      homeDir: tmpdir(t),
      serviceAccountDir: sa,
    };
    const sel = selectContext(loadKubeconfig({}, host));
    assert.equal(sel.source.kind, "in-cluster");
    assert.equal(sel.namespace, ns);
    const { tls, headers } = await (await credentialsFor(sel)).current();
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request(
        `${sel.server}/api/v1/namespaces/${ns}/configmaps`,
        { headers, ca: tls.ca, agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 200);
  });

  test("an exec plugin named by a relative path is found next to the kubeconfig (and still goes through client-node)", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "kcfg-exec");
    const m = adminMaterial(cluster.kubeconfig);
    const dir = tmpdir(t);
    const token = await readerToken(ns);
    write(
      path.join(dir, "bin", "cred.sh"),
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
      0o700,
    );
    const file = write(
      path.join(dir, "config"),
      config(
        m.server,
        `certificate-authority-data: ${m.ca}`,
        "{exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/cred.sh, interactiveMode: Never}}",
      ),
    );
    await listsConfigMaps(file, ns);
  });

  test("KUBECONFIG merging picks the same context and server as kubectl", async (t) => {
    const cluster = await testCluster();
    const m = adminMaterial(cluster.kubeconfig);
    const dir = tmpdir(t);
    const first = write(
      path.join(dir, "first"),
      config(m.server, `certificate-authority-data: ${m.ca}`, `{token: a}`, "one", "from-first").replace(
        /current-context: .*\n/,
        "",
      ),
    );
    const second = write(
      path.join(dir, "second"),
      config("https://127.0.0.1:1", `insecure-skip-tls-verify: true`, `{token: b}`, "two", "from-second").replace(
        "current-context: from-second",
        "current-context: from-first",
      ),
    );
    const list = [path.join(dir, "missing"), first, second].join(path.delimiter);
    const sel = selectContext(
      loadKubeconfig({}, { env: { KUBECONFIG: list }, homeDir: dir, serviceAccountDir: path.join(dir, "none") }),
    );
    const kubectl = async (jsonpath: string): Promise<string> => {
      const r = await run(toolPath("kubectl"), ["config", "view", "--minify", "-o", `jsonpath=${jsonpath}`], {
        env: { ...toolEnv(), KUBECONFIG: list },
      });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    assert.equal(sel.contextName, await kubectl("{.current-context}"));
    assert.equal(sel.server, await kubectl("{.clusters[0].cluster.server}"));
    assert.equal(sel.namespace, await kubectl("{.contexts[0].context.namespace}"));
  });
});
