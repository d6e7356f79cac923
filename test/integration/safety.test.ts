/**
 * Issue 10 against the real cluster, through the real CLI: a Job of another spec is never
 * replaced or deleted (item 1), the record Secret holds never-started steps (item 9), and
 * `plan` fails when the cluster cannot be reached (item 20), and an exec plugin that stops
 * working mid-session is reported as such (item 23).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import { cliEnv, khookSpec, parseRun, runKhook, specDir, stepOf } from "./support/khook-cli.js";
import { KhookError } from "../../provider/errors.js";
import { KubeClient, type ResourceType } from "../../provider/kube/index.js";

async function jobUid(ns: string, name: string): Promise<string> {
  const cluster = await testCluster();
  const r = await cluster.kubectl(["get", "job", name, "-n", ns, "-o", "jsonpath={.metadata.uid}"]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

describe("job ownership per spec", () => {
  test("job-ownership-per-spec: apply of spec A refuses spec B's Job, and destroy of A leaves it", async (t: TestContext) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "job-owner");
    const env = cliEnv(cluster.kubeconfig);
    const steps = `  - name: migrate\n    job: { image: busybox, namespace: ${ns} }\n`;
    const a = specDir(khookSpec("spec-a", steps)).file;
    const b = specDir(khookSpec("spec-b", steps)).file;

    const applyB = await runKhook(["apply", "-f", b, "-o", "json"], { env });
    assert.equal(applyB.code, 0, applyB.stderr);
    const uidB = await jobUid(ns, "migrate");

    const applyA = await runKhook(["apply", "-f", a, "-o", "json"], { env });
    assert.equal(applyA.code, 1, applyA.stderr);
    assert.match(
      stepOf(parseRun(applyA), "migrate").error ?? "",
      /belongs to another khook spec, "spec-b".*never replaces a Job it does not own/,
    );
    assert.equal(await jobUid(ns, "migrate"), uidB, "spec B's Job was not replaced");

    const destroyA = await runKhook(["destroy", "-f", a, "-o", "json"], { env });
    assert.equal(destroyA.code, 0, destroyA.stderr);
    const step = stepOf(parseRun(destroyA), "migrate");
    assert.equal(step.status, "skipped");
    assert.match(step.reason, /belongs to another khook spec, "spec-b".*left alone/);
    assert.equal(await jobUid(ns, "migrate"), uidB, "spec B's Job was not deleted");

    // Its own spec still owns it.
    const destroyB = await runKhook(["destroy", "-f", b, "-o", "json"], { env });
    assert.equal(destroyB.code, 0, destroyB.stderr);
    assert.equal(stepOf(parseRun(destroyB), "migrate").status, "ok");
  });
});

describe("the state record", () => {
  test("record-holds-never-started-steps: the record Secret holds blocked and not-started steps as skipped, with their reason", async (t: TestContext) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "record-skip");
    const steps =
      `  - name: bad\n    onError: continue\n    patch: { target: configmap/absent, namespace: ${ns}, type: merge, patch: { data: { a: "1" } } }\n` +
      `  - name: after\n    needs: [bad]\n    wait: { for: delete, on: configmap/absent, namespace: ${ns} }\n` +
      `  - name: stop\n    needs: [after]\n    patch: { target: configmap/absent, namespace: ${ns}, type: merge, patch: { data: { a: "1" } } }\n` +
      `  - name: gated\n    when: 'vars.get("ENV", "dev") == "prod"'\n    wait: { for: delete, on: configmap/absent, namespace: ${ns} }\n`;
    const file = specDir(khookSpec("record-skip", steps, `state: { namespace: ${ns} }\n`)).file;
    const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(cluster.kubeconfig) });
    assert.equal(r.code, 1, r.stderr);

    const secret = await cluster.kubectl([
      "get",
      "secret",
      "khook-state-record-skip",
      "-n",
      ns,
      "-o",
      "jsonpath={.data.record\\.json}",
    ]);
    assert.equal(secret.code, 0, secret.stderr);
    const record = JSON.parse(Buffer.from(secret.stdout.trim(), "base64").toString("utf8")) as {
      steps: Record<string, { status: string; reason: string }>;
    };
    assert.equal(record.steps["bad"]?.status, "failed");
    assert.deepEqual(
      [record.steps["after"]?.status, record.steps["after"]?.reason],
      ["skipped", 'blocked by failed dependency "bad"'],
    );
    assert.deepEqual(
      [record.steps["stop"]?.status, record.steps["stop"]?.reason],
      ["skipped", 'blocked by failed dependency "bad" (via "after")'],
    );
    assert.match(record.steps["gated"]?.reason ?? "", /^excluded by when:/);

    const status = await runKhook(["status", "-f", file], { env: cliEnv(cluster.kubeconfig) });
    assert.equal(status.code, 0, status.stderr);
    assert.doesNotMatch(status.stdout, /Not yet recorded/);
  });
});

describe("plan against an unreachable cluster", () => {
  /** A loopback port that was just free: nothing listens there. */
  async function closedPort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  test("plan-unreachable-exits-1: khook plan exits 1 and says it cannot reach the API server", async () => {
    const port = await closedPort();
    const kubeconfig = specDir(
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t0k3n-value}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    ).file;
    const file = specDir(
      khookSpec("unreachable", "  - name: w\n    wait: { for: delete, on: configmap/x, namespace: default }\n"),
    ).file;
    for (const extra of [[], ["-o", "json"]]) {
      const r = await runKhook(["plan", "-f", file, ...extra], { env: cliEnv(kubeconfig) });
      assert.equal(r.code, 1, `${extra.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /cannot reach the Kubernetes API server at https:\/\/127\.0\.0\.1:\d+/);
      assert.doesNotMatch(r.stdout, /cannot assess live state/);
    }
  });
});

describe("credentials that stop working mid-session", () => {
  test("exec-refresh-failure-reported: the real cluster, an exec plugin that works twice and then fails", async (t: TestContext) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "exec-refresh");
    const text = fs.readFileSync(cluster.kubeconfig, "utf8");
    const field = (name: string): string => {
      const v = new RegExp(`${name}: (\\S+)`).exec(text)?.[1];
      assert.ok(v, `the test kubeconfig has ${name}`);
      return v;
    };
    const pem = (b64: string): string => Buffer.from(b64, "base64").toString("utf8");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-exec-refresh-it-"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    // The admin client certificate, handed out already expired so every request asks again; the third ask fails.
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: {
        clientCertificateData: pem(field("client-certificate-data")),
        clientKeyData: pem(field("client-key-data")),
        expirationTimestamp: "2000-01-01T00:00:00Z",
      },
    });
    fs.writeFileSync(path.join(dir, "credential.json"), credential, { mode: 0o600 });
    fs.writeFileSync(
      path.join(dir, "cred.sh"),
      `#!/bin/sh\necho x >> "${dir}/calls"\nif [ "$(wc -l < "${dir}/calls")" -gt 2 ]; then echo "token refresh denied: session revoked" >&2; exit 1; fi\ncat "${dir}/credential.json"\n`,
      { mode: 0o700 },
    );
    const kubeconfig = `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${field("server")}", certificate-authority-data: ${field("certificate-authority-data")}}}]\nusers: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: "${dir}/cred.sh", interactiveMode: Never}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`;
    const CM: ResourceType = { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true };
    const kube = await KubeClient.connect({ kubeconfigContent: kubeconfig });
    t.after(() => kube.close());
    await kube.list(CM, { namespace: ns }); // the plugin's second run: still fine
    const err = await kube.list(CM, { namespace: ns }).then(
      () => assert.fail("the third request succeeded"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof KhookError, String(err));
    assert.doesNotMatch(err.message, /cannot reach/);
    assert.match(err.message, /exec plugin failed/);
    assert.match(err.message, /token refresh denied: session revoked/);
  });
});
