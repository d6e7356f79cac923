/**
 * The API server's egress proxy for every cluster the harness starts. kube-apiserver sends its
 * `cluster` egress (Service-backed admission and conversion webhooks, aggregated APIs, kubelet
 * traffic for logs and exec) here as HTTP CONNECT over a unix socket, so no ClusterIP, pod IP or
 * node IP is ever dialed on the network. A target a launched process serves (the launcher
 * registers `podIP:containerPort` → its loopback port) is forwarded; any other target is answered
 * as the network would answer a pod with nothing listening: `503 dial tcp <target>: connect:
 * connection refused`, which the API server reports like the field does
 * (`failed calling webhook "...": ... connection refused`). Every request is recorded.
 */
import fs from "node:fs";
import net from "node:net";

/** One CONNECT the proxy answered. */
export interface EgressRecord {
  /** ISO time of the request. */
  at: string;
  /** `host:port` the API server asked for (a pod IP, ClusterIP or node address). */
  target: string;
  outcome: "forwarded" | "refused" | "bad-request";
  /** The loopback address it was forwarded to. */
  to?: string;
}

/** Where the targets a launched process serves go: `host:port` → `127.0.0.1:port`. */
export class EgressRoutes {
  private readonly routes = new Map<string, number>();

  /** Sends `target` (`host:port`) to the loopback port `localPort`. */
  add(target: string, localPort: number): void {
    this.routes.set(target, localPort);
  }

  remove(target: string): void {
    this.routes.delete(target);
  }

  /** The loopback port for `target`, if a process serves it. */
  lookup(target: string): number | undefined {
    return this.routes.get(target);
  }

  entries(): [string, number][] {
    return [...this.routes.entries()];
  }
}

/** The status line the proxy answers a target with no process behind it, as Go's dialer words it. */
export function refusedStatus(target: string): string {
  return `503 dial tcp ${target}: connect: connection refused`;
}

const MAX_HEADER_BYTES = 16 * 1024;

/** Parses `CONNECT host:port HTTP/1.1` from a request head; undefined when it is not a CONNECT. */
export function connectTarget(head: string): string | undefined {
  const m = /^CONNECT (\S+) HTTP\/1\.[01]\r?$/.exec(head.split("\n", 1)[0] ?? "");
  if (!m) return undefined;
  const target = m[1]!;
  return /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):\d{1,5}$/.test(target) ? target : undefined;
}

export interface EgressProxy {
  socketPath: string;
  close(): Promise<void>;
}

/**
 * Listens on `socketPath` (a unix socket; an old one is removed) and answers CONNECTs:
 * forwarded to `127.0.0.1:<port>` when `routes` has the target, refused otherwise.
 */
export function startEgressProxy(opts: {
  socketPath: string;
  routes: EgressRoutes;
  record: (r: EgressRecord) => void;
}): Promise<EgressProxy> {
  fs.rmSync(opts.socketPath, { force: true });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => undefined);
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > MAX_HEADER_BYTES) client.end("HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n");
        return;
      }
      client.off("data", onData);
      client.pause();
      const head = buf.subarray(0, end).toString("latin1");
      const rest = buf.subarray(end + 4);
      answer(client, head, rest);
    };
    client.on("data", onData);
  });

  const answer = (client: net.Socket, head: string, rest: Buffer) => {
    const at = new Date().toISOString();
    const target = connectTarget(head);
    if (target === undefined) {
      opts.record({ at, target: head.split("\r\n", 1)[0] ?? "", outcome: "bad-request" });
      client.end("HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\n\r\n");
      return;
    }
    const refuse = () => {
      opts.record({ at, target, outcome: "refused" });
      client.end(`HTTP/1.1 ${refusedStatus(target)}\r\nConnection: close\r\n\r\n`);
    };
    const port = opts.routes.lookup(target);
    if (port === undefined) return refuse();
    const upstream = net.connect({ host: "127.0.0.1", port });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    let connected = false;
    upstream.once("error", () => {
      // The launched process is gone or not listening yet: the network's answer, as for any pod.
      if (!connected) refuse();
      else client.destroy();
    });
    upstream.once("connect", () => {
      connected = true;
      opts.record({ at, target, outcome: "forwarded", to: `127.0.0.1:${port}` });
      client.write("HTTP/1.1 200 Connection established\r\n\r\n");
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  };

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.socketPath, () => {
      fs.chmodSync(opts.socketPath, 0o600);
      resolve({
        socketPath: opts.socketPath,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}

/**
 * The kube-apiserver `--egress-selector-config-file` content: the `cluster` egress (webhooks,
 * aggregated APIs, kubelets) over HTTP CONNECT on the proxy's unix socket; `controlplane` and
 * `etcd` stay direct.
 */
export function egressSelectorConfig(socketPath: string): string {
  return [
    "apiVersion: apiserver.k8s.io/v1beta1",
    "kind: EgressSelectorConfiguration",
    "egressSelections:",
    "- name: cluster",
    "  connection:",
    "    proxyProtocol: HTTPConnect",
    "    transport:",
    "      uds:",
    `        udsName: ${JSON.stringify(socketPath)}`,
    "",
  ].join("\n");
}
