/**
 * `./dev bench races` (issue 19 §7): a bootstrap on the hostile cluster. The first "operator"
 * installs a ValidatingWebhookConfiguration (`failurePolicy: Fail`) for the namespace the next
 * steps write to; its webhook (a real HTTPS server on loopback, test/harness/webhook-server.ts)
 * starts serving only after a delay, with a certificate its configuration does not trust yet, and
 * the right CA is injected into the configuration a little later (as cert-manager's cainjector
 * does). Then a set of ConfigMaps and a chart go into that namespace.
 *
 * For the equivalent script (as written, and with its author's retry loop) and for khook (a spec
 * with no `retries:`), it prints whether one run converged, and the time from the webhook
 * admitting (served and trusted) to the run's end. Target: khook converges in one run, within 1 s.
 * Figures, never assertions.
 *
 * Then the real case: cert-manager v1.21.2 from the lab's chart mirror, its controller, webhook and
 * cainjector really running behind kwok's pods (test/harness/launcher.ts), and a CA chain ending in
 * a Certificate. From the start of the install to the Certificate being Ready: the script as
 * written, the script with its retry loop, and khook in one run (KHOOK_BENCH_REAL_ROUNDS rounds,
 * default 1; each round installs cert-manager three times, from nothing).
 *
 * Uses KHOOK_TEST_KUBECONFIG when set (a cluster the harness started: the real case needs its
 * launcher), else starts (and stops) a local cluster with the harness.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { removeCertManager, startChartMirror } from "../test/harness/chart-mirror.js";
import { startCluster, stopCluster, type ClusterState } from "../test/harness/cluster.js";
import { toolPathVar } from "../test/harness/env.js";
import { helmEnv, testChartPath } from "../test/harness/fixtures.js";
import { CLIENT_TOOLS, CONTROL_PLANE, LAB_TOOLS, ensureToolchain, toolPath } from "../test/harness/toolchain.js";
import { run } from "../test/harness/util.js";
import { HostileWebhook, validatingWebhookConfiguration } from "../test/harness/webhook-server.js";

const ROUNDS = Number(process.env["KHOOK_BENCH_ROUNDS"] ?? 3);
/** When the webhook starts serving (with an untrusted certificate), and when its CA is injected, after the run starts. */
const SERVES_AFTER_MS = 2_000;
const CA_AFTER_MS = 4_000;
const TARGET_MS = 1_000;

interface Outcome {
  converged: boolean;
  /** From the webhook admitting to the run's end; undefined when it ended before. */
  afterServingMs: number | undefined;
  output: string;
  /** The output lines after the webhook admitted, with their time: where the time after it went. */
  trace: string[];
}

const CONFIGMAPS = ["a", "b", "c"]
  .map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${n}\ndata:\n  k: "${n}"\n`)
  .join("---\n");

const SCRIPT = `set -euo pipefail
kubectl apply -f webhook.json
kubectl apply -n "$NS" -f configmaps.yaml
helm upgrade --install app "$CHART" -n "$NS"
`;

/** The same, with the loop its author adds after the first failure in CI. */
const SCRIPT_WITH_LOOP = `set -euo pipefail
kubectl apply -f webhook.json
for i in $(seq 1 60); do kubectl apply -n "$NS" -f configmaps.yaml && break; echo "retrying in 5s"; sleep 5; done
for i in $(seq 1 60); do helm upgrade --install app "$CHART" -n "$NS" && break; echo "retrying in 5s"; sleep 5; done
kubectl get configmap app-a -n "$NS" >/dev/null
`;

const SPEC = (ns: string, chart: string) => `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: ${ns}
steps:
  - name: operator
    apply:
      manifests:
        - file: ./webhook.json
  - name: app-config
    needs: [operator]
    apply:
      namespace: ${ns}
      manifests:
        - file: ./configmaps.yaml
  - name: app
    needs: [operator]
    helm:
      release: app
      chart: ${chart}
      namespace: ${ns}
`;

export async function benchRaces(): Promise<void> {
  let cluster: ClusterState | undefined;
  let kubeconfig = process.env.KHOOK_TEST_KUBECONFIG;
  await ensureToolchain({
    only: [...CONTROL_PLANE, ...CLIENT_TOOLS.filter((t) => t === "helm" || t === "kubectl")],
    log: () => undefined,
  });
  if (kubeconfig === undefined) {
    cluster = await startCluster({ name: `bench-races-${process.pid}`, watchPid: process.pid, log: () => undefined });
    kubeconfig = cluster.kubeconfig;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-races-"));
  const bin = path.resolve(__dirname, "../../bin/khook");
  const base = {
    ...helmEnv(dir),
    PATH: toolPathVar(),
    KUBECONFIG: kubeconfig,
    KHOOK_HELM: toolPath("helm"),
    CI: "1",
    NO_COLOR: "1",
  };
  const kubectl = (args: string[], input?: string) =>
    spawnSync(toolPath("kubectl"), args, { env: base, encoding: "utf8", ...(input !== undefined ? { input } : {}) });
  const namespaces: string[] = [];
  const configs: string[] = [];
  const hook = await HostileWebhook.start("down");

  /** One contestant in a fresh namespace, while the webhook goes down → serving (untrusted) → trusted. */
  const contest = async (
    label: string,
    command: string,
    args: (work: string) => string[],
    round: number,
  ): Promise<Outcome> => {
    const ns = `races-${label.replace(/[^a-z]/g, "")}-${process.pid.toString(36)}${round}`;
    namespaces.push(ns);
    configs.push(ns);
    const work = path.join(dir, ns);
    fs.mkdirSync(work);
    await hook.set("down");
    // Registered with a CA that did not sign the webhook's certificate: the right one is injected later.
    const config = validatingWebhookConfiguration(hook, {
      name: ns,
      namespace: ns,
      caBundle: hook.wrongCaBundle,
      timeoutSeconds: 2,
    });
    fs.writeFileSync(path.join(work, "webhook.json"), JSON.stringify(config));
    fs.writeFileSync(path.join(work, "configmaps.yaml"), CONFIGMAPS);
    fs.writeFileSync(path.join(work, "spec.yaml"), SPEC(ns, testChartPath("khook-test-config")));
    kubectl(["create", "namespace", ns]);
    const child = spawn(command, args(work), {
      cwd: work,
      env: { ...base, NS: ns, CHART: testChartPath("khook-test-config") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const chunks: { at: number; text: string }[] = [];
    const onData = (d: Buffer): void => {
      output += d.toString();
      chunks.push({ at: Date.now(), text: d.toString() });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const ended = new Promise<{ code: number | null; at: number }>((resolve) =>
      child.on("close", (code) => resolve({ code, at: Date.now() })),
    );
    let exited = false;
    void ended.then(() => (exited = true));
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    let admittingAt: number | undefined;
    const timeline = (async () => {
      await pause(SERVES_AFTER_MS);
      // Serving, but with a certificate the configuration's (wrong) caBundle does not trust: x509 errors.
      await hook.set("allow");
      await pause(CA_AFTER_MS - SERVES_AFTER_MS);
      // The cainjector: the operator created the configuration (unless the run already ended); patch the right CA in.
      while (!exited && kubectl(["get", "validatingwebhookconfiguration", ns, "-o", "name"]).status !== 0)
        await pause(100);
      if (exited) return;
      kubectl([
        "patch",
        "validatingwebhookconfiguration",
        ns,
        "--type",
        "json",
        "-p",
        JSON.stringify([{ op: "replace", path: "/webhooks/0/clientConfig/caBundle", value: hook.caBundle }]),
      ]);
      admittingAt = Date.now();
    })();
    const end = await ended;
    await timeline;
    const converged = end.code === 0 && kubectl(["get", "configmap", "app-a", "-n", ns, "-o", "name"]).status === 0;
    const admitted = admittingAt;
    const trace =
      admitted === undefined
        ? []
        : chunks
            .filter((c) => c.at >= admitted)
            .flatMap((c) =>
              c.text
                .split("\n")
                .filter(Boolean)
                .map((l) => `+${((c.at - admitted) / 1000).toFixed(2)} s ${l.slice(0, 110)}`),
            );
    return {
      converged,
      afterServingMs: admitted !== undefined && end.at >= admitted ? end.at - admitted : undefined,
      output,
      trace,
    };
  };

  const script = (text: string) => (work: string) => {
    fs.writeFileSync(path.join(work, "bootstrap.sh"), text);
    return [path.join(work, "bootstrap.sh")];
  };
  const show = (label: string, outcomes: Outcome[]): void => {
    const converged = outcomes.filter((o) => o.converged).length;
    const times = outcomes
      .flatMap((o) => (o.converged && o.afterServingMs !== undefined ? [o.afterServingMs] : []))
      .sort((a, b) => a - b);
    const median = times.length > 0 ? times[Math.floor(times.length / 2)]! : undefined;
    const time = median !== undefined ? `${(median / 1000).toFixed(2)} s after the webhook admits (median)` : "—";
    const target =
      label === "khook"
        ? `  (target: one run, <= ${TARGET_MS / 1000} s: ${converged === outcomes.length && median !== undefined && median <= TARGET_MS ? "met" : "NOT met"})`
        : "";
    console.log(`  ${label.padEnd(28)} one run converged: ${converged}/${outcomes.length}   ${time}${target}`);
  };

  try {
    console.log(
      `== races: the webhook serves ${SERVES_AFTER_MS / 1000} s after the run starts, its CA is injected at ${CA_AFTER_MS / 1000} s (${ROUNDS} rounds) ==`,
    );
    const results: Record<string, Outcome[]> = { "script (as written)": [], "script with a retry loop": [], khook: [] };
    for (let round = 0; round < ROUNDS; round++) {
      results["script (as written)"]!.push(await contest("script", "bash", script(SCRIPT), round));
      results["script with a retry loop"]!.push(await contest("loop", "bash", script(SCRIPT_WITH_LOOP), round));
      results["khook"]!.push(await contest("khook", process.execPath, () => [bin, "apply", "-f", "spec.yaml"], round));
    }
    for (const [label, outcomes] of Object.entries(results)) show(label, outcomes);
    const failed = results["script (as written)"]![0]!;
    if (!failed.converged)
      console.log(
        `  (the script as written stops at: ${
          failed.output
            .trim()
            .split("\n")
            .filter((l) => /error|Error/.test(l))[0] ?? "?"
        })`,
      );
    const k = results["khook"]![0]!;
    const lines = k.output.split("\n").filter((l) => /waiting for|cleared after/.test(l));
    if (lines.length > 0) console.log(`  (khook said:\n${lines.map((l) => `     ${l}`).join("\n")})`);
    if (process.env["KHOOK_BENCH_TRACE"] !== undefined)
      for (const o of results["khook"]!)
        console.log(`  khook after the webhook admitted:\n${o.trace.map((l) => `     ${l}`).join("\n")}`);
    await realCase(base, kubeconfig, dir, bin);
  } finally {
    await hook.close();
    for (const name of configs)
      kubectl(["delete", "validatingwebhookconfiguration", name, "--ignore-not-found", "--wait=false"]);
    if (namespaces.length > 0) kubectl(["delete", "namespace", ...namespaces, "--wait=false", "--ignore-not-found"]);
    fs.rmSync(dir, { recursive: true, force: true });
    if (cluster !== undefined) await stopCluster(cluster);
  }
}

// ---------------------------------------------------------------------------------------------
// The real case: cert-manager's own race, from its real chart, to a Ready Certificate.

const REAL_ROUNDS = Number(process.env["KHOOK_BENCH_REAL_ROUNDS"] ?? 1);

/** A self-signed issuer, a CA it issues, a CA issuer on it, and a leaf Certificate from that. */
const ISSUERS = (ns: string) => `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: bench-selfsigned}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: bench-ca, namespace: cert-manager}
spec:
  isCA: true
  commonName: bench CA
  secretName: bench-ca
  issuerRef: {name: bench-selfsigned, kind: ClusterIssuer}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: bench-ca}
spec: {ca: {secretName: bench-ca}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: web, namespace: ${ns}}
spec:
  secretName: web-tls
  dnsNames: [web.${ns}.svc]
  issuerRef: {name: bench-ca, kind: ClusterIssuer}
`;

/**
 * The chart's startupapicheck hook is off, as GitOps installs often run it: that Job is the chart's
 * own retry loop, which makes helm wait until the webhook works; without it the race is the script's.
 * The webhook's pod starts its process 8 s late (the lab's launcher honours the annotation), as an
 * image pull delays it on a real node: the lab's processes otherwise start at once, and the webhook
 * would serve before helm returns, so no script would meet the race a cluster puts it in.
 */
const WEBHOOK_STARTS_AFTER = "8s";
const HELM_INSTALL = `helm upgrade --install cert-manager cert-manager --repo "$MIRROR" --version v1.21.2 -n cert-manager --create-namespace --set crds.enabled=true --set startupapicheck.enabled=false --set-string 'webhook.podAnnotations.khook\\.io/test-ready-after=${WEBHOOK_STARTS_AFTER}'`;

const REAL_SCRIPT = `set -euo pipefail
${HELM_INSTALL}
kubectl apply -f issuers.yaml
kubectl wait --for=condition=Ready -n "$NS" certificate/web --timeout=300s
`;

const REAL_SCRIPT_WITH_LOOP = `set -euo pipefail
${HELM_INSTALL}
for i in $(seq 1 60); do kubectl apply -f issuers.yaml && break; echo "retrying in 5s"; sleep 5; done
kubectl wait --for=condition=Ready -n "$NS" certificate/web --timeout=300s
`;

const REAL_SPEC = (ns: string) => `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: bench-cert-manager
steps:
  - name: cert-manager
    helm:
      chart: cert-manager
      repo: \${MIRROR}
      version: v1.21.2
      namespace: cert-manager
      createNamespace: true
      values:
        crds: { enabled: true }
        startupapicheck: { enabled: false }
        webhook: { podAnnotations: { khook.io/test-ready-after: "${WEBHOOK_STARTS_AFTER}" } }
  - name: issuers
    needs: [cert-manager]
    apply:
      waitFor: condition=Ready
      manifests:
        - file: ./issuers.yaml
  - name: certificate-ready
    needs: [issuers]
    wait:
      for: condition=Ready
      on: certificate/web
      namespace: ${ns}
`;

async function realCase(base: NodeJS.ProcessEnv, kubeconfig: string, dir: string, bin: string): Promise<void> {
  console.log("");
  console.log(
    `== races, the real case: cert-manager v1.21.2 from the mirror to a Ready Certificate, its webhook starting ${WEBHOOK_STARTS_AFTER} late as an image pull makes it (${REAL_ROUNDS} round${REAL_ROUNDS === 1 ? "" : "s"}) ==`,
  );
  try {
    await ensureToolchain({ only: LAB_TOOLS, log: () => undefined });
  } catch (e) {
    console.log(`  skipped: the lab's operators are not built (${(e as Error).message.split("\n")[0]})`);
    return;
  }
  const mirror = await startChartMirror();
  const kubectl = (args: string[]) => spawnSync(toolPath("kubectl"), args, { env: base, encoding: "utf8" });
  const results: Record<string, { converged: boolean; ms: number; output: string }[]> = {
    "script (as written)": [],
    "script with a retry loop": [],
    "khook (one run)": [],
  };
  try {
    for (let round = 0; round < REAL_ROUNDS; round++) {
      for (const [label, command, args] of [
        ["script (as written)", "bash", ["bootstrap.sh"]],
        ["script with a retry loop", "bash", ["bootstrap-loop.sh"]],
        ["khook (one run)", process.execPath, [bin, "apply", "-f", "spec.yaml"]],
      ] as const) {
        const ns = `races-real-${label.replace(/[^a-z]/g, "").slice(0, 12)}-${process.pid.toString(36)}${round}`;
        const work = path.join(dir, ns);
        fs.mkdirSync(work);
        fs.writeFileSync(path.join(work, "issuers.yaml"), ISSUERS(ns));
        fs.writeFileSync(path.join(work, "bootstrap.sh"), REAL_SCRIPT);
        fs.writeFileSync(path.join(work, "bootstrap-loop.sh"), REAL_SCRIPT_WITH_LOOP);
        fs.writeFileSync(path.join(work, "spec.yaml"), REAL_SPEC(ns));
        kubectl(["create", "namespace", ns]);
        const t0 = Date.now();
        // Asynchronously: the mirror answers helm from this very process.
        const r = await run(command, [...args], {
          cwd: work,
          env: { ...base, NS: ns, MIRROR: mirror.repoUrl, KHOOK_VAR_MIRROR: mirror.repoUrl },
          timeoutMs: 600_000,
        });
        const ms = Date.now() - t0;
        const ready =
          kubectl([
            "get",
            "certificate",
            "web",
            "-n",
            ns,
            "-o",
            "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
          ]).stdout === "True";
        results[label]!.push({ converged: r.code === 0 && ready, ms, output: `${r.stdout}${r.stderr}` });
        kubectl(["delete", "clusterissuer", "bench-selfsigned", "bench-ca", "--ignore-not-found"]);
        kubectl(["delete", "namespace", ns, "--wait=false"]);
        await removeCertManager(kubeconfig);
      }
    }
    for (const [label, outcomes] of Object.entries(results)) {
      const ok = outcomes.filter((o) => o.converged);
      const times = ok.map((o) => o.ms).sort((a, b) => a - b);
      const median =
        times.length > 0
          ? `${(times[Math.floor(times.length / 2)]! / 1000).toFixed(1)} s from the install's start to the Certificate Ready (median)`
          : "—";
      console.log(`  ${label.padEnd(28)} one run converged: ${ok.length}/${outcomes.length}   ${median}`);
    }
    const failed = results["script (as written)"]![0];
    if (failed && !failed.converged)
      console.log(
        `  (the script as written stops at: ${
          failed.output
            .split("\n")
            .find((l) => /error|Error/.test(l))
            ?.slice(0, 200) ?? "?"
        })`,
      );
  } finally {
    await mirror.close();
  }
}
