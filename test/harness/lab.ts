/**
 * The lab daemon of a harness cluster: one process, started before kube-apiserver and stopped with
 * the cluster, that runs the API server's egress proxy (egress.ts) and the launcher (launcher.ts),
 * which share the routes from pod addresses to the processes it runs, and the fake Nodes' kubelet
 * endpoints (kubelet-front.ts). The proxy records every
 * CONNECT in `<cluster>/logs/egress.jsonl`, one JSON object a line, for tests that prove what the
 * API server dialed. Launched processes are in the daemon's process group: stopping the cluster
 * (which signals the group) stops them too.
 *
 *   node dist/test/harness/lab.js <cluster dir> <egress socket path> <API server URL>
 */
import fs from "node:fs";
import path from "node:path";
import { EgressRoutes, startEgressProxy, type EgressRecord } from "./egress";
import { readClusterState } from "./cluster";
import { startKubeletFronts } from "./kubelet-front";
import { Launcher } from "./launcher";
import { sleep } from "./util";

/** Where the lab daemon records the API server's egress. */
export function egressRecordFile(clusterDir: string): string {
  return path.join(clusterDir, "logs", "egress.jsonl");
}

/** Every CONNECT the cluster's egress proxy answered so far. */
export function readEgressRecords(clusterDir: string): EgressRecord[] {
  let text: string;
  try {
    text = fs.readFileSync(egressRecordFile(clusterDir), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as EgressRecord);
}

async function main(argv: string[]): Promise<void> {
  const [dir, socketPath, server] = argv;
  if (!dir || !socketPath || !server)
    throw new Error("usage: lab.js <cluster dir> <egress socket path> <API server URL>");
  const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  const recordFd = fs.openSync(egressRecordFile(dir), "a");
  const routes = new EgressRoutes();
  const proxy = await startEgressProxy({
    socketPath,
    routes,
    record: (r) => fs.writeSync(recordFd, `${JSON.stringify(r)}\n`),
  });
  log(`egress proxy listening on ${socketPath}`);
  // The cluster writes its certificates while the proxy starts, and the kubeconfig once they are
  // all there; the launcher needs the CA and the admin's.
  while (!fs.existsSync(path.join(dir, "kubeconfig"))) await sleep(50);
  const state = readClusterState(dir);
  const fronts =
    state?.kubeletPorts && state.kwokPort
      ? await startKubeletFronts({
          ports: state.kubeletPorts,
          kwokPort: state.kwokPort,
          certFile: path.join(dir, "pki", "kubelet.crt"),
          keyFile: path.join(dir, "pki", "kubelet.key"),
          log,
        })
      : undefined;
  // The API server dials a Node's kubelet (a pod's log) by its name, or its address, and port.
  for (const [node, port] of Object.entries(fronts ? (state?.kubeletPorts ?? {}) : {})) {
    routes.add(`${node}:${port}`, port);
    routes.add(`127.0.0.1:${port}`, port);
  }
  const launcher = new Launcher({ dir, server, routes, log });
  void launcher.run();
  log(`launcher watching pods on ${server}`);
  const stop = (sig: string) => {
    log(`${sig}: stopping`);
    void Promise.all([launcher.stop(), proxy.close(), fronts?.close()]).finally(() => process.exit(0));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`khook lab: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
