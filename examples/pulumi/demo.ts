/**
 * `npm run demo`: the Khook Pulumi resource, end to end, on a fresh machine.
 *
 *   1. builds (or reuses) the toolchain: the pulumi CLI, a local Kubernetes control plane, helm,
 *      and the lab's real cert-manager and chart mirror
 *   2. starts (or reuses) the local cluster (kwok: fake nodes, no images pulled; cert-manager's
 *      binaries run for real behind their pods, test/harness/launcher.ts)
 *   3. serves the real charts from a helm repository on loopback (the lab's mirror)
 *   4. logs in to a local file backend under ~/.cache/khook/demo
 *   5. creates (or selects) the stack `dev` of the example program (examples/pulumi/index.ts)
 *   6. runs `pulumi up --yes`: examples/demo.khook.yaml, applied through the Khook resource,
 *      ending with a Certificate cert-manager issued
 *   7. prints the step table, the certificate's subject and issuer, and how to clean up
 *
 * `npm run demo -- down` destroys the stack and stops the cluster.
 * Nothing reaches the network: automatic plugin acquisition is off.
 */
import { spawn, spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {
  clusterAlive,
  clusterDir,
  readClusterState,
  startCluster,
  stopCluster,
  type ClusterState,
} from "../../test/harness/cluster";
import { CHART_MIRROR_VAR, startChartMirror } from "../../test/harness/chart-mirror";
import { ensureToolchain, toolPath } from "../../test/harness/toolchain";
import { cacheDir } from "../../test/harness/util";
import type { KhookStep } from "../../sdk/index.js";

const REPO = path.resolve(__dirname, "..", "..", "..");
const DEMO = path.join(cacheDir(), "demo");
const STATE = path.join(DEMO, "state");
const PROJECT = path.join(DEMO, "project");
const STACK = "dev";
const PASSPHRASE = "khook-demo";
const CLUSTER = "demo";

/** The columns of the step table, read from the stack's `steps` output. */
type StepRow = Pick<KhookStep, "name" | "type" | "status" | "reason" | "attempts" | "durationMs">;

function say(line: string): void {
  process.stdout.write(`\x1b[1m==> ${line}\x1b[0m\n`);
}

/**
 * The tools the demo's engine and provider run: pulumi with its language host and the dynamic
 * provider's shim, helm (the Khook provider's), and this node. Not every cached tool: a
 * pulumi-resource-kubernetes on PATH would make the engine load it, with a warning, for a program
 * that never uses it.
 */
function demoPath(): string {
  return [path.dirname(toolPath("pulumi")), path.dirname(toolPath("helm")), path.dirname(process.execPath)].join(
    path.delimiter,
  );
}

function pulumiEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: [demoPath(), process.env.PATH ?? ""].join(path.delimiter),
    PULUMI_HOME: path.join(DEMO, "pulumi-home"),
    PULUMI_BACKEND_URL: `file://${STATE}`,
    PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
  };
}

/** Runs pulumi in the demo project; `show` streams its output to the terminal. */
function pulumi(args: string[], show = true): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(toolPath("pulumi"), args, {
      cwd: PROJECT,
      env: pulumiEnv(),
      stdio: ["inherit", "pipe", show ? "inherit" : "pipe"],
    });
    let stdout = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (show) process.stdout.write(d);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout }));
  });
}

async function mustPulumi(args: string[], show = true): Promise<string> {
  const r = await pulumi(args, show);
  if (r.code !== 0) throw new Error(`pulumi ${args.join(" ")} failed (exit ${r.code})`);
  return r.stdout;
}

async function cluster(): Promise<ClusterState> {
  const existing = readClusterState(clusterDir(CLUSTER));
  if (existing && clusterAlive(existing)) {
    say(`2/7 reusing the local cluster at ${existing.server}`);
    return existing;
  }
  say("2/7 starting the local cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok, the lab)");
  return startCluster({ name: CLUSTER, log: (l) => process.stdout.write(`    ${l}\n`) });
}

/** The demo's own Pulumi project: the example program, with stack config kept out of the repository. */
function writeProject(): void {
  fs.mkdirSync(PROJECT, { recursive: true });
  const main = path.join(REPO, "dist", "examples", "pulumi", "index.js");
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  fs.writeFileSync(
    path.join(PROJECT, "Pulumi.yaml"),
    [
      "name: khook-demo",
      "description: Bootstrap a Kubernetes cluster with a khook spec (the Khook dynamic resource)",
      "runtime:",
      "  name: nodejs",
      "  options:",
      "    typescript: false",
      `main: ${JSON.stringify(main)}`,
      "",
    ].join("\n"),
  );
}

function table(rows: StepRow[]): string {
  const head = ["STEP", "TYPE", "STATUS", "TRIES", "TIME", "REASON"];
  const cells = rows.map((r) => [
    r.name,
    r.type,
    r.status,
    String(r.attempts),
    `${(r.durationMs / 1000).toFixed(1)}s`,
    r.reason,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const fmt = (c: string[]): string => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!))).join("  ");
  return [fmt(head), ...cells.map(fmt)].join("\n");
}

function cleanupText(): string {
  return [
    "Clean up (destroy the stack, stop the cluster):",
    "  npm run demo -- down",
    "",
    "Or drive the stack yourself:",
    `  export PULUMI_HOME=${path.join(DEMO, "pulumi-home")} PULUMI_BACKEND_URL=file://${STATE} PULUMI_CONFIG_PASSPHRASE=${PASSPHRASE}`,
    `  export PATH=${demoPath()}:$PATH PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true`,
    `  pulumi -C ${PROJECT} preview --diff      # the plan: one line per step`,
    `  pulumi -C ${PROJECT} refresh --yes       # read the journal back into the outputs`,
    `  pulumi -C ${PROJECT} destroy --yes       # tear down and remove the journal`,
  ].join("\n");
}

/** The subject and issuer of the certificate cert-manager issued into `namespace/secret`, read from its Secret. */
function issued(kubeconfig: string, namespace: string, secret: string): string {
  const r = spawnSync(
    toolPath("kubectl"),
    ["--kubeconfig", kubeconfig, "-n", namespace, "get", "secret", secret, "-o", "jsonpath={.data.tls\\.crt}"],
    { encoding: "utf8" },
  );
  if (r.status !== 0 || r.stdout === "") return `(no certificate in secret ${namespace}/${secret}: ${r.stderr.trim()})`;
  const cert = new X509Certificate(Buffer.from(r.stdout, "base64"));
  return [
    `certificate ${namespace}/${secret}, issued by cert-manager:`,
    `  subject: ${cert.subject.replace(/\n/g, ", ")}`,
    `  issuer:  ${cert.issuer.replace(/\n/g, ", ")}`,
    `  names:   ${cert.subjectAltName ?? ""}`,
    `  valid:   ${cert.validFrom} – ${cert.validTo}`,
  ].join("\n");
}

async function up(): Promise<void> {
  const t0 = Date.now();
  say(
    "1/7 building or reusing the toolchain (pulumi, kube-apiserver, etcd, kwok, helm, cert-manager) under ~/.cache/khook/tools",
  );
  await ensureToolchain({
    only: ["etcd", "kubernetes", "kwok", "pulumi", "helm", "lab-charts", "cert-manager"],
    log: (l) => process.stdout.write(`    ${l}\n`),
  });
  const c = await cluster();

  say("3/7 serving the real charts from a helm repository on loopback (the lab's mirror)");
  const mirror = await startChartMirror();
  try {
    say(`4/7 logging in to the local file backend ${STATE}`);
    fs.mkdirSync(STATE, { recursive: true });
    writeProject();
    await mustPulumi(["login", `file://${STATE}`]);

    say(`5/7 selecting the stack ${STACK} (created if missing)`);
    await mustPulumi(["stack", "select", "--create", STACK]);
    await mustPulumi(["config", "set", "kubeconfigFile", c.kubeconfig]);
    await mustPulumi(["config", "set", "vars", JSON.stringify({ [CHART_MIRROR_VAR]: mirror.repoUrl })]);

    say("6/7 pulumi up --yes");
    const r = await pulumi(["up", "--yes"]);

    say("7/7 the steps");
    const out = await pulumi(["stack", "output", "steps", "--json"], false);
    try {
      const rows = JSON.parse(out.stdout) as StepRow[];
      process.stdout.write(`${table(rows)}\n\n`);
    } catch {
      process.stdout.write("(no step outputs yet)\n\n");
    }
    if (r.code === 0) process.stdout.write(`${issued(c.kubeconfig, "khook-demo", "web-tls")}\n\n`);
    process.stdout.write(`${cleanupText()}\n`);
    if (r.code !== 0) {
      process.stdout.write(
        "\npulumi up failed: fix the cause and run `npm run demo` again; it resumes from the journal.\n",
      );
      process.exitCode = r.code;
    } else {
      process.stdout.write(`\ndemo done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    await mirror.close();
  }
}

async function down(): Promise<void> {
  if (fs.existsSync(path.join(PROJECT, "Pulumi.yaml")) && fs.existsSync(STATE)) {
    const existing = readClusterState(clusterDir(CLUSTER));
    if (existing && clusterAlive(existing)) {
      say("destroying the stack");
      const r = await pulumi(["destroy", "--yes", "--stack", STACK]);
      if (r.code !== 0) throw new Error("pulumi destroy failed; the cluster is left running");
    }
    await pulumi(["stack", "rm", "--yes", "--force", STACK], false);
  }
  say("stopping the local cluster");
  await stopCluster(clusterDir(CLUSTER)).catch(() => undefined);
  fs.rmSync(DEMO, { recursive: true, force: true });
  say(`removed ${DEMO}`);
}

async function main(argv: string[]): Promise<void> {
  const cmd = argv[0] ?? "up";
  if (cmd === "up") await up();
  else if (cmd === "down") await down();
  else {
    process.stderr.write("usage: npm run demo [-- up|down]\n");
    process.exitCode = 2;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`demo: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
