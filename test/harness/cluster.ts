// A real, local Kubernetes control plane for tests: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok (fake Nodes and pod lifecycles), on loopback at free ports, with its own
// certificates, and the lab daemon (lab.ts): the API server's egress proxy, so nothing the API
// server dials leaves loopback (ClusterIPs are loopback addresses too, 127.96.0.0/16, as a second
// wall). Every process is recorded in <dir>/cluster.json so any process can stop it.
import fs from "node:fs";
import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { generateClusterCerts } from "./certs";
import { egressSelectorConfig } from "./egress";
import { ApiClient } from "./kube-lite";
import { toolPath } from "./toolchain";
import {
  freePort,
  isAlive,
  killGroup,
  repoRoot,
  runDir,
  sleep,
  spawnDaemon,
  tailFile,
  waitFor,
  writeFileAtomic,
} from "./util";

export const COMPONENTS = [
  "lab",
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok",
] as const;
export type Component = (typeof COMPONENTS)[number];

/** How a component was started, so a fault-injection test can start it again exactly so. */
export interface ComponentCommand {
  bin: string;
  args: string[];
  log: string;
  /** Environment entries set on top of the harness's own. */
  env?: Record<string, string>;
}

export interface ClusterState {
  dir: string;
  kubeconfig: string;
  server: string;
  logsDir: string;
  etcdDataDir: string;
  nodes: string[];
  pids: Partial<Record<Component | "watchdog", number>>;
  commands: Partial<Record<Component, ComponentCommand>>;
  /**
   * The etcd members besides `etcd` (a private cluster started with `etcdMembers` > 1): the API
   * server talks to `etcd` only, so a test that freezes these takes that member's quorum away.
   */
  etcdPeers?: { pid: number; command: ComponentCommand; dataDir: string }[];
  /**
   * Each Node's kubelet port on 127.0.0.1 (its status's InternalIP and daemonEndpoints), where the
   * lab daemon serves what metrics-server scrapes from kwok's metrics (kubelet-front.ts).
   */
  kubeletPorts?: Record<string, number>;
  /** kwok's own HTTP server (its metrics, logs and exec endpoints). */
  kwokPort?: number;
  startedAt: string;
  startSeconds?: number;
}

export interface StartClusterOptions {
  /** Directory for certificates, kubeconfig, logs and state. Default: <run>/clusters/<name>. */
  dir?: string;
  name?: string;
  /** Number of fake kwok Nodes (default 1). */
  nodes?: number;
  log?: (line: string) => void;
  /** Stop the cluster automatically when this pid exits (a detached watchdog process). */
  watchPid?: number;
  timeoutMs?: number;
  /**
   * kube-apiserver flags (`--name=value`) that replace the harness's flag of the same name, or are
   * added: a private cluster with API Priority and Fairness on, say. Never for the shared cluster.
   */
  apiserverFlags?: string[];
  /** etcd members (default 1). With more, the API server is given the first only (see ClusterState.etcdPeers). */
  etcdMembers?: number;
}

/** `flags` with each of `overrides` in place of the flag of the same name (`--name=`), or added. */
export function withFlags(flags: string[], overrides: readonly string[]): string[] {
  const nameOf = (f: string) => f.split("=")[0]!;
  const out = flags.map((f) => overrides.find((o) => nameOf(o) === nameOf(f)) ?? f);
  for (const o of overrides) if (!flags.some((f) => nameOf(f) === nameOf(o))) out.push(o);
  return out;
}

const STATE_FILE = "cluster.json";

/** The Service CIDR of every harness cluster: loopback, so a ClusterIP dialed by mistake goes nowhere. */
export const SERVICE_CIDR = "127.96.0.0/16";

/**
 * The unix socket of the cluster's egress proxy: in its directory, unless that path is too long
 * for a socket (108 bytes on Linux), then under the system's temporary directory.
 */
export function egressSocketPath(dir: string): string {
  const inDir = path.join(dir, "egress.sock");
  if (Buffer.byteLength(inDir) < 100) return inDir;
  const h = createHash("sha256").update(path.resolve(dir)).digest("hex").slice(0, 16);
  return path.join(os.tmpdir(), `khook-egress-${h}.sock`);
}

export function clusterDir(name: string): string {
  return path.join(runDir(), "clusters", name);
}

export function readClusterState(dir: string): ClusterState | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, STATE_FILE), "utf8")) as ClusterState;
  } catch {
    return undefined;
  }
}

function writeState(s: ClusterState): void {
  writeFileAtomic(path.join(s.dir, STATE_FILE), `${JSON.stringify(s, null, 2)}\n`);
}

/** Is every component of the recorded cluster still running? */
export function clusterAlive(s: ClusterState): boolean {
  return COMPONENTS.every((c) => {
    const pid = s.pids[c];
    return pid !== undefined && isAlive(pid);
  });
}

function kubeconfigYaml(server: string, caCrt: string, crt: string, key: string): string {
  const b64 = (f: string) => fs.readFileSync(f).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: khook-test",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caCrt)}`,
    "users:",
    "- name: khook-admin",
    "  user:",
    `    client-certificate-data: ${b64(crt)}`,
    `    client-key-data: ${b64(key)}`,
    "contexts:",
    "- name: khook-test",
    "  context:",
    "    cluster: khook-test",
    "    user: khook-admin",
    "current-context: khook-test",
    "",
  ].join("\n");
}

function fakeNode(name: string, kubeletPort: number): unknown {
  const resources = { cpu: "32", memory: "256Gi", pods: "110", "ephemeral-storage": "1Ti" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
      },
    },
    spec: {},
    // Loopback, so a process that dials a Node (metrics-server scraping its kubelet) stays on this
    // machine; the port is the lab's kubelet endpoint for this Node. The API server's own kubelet
    // traffic (logs, exec) goes through the egress proxy.
    status: {
      allocatable: resources,
      capacity: resources,
      addresses: [
        { type: "InternalIP", address: "127.0.0.1" },
        { type: "Hostname", address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
    },
  };
}

/** Starts a fresh cluster and waits until it is healthy (Nodes Ready, default ServiceAccount exists). */
export async function startCluster(opts: StartClusterOptions = {}): Promise<ClusterState> {
  const t0 = Date.now();
  const log = opts.log ?? (() => undefined);
  const dir = opts.dir ?? clusterDir(opts.name ?? `run-${process.pid}`);
  const old = readClusterState(dir);
  if (old) await stopCluster(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const logsDir = path.join(dir, "logs");
  fs.mkdirSync(logsDir, { recursive: true });

  const bins = {
    etcd: toolPath("etcd"),
    apiserver: toolPath("kube-apiserver"),
    cm: toolPath("kube-controller-manager"),
    scheduler: toolPath("kube-scheduler"),
    kwok: toolPath("kwok"),
  };

  const certsP = generateClusterCerts(path.join(dir, "pki"));
  const [etcdClient, etcdPeer, apiPort, kwokPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const server = `https://127.0.0.1:${apiPort}`;
  // etcd on tmpfs when available: no fsync, no disk wear, noticeably faster writes.
  const shm = fs.existsSync("/dev/shm") ? "/dev/shm" : dir;
  const etcdDataDir = fs.mkdtempSync(path.join(shm, "khook-etcd-"));
  const nodeCount = Math.max(1, opts.nodes ?? 1);
  const nodeNames = Array.from({ length: nodeCount }, (_, i) => `kwok-node-${i}`);
  const kubeletPorts = Object.fromEntries(
    await Promise.all(nodeNames.map(async (n) => [n, await freePort()] as const)),
  );
  const state: ClusterState = {
    dir,
    kubeconfig: path.join(dir, "kubeconfig"),
    server,
    logsDir,
    etcdDataDir,
    nodes: nodeNames,
    kubeletPorts,
    kwokPort,
    pids: {},
    commands: {},
    startedAt: new Date().toISOString(),
  };
  writeState(state);
  const start = (c: Component, cmd: ComponentCommand): void => {
    state.commands[c] = cmd;
    state.pids[c] = spawnComponent(cmd);
    writeState(state);
  };

  const fail = async (e: unknown): Promise<never> => {
    const logs = componentLogs(state, 40);
    await stopCluster(dir).catch(() => undefined);
    throw new Error(`khook harness: the test cluster did not start: ${(e as Error).message}\n${logs}`);
  };

  // Members beyond the first (a private cluster's), each with its own ports and data.
  const peers = await Promise.all(
    Array.from({ length: Math.max(1, opts.etcdMembers ?? 1) - 1 }, async (_, i) => ({
      name: `khook-${i + 1}`,
      client: await freePort(),
      peer: await freePort(),
      dataDir: fs.mkdtempSync(path.join(shm, "khook-etcd-")),
    })),
  );
  const etcdArgs = (name: string, dataDir: string, client: number, peer: number): string[] => [
    `--name=${name}`,
    `--data-dir=${dataDir}`,
    `--listen-client-urls=http://127.0.0.1:${client}`,
    `--advertise-client-urls=http://127.0.0.1:${client}`,
    `--listen-peer-urls=http://127.0.0.1:${peer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
    `--initial-cluster=${[`khook=http://127.0.0.1:${etcdPeer}`, ...peers.map((m) => `${m.name}=http://127.0.0.1:${m.peer}`)].join(",")}`,
    ...(peers.length > 0 ? [`--initial-cluster-token=khook-${path.basename(dir)}`] : []),
    "--unsafe-no-fsync",
    "--log-level=warn",
    "--quota-backend-bytes=2147483648",
  ];

  try {
    // The egress proxy first: the API server sends its cluster egress there from its first request.
    const socket = egressSocketPath(dir);
    const egressConfig = path.join(dir, "egress-selector.yaml");
    fs.writeFileSync(egressConfig, egressSelectorConfig(socket));
    fs.rmSync(socket, { force: true });
    start("lab", {
      bin: process.execPath,
      args: [path.join(__dirname, "lab.js"), dir, socket, server],
      log: path.join(logsDir, "lab.log"),
    });
    start("etcd", {
      bin: bins.etcd,
      args: etcdArgs("khook", etcdDataDir, etcdClient, etcdPeer),
      log: path.join(logsDir, "etcd.log"),
    });
    if (peers.length > 0) {
      state.etcdPeers = peers.map((m) => {
        const command = {
          bin: bins.etcd,
          args: etcdArgs(m.name, m.dataDir, m.client, m.peer),
          log: path.join(logsDir, `${m.name}.log`),
        };
        return { pid: spawnComponent(command), command, dataDir: m.dataDir };
      });
      writeState(state);
    }
    const certs = await certsP;
    await waitFor(
      "the lab's egress proxy socket",
      () => {
        if (!isAlive(state.pids.lab!)) throw new Error("the lab daemon exited");
        return fs.existsSync(socket);
      },
      { timeoutMs: 15_000, intervalMs: 25 },
    );
    fs.writeFileSync(state.kubeconfig, kubeconfigYaml(server, certs.caCrt, certs.adminCrt, certs.adminKey), {
      mode: 0o600,
    });

    start("kube-apiserver", {
      bin: bins.apiserver,
      args: withFlags(
        [
          `--etcd-servers=http://127.0.0.1:${etcdClient}`,
          "--bind-address=127.0.0.1",
          "--advertise-address=127.0.0.1",
          `--secure-port=${apiPort}`,
          `--cert-dir=${path.join(dir, "pki")}`,
          `--tls-cert-file=${certs.serverCrt}`,
          `--tls-private-key-file=${certs.serverKey}`,
          `--client-ca-file=${certs.caCrt}`,
          `--service-account-key-file=${certs.saPub}`,
          `--service-account-signing-key-file=${certs.saKey}`,
          "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          `--egress-selector-config-file=${egressConfig}`,
          // Service-backed webhooks and aggregated APIs dial the Service's endpoints (podIP:port)
          // through the egress proxy, as the launcher's processes serve them, not its ClusterIP.
          "--enable-aggregator-routing=true",
          // The aggregation layer, as kubeadm sets it up: aggregated APIs (metrics-server) authenticate
          // the API server's proxied requests by this client certificate and these headers.
          `--requestheader-client-ca-file=${certs.frontProxyCaCrt}`,
          "--requestheader-allowed-names=front-proxy-client",
          "--requestheader-username-headers=X-Remote-User",
          "--requestheader-group-headers=X-Remote-Group",
          "--requestheader-extra-headers-prefix=X-Remote-Extra-",
          `--proxy-client-cert-file=${certs.frontProxyClientCrt}`,
          `--proxy-client-key-file=${certs.frontProxyClientKey}`,
          "--authorization-mode=RBAC",
          "--endpoint-reconciler-type=none",
          "--allow-privileged=true",
          "--enable-priority-and-fairness=false",
          "--profiling=false",
          "--event-ttl=30m",
          "--v=1",
        ],
        opts.apiserverFlags ?? [],
      ),
      log: path.join(logsDir, "kube-apiserver.log"),
    });

    const api = new ApiClient(server, certs.dir);
    await waitFor(
      "kube-apiserver /readyz",
      async () => {
        for (const c of ["etcd", "kube-apiserver"] as const) {
          if (!isAlive(state.pids[c]!)) throw new Error(`${c} exited`);
        }
        const r = await api.request("GET", "/readyz");
        return r.status === 200;
      },
      { timeoutMs: opts.timeoutMs ?? 90_000, intervalMs: 100 },
    );
    log(`khook cluster: apiserver ready after ${((Date.now() - t0) / 1000).toFixed(1)}s`);

    // Nodes first, so kwok and the scheduler see them as soon as they start.
    await Promise.all(
      state.nodes.map(async (n) => {
        const r = await api.request("POST", "/api/v1/nodes", fakeNode(n, kubeletPorts[n]!));
        if (r.status !== 201 && r.status !== 409) throw new Error(`creating node ${n}: ${r.status} ${r.body}`);
      }),
    );

    const kc = state.kubeconfig;
    start("kube-controller-manager", {
      bin: bins.cm,
      args: [
        `--kubeconfig=${kc}`,
        `--authentication-kubeconfig=${kc}`,
        `--authorization-kubeconfig=${kc}`,
        "--secure-port=0",
        "--leader-elect=false",
        `--service-account-private-key-file=${certs.saKey}`,
        `--root-ca-file=${certs.caCrt}`,
        `--cluster-signing-cert-file=${certs.caCrt}`,
        `--cluster-signing-key-file=${certs.caKey}`,
        "--use-service-account-credentials=false",
        "--cluster-name=khook-test",
        "--kube-api-qps=200",
        "--kube-api-burst=400",
        "--v=1",
      ],
      log: path.join(logsDir, "kube-controller-manager.log"),
    });
    start("kube-scheduler", {
      bin: bins.scheduler,
      args: [
        `--kubeconfig=${kc}`,
        `--authentication-kubeconfig=${kc}`,
        `--authorization-kubeconfig=${kc}`,
        "--secure-port=0",
        "--leader-elect=false",
        "--v=1",
      ],
      log: path.join(logsDir, "kube-scheduler.log"),
    });
    start("kwok", {
      bin: bins.kwok,
      args: [
        `--kubeconfig=${kc}`,
        `--config=${path.join(repoRoot(), "test", "harness", "kwok", "stages.yaml")}`,
        `--config=${path.join(repoRoot(), "test", "harness", "kwok", "metrics.yaml")}`,
        "--manage-all-nodes=false",
        "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
        "--cidr=10.244.0.0/16",
        "--node-ip=127.0.0.1",
        `--server-address=127.0.0.1:${kwokPort}`,
      ],
      log: path.join(logsDir, "kwok.log"),
      env: { HOME: dir },
    });

    if (opts.watchPid) state.pids.watchdog = startWatchdog(opts.watchPid, dir);
    writeState(state);

    await waitFor(
      "the Nodes to be Ready and the default ServiceAccount to exist",
      async () => {
        for (const c of COMPONENTS) {
          if (!isAlive(state.pids[c]!)) throw new Error(`${c} exited`);
        }
        for (const n of state.nodes) {
          const r = await api.request("GET", `/api/v1/nodes/${n}`);
          if (r.status !== 200) return false;
          const node = JSON.parse(r.body) as { status?: { conditions?: { type: string; status: string }[] } };
          if (!node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) return false;
        }
        const sa = await api.request("GET", "/api/v1/namespaces/default/serviceaccounts/default");
        if (sa.status !== 200) return false;
        const ca = await api.request("GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt");
        return ca.status === 200;
      },
      { timeoutMs: opts.timeoutMs ?? 90_000, intervalMs: 150 },
    );
    state.startSeconds = Math.round((Date.now() - t0) / 100) / 10;
    writeState(state);
    log(`khook cluster: healthy after ${state.startSeconds}s (kubeconfig ${state.kubeconfig})`);
    return state;
  } catch (e) {
    return fail(e);
  }
}

function spawnComponent(cmd: ComponentCommand): number {
  return spawnDaemon(cmd.bin, cmd.args, cmd.log, cmd.env ? { env: { ...process.env, ...cmd.env } } : {});
}

// ------------------------------------------------------------------ fault injection
// For tests that break the control plane on purpose. Only ever on a private cluster a test file
// started itself: never on the shared one.

/** Kills one component (SIGKILL by default: a crash) and waits until it is gone. */
export async function killComponent(s: ClusterState, c: Component): Promise<void> {
  const pid = s.pids[c];
  if (pid === undefined) throw new Error(`khook harness: ${c} was never started`);
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    /* already gone */
  }
  if (!(await waitGone([pid], 10_000))) throw new Error(`khook harness: ${c} (pid ${pid}) survived SIGKILL`);
}

/**
 * Starts a component again with the flags it first had (same ports, same etcd data), and waits
 * until the API server answers /readyz again.
 */
export async function restartComponent(s: ClusterState, c: Component, timeoutMs = 90_000): Promise<void> {
  const cmd = s.commands[c];
  if (cmd === undefined) throw new Error(`khook harness: no recorded command for ${c}`);
  const old = s.pids[c];
  if (old !== undefined && isAlive(old)) throw new Error(`khook harness: ${c} (pid ${old}) still runs; kill it first`);
  s.pids[c] = spawnComponent(cmd);
  writeState(s);
  await waitApiReady(s, timeoutMs);
}

/** Waits until kube-apiserver answers /readyz with 200 (it checks etcd too). */
export async function waitApiReady(s: ClusterState, timeoutMs = 90_000): Promise<void> {
  const api = new ApiClient(s.server, path.join(s.dir, "pki"));
  await waitFor("kube-apiserver /readyz", async () => (await api.request("GET", "/readyz")).status === 200, {
    timeoutMs,
    intervalMs: 100,
    onTimeout: () => componentLogs(s, 30),
  });
}

/** SIGSTOP: the component stays up (its sockets accept connections) but answers nothing. */
export function freezeComponent(s: ClusterState, c: Component): void {
  signalComponent(s, c, "SIGSTOP");
}

/** SIGCONT: a frozen component carries on. */
export function thawComponent(s: ClusterState, c: Component): void {
  signalComponent(s, c, "SIGCONT");
}

function signalComponent(s: ClusterState, c: Component, sig: NodeJS.Signals): void {
  const pid = s.pids[c];
  if (pid === undefined || !isAlive(pid)) throw new Error(`khook harness: ${c} is not running`);
  process.kill(pid, sig);
}

/** SIGSTOP of every etcd member but the API server's: that member keeps running, without a quorum. */
export function freezeEtcdPeers(s: ClusterState): void {
  if ((s.etcdPeers ?? []).length === 0)
    throw new Error("khook harness: the cluster has one etcd member (start it with etcdMembers > 1)");
  for (const m of s.etcdPeers!) process.kill(m.pid, "SIGSTOP");
}

/** SIGCONT: the quorum is back. */
export function thawEtcdPeers(s: ClusterState): void {
  for (const m of s.etcdPeers ?? []) if (isAlive(m.pid)) process.kill(m.pid, "SIGCONT");
}

/** The watchdog stops the cluster when `parentPid` exits without tearing it down (e.g. killed). */
function startWatchdog(parentPid: number, dir: string): number {
  const script = path.join(__dirname, "watchdog.js");
  return spawnDaemon(process.execPath, [script, String(parentPid), dir], path.join(dir, "logs", "watchdog.log"));
}

/** Stops every process of the cluster recorded in `dir` and removes its etcd data. Idempotent. */
export async function stopCluster(dirOrState: string | ClusterState, opts: { keepDir?: boolean } = {}): Promise<void> {
  const dir = typeof dirOrState === "string" ? dirOrState : dirOrState.dir;
  const s = readClusterState(dir);
  if (!s) return;
  const order: (Component | "watchdog")[] = [
    "lab",
    "kwok",
    "kube-scheduler",
    "kube-controller-manager",
    "kube-apiserver",
    "etcd",
  ];
  await Promise.all([
    ...order.map(async (c) => {
      const pid = s.pids[c];
      if (pid !== undefined) await killGroup(pid, 3000);
    }),
    ...(s.etcdPeers ?? []).map((m) => killGroup(m.pid, 3000)),
  ]);
  fs.rmSync(s.etcdDataDir, { recursive: true, force: true });
  for (const m of s.etcdPeers ?? []) fs.rmSync(m.dataDir, { recursive: true, force: true });
  // The watchdog last: it may be the caller (it exits right after).
  const wd = s.pids.watchdog;
  if (wd !== undefined && wd !== process.pid) await killGroup(wd, 1000);
  if (!opts.keepDir) {
    // Keep logs of failed runs around; the state file goes so nobody thinks it still runs.
    fs.rmSync(path.join(dir, STATE_FILE), { force: true });
  }
}

/**
 * Removes leftovers of earlier test runs: cluster dirs named `test-<pid>` whose owner is gone and
 * that no longer run (kept logs of failed or killed runs), and their /dev/shm etcd data.
 * A cluster that still runs with a dead owner (no watchdog) is stopped first.
 */
export async function pruneStaleTestClusters(): Promise<void> {
  const root = path.join(runDir(), "clusters");
  let entries: string[];
  try {
    entries = fs.readdirSync(root);
  } catch {
    return;
  }
  for (const name of entries) {
    const m = /^test-(\d+)$/.exec(name);
    if (!m || isAlive(Number(m[1]))) continue;
    const dir = path.join(root, name);
    if (readClusterState(dir)) await stopCluster(dir).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The tail of every component's log, for failure reports. */
export function componentLogs(s: Pick<ClusterState, "logsDir">, lines = 60): string {
  const parts: string[] = [];
  for (const c of COMPONENTS) {
    const f = path.join(s.logsDir, `${c}.log`);
    const t = tailFile(f, lines);
    if (t.trim()) parts.push(`----- ${c} (${f}, last ${lines} lines) -----\n${t}`);
  }
  return parts.join("\n");
}

export async function waitGone(pids: number[], timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pids.every((p) => !isAlive(p))) return true;
    await sleep(50);
  }
  return false;
}
