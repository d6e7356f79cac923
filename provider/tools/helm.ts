/**
 * The helm CLI, driven as a subprocess (v3, >= MIN_HELM).
 *
 * Each run gets a HelmSession: a private 0700 temp directory holding helm's
 * cache, config, data, repository config and registry config, removed when the
 * session closes (also on abort, and at process exit as a last resort). So no
 * credential and no `helm repo add` state outlives the run, and the user's own
 * helm configuration (repositories, plugins, registry logins) is never read or
 * changed.
 *
 * Secrets never go on argv, where other users' `ps` would see them:
 * - values go through files (0600, in the 0700 session directory);
 * - HTTP repository credentials go into the session's repositories config, and
 *   the chart is referenced through that private repository entry;
 * - OCI registry credentials go into the session's registry config (the
 *   docker-style `auths` file helm reads), written directly: not even the
 *   username is passed on a command line, and no OS credential helper is ever
 *   involved (helm's own `registry login` may store into one when the config is
 *   empty).
 * - kubeconfig content is written to a 0600 file.
 *
 * All output goes through the caller's Redactor (see exec.ts).
 *
 * This module only drives the process. What a release's history, values or
 * chart mean is provider/helm/ (pure); what to do with them is steps/helm/executor.ts.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { executionError, KhookError } from "../errors.js";
import type { Redactor } from "../redact.js";
import type { ClusterTarget } from "../kube/client.js";
import type { BasicAuth, ChartRef } from "../helm/chart.js";
import type { ChartMeta, HelmRevision } from "../helm/release.js";
import { describeFailure, runTool, type ExecResult } from "./exec.js";
import { locateTool } from "./locate.js";

/** `--labels` on install/upgrade and `list --selector` (release labels), `--dry-run=server`, `--plain-http`. */
export const MIN_HELM = { major: 3, minor: 15, patch: 0 } as const;
export const MIN_HELM_TEXT = `v${MIN_HELM.major}.${MIN_HELM.minor}.${MIN_HELM.patch}`;
const INSTALL_HINT = `Install helm ${MIN_HELM_TEXT} or newer (v3.x) from https://helm.sh/docs/intro/install/, then put it on PATH or set KHOOK_HELM to its path`;

export interface HelmBinary {
  path: string;
  version: string;
  from: string;
}

export interface HelmVersion {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

export function parseHelmVersion(text: string): HelmVersion | undefined {
  const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(text.trim());
  if (m === null) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), text: `v${m[1]}.${m[2]}.${m[3]}` };
}

/** undefined when the version is usable; otherwise the message for people. */
export function helmVersionProblem(v: HelmVersion | undefined, where: string): string | undefined {
  if (v === undefined) return `cannot tell which helm version ${where} is. ${INSTALL_HINT}`;
  if (v.major !== MIN_HELM.major) {
    return `helm ${v.text} (${where}) is not supported: khook drives helm v3 (${MIN_HELM_TEXT} or newer). ${INSTALL_HINT}`;
  }
  if (v.minor < MIN_HELM.minor || (v.minor === MIN_HELM.minor && v.patch < MIN_HELM.patch)) {
    return `helm ${v.text} (${where}) is too old: khook needs ${MIN_HELM_TEXT} or newer (release labels mark what khook installed). ${INSTALL_HINT}`;
  }
  return undefined;
}

function helmMissingMessage(why: string): string {
  return `helm: steps need the helm CLI: ${why}. ${INSTALL_HINT}`;
}

/**
 * Why helm cannot be found (with the install hint), or undefined when it can.
 * Presence only, no process: preview calls this; the version is checked at apply.
 */
export function helmMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const found = locateTool("helm", { envVar: "KHOOK_HELM", env });
  return found.ok ? undefined : helmMissingMessage(found.message);
}

const located = new Map<string, Promise<HelmBinary>>();

/**
 * Finds helm (configuration, then KHOOK_HELM, then PATH) and checks its
 * version once per path. Rejects with a clear message saying what to install.
 */
export function locateHelm(opts: {
  explicit?: string | undefined;
  redactor: Redactor;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
}): Promise<HelmBinary> {
  const found = locateTool("helm", {
    explicit: opts.explicit,
    envVar: "KHOOK_HELM",
    ...(opts.env ? { env: opts.env } : {}),
  });
  if (!found.ok) return Promise.reject(executionError(helmMissingMessage(found.message)));
  const key = found.tool.path;
  let p = located.get(key);
  if (p === undefined) {
    p = (async () => {
      const r = await runTool(found.tool.path, {
        args: ["version", "--short"],
        redactor: opts.redactor,
        ...(opts.signal ? { signal: opts.signal } : {}),
        env: { HELM_DEBUG: undefined },
      });
      const where = `${found.tool.path}, from ${found.tool.from}`;
      if (!r.ok) throw executionError(`${describeFailure(r, `helm version (${where})`)}\n${INSTALL_HINT}`);
      const v = parseHelmVersion(r.stdout);
      const problem = helmVersionProblem(v, where);
      if (problem !== undefined) throw executionError(problem);
      return { path: found.tool.path, version: v!.text, from: found.tool.from };
    })();
    located.set(key, p);
    // A failed check (e.g. aborted) is retried next time.
    p.catch(() => located.delete(key));
  }
  return p;
}

// ------------------------------------------------------------------- session

const liveSessions = new Set<string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const dir of liveSessions) {
      try {
        fs.rmSync(dir, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  });
}

export interface InstallRequest {
  mode: "install" | "upgrade";
  release: string;
  namespace: string;
  chart: ChartRef;
  /** Path of the values file (0600); undefined for no user values. */
  valuesFile: string | undefined;
  createNamespace?: boolean;
  atomic?: boolean;
  wait?: boolean;
  /** helm's own --timeout (waits and hooks). */
  timeoutMs: number;
  /** Release labels (`--labels`), e.g. khook's ownership marker. */
  labels?: Record<string, string>;
  /** `--dry-run=server`: render and validate against the cluster, change nothing. */
  dryRun?: boolean;
  /** `--post-renderer`: an executable helm pipes the rendered manifest through (khook's hooks). */
  postRenderer?: string | undefined;
}

export function goDuration(ms: number): string {
  return `${Math.max(1, Math.ceil(ms / 1000))}s`;
}

/** The argv of an install or upgrade (no secrets: values are a file, credentials live in the session config). */
export function buildInstallArgs(req: InstallRequest): string[] {
  const args = [req.mode, req.release, req.chart.chart, ...req.chart.flags, "--namespace", req.namespace];
  if (req.mode === "upgrade") args.push("--reset-values"); // the spec is the sole source of values: never carry old ones forward
  if (req.valuesFile !== undefined) args.push("--values", req.valuesFile);
  if (req.createNamespace && req.mode === "install") args.push("--create-namespace");
  if (req.atomic) args.push("--atomic");
  if (req.wait) args.push("--wait");
  args.push("--timeout", goDuration(req.timeoutMs));
  const labels = Object.entries(req.labels ?? {});
  if (labels.length > 0) args.push("--labels", labels.map(([k, v]) => `${k}=${v}`).join(","));
  if (req.postRenderer !== undefined) args.push("--post-renderer", req.postRenderer);
  if (req.dryRun) args.push("--dry-run=server");
  args.push("--output", "json");
  return args;
}

export interface HelmSessionOptions {
  /** The binary, or how to find it on the first helm run (a session that decides no-op runs none). */
  helm: HelmBinary | (() => Promise<HelmBinary>);
  connection?: ClusterTarget | undefined;
  redactor: Redactor;
  signal: AbortSignal;
  /** Extra environment for helm (tests); merged over process.env. */
  env?: Record<string, string | undefined>;
}

export class HelmError extends KhookError {
  constructor(
    message: string,
    readonly result: ExecResult,
  ) {
    super("execution", message);
    this.name = "HelmError";
  }

  /**
   * What helm relayed from the API server (its stderr): the engine retries an install or upgrade
   * refused for a transient reason (a webhook not serving yet) by these words (kube/transient.ts).
   */
  get apiServerText(): string {
    return this.result.stderr;
  }
}

export class HelmSession {
  readonly dir: string;
  private readonly env: Record<string, string | undefined>;
  private readonly globalFlags: string[];
  private fileCounter = 0;
  private closed = false;
  private readonly repos = new Map<string, { name: string; auth: BasicAuth }>();
  private readonly registries = new Map<string, BasicAuth>();

  private resolvedHelm: Promise<HelmBinary> | undefined;

  private constructor(
    private readonly helm: HelmBinary | (() => Promise<HelmBinary>),
    private readonly redactor: Redactor,
    private readonly signal: AbortSignal,
    connection: ClusterTarget | undefined,
    extraEnv: Record<string, string | undefined> | undefined,
  ) {
    installExitHook();
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-helm-"));
    liveSessions.add(this.dir);
    fs.chmodSync(this.dir, 0o700);
    for (const d of ["cache", "config", "data", "cache/repository", "config/registry"])
      fs.mkdirSync(path.join(this.dir, d), { recursive: true, mode: 0o700 });
    this.env = {
      ...extraEnv,
      HELM_CACHE_HOME: path.join(this.dir, "cache"),
      HELM_CONFIG_HOME: path.join(this.dir, "config"),
      HELM_DATA_HOME: path.join(this.dir, "data"),
      HELM_PLUGINS: path.join(this.dir, "data", "plugins"),
      HELM_REPOSITORY_CACHE: path.join(this.dir, "cache", "repository"),
      HELM_REPOSITORY_CONFIG: path.join(this.dir, "config", "repositories.yaml"),
      HELM_REGISTRY_CONFIG: path.join(this.dir, "config", "registry", "config.json"),
      // Whatever the caller's environment says, the connection is passed explicitly.
      HELM_NAMESPACE: undefined,
      HELM_KUBECONTEXT: undefined,
      HELM_KUBETOKEN: undefined,
      HELM_KUBEAPISERVER: undefined,
      HELM_KUBEASUSER: undefined,
      HELM_KUBEASGROUPS: undefined,
      HELM_KUBECAFILE: undefined,
      HELM_KUBEINSECURE_SKIP_TLS_VERIFY: undefined,
      HELM_KUBETLS_SERVER_NAME: undefined,
      HELM_DEBUG: undefined,
      HELM_POST_RENDERER: undefined,
    };
    this.globalFlags = [];
    if (connection?.kubeconfigContent !== undefined && connection.kubeconfigContent !== "") {
      const file = this.privateFile("kubeconfig", connection.kubeconfigContent);
      this.globalFlags.push("--kubeconfig", file);
    } else if (connection?.kubeconfigPath !== undefined && connection.kubeconfigPath !== "") {
      this.globalFlags.push("--kubeconfig", connection.kubeconfigPath);
    }
    if (connection?.context !== undefined && connection.context !== "")
      this.globalFlags.push("--kube-context", connection.context);
  }

  static open(opts: HelmSessionOptions): HelmSession {
    return new HelmSession(opts.helm, opts.redactor, opts.signal, opts.connection, opts.env);
  }

  /** Removes the session directory with every credential and cache in it. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    liveSessions.delete(this.dir);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Writes a 0600 file inside the session directory and returns its path. */
  privateFile(name: string, content: string | Buffer): string {
    const file = path.join(this.dir, `${++this.fileCounter}-${name}`);
    fs.writeFileSync(file, content, { mode: 0o600, flag: "wx" });
    return file;
  }

  /** Runs helm with the session's environment and connection flags. Never throws for exit codes. */
  async run(
    args: readonly string[],
    opts: { stdin?: string; keepRawStdout?: boolean; cluster?: boolean; onSpawn?: (pid: number) => void } = {},
  ): Promise<ExecResult> {
    if (this.closed) throw new Error("helm session is closed");
    const full = opts.cluster === false ? [...args] : [...args, ...this.globalFlags];
    this.resolvedHelm ??= typeof this.helm === "function" ? this.helm() : Promise.resolve(this.helm);
    const helm = await this.resolvedHelm;
    return runTool(helm.path, {
      args: full,
      env: this.env,
      redactor: this.redactor,
      signal: this.signal,
      ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
      ...(opts.keepRawStdout ? { keepRawStdout: true } : {}),
      ...(opts.onSpawn !== undefined ? { onSpawn: opts.onSpawn } : {}),
    });
  }

  /** Like run, but a failure throws a HelmError describing it. */
  async must(
    args: readonly string[],
    what: string,
    opts: { stdin?: string; keepRawStdout?: boolean; cluster?: boolean } = {},
  ): Promise<ExecResult> {
    const r = await this.run(args, opts);
    if (!r.ok) throw this.failure(r, what);
    return r;
  }

  failure(r: ExecResult, what: string): Error {
    if (r.aborted && this.signal.reason instanceof Error) return this.signal.reason;
    return new HelmError(describeFailure(r, what), r);
  }

  // ------------------------------------------------------------ credentials

  /**
   * Registers basic-auth credentials for an HTTP(S) chart repository in the
   * session's private repositories config, fetches its index, and returns the
   * private repository name to reference charts by (`<name>/<chart>`).
   */
  async addRepository(url: string, auth: BasicAuth): Promise<string> {
    const existing = this.repos.get(url);
    if (existing !== undefined) return existing.name;
    const name = `khook-${createHash("sha256").update(url).digest("hex").slice(0, 12)}`;
    this.repos.set(url, { name, auth });
    const repositories = [...this.repos.entries()].map(([u, e]) => ({
      name: e.name,
      url: u,
      username: e.auth.username,
      password: e.auth.password,
    }));
    const file = this.env["HELM_REPOSITORY_CONFIG"]!;
    fs.writeFileSync(file, JSON.stringify({ apiVersion: "", generated: "0001-01-01T00:00:00Z", repositories }), {
      mode: 0o600,
    });
    fs.chmodSync(file, 0o600);
    const r = await this.run(["repo", "update", name, "--fail-on-repo-update-fail"], { cluster: false });
    if (!r.ok) {
      if (r.aborted) throw this.failure(r, "helm repo update");
      // helm says why on stdout ("...Unable to get an update ...: <reason>"), and only that it failed on stderr.
      const why = r.stdout
        .split("\n")
        .filter((l) => !/^Hang tight/.test(l) && l.trim() !== "")
        .map((l) => l.trim())
        .join(" ");
      throw new HelmError(`cannot fetch the chart repository index of ${url}: ${why || r.stderr.trim()}`, r);
    }
    return name;
  }

  /** Registers basic-auth credentials for an OCI registry host (`host[:port]`) in the session's registry config. */
  addRegistry(host: string, auth: BasicAuth): void {
    this.registries.set(host, auth);
    const auths: Record<string, { auth: string }> = {};
    for (const [h, a] of this.registries)
      auths[h] = { auth: Buffer.from(`${a.username}:${a.password}`, "utf8").toString("base64") };
    const file = this.env["HELM_REGISTRY_CONFIG"]!;
    fs.writeFileSync(file, JSON.stringify({ auths }), { mode: 0o600 });
    fs.chmodSync(file, 0o600);
  }

  // ------------------------------------------------------------ queries

  /** The release's revisions, oldest first; undefined when there is no such release. */
  async history(release: string, namespace: string): Promise<HelmRevision[] | undefined> {
    const r = await this.run(["history", release, "--namespace", namespace, "--output", "json", "--max", "20"]);
    if (!r.ok) {
      if (!r.aborted && /release: not found|not found/i.test(r.stderr)) return undefined;
      throw this.failure(r, `helm history ${release} (namespace ${namespace})`);
    }
    const parsed = parseJson(r.stdout, "helm history") as HelmRevision[] | null;
    if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
    return [...parsed].sort((a, b) => a.revision - b.revision);
  }

  /** The user-supplied values of the release's latest revision (unredacted: compare only, never print). */
  async userValues(release: string, namespace: string): Promise<Record<string, unknown>> {
    const r = await this.must(
      ["get", "values", release, "--namespace", namespace, "--output", "json"],
      `helm get values ${release}`,
      { keepRawStdout: true },
    );
    let parsed: unknown;
    try {
      parsed = JSON.parse(r.rawStdout ?? "null");
    } catch {
      throw executionError(`helm get values ${release}: the output is not JSON`);
    }
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  }

  /**
   * The manifest of the release's latest revision, unredacted: for comparing
   * and diffing (a diff of redacted texts would hide a changed secret), so the
   * caller redacts what it prints.
   */
  async rawManifest(release: string, namespace: string): Promise<string> {
    const r = await this.must(["get", "manifest", release, "--namespace", namespace], `helm get manifest ${release}`, {
      keepRawStdout: true,
    });
    return r.rawStdout ?? "";
  }

  /** Whether the release's latest revision carries every given label. */
  /** Whether the release carries `labels`; a null value asks that the label be absent. */
  async hasLabels(release: string, namespace: string, labels: Record<string, string | null>): Promise<boolean> {
    const selector = Object.entries(labels)
      .map(([k, v]) => (v === null ? `!${k}` : `${k}=${v}`))
      .join(",");
    const r = await this.must(
      [
        "list",
        "--namespace",
        namespace,
        "--all",
        "--filter",
        `^${escapeRegex(release)}$`,
        "--selector",
        selector,
        "--output",
        "json",
      ],
      `helm list ${release}`,
    );
    const parsed = parseJson(r.stdout, "helm list") as { name?: string }[] | null;
    return Array.isArray(parsed) && parsed.some((x) => x.name === release);
  }

  /** `helm pull` of a repository or OCI chart into the session directory; the archive's path. */
  async pull(ref: ChartRef): Promise<string> {
    const dest = fs.mkdtempSync(path.join(this.dir, "chart-"));
    await this.must(["pull", ref.chart, ...ref.flags, "--destination", dest], `helm pull ${ref.chart}`, {
      cluster: false,
    });
    const archives = fs.readdirSync(dest).filter((f) => f.endsWith(".tgz"));
    if (archives.length !== 1)
      throw executionError(`helm pull ${ref.chart} left ${archives.length} chart archives instead of one`);
    return path.join(dest, archives[0]!);
  }

  /** Chart.yaml name and version of a chart reference (resolves "latest" and version ranges). */
  async showChart(ref: ChartRef): Promise<ChartMeta> {
    const r = await this.must(["show", "chart", ref.chart, ...ref.flags], `helm show chart ${ref.chart}`, {
      cluster: false,
    });
    return parseChartYaml(r.stdout, ref.chart);
  }

  /** helm install / upgrade; returns the new release's revision and status. Throws on failure. `onSpawn` is told helm's pid. */
  async installOrUpgrade(req: InstallRequest, opts: { onSpawn?: (pid: number) => void } = {}): Promise<InstallResult> {
    const r = await this.run(buildInstallArgs(req), { keepRawStdout: true, ...opts });
    if (!r.ok)
      throw this.failure(
        r,
        `helm ${req.mode}${req.dryRun ? " --dry-run=server" : ""} ${req.release} (namespace ${req.namespace})`,
      );
    return parseReleaseJson(r.rawStdout ?? "");
  }

  /** helm rollback to `revision` (a pending release's recovery). Throws on failure. */
  async rollback(release: string, namespace: string, revision: number, timeoutMs: number): Promise<void> {
    await this.must(
      ["rollback", release, String(revision), "--namespace", namespace, "--timeout", goDuration(timeoutMs)],
      `helm rollback ${release} ${revision} (namespace ${namespace})`,
    );
  }

  /**
   * helm uninstall; with `wait` (the default) it also waits for the release's resources to be gone.
   * `timeoutMs` bounds its hooks and that wait. false when the release was not found.
   */
  async uninstall(
    release: string,
    namespace: string,
    timeoutMs: number,
    opts: { wait?: boolean } = {},
  ): Promise<boolean> {
    const r = await this.run([
      "uninstall",
      release,
      "--namespace",
      namespace,
      ...(opts.wait !== false ? ["--wait"] : []),
      "--timeout",
      goDuration(timeoutMs),
    ]);
    if (!r.ok) {
      if (!r.aborted && /not found/i.test(r.stderr)) return false;
      throw this.failure(r, `helm uninstall ${release} (namespace ${namespace})`);
    }
    return true;
  }
}

export interface InstallResult {
  revision: number;
  status: string;
  /** `<name>-<version>` of the deployed chart, when helm said. */
  chart: string | undefined;
  /** The rendered manifest, unredacted (see rawManifest). */
  rawManifest: string;
}

/** The few fields khook reads from `helm install/upgrade -o json` (the rest, values included, is dropped). */
export function parseReleaseJson(raw: string): InstallResult {
  let rel: {
    version?: unknown;
    info?: { status?: unknown };
    manifest?: unknown;
    chart?: { metadata?: { name?: unknown; version?: unknown } };
  };
  try {
    rel = JSON.parse(raw) as typeof rel;
  } catch {
    return { revision: 0, status: "unknown", chart: undefined, rawManifest: "" };
  }
  const meta = rel.chart?.metadata;
  return {
    revision: typeof rel.version === "number" ? rel.version : 0,
    status: typeof rel.info?.status === "string" ? rel.info.status : "unknown",
    chart:
      typeof meta?.name === "string" && typeof meta.version === "string" ? `${meta.name}-${meta.version}` : undefined,
    rawManifest: typeof rel.manifest === "string" ? rel.manifest : "",
  };
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text.trim() === "" ? "null" : text);
  } catch {
    throw executionError(`${what}: the output is not JSON`);
  }
}

/** name: and version: of `helm show chart` output (Chart.yaml). */
export function parseChartYaml(text: string, what: string): ChartMeta {
  const field = (k: string): string | undefined => {
    const m = new RegExp(`^${k}:\\s*(.+?)\\s*$`, "m").exec(text);
    return m?.[1]?.replace(/^(["'])(.*)\1$/, "$2");
  };
  const name = field("name");
  const version = field("version");
  if (name === undefined || version === undefined)
    throw executionError(`${what}: the chart metadata has no name or version`);
  const appVersion = field("appVersion");
  return { name, version, ...(appVersion !== undefined ? { appVersion } : {}) };
}
