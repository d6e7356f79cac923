/**
 * The lab's launcher: real operators behind kwok's pods. It watches every pod; a pod whose image is
 * one the lab runs (lab-images.ts) is left by kwok's stages Running but not Ready, with its pod IP,
 * and the launcher then acts as its kubelet: it materialises the pod's volumes into a directory of
 * its own, asks a TokenRequest for the pod's ServiceAccount (so the process has exactly the RBAC
 * the chart gave it), writes a kubeconfig with that token, starts the binary as a host process with
 * the pod's arguments and environment (launch-plan.ts), registers each listener with the egress
 * proxy as `podIP:containerPort`, and marks the pod Ready once the process's own readiness probe
 * answers. The process's log is kept with the cluster's logs (`logs/pods/`); it is restarted as the
 * pod's restartPolicy says when it exits, and stopped when the pod goes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import path from "node:path";
import type { EgressRoutes } from "./egress";
import { ApiClient, ApiError, type WatchEvent } from "./kube-lite";
import { labImageFor, type LabImage } from "./lab-images";
import { LaunchError, fieldValue, planLaunch, type Json, type LaunchPlan, type PodData } from "./launch-plan";
import { toolPath } from "./toolchain";
import { freePort, sleep } from "./util";

const TOKEN_SECONDS = 3600;
/**
 * A pod annotated so (a Go duration: "8s", "500ms", "1m") has its processes started that long
 * after the launcher takes it, as a kubelet pulling an image would: the same annotation makes
 * kwok's own pods Ready late (kwok/stages.yaml). Real clusters take seconds here; the lab none.
 */
const STARTS_AFTER_ANNOTATION = "khook.io/test-ready-after";
/** Probes start at once and repeat this often until the process answers (the kubelet waits initialDelaySeconds). */
const PROBE_UNREADY_MS = 500;

export interface LauncherOptions {
  /** The cluster's directory (cluster.json, pki/, logs/). */
  dir: string;
  server: string;
  routes: EgressRoutes;
  log: (line: string) => void;
}

/** Whether the launcher runs this pod: one of its containers' images is a lab image. */
export function isLaunched(pod: Json): boolean {
  return ((pod.spec?.containers ?? []) as Json[]).some((c) => labImageFor(String(c.image ?? "")) !== undefined);
}

interface Running {
  container: Json;
  image: LabImage | undefined;
  child?: ChildProcess;
  plan?: LaunchPlan;
  ready: boolean;
  restarts: number;
  startedAt?: string;
  lastExit?: { code: number; reason: string; at: string; startedAt: string };
  done?: { code: number };
  probeTimer?: NodeJS.Timeout;
}

/** One launched pod: its processes, routes, token and directory. */
class PodRun {
  readonly key: string;
  private stopped = false;
  private attempts = 0;
  private readonly running = new Map<string, Running>();
  private tokenTimer?: NodeJS.Timeout;
  private readonly podDir: string;
  private pod: Json;

  constructor(
    private readonly l: Launcher,
    pod: Json,
  ) {
    this.pod = pod;
    this.key = podKey(pod);
    const md = pod.metadata;
    this.podDir = path.join(l.opts.dir, "lab", "pods", `${md.namespace}_${md.name}_${String(md.uid).slice(0, 8)}`);
  }

  private get ns(): string {
    return String(this.pod.metadata.namespace);
  }
  private get name(): string {
    return String(this.pod.metadata.name);
  }

  async start(): Promise<void> {
    for (const r of this.running.values()) if (r.child) r.child.kill("SIGKILL");
    this.running.clear();
    if (this.tokenTimer) clearTimeout(this.tokenTimer);
    fs.rmSync(this.podDir, { recursive: true, force: true });
    fs.mkdirSync(this.podDir, { recursive: true, mode: 0o700 });
    for (const c of this.pod.spec.containers as Json[]) {
      this.running.set(c.name, { container: c, image: labImageFor(String(c.image)), ready: false, restarts: 0 });
    }
    try {
      const delay = goDurationMs(this.pod.metadata.annotations?.[STARTS_AFTER_ANNOTATION]);
      if (delay > 0 && this.attempts === 0) {
        this.l.opts.log(`${this.key}: starting in ${delay} ms (${STARTS_AFTER_ANNOTATION})`);
        await sleep(delay);
        if (this.stopped) return;
      }
      await this.refreshToken();
      const data = await this.gatherData();
      const mounts = this.materialise(data);
      for (const r of this.running.values()) {
        if (!r.image) {
          // A container the lab has no binary for, in a launched pod: kwok's, Running and Ready.
          r.ready = true;
          r.startedAt = new Date().toISOString();
          continue;
        }
        await this.launch(r, data, mounts.get(r.container.name)!);
      }
    } catch (e) {
      const why = e instanceof LaunchError || e instanceof ApiError ? e.message : String((e as Error).stack ?? e);
      this.l.opts.log(`${this.key}: cannot launch: ${why}`);
      await this.patchStatus({ waiting: { reason: "CreateContainerConfigError", message: `khook lab: ${why}` } });
      // As the kubelet does: try again (a Secret the pod names may come later, a binary may get built).
      this.attempts++;
      await sleep(Math.min(30_000, 1000 * 2 ** Math.min(this.attempts, 5)));
      if (!this.stopped) await this.start();
      return;
    }
    await this.patchStatus();
  }

  private async launch(r: Running, data: PodData, mounts: Map<string, string>): Promise<void> {
    let bin: string;
    try {
      bin = toolPath(r.image!.tool);
    } catch {
      throw new LaunchError(
        `the lab has no ${r.image!.tool} binary for image ${r.container.image} (build it: ./dev toolchain --only ${toolUnitHint(r.image!.tool)})`,
      );
    }
    const ports = await Promise.all(r.image!.listeners.map(() => freePort()));
    r.plan = planLaunch({
      pod: this.pod,
      container: r.container,
      image: r.image!,
      data,
      mounts,
      freePort: () => ports.shift()!,
      kubeconfig: path.join(this.podDir, "kubeconfig"),
      baseEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: this.podDir },
    });
    for (const p of r.plan.ports) this.l.opts.routes.add(`${this.pod.status.podIP}:${p.containerPort}`, p.localPort);
    this.spawn(r, bin);
  }

  private spawn(r: Running, bin: string): void {
    if (this.stopped) return;
    const logFile = path.join(this.l.opts.dir, "logs", "pods", `${this.ns}_${this.name}_${r.container.name}.log`);
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    const fd = fs.openSync(logFile, "a");
    fs.writeSync(
      fd,
      `----- khook lab: ${new Date().toISOString()} start #${r.restarts}: ${bin} ${r.plan!.args.join(" ")}\n`,
    );
    const child = spawn(bin, r.plan!.args, { cwd: this.podDir, env: r.plan!.env, stdio: ["ignore", fd, fd] });
    fs.closeSync(fd);
    r.child = child;
    r.startedAt = new Date().toISOString();
    r.ready = false;
    this.l.opts.log(`${this.key}/${r.container.name}: started ${path.basename(bin)} (pid ${child.pid})`);
    child.on("error", (e) => this.l.opts.log(`${this.key}/${r.container.name}: ${e.message}`));
    child.on("exit", (code, signal) => void this.exited(r, bin, code ?? (signal ? 137 : 1)));
    this.probe(r);
  }

  private async exited(r: Running, bin: string, code: number): Promise<void> {
    if (r.probeTimer) clearTimeout(r.probeTimer);
    r.child = undefined;
    r.ready = false;
    if (this.stopped) return;
    const at = new Date().toISOString();
    r.lastExit = { code, reason: code === 0 ? "Completed" : "Error", at, startedAt: r.startedAt ?? at };
    this.l.opts.log(`${this.key}/${r.container.name}: exited with code ${code}`);
    const policy = String(this.pod.spec.restartPolicy ?? "Always");
    if (policy === "Never" || (policy === "OnFailure" && code === 0)) {
      r.done = { code };
      await this.patchStatus();
      return;
    }
    r.restarts++;
    const backoff = Math.min(30_000, 1000 * 2 ** Math.min(r.restarts - 1, 5));
    await this.patchStatus();
    await sleep(backoff);
    this.spawn(r, bin);
  }

  /** Asks the readiness probe until it answers, then marks the container ready (and keeps asking). */
  private probe(r: Running): void {
    const p = r.plan!.readiness;
    const period = Math.max(1, Number(r.container.readinessProbe?.periodSeconds ?? 10)) * 1000;
    const failureThreshold = Math.max(1, Number(r.container.readinessProbe?.failureThreshold ?? 3));
    let failures = 0;
    const tick = async () => {
      if (this.stopped || !r.child) return;
      const ok = p.kind === "none" ? true : await askProbe(p);
      if (ok) failures = 0;
      else failures++;
      const ready = ok || (r.ready && failures < failureThreshold);
      if (ready !== r.ready) {
        r.ready = ready;
        this.l.opts.log(`${this.key}/${r.container.name}: ${ready ? "ready" : "not ready"}`);
        await this.patchStatus();
      }
      if (!this.stopped && r.child) r.probeTimer = setTimeout(() => void tick(), r.ready ? period : PROBE_UNREADY_MS);
    };
    // Without a probe the kubelet counts a started container ready; the status patch that says so follows the start.
    if (p.kind === "none") r.ready = true;
    r.probeTimer = setTimeout(() => void tick(), p.kind === "none" ? 0 : PROBE_UNREADY_MS);
  }

  async stop(why: string): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.tokenTimer) clearTimeout(this.tokenTimer);
    const grace = Math.min(10, Number(this.pod.spec?.terminationGracePeriodSeconds ?? 10)) * 1000;
    await Promise.all(
      [...this.running.values()].map(async (r) => {
        if (r.probeTimer) clearTimeout(r.probeTimer);
        for (const p of r.plan?.ports ?? []) this.l.opts.routes.remove(`${this.pod.status?.podIP}:${p.containerPort}`);
        const child = r.child;
        if (!child || child.exitCode !== null) return;
        const gone = new Promise<void>((res) => child.once("exit", () => res()));
        child.kill("SIGTERM");
        const t = setTimeout(() => child.kill("SIGKILL"), grace);
        await gone;
        clearTimeout(t);
      }),
    );
    fs.rmSync(this.podDir, { recursive: true, force: true });
    this.l.opts.log(`${this.key}: stopped (${why})`);
  }

  /** A token for the pod's ServiceAccount, bound to the pod, in the file the kubeconfig names; renewed before it expires. */
  private async refreshToken(): Promise<void> {
    const sa = String(this.pod.spec.serviceAccountName ?? "default");
    const r = await this.l.api.request("POST", `/api/v1/namespaces/${this.ns}/serviceaccounts/${sa}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        expirationSeconds: TOKEN_SECONDS,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name: this.name, uid: this.pod.metadata.uid },
      },
    });
    if (r.status !== 201 && r.status !== 200)
      throw new ApiError(
        r.status,
        `TokenRequest for ServiceAccount ${this.ns}/${sa}: ${r.status} ${r.body.slice(0, 300)}`,
      );
    const token = String((JSON.parse(r.body) as { status: { token: string } }).status.token);
    writeSecretFile(path.join(this.podDir, "token"), token);
    writeSecretFile(
      path.join(this.podDir, "kubeconfig"),
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: lab",
        "  cluster:",
        `    server: ${this.l.opts.server}`,
        `    certificate-authority: ${path.join(this.l.opts.dir, "pki", "ca.crt")}`,
        "users:",
        `- name: ${sa}`,
        "  user:",
        `    tokenFile: ${path.join(this.podDir, "token")}`,
        "contexts:",
        "- name: lab",
        "  context:",
        "    cluster: lab",
        `    user: ${sa}`,
        `    namespace: ${this.ns}`,
        "current-context: lab",
        "",
      ].join("\n"),
    );
    this.tokenTimer = setTimeout(
      () => void this.refreshToken().catch((e: Error) => this.l.opts.log(`${this.key}: token renewal: ${e.message}`)),
      TOKEN_SECONDS * 800,
    );
    this.tokenTimer.unref();
  }

  /** The Secrets and ConfigMaps the pod's containers and volumes name. */
  private async gatherData(): Promise<PodData> {
    const secrets = new Set<string>();
    const configMaps = new Set<string>(["kube-root-ca.crt"]);
    for (const c of this.pod.spec.containers as Json[]) {
      for (const f of (c.envFrom ?? []) as Json[]) {
        if (f.secretRef) secrets.add(f.secretRef.name);
        if (f.configMapRef) configMaps.add(f.configMapRef.name);
      }
      for (const e of (c.env ?? []) as Json[]) {
        if (e.valueFrom?.secretKeyRef) secrets.add(e.valueFrom.secretKeyRef.name);
        if (e.valueFrom?.configMapKeyRef) configMaps.add(e.valueFrom.configMapKeyRef.name);
      }
    }
    for (const v of (this.pod.spec.volumes ?? []) as Json[]) {
      if (v.secret) secrets.add(v.secret.secretName);
      if (v.configMap) configMaps.add(v.configMap.name);
      for (const s of (v.projected?.sources ?? []) as Json[]) {
        if (s.secret) secrets.add(s.secret.name);
        if (s.configMap) configMaps.add(s.configMap.name);
      }
    }
    const data: PodData = { secrets: {}, configMaps: {} };
    const fetch = async (kind: "secrets" | "configmaps", name: string) => {
      const r = await this.l.api.request("GET", `/api/v1/namespaces/${this.ns}/${kind}/${name}`);
      if (r.status === 404) return undefined;
      if (r.status !== 200) throw new ApiError(r.status, `GET ${kind} ${this.ns}/${name}: ${r.status}`);
      const o = JSON.parse(r.body) as { data?: Record<string, string>; binaryData?: Record<string, string> };
      if (kind === "secrets")
        return Object.fromEntries(
          Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
        );
      return {
        ...o.data,
        ...Object.fromEntries(
          Object.entries(o.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("latin1")]),
        ),
      };
    };
    await Promise.all([
      ...[...secrets].map(async (n) => (data.secrets[`${this.ns}/${n}`] = await fetch("secrets", n))),
      ...[...configMaps].map(async (n) => (data.configMaps[`${this.ns}/${n}`] = await fetch("configmaps", n))),
    ]);
    return data;
  }

  /**
   * Writes each volume the containers mount into `<pod dir>/volumes/<name>`; per container, its
   * mount paths → the host paths (subPath included).
   */
  private materialise(data: PodData): Map<string, Map<string, string>> {
    const volumes = new Map<string, string>();
    const volumeDir = (v: Json): string => {
      const dir = path.join(this.podDir, "volumes", v.name);
      if (volumes.has(v.name)) return dir;
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const write = (rel: string, content: string, mode?: number) => {
        const f = path.join(dir, rel);
        if (!path.resolve(f).startsWith(path.resolve(dir) + path.sep))
          throw new LaunchError(`volume ${v.name}: bad path ${rel}`);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, content, { mode: mode ?? 0o600 });
      };
      const fromMap = (
        d: Record<string, string> | undefined,
        items: Json[] | undefined,
        what: string,
        optional: boolean,
      ) => {
        if (d === undefined) {
          if (optional) return;
          throw new LaunchError(`volume ${v.name}: ${what} not found`);
        }
        const list = items && items.length > 0 ? items : Object.keys(d).map((k) => ({ key: k, path: k }));
        for (const it of list) {
          if (d[it.key] === undefined) throw new LaunchError(`volume ${v.name}: key ${it.key} not in ${what}`);
          write(it.path, d[it.key]!, it.mode);
        }
      };
      const downward = (items: Json[]) => {
        for (const it of items) {
          if (it.fieldRef) write(it.path, fieldValue(this.pod, it.fieldRef.fieldPath));
        }
      };
      if (v.emptyDir) {
        /* an empty directory */
      } else if (v.secret) {
        fromMap(
          data.secrets[`${this.ns}/${v.secret.secretName}`],
          v.secret.items,
          `Secret ${v.secret.secretName}`,
          Boolean(v.secret.optional),
        );
      } else if (v.configMap) {
        fromMap(
          data.configMaps[`${this.ns}/${v.configMap.name}`],
          v.configMap.items,
          `ConfigMap ${v.configMap.name}`,
          Boolean(v.configMap.optional),
        );
      } else if (v.downwardAPI) {
        downward(v.downwardAPI.items ?? []);
      } else if (v.projected) {
        for (const s of (v.projected.sources ?? []) as Json[]) {
          if (s.secret)
            fromMap(
              data.secrets[`${this.ns}/${s.secret.name}`],
              s.secret.items,
              `Secret ${s.secret.name}`,
              Boolean(s.secret.optional),
            );
          else if (s.configMap)
            fromMap(
              data.configMaps[`${this.ns}/${s.configMap.name}`],
              s.configMap.items,
              `ConfigMap ${s.configMap.name}`,
              Boolean(s.configMap.optional),
            );
          else if (s.downwardAPI) downward(s.downwardAPI.items ?? []);
          else if (s.serviceAccountToken)
            write(s.serviceAccountToken.path, fs.readFileSync(path.join(this.podDir, "token"), "utf8"));
        }
      } else {
        throw new LaunchError(
          `volume ${v.name}: only emptyDir, secret, configMap, downwardAPI and projected volumes run in the lab`,
        );
      }
      volumes.set(v.name, dir);
      return dir;
    };
    const out = new Map<string, Map<string, string>>();
    for (const c of this.pod.spec.containers as Json[]) {
      const m = new Map<string, string>();
      for (const vm of (c.volumeMounts ?? []) as Json[]) {
        const v = ((this.pod.spec.volumes ?? []) as Json[]).find((x) => x.name === vm.name);
        if (!v) throw new LaunchError(`container ${c.name} mounts volume ${vm.name}, which the pod does not have`);
        const dir = volumeDir(v);
        m.set(String(vm.mountPath), vm.subPath ? path.join(dir, vm.subPath) : dir);
      }
      out.set(c.name, m);
    }
    return out;
  }

  /** Writes the containers' state, readiness and (for finished run-to-completion pods) the phase. */
  async patchStatus(override?: { waiting: { reason: string; message: string } }): Promise<void> {
    if (this.stopped) return;
    const now = new Date().toISOString();
    const statuses = [...this.running.values()].map((r) => {
      const base = { name: r.container.name, image: r.container.image, imageID: "", restartCount: r.restarts };
      const last = r.lastExit
        ? {
            lastState: {
              terminated: {
                exitCode: r.lastExit.code,
                reason: r.lastExit.reason,
                startedAt: r.lastExit.startedAt,
                finishedAt: r.lastExit.at,
              },
            },
          }
        : {};
      if (override && r.image) return { ...base, ready: false, started: false, state: { waiting: override.waiting } };
      if (r.done)
        return {
          ...base,
          ready: false,
          started: false,
          state: {
            terminated: {
              exitCode: r.done.code,
              reason: r.done.code === 0 ? "Completed" : "Error",
              startedAt: r.startedAt,
              finishedAt: r.lastExit?.at ?? now,
            },
          },
        };
      if (r.image && !r.child)
        return {
          ...base,
          ...last,
          ready: false,
          started: false,
          state: {
            waiting: {
              reason: "CrashLoopBackOff",
              message: `back-off restarting failed container ${r.container.name}`,
            },
          },
        };
      return {
        ...base,
        ...last,
        ready: r.ready,
        started: true,
        containerID: r.child ? `khook-lab://${r.child.pid}` : undefined,
        state: { running: { startedAt: r.startedAt ?? now } },
      };
    });
    const all = [...this.running.values()];
    const ready = !override && all.every((r) => r.ready);
    const finished = all.every((r) => !r.image || r.done);
    const cond = (type: string, status: boolean, reason?: string) => ({
      type,
      status: status ? "True" : "False",
      lastTransitionTime: now,
      ...(reason && !status ? { reason } : {}),
    });
    const status: Json = {
      containerStatuses: statuses,
      conditions: [cond("Ready", ready, "ContainersNotReady"), cond("ContainersReady", ready, "ContainersNotReady")],
    };
    if (finished && all.some((r) => r.done))
      status.phase = all.every((r) => !r.done || r.done.code === 0) ? "Succeeded" : "Failed";
    const r = await this.l.api
      .request(
        "PATCH",
        `/api/v1/namespaces/${this.ns}/pods/${this.name}/status`,
        { status },
        "application/strategic-merge-patch+json",
      )
      .catch((e: Error) => ({ status: 0, body: e.message }));
    if (r.status !== 200 && r.status !== 404)
      this.l.opts.log(`${this.key}: status patch: ${r.status} ${r.body.slice(0, 300)}`);
  }

  update(pod: Json): void {
    this.pod = { ...pod, status: { ...pod.status, podIP: pod.status?.podIP ?? this.pod.status?.podIP } };
  }
}

/** A Go duration's milliseconds ("1m30s", "500ms"); 0 for none or what does not parse. */
export function goDurationMs(text: string | undefined): number {
  if (!text || !/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) return 0;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(m[1]) * unit[m[2]!]!;
  return Math.round(ms);
}

/** `--only` hint for a binary the launcher could not find. */
function toolUnitHint(tool: string): string {
  return tool.startsWith("cert-manager") ? "cert-manager" : tool;
}

function writeSecretFile(file: string, content: string): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, content, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** Asks a readiness probe once (the kubelet's rules: HTTP 200–399 is success; TLS is not verified). */
function askProbe(p: {
  kind: string;
  scheme?: string;
  path?: string;
  headers?: Record<string, string>;
  localPort?: number;
}): Promise<boolean> {
  return new Promise((resolve) => {
    if (p.kind === "tcp") {
      const s = net.connect({ host: "127.0.0.1", port: p.localPort! });
      s.setTimeout(1000);
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
      s.once("timeout", () => {
        s.destroy();
        resolve(false);
      });
      return;
    }
    const mod = p.scheme === "HTTPS" ? https : http;
    const req = mod.request(
      {
        host: "127.0.0.1",
        port: p.localPort,
        path: p.path,
        method: "GET",
        headers: p.headers,
        timeout: 1000,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

function podKey(pod: Json): string {
  return `${pod.metadata?.namespace}/${pod.metadata?.name}`;
}

export class Launcher {
  readonly api: ApiClient;
  private readonly runs = new Map<string, PodRun>();
  private readonly abort = new AbortController();

  constructor(readonly opts: LauncherOptions) {
    this.api = new ApiClient(opts.server, path.join(opts.dir, "pki"));
  }

  /** Lists and watches pods until stop(); reconnects after errors (the API server may restart under a fault test). */
  async run(): Promise<void> {
    let rv: string | undefined;
    while (!this.abort.signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await this.api.getJson<{ metadata: { resourceVersion: string }; items: Json[] }>("/api/v1/pods");
          const seen = new Set<string>();
          for (const p of list.items) {
            seen.add(String(p.metadata.uid));
            this.observe("MODIFIED", p);
          }
          for (const [uid, run] of this.runs) if (!seen.has(uid)) this.forget(uid, run, "the pod is gone");
          rv = list.metadata.resourceVersion;
        }
        rv = await this.api.watch("/api/v1/pods", rv, (e) => this.onEvent(e), this.abort.signal);
      } catch (e) {
        if (this.abort.signal.aborted) break;
        if (e instanceof ApiError && e.status === 410) rv = undefined;
        else await sleep(1000);
      }
    }
  }

  private onEvent(e: WatchEvent): void {
    if (e.type === "BOOKMARK") return;
    this.observe(e.type, e.object as Json);
  }

  private observe(type: string, pod: Json): void {
    if (!isLaunched(pod)) return;
    const uid = String(pod.metadata.uid);
    const run = this.runs.get(uid);
    if (type === "DELETED" || pod.metadata.deletionTimestamp) {
      if (run) this.forget(uid, run, type === "DELETED" ? "the pod was deleted" : "the pod is terminating");
      return;
    }
    if (run) {
      run.update(pod);
      return;
    }
    const phase = String(pod.status?.phase ?? "");
    if (phase !== "Running" || !pod.status?.podIP) return;
    const fresh = new PodRun(this, pod);
    this.runs.set(uid, fresh);
    void fresh.start().catch((err: Error) => this.opts.log(`${fresh.key}: ${err.stack ?? err.message}`));
  }

  private forget(uid: string, run: PodRun, why: string): void {
    this.runs.delete(uid);
    void run.stop(why);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all([...this.runs.values()].map((r) => r.stop("the lab stops")));
    this.runs.clear();
  }
}
