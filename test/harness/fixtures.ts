// Loopback fixture servers for integration tests, started on demand:
//   startHttpServer  - serves an in-memory file map (url: manifest and values sources)
//   startChartRepo   - an HTTP helm chart repository (index.yaml + packaged test charts), optional basic auth
//   startOciRegistry - the CNCF distribution registry with htpasswd basic auth, test charts pushed
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { toolEnv } from "./env";
import { toolPath } from "./toolchain";
import { freePort, killGroup, repoRoot, run, runDir, runOk, spawnDaemon, tailFile, waitFor } from "./util";

export interface BasicAuth {
  username: string;
  password: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

export interface HttpFixture {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Every request received, in order (for assertions on caching, auth headers, ...). */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface HttpServerOptions {
  basicAuth?: BasicAuth;
  /** Extra response headers for every file. */
  headers?: Record<string, string>;
  /** Content types by extension; defaults cover yaml, json, tgz, txt. */
  contentTypes?: Record<string, string>;
}

const DEFAULT_TYPES: Record<string, string> = {
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".json": "application/json",
  ".tgz": "application/gzip",
  ".txt": "text/plain",
};

function checkAuth(req: http.IncomingMessage, auth: BasicAuth | undefined): boolean {
  if (!auth) return true;
  const h = req.headers.authorization ?? "";
  const want = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
  return h === want;
}

async function serve(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  server.unref();
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Serves `files` (path → content, e.g. {"/manifests/cm.yaml": "..."}; a leading "/" is optional)
 * on a loopback port. Unknown paths answer 404; with basicAuth, missing/wrong credentials 401.
 */
export async function startHttpServer(
  files: Record<string, string | Buffer>,
  opts: HttpServerOptions = {},
): Promise<HttpFixture> {
  const table = new Map<string, string | Buffer>();
  for (const [k, v] of Object.entries(files)) table.set(k.startsWith("/") ? k : `/${k}`, v);
  const types = { ...DEFAULT_TYPES, ...opts.contentTypes };
  const requests: RecordedRequest[] = [];
  const s = await serve((req, res) => {
    const p = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    requests.push({ method: req.method ?? "GET", path: p, headers: req.headers });
    if (!checkAuth(req, opts.basicAuth)) {
      res.writeHead(401, { "www-authenticate": 'Basic realm="khook-test"' }).end("unauthorized\n");
      return;
    }
    const body = table.get(p);
    if (body === undefined || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    res.writeHead(200, {
      "content-type": types[path.extname(p)] ?? "application/octet-stream",
      "content-length": Buffer.byteLength(body),
      ...opts.headers,
    });
    res.end(req.method === "HEAD" ? undefined : body);
  });
  return { url: s.url, requests, close: s.close };
}

// ---------------------------------------------------------------------------------------------
// Test charts

/** The test charts committed under test/charts (directory names). */
export function testChartNames(): string[] {
  const dir = path.join(repoRoot(), "test", "charts");
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, "Chart.yaml")))
    .map((e) => e.name)
    .sort();
}

/** Absolute path of a test chart's source directory (for `helm install <name> <path>`). */
export function testChartPath(name: string): string {
  return path.join(repoRoot(), "test", "charts", name);
}

function hashDir(dir: string, h = createHash("sha256"), base = dir): ReturnType<typeof createHash> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) hashDir(p, h, base);
    else h.update(path.relative(base, p)).update(fs.readFileSync(p));
  }
  return h;
}

/**
 * Packages every test chart (helm package) and writes a relative-URL index.yaml, once per chart
 * content hash; returns the directory holding <chart>-<version>.tgz files and index.yaml.
 */
export async function packagedTestCharts(): Promise<string> {
  const src = path.join(repoRoot(), "test", "charts");
  const key = hashDir(src).digest("hex").slice(0, 12);
  const out = path.join(runDir(), `charts-${key}`);
  if (fs.existsSync(path.join(out, "index.yaml"))) return out;
  const tmp = `${out}.${process.pid}.partial`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const helm = toolPath("helm");
  const env = helmEnv(tmp);
  for (const name of testChartNames()) {
    await runOk(helm, ["package", path.join(src, name), "--destination", tmp], { env });
  }
  await runOk(helm, ["repo", "index", tmp], { env });
  fs.rmSync(path.join(tmp, ".helm"), { recursive: true, force: true });
  try {
    fs.renameSync(tmp, out);
  } catch {
    // Another process packaged the same charts concurrently; theirs is identical.
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return out;
}

/** An environment for helm that keeps its config/cache/registry login under `dir`. */
export function helmEnv(dir: string): NodeJS.ProcessEnv {
  const h = path.join(dir, ".helm");
  return {
    ...toolEnv(),
    HELM_CONFIG_HOME: path.join(h, "config"),
    HELM_CACHE_HOME: path.join(h, "cache"),
    HELM_DATA_HOME: path.join(h, "data"),
    HELM_REGISTRY_CONFIG: path.join(h, "registry", "config.json"),
    HELM_REPOSITORY_CONFIG: path.join(h, "config", "repositories.yaml"),
    HELM_REPOSITORY_CACHE: path.join(h, "cache", "repository"),
  };
}

export interface ChartRepoFixture extends HttpFixture {
  /** Chart file names served, e.g. ["khook-test-app-0.1.0.tgz", ...]. */
  charts: string[];
}

/** An HTTP chart repository serving index.yaml and every packaged test chart. */
export async function startChartRepo(opts: { basicAuth?: BasicAuth } = {}): Promise<ChartRepoFixture> {
  const dir = await packagedTestCharts();
  const files: Record<string, Buffer> = {};
  const charts: string[] = [];
  for (const f of fs.readdirSync(dir)) {
    if (f === "index.yaml" || f.endsWith(".tgz")) files[`/${f}`] = fs.readFileSync(path.join(dir, f));
    if (f.endsWith(".tgz")) charts.push(f);
  }
  const fx = await startHttpServer(files, opts.basicAuth ? { basicAuth: opts.basicAuth } : {});
  return { ...fx, charts };
}

// ---------------------------------------------------------------------------------------------
// OCI registry

export interface OciRegistryFixture {
  /** host:port, e.g. 127.0.0.1:40123 (plain HTTP: use helm's --plain-http). */
  host: string;
  /** Where the test charts were pushed: oci://<host>/charts (chart refs are <url>/<chart>). */
  url: string;
  username: string;
  password: string;
  /** Packaged test charts pushed, as <chart>:<version>. */
  charts: string[];
  /** Environment for helm with a registry login for this registry already in place. */
  helmEnv: NodeJS.ProcessEnv;
  logFile: string;
  close(): Promise<void>;
}

/**
 * Starts the distribution registry on loopback (plain HTTP) with htpasswd basic auth, and pushes
 * every packaged test chart (or every chart of `chartsDir`) to oci://<host>/charts. Pass push:
 * false to start it empty.
 */
export async function startOciRegistry(
  opts: BasicAuth & { push?: boolean; chartsDir?: string },
): Promise<OciRegistryFixture> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-oci-"));
  const htpasswd = await runOk(toolPath("khook-htpasswd"), [opts.username], { input: `${opts.password}\n` });
  fs.writeFileSync(path.join(dir, "htpasswd"), htpasswd.stdout);
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  fs.writeFileSync(
    path.join(dir, "config.yml"),
    [
      "version: 0.1",
      "log:",
      "  level: warn",
      "  accesslog:",
      "    disabled: true",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${path.join(dir, "data")}`,
      "  delete:",
      "    enabled: true",
      "http:",
      `  addr: ${host}`,
      "  secret: khook-test-only",
      "auth:",
      "  htpasswd:",
      "    realm: khook-test",
      `    path: ${path.join(dir, "htpasswd")}`,
      "",
    ].join("\n"),
  );
  const logFile = path.join(dir, "registry.log");
  const pid = spawnDaemon(toolPath("registry"), ["serve", path.join(dir, "config.yml")], logFile, {
    env: { ...process.env, OTEL_TRACES_EXPORTER: "none", OTEL_SDK_DISABLED: "true", OTEL_METRICS_EXPORTER: "none" },
  });
  const close = async () => {
    await killGroup(pid, 2000);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      `the OCI registry on ${host}`,
      () =>
        new Promise<boolean>((resolve) => {
          const req = http.get(`http://${host}/v2/`, (res) => {
            res.resume();
            resolve(res.statusCode === 401 || res.statusCode === 200);
          });
          req.on("error", () => resolve(false));
        }),
      { timeoutMs: 20_000, intervalMs: 100, onTimeout: () => tailFile(logFile) },
    );
    const env = helmEnv(dir);
    const helm = toolPath("helm");
    await runOk(
      helm,
      ["registry", "login", host, "--username", opts.username, "--password-stdin", "--insecure", "--plain-http"],
      { env, input: opts.password },
    ).catch(async (e: Error) => {
      // Older helm versions have no --plain-http on login; --insecure covers it there.
      if (!/unknown flag: --plain-http/.test(e.message)) throw e;
      await runOk(helm, ["registry", "login", host, "--username", opts.username, "--password-stdin", "--insecure"], {
        env,
        input: opts.password,
      });
    });
    const charts: string[] = [];
    if (opts.push !== false) {
      const pkgDir = opts.chartsDir ?? (await packagedTestCharts());
      for (const f of fs
        .readdirSync(pkgDir)
        .filter((x) => x.endsWith(".tgz"))
        .sort()) {
        await runOk(helm, ["push", path.join(pkgDir, f), `oci://${host}/charts`, "--plain-http"], { env });
        const m = /^(.*)-(v?\d+\.\d+\.\d+.*)\.tgz$/.exec(f);
        charts.push(m ? `${m[1]}:${m[2]}` : f);
      }
    }
    return {
      host,
      url: `oci://${host}/charts`,
      username: opts.username,
      password: opts.password,
      charts,
      helmEnv: env,
      logFile,
      close,
    };
  } catch (e) {
    const logs = tailFile(logFile);
    await close();
    throw new Error(`${(e as Error).message}\n----- registry log -----\n${logs}`);
  }
}

/** Runs helm with a given environment, never throwing (for assertions on failures). */
export function helm(args: string[], env: NodeJS.ProcessEnv = toolEnv()): ReturnType<typeof run> {
  return run(toolPath("helm"), args, { env });
}
