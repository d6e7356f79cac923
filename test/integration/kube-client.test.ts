/**
 * The raw-REST client against the real cluster: connection, errors, discovery,
 * CRUD, patch types, watches and deletion waits.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { describe, test, type TestContext } from "node:test";
import {
  KubeApiError,
  KubeClient,
  KubeConnectionError,
  UnknownResourceError,
  WaitTimeoutError,
  type KubeObject,
  type ResourceType,
} from "../../provider/kube/index.js";
import { kubeSetup } from "./support/executors.js";

const setup = (t: TestContext) => kubeSetup(t, "kclient");

const CM: ResourceType = { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true };

const cm = (
  name: string,
  ns: string,
  extra: Partial<KubeObject> = {},
  meta: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, ...meta },
  data: { a: "1" },
  ...extra,
});

describe("connecting", () => {
  test("loads the kubeconfig (explicit path, or content) and names its context and server", async (t) => {
    const { cluster, kube } = await setup(t);
    assert.match(kube.server, /^https:\/\//);
    assert.equal(kube.contextNamespace, "default");
    const { readFileSync } = await import("node:fs");
    const fromContent = await KubeClient.connect({ kubeconfigContent: readFileSync(cluster.kubeconfig, "utf8") });
    try {
      assert.equal(fromContent.server, kube.server);
      assert.ok((await fromContent.list(CM, { namespace: "kube-system" })).resourceVersion !== "");
    } finally {
      fromContent.close();
    }
    await assert.rejects(
      KubeClient.connect({ kubeconfigPath: cluster.kubeconfig, context: "no-such-context" }),
      /context "no-such-context" does not exist/,
    );
  });

  test("KUBECONFIG is a path list: missing entries are skipped and the first file defining a name wins", async (t) => {
    const { cluster, kube } = await setup(t);
    const { readFileSync, writeFileSync, mkdtempSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "khook-kubeconfig-"));
    // A second file that redefines the same cluster name with a dead server: it must lose.
    const shadow = readFileSync(cluster.kubeconfig, "utf8").replace(/server: .*/g, "server: https://127.0.0.1:1");
    writeFileSync(join(dir, "shadow"), shadow);
    const saved = process.env["KUBECONFIG"];
    process.env["KUBECONFIG"] = [join(dir, "missing"), cluster.kubeconfig, join(dir, "shadow")].join(":");
    try {
      const c = await KubeClient.connect({});
      try {
        assert.equal(c.server, kube.server);
        await c.list(CM, { namespace: "default" });
      } finally {
        c.close();
      }
    } finally {
      if (saved === undefined) delete process.env["KUBECONFIG"];
      else process.env["KUBECONFIG"] = saved;
    }
  });

  test("authenticates with a bearer token and through an exec credential plugin", async (t) => {
    const { cluster, ns, kube, kubectl } = await setup(t);
    await kubectl(["create", "serviceaccount", "reader", "-n", ns]);
    await kubectl(["create", "rolebinding", "reader", "-n", ns, "--clusterrole=view", `--serviceaccount=${ns}:reader`]);
    const token = await kubectl(["create", "token", "reader", "-n", ns]);
    // Ours to list: kube-root-ca.crt reaches a new namespace whenever the controller-manager gets to it.
    await kubectl(["create", "configmap", "khook-marker", "-n", ns]);
    const { readFileSync, writeFileSync, mkdtempSync, chmodSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const ca = /certificate-authority-data: (\S+)/.exec(readFileSync(cluster.kubeconfig, "utf8"))?.[1];
    assert.ok(ca, "the test kubeconfig embeds its CA");
    const kc = (user: string) => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${kube.server}", certificate-authority-data: ${ca}}}]
users: [{name: u, user: ${user}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: ${ns}}}]
current-context: x
`;
    const withToken = await KubeClient.connect({ kubeconfigContent: kc(`{token: "${token}"}`) });
    try {
      assert.equal(withToken.contextNamespace, ns);
      await withToken.list(CM, { namespace: ns });
      await assert.rejects(
        withToken.create(CM, cm("denied", ns)),
        (e: unknown) => e instanceof KubeApiError && e.status === 403 && /forbidden/i.test(e.message),
      );
    } finally {
      withToken.close();
    }
    const dir = mkdtempSync(join(tmpdir(), "khook-exec-"));
    const plugin = join(dir, "cred.sh");
    const calls = join(dir, "calls");
    writeFileSync(
      plugin,
      `#!/bin/sh\necho x >> "${calls}"\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    const viaExec = await KubeClient.connect({
      kubeconfigContent: kc(
        `{exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}}`,
      ),
    });
    try {
      const l = await viaExec.list(CM, { namespace: ns });
      assert.ok(l.items.some((i) => i.metadata?.name === "khook-marker"));
      assert.ok(readFileSync(calls, "utf8").length > 0, "the exec plugin was run");
    } finally {
      viaExec.close();
    }
    const badExec = await KubeClient.connect({
      kubeconfigContent: kc(
        `{exec: {apiVersion: client.authentication.k8s.io/v1, command: "/bin/false", interactiveMode: Never}}`,
      ),
    }).catch((e: Error) => e);
    if (badExec instanceof KubeClient) {
      await assert.rejects(badExec.list(CM, { namespace: ns }));
      badExec.close();
    } else {
      assert.match(badExec.message, /credentials|exec|false/i);
    }
  });

  test("a connection reset during the TLS handshake (an API server restarting behind a proxy) is not called a TLS verification failure", async () => {
    // Accepts, then drops every connection before the handshake: what a load balancer does while the API server behind it restarts.
    const srv = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    const port = (srv.address() as net.AddressInfo).port;
    const kc = `apiVersion: v1
kind: Config
clusters: [{name: flaky, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: flaky, context: {cluster: flaky, user: u}}]
current-context: flaky
`;
    const kube = await KubeClient.connect({ kubeconfigContent: kc });
    try {
      await assert.rejects(kube.list(CM, { namespace: "default" }), (e: unknown) => {
        assert.ok(e instanceof KubeConnectionError, String(e));
        assert.match(e.message, /ECONNRESET/);
        assert.doesNotMatch(e.message, /TLS verification failed/);
        assert.match(e.message, /check that the cluster is running and reachable/);
        return true;
      });
    } finally {
      kube.close();
      srv.close();
    }
  });

  test("an unreachable cluster gives a clear error naming the server and what to check", async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer();
      srv.listen(0, "127.0.0.1", () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const kc = `apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: gone, context: {cluster: gone, user: u}}]
current-context: gone
`;
    const kube = await KubeClient.connect({ kubeconfigContent: kc });
    try {
      await assert.rejects(kube.list(CM, { namespace: "default" }), (e: unknown) => {
        assert.ok(e instanceof KubeConnectionError, String(e));
        assert.match(e.message, new RegExp(`https://127\\.0\\.0\\.1:${port}`));
        assert.match(e.message, /ECONNREFUSED/);
        assert.match(e.message, /context "gone"/);
        assert.match(e.message, /check that the cluster is running/);
        return true;
      });
    } finally {
      kube.close();
    }
  });
});

describe("errors name the object the way kubectl does", () => {
  test("not found, invalid, already exists", async (t) => {
    const { ns, kube } = await setup(t);
    assert.equal(await kube.get(CM, "nope", ns), undefined, "get of a missing object is undefined, not an error");
    await assert.rejects(kube.patch(CM, "nope", ns, "merge", { data: { a: "2" } }), (e: unknown) => {
      assert.ok(e instanceof KubeApiError);
      assert.equal(e.status, 404);
      assert.equal(e.reason, "NotFound");
      assert.match(e.message, new RegExp(`^configmaps "nope" in namespace "${ns}": configmaps "nope" not found`));
      return true;
    });
    const DEPLOY = await kube.resolveResource("deployments.apps");
    await assert.rejects(
      kube.create(DEPLOY, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "bad", namespace: ns },
        spec: {},
      }),
      (e: unknown) => {
        assert.ok(e instanceof KubeApiError);
        assert.equal(e.status, 422);
        assert.equal(e.reason, "Invalid");
        assert.match(e.message, new RegExp(`^deployments\\.apps "bad" in namespace "${ns}": .*spec\\.selector`));
        return true;
      },
    );
    await kube.create(CM, cm("twice", ns));
    await assert.rejects(
      kube.create(CM, cm("twice", ns)),
      (e: unknown) => e instanceof KubeApiError && e.alreadyExists,
    );
  });
});

describe("discovery", () => {
  test("resolves kubectl-style resource strings against the real server", async (t) => {
    const { kube } = await setup(t);
    const cases: [string, string][] = [
      ["pods", "/v1/pods"],
      ["pod", "/v1/pods"],
      ["po", "/v1/pods"],
      ["deployment", "apps/v1/deployments"],
      ["deploy", "apps/v1/deployments"],
      ["deployments.apps", "apps/v1/deployments"],
      ["deployment.v1.apps", "apps/v1/deployments"],
      ["ds", "apps/v1/daemonsets"],
      ["storageclass", "storage.k8s.io/v1/storageclasses"],
      ["sc", "storage.k8s.io/v1/storageclasses"],
      ["events", "/v1/events"],
      ["crd", "apiextensions.k8s.io/v1/customresourcedefinitions"],
      ["ns", "/v1/namespaces"],
    ];
    for (const [arg, want] of cases) {
      const r = await kube.resolveResource(arg);
      assert.equal(`${r.group}/${r.version}/${r.resource}`, want, arg);
    }
    assert.equal((await kube.resolveResource("ns")).namespaced, false);
    const target = await kube.resolveTarget("daemonset/kube-proxy");
    assert.equal(target.type.kind, "DaemonSet");
    assert.equal(target.name, "kube-proxy");
    assert.equal(kube.discovery.mode, "aggregated");
    await assert.rejects(
      kube.resolveResource("gizmos"),
      (e: unknown) => e instanceof UnknownResourceError && /doesn't have a resource type "gizmos"/.test(e.message),
    );
    await assert.rejects(
      kube.resolveKind("apps/v1", "Deploymnt"),
      /no matches for kind "Deploymnt" in version "apps\/v1"/,
    );
  });

  test("legacy per-group discovery finds the same resources as aggregated discovery", async (t) => {
    const { cluster, kube } = await setup(t);
    const legacy = await KubeClient.connect({ kubeconfigPath: cluster.kubeconfig });
    try {
      legacy.discovery.preferAggregated = false;
      const l = await legacy.discovery.refresh();
      assert.equal(legacy.discovery.mode, "legacy");
      const a = await kube.discovery.catalog();
      const key = (r: { group: string; version: string; resource: string; kind: string; namespaced: boolean }) =>
        `${r.group}/${r.version}/${r.resource}/${r.kind}/${r.namespaced}`;
      // Only built-in groups: other tests create CRDs on the shared cluster meanwhile.
      const builtin = (r: { group: string }) => r.group === "" || !r.group.includes(".") || r.group.endsWith(".k8s.io");
      assert.deepEqual(new Set(l.filter(builtin).map(key)), new Set(a.filter(builtin).map(key)));
      for (const arg of ["deploy", "po", "events", "hpa", "sc"]) {
        assert.deepEqual(key(await legacy.resolveResource(arg)), key(await kube.resolveResource(arg)), arg);
      }
    } finally {
      legacy.close();
    }
  });

  test("a CRD created mid-run (after discovery was cached) resolves", async (t) => {
    const { kube, kubectl } = await setup(t);
    await kube.discovery.catalog(); // cached before the CRD exists
    const group = `kclient${process.pid}.khook.test`;
    t.after(async () => {
      await kubectl(["delete", "crd", `gadgets.${group}`, "--ignore-not-found", "--wait=false"]);
    });
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `gadgets.${group}` },
      spec: {
        group,
        scope: "Cluster",
        names: { plural: "gadgets", singular: "gadget", kind: "Gadget", shortNames: ["gdg"] },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    };
    // Created behind khook's back, by kubectl:
    const { writeFileSync, mkdtempSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const file = join(mkdtempSync(join(tmpdir(), "khook-crd-")), "crd.json");
    writeFileSync(file, JSON.stringify(crd));
    await kubectl(["create", "-f", file]);
    await kubectl(["wait", "--for=condition=Established", `crd/gadgets.${group}`, "--timeout=60s"]);
    const byKind = await kube.resolveKind(`${group}/v1`, "Gadget", { waitMs: 30_000 });
    assert.equal(byKind.resource, "gadgets");
    assert.equal(byKind.namespaced, false);
    assert.equal((await kube.resolveResource("gdg")).kind, "Gadget");
    assert.equal((await kube.resolveResource(`gadget.v1.${group}`)).kind, "Gadget");
  });
});

describe("objects", () => {
  test("list with label and field selectors, in one namespace and across all", async (t) => {
    const { ns, kube } = await setup(t);
    for (const [name, tier] of [
      ["l-a", "db"],
      ["l-b", "web"],
      ["l-c", "web"],
    ] as const) {
      await kube.create(CM, cm(name, ns, {}, { labels: { tier, suite: ns } }));
    }
    const web = await kube.list(CM, { namespace: ns, labelSelector: "tier=web" });
    assert.deepEqual(web.items.map((i) => i.metadata?.name).sort(), ["l-b", "l-c"]);
    assert.equal(web.items[0]!.kind, "ConfigMap", "list items carry their kind");
    const one = await kube.list(CM, { namespace: ns, fieldSelector: "metadata.name=l-a" });
    assert.deepEqual(
      one.items.map((i) => i.metadata?.name),
      ["l-a"],
    );
    const all = await kube.list(CM, { allNamespaces: true, labelSelector: `suite=${ns}` });
    assert.equal(all.items.length, 3);
    const paged = await kube.list(CM, { namespace: ns, labelSelector: `suite=${ns}`, limit: 1 });
    assert.equal(paged.items.length, 3, "continue tokens are followed");
  });

  test("patch: strategic (merge keys), merge, json, and dry run", async (t) => {
    const { ns, kube, kubectl } = await setup(t);
    const DEPLOY = await kube.resolveResource("deploy");
    await kube.create(DEPLOY, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "p", namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "p" } },
        template: {
          metadata: { labels: { app: "p" } },
          spec: {
            containers: [
              { name: "a", image: "nginx:1" },
              { name: "b", image: "busybox:1" },
            ],
          },
        },
      },
    });
    const s = await kube.patch(DEPLOY, "p", ns, "strategic", {
      spec: { template: { spec: { containers: [{ name: "b", image: "busybox:2" }] } } },
    });
    const containers = (s["spec"] as { template: { spec: { containers: { name: string; image: string }[] } } }).template
      .spec.containers;
    assert.deepEqual(
      containers.map((c) => `${c.name}=${c.image}`),
      ["a=nginx:1", "b=busybox:2"],
      "strategic merges containers by name",
    );
    const m = await kube.patch(DEPLOY, "p", ns, "merge", { metadata: { labels: { x: "1" } } });
    assert.equal(m.metadata?.labels?.["x"], "1");
    const j = await kube.patch(DEPLOY, "p", ns, "json", [
      { op: "remove", path: "/metadata/labels/x" },
      { op: "replace", path: "/spec/replicas", value: 3 },
    ]);
    assert.equal(j.metadata?.labels?.["x"], undefined);
    assert.equal((j["spec"] as { replicas: number }).replicas, 3);
    const dry = await kube.patch(DEPLOY, "p", ns, "merge", { spec: { replicas: 7 } }, { dryRun: true });
    assert.equal((dry["spec"] as { replicas: number }).replicas, 7);
    assert.equal(
      await kubectl(["get", "deploy", "p", "-n", ns, "-o", "jsonpath={.spec.replicas}"]),
      "3",
      "dry run persisted nothing",
    );
    const mf = (await kube.get(DEPLOY, "p", ns))?.metadata?.managedFields as { manager: string }[];
    assert.ok(
      mf.some((f) => f.manager === "khook"),
      "writes use fieldManager khook",
    );
  });

  test("server-side apply creates (201) and updates", async (t) => {
    const { ns, kube } = await setup(t);
    const r1 = await kube.serverSideApply(CM, cm("ssa", ns));
    assert.equal(r1.created, true);
    const r2 = await kube.serverSideApply(CM, cm("ssa", ns, { data: { a: "2" } }));
    assert.equal(r2.created, false);
    assert.deepEqual(r2.object["data"], { a: "2" });
  });

  test("delete, and wait (by watch) until an object held by a finalizer is really gone", async (t) => {
    const { ns, kube, kubectl } = await setup(t);
    await kube.create(CM, cm("held", ns, {}, { finalizers: ["khook.test/hold"] }));
    const d = await kube.delete(CM, "held", ns);
    assert.equal(d.status, "deleted");
    const progress: string[] = [];
    const gone = kube.waitForDeletion(CM, "held", ns, { timeoutMs: 120_000, onProgress: (m) => progress.push(m) });
    // The finalizer holds it: the wait must still be pending once it has seen the object.
    while (progress.length === 0) await new Promise((r) => setTimeout(r, 50));
    assert.match(progress[0]!, /still exists \(finalizers: khook\.test\/hold\)/);
    await kubectl([
      "patch",
      "configmap",
      "held",
      "-n",
      ns,
      "--type",
      "merge",
      "-p",
      '{"metadata":{"finalizers":null}}',
    ]);
    await gone;
    assert.equal(await kube.get(CM, "held", ns), undefined);
    assert.equal((await kube.delete(CM, "held", ns)).status, "not-found");
  });

  test("a wait that cannot be satisfied times out with what it last saw", async (t) => {
    const { ns, kube } = await setup(t);
    await kube.create(CM, cm("stays", ns));
    await assert.rejects(kube.waitForDeletion(CM, "stays", ns, { timeoutMs: 1500 }), (e: unknown) => {
      assert.ok(e instanceof WaitTimeoutError);
      assert.match(
        e.message,
        new RegExp(
          `timed out after 2s waiting for configmaps "stays" in namespace "${ns}" to be deleted: .*still exists`,
        ),
      );
      return true;
    });
  });

  test("a wait is cancelled by its AbortSignal", async (t) => {
    const { ns, kube } = await setup(t);
    await kube.create(CM, cm("cancel", ns));
    const ac = new AbortController();
    const p = kube.waitForDeletion(CM, "cancel", ns, {
      timeoutMs: 120_000,
      signal: ac.signal,
      onProgress: () => ac.abort(new Error("stop now")),
    });
    await assert.rejects(p, /stop now/);
  });

  test("watch streams events from a resourceVersion", async (t) => {
    const { ns, kube } = await setup(t);
    const start = await kube.list(CM, { namespace: ns });
    const ac = new AbortController();
    const seen: string[] = [];
    const consumer = (async () => {
      for await (const ev of kube.watch(CM, {
        namespace: ns,
        resourceVersion: start.resourceVersion,
        signal: ac.signal,
      })) {
        // A new namespace gets kube-root-ca.crt from the controller-manager at any moment: only w1 counts.
        if (ev.type === "BOOKMARK" || ev.object.metadata?.name !== "w1") continue;
        seen.push(`${ev.type} ${ev.object.metadata?.name}`);
        if (seen.length === 3) return;
      }
    })();
    await kube.create(CM, cm("w1", ns));
    await kube.patch(CM, "w1", ns, "merge", { data: { a: "2" } });
    await kube.delete(CM, "w1", ns);
    await consumer;
    ac.abort();
    assert.deepEqual(seen, ["ADDED w1", "MODIFIED w1", "DELETED w1"]);
  });
});

describe("logs", () => {
  test("a Job's pods are found through the Job's selector", async (t) => {
    const { ns, kube } = await setup(t);
    const JOB = await kube.resolveResource("jobs.batch");
    await kube.create(JOB, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "j", namespace: ns },
      spec: {
        backoffLimit: 0,
        template: {
          spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1.36", command: ["true"] }] },
        },
      },
    });
    const pods = await kube.waitFor(
      { resource: await kube.resolveResource("pods"), namespace: ns, labelSelector: "job-name=j" },
      (objs) => (objs.length > 0 ? { state: "done", value: objs } : { state: "pending", message: "no pod yet" }),
      { timeoutMs: 60_000 },
    );
    const found = await kube.jobPods(ns, "j");
    assert.deepEqual(
      found.map((p) => p.metadata?.name),
      pods.map((p) => p.metadata?.name),
    );
    // kwok runs no containers, so there is no log text; the call must still succeed.
    assert.equal(typeof (await kube.podLogs(ns, found[0]!.metadata!.name!, { tailLines: 10 })), "string");
  });
});
