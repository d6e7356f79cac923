/**
 * Real operators in the lab (issue 28): the upstream binaries the launcher runs behind kwok's pods,
 * installed from their real charts. The tests of this file run one after another: cert-manager's
 * leader-election leases, its webhooks and CRDs, and metrics-server's APIService are cluster-wide,
 * so one cluster holds one of each at a time.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import {
  type TestCluster,
  egressRecords,
  labClusterDir,
  labManifestsDir,
  lateToolBuilt,
  testCluster,
  toolPath,
  withNamespace,
} from "../harness/index.js";
import {
  CHART_MIRROR_VAR,
  removeCertManager as removeCertManagerFrom,
  startChartMirror,
  type ChartMirror,
} from "../harness/chart-mirror.js";
import { isAlive, repoRoot, run as runCommand, runOk, waitFor } from "../harness/util.js";
import { pulumiFixture, SHELLS, onShell } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { cliEnv, khookSpec, parseRun, runKhook, specDir, stepOf, type CliResult } from "./support/khook-cli.js";

const MIRROR_OCI_AUTH = { username: "mirror", password: "mirror-pass-5e1f" };

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
    // From the mirror's OCI registry, as a closed network's registry serves it: basic auth, a secret password.
    const mirror = await startChartMirror({ oci: MIRROR_OCI_AUTH });
    t.after(() => mirror.close());
    const spec = khookSpec(
      "lab-metrics",
      `  - name: metrics-server
    helm:
      chart: ${mirror.oci!.url}/metrics-server
      version: "3.13.1"
      auth: { username: ${MIRROR_OCI_AUTH.username}, password: "\${MIRROR_PASSWORD}" }
      namespace: ${ns}
      wait: true
`,
    );
    const { file } = specDir(spec);
    const env = cliEnv(cluster.kubeconfig, { KHOOK_SECRET_MIRROR_PASSWORD: MIRROR_OCI_AUTH.password });
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

const EXAMPLES = path.join(repoRoot(), "examples");

/** Takes cert-manager out of the cluster: the next test installs it afresh. */
function removeCertManager(cluster: TestCluster): Promise<void> {
  return removeCertManagerFrom(cluster.kubeconfig);
}

/** A chart mirror for the test, stopped after it. */
async function mirrorFor(t: { after: (fn: () => Promise<void>) => void }): Promise<ChartMirror> {
  lateToolBuilt("lab-charts");
  const m = await startChartMirror();
  t.after(() => m.close());
  return m;
}

const runJson = (r: CliResult) => ({ run: parseRun(r), output: r.stdout + r.stderr });

describe("the README converges for real", () => {
  test("the README's spec, as written, with only the chart repository set to the mirror: one khook apply, no retries:, the ClusterIssuer Ready", async (t) => {
    lateToolBuilt("cert-manager");
    const cluster = await testCluster();
    const mirror = await mirrorFor(t);
    t.after(() => removeCertManager(cluster));
    const env = cliEnv(cluster.kubeconfig);
    const file = path.join(EXAMPLES, "readme.khook.yaml");
    assert.doesNotMatch(fs.readFileSync(file, "utf8"), /retries:/);
    // A record a crashed earlier run left would make the steps resume instead of run: start from none.
    await cluster.kubectl(["-n", "default", "delete", "secret", "khook-state-bootstrap", "--ignore-not-found"]);
    const r = await runKhook(["apply", "-f", file, "--set", `${CHART_MIRROR_VAR}=${mirror.repoUrl}`, "-o", "json"], {
      env,
    });
    const { run, output } = runJson(r);
    assert.equal(r.code, 0, output);
    for (const step of ["cert-manager", "issuer"])
      assert.deepEqual([stepOf(run, step).status, stepOf(run, step).attempts], ["ok", 1], output);
    assert.ok(
      mirror.requests.some((q) => q.path === "/cert-manager-v1.21.2.tgz"),
      "helm fetched the chart from the mirror",
    );
    // The chart's post-install hook ran for real: startupapicheck, which helm waited for, checked the webhook's API.
    const podLogs = path.join(labClusterDir(cluster.kubeconfig), "logs", "pods");
    const hookLogs = fs.readdirSync(podLogs).filter((f) => f.startsWith("cert-manager_cert-manager-startupapicheck-"));
    assert.ok(
      hookLogs.some((f) => fs.readFileSync(path.join(podLogs, f), "utf8").includes("The cert-manager API is ready")),
      `startupapicheck's log says the API is ready: ${hookLogs.join(", ")}`,
    );
    const ready = await cluster.kubectl([
      "get",
      "clusterissuer",
      "selfsigned",
      "-o",
      "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
    ]);
    assert.equal(ready.stdout, "True", ready.stderr);
    const d = await runKhook(["destroy", "-f", file, "--set", `${CHART_MIRROR_VAR}=${mirror.repoUrl}`], { env });
    assert.equal(d.code, 0, d.stdout + d.stderr);
  });

  test("extended with a CA: through the real webhook's whole race (its chart's startupapicheck off and its pod starting late, as an image pull makes it, so khook meets it), one run, no retries:, and the issued certificate chains to the CA (openssl)", async (t) => {
    lateToolBuilt("cert-manager");
    const cluster = await testCluster();
    const mirror = await mirrorFor(t);
    t.after(() => removeCertManager(cluster));
    const ns = await withNamespace(t, "lab-tls");
    const steps = `  - name: cert-manager
    helm:
      chart: cert-manager
      repo: \${${CHART_MIRROR_VAR}:-https://charts.jetstack.io}
      version: v1.21.2
      namespace: cert-manager
      createNamespace: true
      # The webhook's pod starts 8 s late, as a kubelet pulling its image would: the lab starts
      # processes at once, so without it the webhook may serve before helm even returns.
      values:
        crds: { enabled: true }
        startupapicheck: { enabled: false }
        webhook: { podAnnotations: { khook.io/test-ready-after: "8s" } }
  - name: issuer
    needs: [cert-manager]
    apply:
      waitFor: condition=Ready
      manifests:
        - file: ${path.join(EXAMPLES, "manifests", "cluster-issuer.yaml")}
  - name: ca
    needs: [issuer]
    apply:
      waitFor: condition=Ready
      manifests:
        - inline: |
            apiVersion: cert-manager.io/v1
            kind: Certificate
            metadata: {name: lab-ca, namespace: cert-manager}
            spec:
              isCA: true
              commonName: khook lab CA
              secretName: lab-ca
              privateKey: {algorithm: ECDSA, size: 256}
              issuerRef: {name: selfsigned, kind: ClusterIssuer, group: cert-manager.io}
  - name: ca-issuer
    needs: [ca]
    apply:
      waitFor: condition=Ready
      manifests:
        - inline: |
            apiVersion: cert-manager.io/v1
            kind: ClusterIssuer
            metadata: {name: lab-ca}
            spec: {ca: {secretName: lab-ca}}
  - name: web-certificate
    needs: [ca-issuer]
    apply:
      namespace: ${ns}
      waitFor: condition=Ready
      manifests:
        - inline: |
            apiVersion: cert-manager.io/v1
            kind: Certificate
            metadata: {name: web}
            spec:
              secretName: web-tls
              commonName: web.${ns}.svc
              dnsNames: [web.${ns}.svc]
              issuerRef: {name: lab-ca, kind: ClusterIssuer}
`;
    const { file, dir } = specDir(khookSpec("lab-tls", steps, `state:\n  namespace: ${ns}\n`));
    const env = cliEnv(cluster.kubeconfig);
    const r = await runKhook(["apply", "-f", file, "--set", `${CHART_MIRROR_VAR}=${mirror.repoUrl}`, "-o", "json"], {
      env,
    });
    const { run, output } = runJson(r);
    assert.equal(r.code, 0, output);
    for (const s of run.steps) assert.deepEqual([s.name, s.status, s.attempts], [s.name, "ok", 1], output);
    // helm returned before the webhook served: khook met the race itself, within the step.
    assert.match(
      output,
      /waiting for admission webhook webhook\.cert-manager\.io \((no endpoints available for service|connection refused|x509: [^)]*)\)/,
    );

    const secret = async (namespace: string, name: string, key: string) => {
      const g = await cluster.kubectl([
        "-n",
        namespace,
        "get",
        "secret",
        name,
        "-o",
        `jsonpath={.data.${key.replace(/\./g, "\\.")}}`,
      ]);
      assert.equal(g.code, 0, g.stderr);
      const f = path.join(dir, `${name}-${key}`);
      fs.writeFileSync(f, Buffer.from(g.stdout, "base64"));
      return f;
    };
    const ca = await secret("cert-manager", "lab-ca", "tls.crt");
    const leaf = await secret(ns, "web-tls", "tls.crt");
    const verify = await runOk("openssl", ["verify", "-CAfile", ca, leaf]);
    assert.equal(verify.stdout.trim(), `${leaf}: OK`);
    const subject = await runOk("openssl", [
      "x509",
      "-in",
      leaf,
      "-noout",
      "-subject",
      "-issuer",
      "-ext",
      "subjectAltName",
    ]);
    assert.match(subject.stdout, new RegExp(`subject=CN ?= ?web\\.${ns}\\.svc`));
    assert.match(subject.stdout, /issuer=CN ?= ?khook lab CA/);
    assert.match(subject.stdout, new RegExp(`DNS:web\\.${ns}\\.svc`));
    // The check can fail: against another CA (the cluster's own) the same certificate does not verify.
    const other = await runCommand("openssl", [
      "verify",
      "-CAfile",
      path.join(labClusterDir(cluster.kubeconfig), "pki", "ca.crt"),
      leaf,
    ]);
    assert.notEqual(other.code, 0, other.stdout);
  });
});

/**
 * The bootstrap example's variables in the lab: the mirror, a private CA (Let's Encrypt needs the
 * internet), NodePort (no cloud load balancer). external-secrets: its Go module has replace lines
 * to folders it lacks, so the mirror has no chart of it; Argo CD: its module needs a newer Go than
 * the lab's. Both stay behind their toggles.
 */
function bootstrapVars(mirror: ChartMirror): Record<string, string> {
  return {
    [CHART_MIRROR_VAR]: mirror.repoUrl,
    ISSUER: "ca",
    INGRESS_SERVICE_TYPE: "NodePort",
    ENABLE_EXTERNAL_SECRETS: "false",
    ENABLE_ARGOCD: "false",
  };
}

/** The steps of the bootstrap example that run in the lab (bootstrapVars), every one real or a kwok pod. */
const BOOTSTRAP_STEPS_RUN = [
  "ingress-nginx",
  "cert-manager",
  "cert-manager-webhook-ready",
  "platform-ca",
  "cluster-issuer-ca",
  "ingress-default-certificate",
  "metrics-server",
  "metrics-api-available",
  "ingress-smoke-test",
];

/** Takes what the bootstrap example leaves (or a failed test left) out of the cluster. */
async function removeBootstrap(cluster: TestCluster): Promise<void> {
  for (const [release, ns] of [
    ["ingress-nginx", "ingress-nginx"],
    ["metrics-server", "kube-system"],
  ] as const)
    await runCommand(toolPath("helm"), [
      "--kubeconfig",
      cluster.kubeconfig,
      "uninstall",
      release,
      "-n",
      ns,
      "--ignore-not-found",
    ]);
  await cluster.kubectl(["delete", "namespace", "ingress-nginx", "--ignore-not-found"]);
  await cluster.kubectl([
    "-n",
    "kube-system",
    "delete",
    "secret",
    "khook-state-platform-bootstrap",
    "--ignore-not-found",
  ]);
  await removeCertManager(cluster);
}

describe("the platform bootstrap example, against the mirror", () => {
  test("examples/bootstrap.khook.yaml with CHART_MIRROR, ISSUER=ca and NodePort, external-secrets and Argo CD off (they cannot be had here): every step converges in one apply with cert-manager and metrics-server real; destroy removes what khook made and leaves the CRDs the chart keeps and the namespaces", async (t) => {
    lateToolBuilt("cert-manager");
    lateToolBuilt("metrics-server");
    const cluster = await testCluster();
    const mirror = await mirrorFor(t);
    t.after(() => removeBootstrap(cluster));
    const kubectl = async (args: string[]) => {
      const r = await cluster.kubectl(args);
      assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
      return r.stdout.trim();
    };
    const file = path.join(EXAMPLES, "bootstrap.khook.yaml");
    const vars = Object.entries(bootstrapVars(mirror)).flatMap(([k, v]) => ["--set", `${k}=${v}`]);
    const env = cliEnv(cluster.kubeconfig);
    const r = await runKhook(["apply", "-f", file, ...vars, "-o", "json"], { env });
    const { run, output } = runJson(r);
    assert.equal(r.code, 0, output);
    const ran = run.steps
      .filter((s) => s.status !== "skipped")
      .map((s) => `${s.name} ${s.status} ${s.attempts}`)
      .sort();
    assert.deepEqual(ran, BOOTSTRAP_STEPS_RUN.map((n) => `${n} ok 1`).sort(), output);
    assert.ok(
      ["cert-manager-v1.21.2.tgz", "ingress-nginx-4.11.0.tgz", "metrics-server-3.13.1.tgz"].every((c) =>
        mirror.requests.some((q) => q.path === `/${c}`),
      ),
      "every chart came from the mirror",
    );
    // The ingress controller's certificate chains to the platform CA cert-manager made.
    const dir = fs.mkdtempSync(path.join(labClusterDir(cluster.kubeconfig), "lab", "bootstrap-"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const pem = async (ns: string, secret: string) => {
      const f = path.join(dir, `${secret}.crt`);
      fs.writeFileSync(
        f,
        Buffer.from(await kubectl(["-n", ns, "get", "secret", secret, "-o", "jsonpath={.data.tls\\.crt}"]), "base64"),
      );
      return f;
    };
    const leaf = await pem("ingress-nginx", "ingress-default-tls");
    assert.equal(
      (await runOk("openssl", ["verify", "-CAfile", await pem("cert-manager", "platform-ca"), leaf])).stdout.trim(),
      `${leaf}: OK`,
    );
    // The metrics API answers, served by the real metrics-server.
    assert.match(await kubectl(["get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"]), /"kwok-node-0"/);

    const d = await runKhook(["destroy", "-f", file, ...vars, "-o", "json"], { env });
    assert.equal(d.code, 0, d.stdout + d.stderr);
    const releases = JSON.parse(
      (await runOk(toolPath("helm"), ["--kubeconfig", cluster.kubeconfig, "list", "-A", "-o", "json"])).stdout,
    ) as { name: string }[];
    assert.deepEqual(
      releases.map((x) => x.name).filter((n) => ["ingress-nginx", "cert-manager", "metrics-server"].includes(n)),
      [],
      "the releases are gone",
    );
    assert.equal(
      await kubectl(["get", "clusterissuers", "-o", "name"]),
      "",
      "the ClusterIssuers khook applied are gone",
    );
    assert.equal(
      await kubectl(["-n", "ingress-nginx", "get", "certificates", "-o", "name"]),
      "",
      "so is the Certificate",
    );
    assert.equal(
      (await cluster.kubectl(["get", "apiservice", "v1beta1.metrics.k8s.io"])).code,
      1,
      "the metrics APIService went with its release",
    );
    // What stays, as docs/air-gapped.md says: the CRDs the chart keeps on uninstall, the namespaces
    // createNamespace made (khook does not own them), and what cert-manager issued into them.
    assert.match(
      await kubectl(["get", "crd", "certificates.cert-manager.io", "-o", "name"]),
      /certificates\.cert-manager\.io/,
    );
    for (const ns of ["ingress-nginx", "cert-manager"])
      assert.equal(await kubectl(["get", "namespace", ns, "-o", "name"]), `namespace/${ns}`);
    assert.equal(
      await kubectl(["-n", "cert-manager", "get", "secret", "platform-ca", "-o", "name"]),
      "secret/platform-ca",
    );
  });
});

describe("real content that breaks bootstraps", () => {
  test("prometheus-operator's real CRDs, six of ten over 256 KiB, apply in one apply: step: khook applies those too large for the last-applied annotation server-side, says so, re-runs unchanged, and destroy removes them", async (t) => {
    lateToolBuilt("lab-charts");
    const cluster = await testCluster();
    const dir = labManifestsDir("prometheus-operator-crds");
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".yaml"))
      .sort();
    const large = files.filter((f) => fs.statSync(path.join(dir, f)).size > 256 * 1024);
    assert.equal(files.length, 10);
    assert.equal(large.length, 6, `the large ones: ${large.join(", ")}`);
    const names = files.map((f) => f.replace(/^monitoring\.coreos\.com_(.*)\.yaml$/, "$1.monitoring.coreos.com"));
    t.after(async () => {
      await cluster.kubectl(["delete", "crd", ...names, "--ignore-not-found"]);
    });
    const steps = `  - name: crds
    apply:
      waitFor: condition=Established
      manifests:
${files.map((f) => `        - file: ${path.join(dir, f)}`).join("\n")}
`;
    // No state record: every apply runs the step again.
    const { file } = specDir(khookSpec("lab-crds", steps));
    const env = cliEnv(cluster.kubeconfig);
    const r = await runKhook(["apply", "-f", file, "-o", "json"], { env });
    const { run, output } = runJson(r);
    assert.equal(r.code, 0, output);
    assert.deepEqual([stepOf(run, "crds").status, stepOf(run, "crds").attempts], ["ok", 1], output);
    assert.match(
      stepOf(run, "crds").reason,
      /^10 created \(6 server-side: too large for the last-applied annotation\); condition=Established met$/,
    );
    const operations = async (crd: string) =>
      (await cluster.kubectl(["get", "crd", crd, "-o", "jsonpath={.metadata.managedFields[*].operation}"])).stdout
        .trim()
        .split(" ");
    assert.ok(
      (await operations("prometheuses.monitoring.coreos.com")).includes("Apply"),
      "the large CRD was applied server-side",
    );
    const small = await cluster.kubectl([
      "get",
      "crd",
      "podmonitors.monitoring.coreos.com",
      "-o",
      "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}",
    ]);
    assert.notEqual(small.stdout, "", "the small ones keep kubectl's client-side apply and its annotation");

    const again = await runKhook(["apply", "-f", file, "-o", "json"], { env });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(stepOf(parseRun(again), "crds").reason, /^10 unchanged \(6 server-side/);

    // The live check judges the large ones as they were applied (server-side: by the fields sent),
    // not by a last-applied copy they never had: in sync.
    const recorded = specDir(khookSpec("lab-crds", steps, "state: {}\n")).file;
    const withRecord = await runKhook(["apply", "-f", recorded], { env });
    assert.equal(withRecord.code, 0, withRecord.stdout + withRecord.stderr);
    const drift = await runKhook(["plan", "--live", "--exit-code", "-f", recorded, "-o", "json"], { env });
    assert.equal(drift.code, 0, drift.stdout + drift.stderr);
    const checked = (JSON.parse(drift.stdout) as { steps: { name: string; drift: string; reason: string }[] }).steps;
    assert.deepEqual(
      checked.map((s) => [s.name, s.drift]),
      [["crds", "in-sync"]],
      JSON.stringify(checked),
    );

    const d = await runKhook(["destroy", "-f", recorded], { env });
    assert.equal(d.code, 0, d.stdout + d.stderr);
    assert.equal(
      (await cluster.kubectl(["get", "crd", ...names, "--ignore-not-found", "-o", "name"])).stdout.trim(),
      "",
    );
  });
});

describe("metrics-server's APIService, before and after its backend serves", () => {
  test("the APIService is registered at once but Available only after metrics-server has scraped twice: a step right after the install applies (discovery of the unavailable group warns once), and a wait on the metrics API waits through it; one run, no retries:", async (t) => {
    lateToolBuilt("lab-charts");
    lateToolBuilt("metrics-server");
    const cluster = await testCluster();
    const ns = await withNamespace(t, "lab-apiservice");
    const mirror = await mirrorFor(t);
    const steps = `  - name: metrics-server
    helm:
      chart: metrics-server
      repo: \${${CHART_MIRROR_VAR}}
      version: "3.13.1"
      namespace: ${ns}
  - name: config
    needs: [metrics-server]
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: after-metrics-server}
            data: {a: "1"}
  - name: node-metrics
    needs: [metrics-server]
    timeout: 3m
    wait:
      for: jsonpath={.usage.memory}
      on: nodes.metrics.k8s.io/kwok-node-0
`;
    const { file } = specDir(khookSpec("lab-apiservice", steps, `state:\n  namespace: ${ns}\n`));
    const env = cliEnv(cluster.kubeconfig);
    t.after(async () => {
      await runKhook(["destroy", "-f", file, "--set", `${CHART_MIRROR_VAR}=${mirror.repoUrl}`], { env });
    });
    const r = await runKhook(["apply", "-f", file, "--set", `${CHART_MIRROR_VAR}=${mirror.repoUrl}`, "-o", "json"], {
      env,
    });
    const { run, output } = runJson(r);
    assert.equal(r.code, 0, output);
    for (const s of ["metrics-server", "config", "node-metrics"])
      assert.deepEqual([stepOf(run, s).status, stepOf(run, s).attempts], ["ok", 1], output);
    // Before: the config step ran while the APIService was registered and not served.
    assert.match(output, /metrics\.k8s\.io\/v1beta1.*(its APIService is not available|unable to handle the request)/);
    // After: the metrics API answers, from the real metrics-server.
    const node = JSON.parse(
      (await cluster.kubectl(["get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes/kwok-node-0"])).stdout,
    ) as {
      usage: { memory: string };
    };
    assert.match(node.usage.memory, /^\d+(Ki|Mi)?$/);
  });
});

describe("the platform bootstrap through pulumi up", () => {
  for (const shell of SHELLS) {
    test(
      onShell(
        shell,
        "examples/bootstrap.khook.yaml through pulumi up, against the mirror: every step the lab can run converges, cert-manager and metrics-server real; pulumi destroy takes the releases away",
      ),
      { timeout: 900_000 },
      async (t) => {
        lateToolBuilt("cert-manager");
        lateToolBuilt("metrics-server");
        const mirror = await mirrorFor(t);
        const files: Record<string, string> = {
          "bootstrap.khook.yaml": fs.readFileSync(path.join(EXAMPLES, "bootstrap.khook.yaml"), "utf8"),
        };
        for (const f of fs.readdirSync(path.join(EXAMPLES, "values")))
          files[`values/${f}`] = fs.readFileSync(path.join(EXAMPLES, "values", f), "utf8");
        const { project, kubeconfig } = await pulumiFixture(t, { program: KHOOK_PROGRAM, files, shell });
        const cluster = await testCluster();
        t.after(() => removeBootstrap(cluster));
        project.write(
          "args.json",
          programArgs({
            args: { specFile: "./bootstrap.khook.yaml", vars: bootstrapVars(mirror) },
            kubeconfigFile: kubeconfig,
          }),
        );
        await project.init();
        const up = await project.ok(["up", "--yes", "--skip-preview"], { timeoutMs: 900_000 });
        const out = await project.outputs();
        assert.equal(out["runStatus"], "succeeded", up.output);
        const steps = out["steps"] as { name: string; status: string; attempts: number }[];
        assert.deepEqual(
          steps
            .filter((s) => s.status !== "skipped")
            .map((s) => `${s.name} ${s.status} ${s.attempts}`)
            .sort(),
          BOOTSTRAP_STEPS_RUN.map((n) => `${n} ok 1`).sort(),
          up.output,
        );
        const ready = await cluster.kubectl([
          "-n",
          "ingress-nginx",
          "get",
          "certificate",
          "ingress-default",
          "-o",
          "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
        ]);
        assert.equal(ready.stdout, "True", ready.stderr);
        await project.ok(["destroy", "--yes", "--skip-preview"], { timeoutMs: 900_000 });
        const releases = JSON.parse(
          (await runOk(toolPath("helm"), ["--kubeconfig", kubeconfig, "list", "-A", "-o", "json"])).stdout,
        ) as { name: string }[];
        assert.deepEqual(
          releases.map((x) => x.name).filter((n) => ["ingress-nginx", "cert-manager", "metrics-server"].includes(n)),
          [],
        );
      },
    );
  }
});

describe("the demo's spec", () => {
  test("examples/demo.khook.yaml with the mirror: one apply converges and ends with a Ready Certificate that cert-manager issued from the demo's CA; destroy completes", async (t) => {
    lateToolBuilt("cert-manager");
    const cluster = await testCluster();
    const mirror = await mirrorFor(t);
    t.after(async () => {
      await cluster.kubectl(["delete", "namespace", "khook-demo", "--ignore-not-found"]);
      await removeCertManager(cluster);
    });
    const file = path.join(EXAMPLES, "demo.khook.yaml");
    const env = cliEnv(cluster.kubeconfig);
    const vars = ["--set", `${CHART_MIRROR_VAR}=${mirror.repoUrl}`];
    const r = await runKhook(["apply", "-f", file, ...vars, "-o", "json"], { env });
    const { run, output } = runJson(r);
    assert.equal(r.code, 0, output);
    for (const s of run.steps) assert.deepEqual([s.name, s.status, s.attempts], [s.name, "ok", 1], output);
    const crt = await cluster.kubectl([
      "-n",
      "khook-demo",
      "get",
      "secret",
      "web-tls",
      "-o",
      "jsonpath={.data.tls\\.crt}",
    ]);
    assert.equal(crt.code, 0, crt.stderr);
    const cert = new X509Certificate(Buffer.from(crt.stdout, "base64"));
    assert.equal(cert.subject, "CN=web.khook-demo.svc");
    assert.equal(cert.issuer, "CN=khook demo CA");
    const d = await runKhook(["destroy", "-f", file, ...vars], { env });
    assert.equal(d.code, 0, d.stdout + d.stderr);
  });
});
