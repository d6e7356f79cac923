/**
 * The fake Nodes' kubelet endpoints, as a process on the host sees them: each Node's status says
 * InternalIP 127.0.0.1 and a port of its own (cluster.ts), and here, in the lab daemon, an HTTPS
 * server on that port (the cluster CA signed its certificate for 127.0.0.1) answers what
 * metrics-server scrapes, `/metrics/resource`, with kwok's resource metrics for that Node
 * (kwok/metrics.yaml, served by kwok at `/metrics/nodes/<node>/metrics/resource`), and what the
 * API server asks a kubelet for a pod's log, `/containerLogs/...`, which kwok answers as its
 * kubelet stand-in does; the egress proxy routes the API server's dial of a Node (its name or
 * address and this port) here. Exec, attach and port-forward are not served.
 */
import fs from "node:fs";
import http from "node:http";
import https from "node:https";

export interface KubeletFront {
  close(): Promise<void>;
}

export function startKubeletFronts(opts: {
  ports: Record<string, number>;
  kwokPort: number;
  certFile: string;
  keyFile: string;
  log: (line: string) => void;
}): Promise<KubeletFront> {
  const cert = fs.readFileSync(opts.certFile);
  const key = fs.readFileSync(opts.keyFile);
  const servers = Object.entries(opts.ports).map(([node, port]) => {
    const server = https.createServer({ cert, key }, (req, res) => {
      const url = new URL(req.url ?? "/", "https://kubelet");
      if (req.method === "GET" && url.pathname === "/healthz") {
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
        return;
      }
      const kwokPath = req.method === "GET" ? kwokPathFor(node, url) : undefined;
      if (kwokPath === undefined) {
        res
          .writeHead(404, { "content-type": "text/plain" })
          .end(`the lab's kubelet for ${node} serves only /metrics/resource and /containerLogs`);
        return;
      }
      const up = http.get(
        {
          host: "127.0.0.1",
          port: opts.kwokPort,
          path: kwokPath,
          timeout: 10_000,
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, { "content-type": r.headers["content-type"] ?? "text/plain" });
          r.pipe(res);
        },
      );
      up.on("timeout", () => up.destroy(new Error("kwok did not answer")));
      up.on("error", (e) => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end(`kwok's answer for ${node} (${kwokPath}): ${e.message}`);
      });
    });
    return { node, port, server };
  });
  return Promise.all(
    servers.map(
      ({ node, port, server }) =>
        new Promise<void>((resolve, reject) => {
          server.once("error", reject);
          server.listen(port, "127.0.0.1", () => {
            opts.log(`kubelet endpoint of ${node} on 127.0.0.1:${port}`);
            resolve();
          });
        }),
    ),
  ).then(() => ({
    close: () =>
      Promise.all(servers.map(({ server }) => new Promise<void>((r) => server.close(() => r())))).then(() => undefined),
  }));
}

/** Where kwok answers what a kubelet is asked at `url`, for `node`; undefined for what the lab does not serve. */
function kwokPathFor(node: string, url: URL): string | undefined {
  if (url.pathname === "/metrics/resource") return `/metrics/nodes/${encodeURIComponent(node)}/metrics/resource`;
  if (url.pathname.startsWith("/containerLogs/")) return `${url.pathname}${url.search}`;
  return undefined;
}
