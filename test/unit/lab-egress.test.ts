// The harness's egress proxy (test/harness/egress.ts) over a real unix socket: what kube-apiserver's
// HTTPConnect egress dialer sends it, and what it answers.
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import {
  EgressRoutes,
  connectTarget,
  egressSelectorConfig,
  refusedStatus,
  startEgressProxy,
  type EgressRecord,
} from "../harness/egress.js";

/** What the API server does: CONNECT over the socket, then read the status line (and talk, on 200). */
function connectVia(socketPath: string, target: string, then?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(socketPath);
    let got = "";
    c.on("data", (d) => {
      got += d.toString("latin1");
      if (then !== undefined && got.includes("\r\n\r\n") && got.startsWith("HTTP/1.1 200")) {
        const payload = then;
        then = undefined;
        c.write(payload);
      }
      if (got.endsWith("\n<end>")) c.end();
    });
    c.on("end", () => resolve(got));
    c.on("error", reject);
    c.write(`CONNECT ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  });
}

async function withProxy(fn: (socket: string, routes: EgressRoutes, records: EgressRecord[]) => Promise<void>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-egress-"));
  const socketPath = path.join(dir, "egress.sock");
  const routes = new EgressRoutes();
  const records: EgressRecord[] = [];
  const proxy = await startEgressProxy({ socketPath, routes, record: (r) => records.push(r) });
  try {
    await fn(socketPath, routes, records);
  } finally {
    await proxy.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("egress: a target no process serves is answered 503 connection refused, worded as Go's dialer words it", async () => {
  await withProxy(async (socket, _routes, records) => {
    const answer = await connectVia(socket, "10.244.0.7:10250");
    assert.equal(
      answer,
      `HTTP/1.1 503 dial tcp 10.244.0.7:10250: connect: connection refused\r\nConnection: close\r\n\r\n`,
    );
    assert.deepEqual(
      records.map((r) => [r.target, r.outcome]),
      [["10.244.0.7:10250", "refused"]],
    );
  });
});

test("egress: a registered target is tunnelled to its loopback port, byte for byte both ways", async () => {
  const echo = net.createServer((s) => s.on("data", (d) => s.end(`echo:${d.toString()}\n<end>`)));
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
  const port = (echo.address() as net.AddressInfo).port;
  try {
    await withProxy(async (socket, routes, records) => {
      routes.add("10.244.0.8:443", port);
      const answer = await connectVia(socket, "10.244.0.8:443", "hello");
      assert.equal(answer, "HTTP/1.1 200 Connection established\r\n\r\necho:hello\n<end>");
      assert.deepEqual(
        records.map((r) => [r.target, r.outcome, r.to]),
        [["10.244.0.8:443", "forwarded", `127.0.0.1:${port}`]],
      );
    });
  } finally {
    echo.close();
  }
});

test("egress: a registered target whose process is not listening (yet, or any more) is refused, not hung", async () => {
  const closed = net.createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  await withProxy(async (socket, routes, records) => {
    routes.add("10.244.0.9:9443", port);
    assert.match(
      await connectVia(socket, "10.244.0.9:9443"),
      /^HTTP\/1\.1 503 dial tcp 10\.244\.0\.9:9443: connect: connection refused\r\n/,
    );
    assert.equal(records[0]?.outcome, "refused");
    routes.remove("10.244.0.9:9443");
    assert.equal(routes.lookup("10.244.0.9:9443"), undefined);
  });
});

test("egress: only CONNECT host:port is understood", () => {
  assert.equal(connectTarget("CONNECT 10.0.0.1:443 HTTP/1.1\r"), "10.0.0.1:443");
  assert.equal(connectTarget("CONNECT [fd00::1]:443 HTTP/1.1"), "[fd00::1]:443");
  assert.equal(connectTarget("GET / HTTP/1.1"), undefined);
  assert.equal(connectTarget("CONNECT 10.0.0.1 HTTP/1.1"), undefined);
  assert.equal(refusedStatus("a:1"), "503 dial tcp a:1: connect: connection refused");
});

test("egress: the API server's selector configuration sends only the cluster egress to the socket", () => {
  assert.equal(
    egressSelectorConfig("/run/x/egress.sock"),
    [
      "apiVersion: apiserver.k8s.io/v1beta1",
      "kind: EgressSelectorConfiguration",
      "egressSelections:",
      "- name: cluster",
      "  connection:",
      "    proxyProtocol: HTTPConnect",
      "    transport:",
      "      uds:",
      '        udsName: "/run/x/egress.sock"',
      "",
    ].join("\n"),
  );
});
