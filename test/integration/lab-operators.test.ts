/**
 * Real operators in the lab (issue 28): the upstream binaries the launcher runs behind kwok's pods,
 * installed from their real charts. The tests of this file run one after another: cert-manager's
 * leader-election leases, its webhooks and CRDs, and metrics-server's APIService are cluster-wide,
 * so one cluster holds one of each at a time.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import {
  egressRecords,
  labChartFile,
  labClusterDir,
  lateToolBuilt,
  testCluster,
  toolPath,
  withNamespace,
} from "../harness/index.js";
import { isAlive, waitFor } from "../harness/util.js";
import { cliEnv, khookSpec, runKhook, specDir } from "./support/khook-cli.js";

/** The claims of a JSON web token (not verified: the API server that issued it is the test's own). */
function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
}

describe("the lab: real operators behind kwok's pods", () => {
  test("metrics-server from its real chart runs as a host process with its ServiceAccount's pod-bound token, is Ready when its own /readyz answers, serves the metrics API through the egress proxy, and stops when its pod goes", async (t) => {
    lateToolBuilt("lab-charts");
    lateToolBuilt("metrics-server");
    const cluster = await testCluster();
    const ns = await withNamespace(t, "lab-metrics");
    const kubectl = async (args: string[]) => {
      const r = await cluster.kubectl(args);
      assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
      return r.stdout.trim();
    };
    const spec = khookSpec(
      "lab-metrics",
      `  - name: metrics-server
    helm:
      chart: ${labChartFile("metrics-server")}
      namespace: ${ns}
      wait: true
`,
    );
    const { file } = specDir(spec);
    const env = cliEnv(cluster.kubeconfig);
    t.after(async () => {
      await runKhook(["destroy", "-f", file], { env });
    });
    // Every state the pod goes through, from a watch: the launcher's, not kwok's, says when it is Ready.
    const watch = spawn(
      toolPath("kubectl"),
      [
        "--kubeconfig",
        cluster.kubeconfig,
        "-n",
        ns,
        "get",
        "pods",
        "--watch",
        "-o",
        `jsonpath={.status.phase} started={.status.containerStatuses[0].started} ready={.status.conditions[?(@.type=="Ready")].status}{"\\n"}`,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    let states = "";
    watch.stdout.setEncoding("utf8").on("data", (d: string) => (states += d));
    t.after(() => watch.kill());
    const applied = await runKhook(["apply", "-f", file], { env });
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    watch.kill();
    const seen = states.split("\n").filter((l) => l.trim() !== "");
    assert.ok(seen.includes("Running started=true ready=False"), `running, not yet ready:\n${states}`);
    assert.equal(seen[seen.length - 1], "Running started=true ready=True", states);

    const pod = JSON.parse(
      await kubectl(["-n", ns, "get", "pods", "-l", "app.kubernetes.io/name=metrics-server", "-o", "json"]),
    ) as {
      items: {
        metadata: { name: string; uid: string };
        status: {
          podIP: string;
          conditions: { type: string; status: string }[];
          containerStatuses: { containerID?: string }[];
        };
      }[];
    };
    assert.equal(pod.items.length, 1);
    const p = pod.items[0]!;
    assert.equal(p.status.conditions.find((c) => c.type === "Ready")?.status, "True");
    const pid = Number(/^khook-lab:\/\/(\d+)$/.exec(p.status.containerStatuses[0]?.containerID ?? "")?.[1]);
    assert.ok(
      pid > 0 && isAlive(pid),
      `the pod names the process the lab runs: ${JSON.stringify(p.status.containerStatuses)}`,
    );
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    assert.match(cmdline[0]!, /metrics-server-0\.9\.0\/bin\/metrics-server$/);
    assert.ok(cmdline.includes("--bind-address=127.0.0.1"), cmdline.join(" "));

    // The process's identity: a TokenRequest for the chart's ServiceAccount, bound to this pod.
    const kubeconfigArg = cmdline.find((a) => a.startsWith("--kubeconfig="))!.slice("--kubeconfig=".length);
    assert.ok(kubeconfigArg.startsWith(path.join(labClusterDir(cluster.kubeconfig), "lab", "pods")));
    const claims = jwtClaims(fs.readFileSync(path.join(path.dirname(kubeconfigArg), "token"), "utf8"));
    assert.equal(claims["sub"], `system:serviceaccount:${ns}:metrics-server`);
    assert.deepEqual((claims["kubernetes.io"] as { pod: { name: string; uid: string } }).pod, {
      name: p.metadata.name,
      uid: p.metadata.uid,
    });

    // The aggregated API answers: the API server dialed the pod through the egress proxy, which forwarded it.
    assert.match(
      await kubectl([
        "get",
        "apiservice",
        "v1beta1.metrics.k8s.io",
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Available')].status}",
      ]),
      /^True$/,
    );
    const nodes = JSON.parse(await kubectl(["get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"])) as {
      items: { metadata: { name: string } }[];
    };
    assert.ok(
      nodes.items.some((n) => n.metadata.name === "kwok-node-0"),
      JSON.stringify(nodes),
    );
    assert.ok(
      egressRecords(cluster.kubeconfig).some(
        (r) => r.target === `${p.status.podIP}:10250` && r.outcome === "forwarded",
      ),
      "the API server reached metrics-server through the egress proxy",
    );

    const destroyed = await runKhook(["destroy", "-f", file], { env });
    assert.equal(destroyed.code, 0, destroyed.stdout + destroyed.stderr);
    await kubectl(["-n", ns, "wait", "--for=delete", `pod/${p.metadata.name}`, "--timeout=60s"]);
    await waitFor("the launched metrics-server to stop", () => !isAlive(pid), { timeoutMs: 30_000, intervalMs: 100 });
  });
});
