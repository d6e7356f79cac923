/**
 * The lab daemon of a harness cluster: one process, started before kube-apiserver and stopped with
 * the cluster, that runs the API server's egress proxy (egress.ts). It records every CONNECT in
 * `<cluster>/logs/egress.jsonl`, one JSON object a line, for tests that prove what the API server
 * dialed.
 *
 *   node dist/test/harness/lab.js <cluster dir> <egress socket path>
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { EgressRoutes, startEgressProxy, type EgressRecord } from "./egress";

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
  const [dir, socketPath] = argv;
  if (!dir || !socketPath) throw new Error("usage: lab.js <cluster dir> <egress socket path>");
  const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  const recordFd = fs.openSync(egressRecordFile(dir), "a");
  const routes = new EgressRoutes();
  const proxy = await startEgressProxy({
    socketPath,
    routes,
    record: (r) => fs.writeSync(recordFd, `${JSON.stringify(r)}\n`),
  });
  log(`egress proxy listening on ${socketPath}`);
  const stop = (sig: string) => {
    log(`${sig}: stopping`);
    void proxy.close().finally(() => process.exit(0));
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
