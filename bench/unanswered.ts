/**
 * `./dev bench unanswered`: how long `khook apply -o json` takes against a cluster that does not
 * answer, beside its bound. The cluster is a loopback server that accepts TCP connections and never
 * answers (as a load balancer without healthy backends does), or a port where nothing listens.
 *
 * Targets: with `--wait-for-cluster D`, the run ends at D (plus khook's start-up); without it, a
 * silent server fails within the TLS handshake bound (10 s, kubectl's) and a refused connection at
 * once. Each row is one whole CLI run (start-up included). Figures, never assertions.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const BIN = path.join(__dirname, "..", "..", "bin", "khook");

function kubeconfig(dir: string, server: string): string {
  const file = path.join(dir, `kubeconfig-${server.replace(/\W+/g, "-")}`);
  fs.writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: bench, context: {cluster: c, user: u}}]\ncurrent-context: bench\n`,
  );
  return file;
}

const SPEC = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: unanswered
state: {}
steps:
  - name: cm
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: cm, namespace: default}
`;

export async function benchUnanswered(): Promise<void> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const silent = `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-unanswered-"));
  const spec = path.join(dir, "spec.yaml");
  fs.writeFileSync(spec, SPEC);
  const rows: [string, string, string, string][] = [];
  const cases: [string, string, string[], string][] = [
    ["silent server, --wait-for-cluster 1s", silent, ["--wait-for-cluster", "1s"], "1s"],
    ["silent server, --wait-for-cluster 3s", silent, ["--wait-for-cluster", "3s"], "3s"],
    ["silent server, --wait-for-cluster 12s", silent, ["--wait-for-cluster", "12s"], "12s"],
    ["silent server, no flag", silent, [], "10s (TLS handshake bound)"],
    ["nothing listening, no flag", "https://127.0.0.1:9", [], "at once"],
  ];
  // Started with this process's node, as a user's shell starts bin/khook: the same start-up for every row.
  spawnSync(process.execPath, [BIN, "version"]);
  for (const [name, url, flags, target] of cases) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(
      process.execPath,
      [BIN, "apply", "-f", spec, "--kubeconfig", kubeconfig(dir, url), ...flags, "-o", "json"],
      { encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME, CI: "true" } },
    );
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    let outcome = "no summary";
    try {
      outcome = (JSON.parse(r.stdout) as { outcome?: string }).outcome ?? "a summary without outcome";
    } catch {
      // a run that printed no summary: the row says so
    }
    rows.push([name, `${s.toFixed(2)}s`, target, outcome]);
  }
  for (const sock of sockets) sock.destroy();
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log("unanswered: khook apply -o json against a cluster that does not answer (whole CLI run)");
  const widths = [0, 1, 2, 3].map((i) =>
    Math.max(...rows.map((r) => r[i]!.length), ["CASE", "WALL", "TARGET", "OUTCOME"][i]!.length),
  );
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  console.log(line(["CASE", "WALL", "TARGET", "OUTCOME"]));
  for (const r of rows) console.log(line(r));
}
