/**
 * A server that accepts connections and never answers, met by the client (provider/kube/client.ts)
 * and by the wait for the cluster (provider/kube/ready.ts): real loopback TCP servers that accept
 * and then say nothing, never a fake transport. What is checked is behaviour, never a duration:
 * a bounded request fails as "not up" naming the server, its context and the way to wait; a wait
 * fails with the setting it was given; a server that answered before is a stall the engine
 * retries, not one that is not up.
 */
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { after, describe, test } from "node:test";
import { KubeClient } from "../../provider/kube/client.js";
import { KubeConnectionError } from "../../provider/kube/api-errors.js";
import { Discovery } from "../../provider/kube/discovery.js";
import { ClusterNotReadyError, waitForCluster } from "../../provider/kube/ready.js";
import { transientCause } from "../../provider/kube/transient.js";
import type { Transport } from "../../provider/kube/transport.js";

const servers: net.Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A TCP server on loopback that accepts every connection and never writes a byte. */
async function silentServer(): Promise<number> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => undefined);
  });
  server.on("close", () => sockets.forEach((s) => s.destroy()));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

/** An HTTP server that answers its first request and then holds every later one without answering. */
async function answersOnce(): Promise<number> {
  let answered = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((_req, res) => {
    if (answered++ === 0) res.end('{"gitVersion":"v1.35.4"}');
    else held.push(res);
  });
  server.on("close", () => held.forEach((r) => r.destroy()));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

function kubeconfig(server: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    `clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]`,
    "users: [{name: u, user: {token: t}}]",
    "contexts: [{name: edge-1, context: {cluster: c, user: u}}]",
    "current-context: edge-1",
  ].join("\n");
}

async function client(server: string): Promise<KubeClient> {
  return KubeClient.connect({ kubeconfigContent: kubeconfig(server) });
}

describe("a server that accepts connections and never answers", () => {
  test("a request with a deadline fails at it as 'not up', naming the server, its context and the way to wait", async () => {
    const server = `https://127.0.0.1:${await silentServer()}`;
    const kube = await client(server);
    kube.notUpAdvice = "if the cluster is still starting, run khook apply with --wait-for-cluster 10m";
    try {
      const e = await kube.request({ path: "/api/v1/namespaces/default/secrets/x", deadline: Date.now() + 300 }).then(
        () => assert.fail("answered"),
        (err: unknown) => err,
      );
      assert.ok(e instanceof KubeConnectionError, String(e));
      assert.equal(e.notUp, true);
      assert.match(e.message, new RegExp(`the Kubernetes API server at ${server.replace(/[.]/g, "\\.")}`));
      assert.match(e.message, /context "edge-1" from the given kubeconfig content/);
      assert.match(e.message, /accepts connections there but never answers/);
      assert.match(e.message, /--wait-for-cluster 10m/);
      assert.equal(transientCause(e), undefined, "not a stall to retry within a step: like a refused connection");
      assert.equal(kube.answered, false);
      assert.equal(kube.lastNotUp, e);
    } finally {
      kube.close();
    }
  });

  test("a caller's own bound (AbortSignal.timeout, as the state record's reads have) names the server, not 'The operation was aborted due to timeout'", async () => {
    const server = `http://127.0.0.1:${await silentServer()}`;
    const kube = await client(server);
    try {
      const e = await kube.request({ path: "/version", signal: AbortSignal.timeout(200) }).then(
        () => assert.fail("answered"),
        (err: unknown) => err,
      );
      assert.ok(e instanceof KubeConnectionError, String(e));
      assert.equal(e.notUp, true);
      assert.doesNotMatch(e.message, /operation was aborted/);
      assert.match(e.message, /context "edge-1"/);
    } finally {
      kube.close();
    }
  });

  test("--wait-for-cluster: the wait ends at its deadline with the setting, the server and its context", async () => {
    const server = `https://127.0.0.1:${await silentServer()}`;
    const kube = await client(server);
    const lines: string[] = [];
    try {
      await assert.rejects(
        waitForCluster(kube, {
          timeoutMs: 700,
          say: (l) => lines.push(l),
          delayMs: () => 100,
          setting: "--wait-for-cluster 0.7s",
          where: kube.describeServer(),
        }),
        (e: unknown) => {
          assert.ok(e instanceof ClusterNotReadyError, String(e));
          assert.match(e.message, /was not ready within --wait-for-cluster 0\.7s \(no answer: /);
          assert.match(e.message, /context "edge-1"/);
          return true;
        },
      );
    } finally {
      kube.close();
    }
  });

  test("every probe is bounded by the time left: a probe never asks for more than the wait has", async () => {
    const deadlines: (number | undefined)[] = [];
    const start = Date.now();
    await assert.rejects(
      waitForCluster(
        {
          server: "https://10.0.0.1:6443",
          request: async (o) => {
            deadlines.push(o.deadline);
            throw new KubeConnectionError(
              "cannot reach",
              "https://10.0.0.1:6443",
              Object.assign(new Error("x"), { code: "ECONNREFUSED" }),
              true,
            );
          },
          requestJson: async () => undefined as never,
          stream: async () => {
            throw new Error("no streams");
          },
        },
        { timeoutMs: 400, say: () => undefined, delayMs: () => 50, setting: "--wait-for-cluster 400ms" },
      ),
      ClusterNotReadyError,
    );
    assert.ok(deadlines.length >= 1);
    assert.ok(
      deadlines.every((d) => d !== undefined && d <= start + 400 + 50),
      `each probe carries the wait's deadline: ${deadlines.map((d) => (d ?? 0) - start).join(", ")}`,
    );
  });

  test("a server that answered before and then stalls is a stall the engine retries (transient), not one that is not up", async () => {
    const server = `http://127.0.0.1:${await answersOnce()}`;
    const kube = await client(server);
    try {
      await kube.request({ path: "/version" });
      assert.equal(kube.answered, true);
      const e = await kube.request({ path: "/version", deadline: Date.now() + 300 }).then(
        () => assert.fail("answered"),
        (err: unknown) => err,
      );
      assert.ok(e instanceof KubeConnectionError, String(e));
      assert.equal(e.notUp, false);
      assert.deepEqual(transientCause(e), { subject: "the API server", detail: "no response" });
    } finally {
      kube.close();
    }
  });
});

describe("discovery keeps each caller's deadline", () => {
  /** A server whose discovery answers only when `release` is called; the requests' signals are kept. */
  function heldDiscovery(): { transport: Transport; release: () => void; signals: (AbortSignal | undefined)[] } {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const signals: (AbortSignal | undefined)[] = [];
    const doc = (path: string) =>
      path === "/api"
        ? {
            kind: "APIGroupDiscoveryList",
            items: [
              {
                metadata: { name: "" },
                versions: [
                  {
                    version: "v1",
                    resources: [
                      {
                        resource: "configmaps",
                        responseKind: { group: "", version: "v1", kind: "ConfigMap" },
                        scope: "Namespaced",
                      },
                    ],
                  },
                ],
              },
            ],
          }
        : { kind: "APIGroupDiscoveryList", items: [] };
    const transport: Transport = {
      server: "https://127.0.0.1:6443",
      request: async () => {
        throw new Error("not used");
      },
      requestJson: async <T>(o: { path: string; signal?: AbortSignal }) => {
        signals.push(o.signal);
        await new Promise<void>((resolve, reject) => {
          void gate.then(resolve);
          o.signal?.addEventListener("abort", () => reject(o.signal!.reason as Error), { once: true });
        });
        return doc(o.path) as T;
      },
      stream: async () => {
        throw new Error("no streams");
      },
    };
    return { transport, release, signals };
  }

  test("a step whose deadline comes first stops waiting for a shared fetch, and does not cancel it for the others", async () => {
    const server = heldDiscovery();
    const d = new Discovery(server.transport);
    const short = new AbortController();
    const long = new AbortController();
    const first = d.resolveKind("v1", "ConfigMap", { signal: short.signal });
    const second = d.resolveKind("v1", "ConfigMap", { signal: long.signal });
    short.abort(new Error("the short step's deadline"));
    await assert.rejects(first, /the short step's deadline/);
    assert.ok(
      server.signals.every((s) => s?.aborted !== true),
      "the shared fetch goes on",
    );
    server.release();
    assert.equal((await second).resource, "configmaps");
  });

  test("when every caller has given up, the fetch is cancelled", async () => {
    const server = heldDiscovery();
    const d = new Discovery(server.transport);
    const only = new AbortController();
    const waiting = d.resolveKind("v1", "ConfigMap", { signal: only.signal });
    only.abort(new Error("gone"));
    await assert.rejects(waiting, /gone/);
    assert.ok(server.signals.length > 0 && server.signals.every((s) => s?.aborted === true));
  });
});
