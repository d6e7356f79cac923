/**
 * The lab the harness runs real operators in (issue 28): what its clusters promise before any
 * operator runs. Nothing the API server dials leaves loopback: Service-backed webhooks, aggregated
 * APIs and kubelet traffic go to the harness's egress proxy, which forwards to a process the
 * launcher runs or answers as the network would, `connection refused`.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { describe, test } from "node:test";
import {
  SERVICE_CIDR,
  egressRecords,
  labClusterDir,
  readClusterState,
  testChartPath,
  testCluster,
  withNamespace,
} from "../harness/index.js";
import { cliEnv, cm, khookSpec, outputMatches, specDir, startKhook, applyStep } from "./support/khook-cli.js";

/** The remote addresses of `pid`'s TCP connections (not listeners), from /proc. */
function tcpPeers(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      /* closed meanwhile */
    }
  }
  const peers: string[] = [];
  for (const table of ["tcp", "tcp6"]) {
    for (const line of fs.readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!) || f[3] === "0A") continue; // 0A: LISTEN
      peers.push(procAddress(f[2]!));
    }
  }
  return peers;
}

/** `0100007F:1F90` (or the 32-hex-digit IPv6 form) → `127.0.0.1:8080` / `[::1]:8080`. */
function procAddress(hexAddr: string): string {
  const [ip, port] = hexAddr.split(":") as [string, string];
  const p = Number.parseInt(port, 16);
  const bytes = (h: string) => (h.match(/../g) ?? []).map((b) => Number.parseInt(b, 16)).reverse();
  if (ip.length === 8) return `${bytes(ip).join(".")}:${p}`;
  const words = (ip.match(/.{8}/g) ?? []).flatMap((w) => bytes(w));
  if (words.slice(0, 10).every((b) => b === 0) && words[10] === 255 && words[11] === 255)
    return `${words.slice(12).join(".")}:${p}`;
  const groups = Array.from({ length: 8 }, (_, i) => ((words[2 * i]! << 8) | words[2 * i + 1]!).toString(16));
  return `[${groups.join(":")}]:${p}`;
}

const onLoopback = (addr: string) => /^127\.\d+\.\d+\.\d+:\d+$/.test(addr) || addr.startsWith("[0:0:0:0:0:0:0:1]:");

/** Whether `ip` is inside the IPv4 CIDR `cidr`. */
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split("/") as [string, string];
  const n = (a: string) => a.split(".").reduce((acc, o) => (acc << 8) + Number(o), 0) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (n(ip) & mask) >>> 0 === (n(base) & mask) >>> 0;
}

describe("the lab: nothing leaves loopback", () => {
  test("a chart's Service-backed webhook with no process behind it: the API server dials its pod only through the egress proxy, which answers connection refused", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "lab-egress");
    const release = "svc-hook";
    const webhook = `${release}.${ns}.khook.test`;
    t.after(async () => {
      await cluster.kubectl(["delete", "validatingwebhookconfiguration", `${release}-${ns}`, "--ignore-not-found"]);
    });
    const steps = `  - name: operator
    helm:
      release: ${release}
      chart: ${testChartPath("khook-test-service-webhook")}
      namespace: ${ns}
${applyStep("guarded", cm("guarded", ns), "    needs: [operator]\n    timeout: 5m\n")}`;
    const { file } = specDir(khookSpec("lab-egress", steps));
    const seen = egressRecords(cluster.kubeconfig).length;
    const proc = startKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(cluster.kubeconfig) });
    t.after(() => proc.child.kill("SIGKILL"));
    await outputMatches(
      proc,
      new RegExp(`waiting for admission webhook ${webhook.replace(/\./g, "\\.")} \\(connection refused\\)`),
    );

    const get = async (args: string[]) => {
      const r = await cluster.kubectl(["-n", ns, "get", ...args]);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    const clusterIP = await get(["service", release, "-o", "jsonpath={.spec.clusterIP}"]);
    assert.ok(inCidr(clusterIP, SERVICE_CIDR), `the Service's ClusterIP ${clusterIP} is in ${SERVICE_CIDR}`);
    const podIP = await get(["pods", "-l", `app=${release}`, "-o", "jsonpath={.items[0].status.podIP}"]);
    assert.match(podIP, /^\d+\.\d+\.\d+\.\d+$/);

    const mine = egressRecords(cluster.kubeconfig)
      .slice(seen)
      .filter((r) => r.target.startsWith(`${podIP}:`) || r.target.startsWith(`${clusterIP}:`));
    assert.ok(mine.length >= 1, "the API server's calls of the webhook reached the egress proxy");
    assert.deepEqual([...new Set(mine.map((r) => `${r.target} ${r.outcome}`))], [`${podIP}:10250 refused`]);

    const apiserver = readClusterState(labClusterDir(cluster.kubeconfig))?.pids["kube-apiserver"];
    assert.ok(apiserver !== undefined, "the cluster records its API server's pid");
    const away = tcpPeers(apiserver).filter((a) => !onLoopback(a));
    assert.deepEqual(away, [], "the API server holds no connection outside 127.0.0.0/8");

    proc.child.kill("SIGINT");
    const r = await proc.done;
    assert.notEqual(r.code, 0, proc.output());
  });
});
