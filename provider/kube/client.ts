/**
 * The connection to one cluster. The kubeconfig is loaded natively with
 * kubectl's semantics (./kubeconfig.ts); only exec plugins and auth providers
 * go through @kubernetes/client-node, loaded on demand. Every request goes out
 * as raw REST over one keep-alive HTTP/1.1 agent, so objects round-trip with
 * unknown fields intact.
 *
 * Higher-level operations (discovery, get/list/patch, apply, watch, logs) live
 * in their own modules, which take the raw-REST Transport this class is;
 * KubeClient exposes them as methods, and is the KubeApi (./api.ts) that
 * executors receive as `ctx.kube`.
 */
import http from "node:http";
import https from "node:https";
import type * as net from "node:net";
import { KhookError } from "../errors.js";
import { KHOOK_VERSION } from "../version.js";
import {
  abortError,
  apiErrorFromResponse,
  KubeConfigError,
  KubeConnectionError,
  type ErrorTarget,
} from "./api-errors.js";
import {
  sleep,
  type HttpMethod,
  type QueryValue,
  type RawResponse,
  type RequestOptions,
  type Transport,
} from "./transport.js";
import {
  credentialsFor,
  describeSource,
  loadKubeconfig,
  selectContext,
  type ConfigSource,
  type Credentials,
  type KubeconfigSelection,
  type LoadedKubeconfig,
  type TlsMaterial,
} from "./kubeconfig.js";
import { Discovery, type ResolveOptions } from "./discovery.js";
import { OpenApiCache } from "./openapi.js";
import * as objects from "./objects.js";
import * as applyMod from "./apply.js";
import * as watchMod from "./watch.js";
import * as logsMod from "./logs.js";
import { apiVersionOf, type KubeObject, type ResourceType, type ApiResource } from "../kubectl/types.js";
import type { WaitCondition } from "../kubectl/waitfor.js";
import type { KubeApi } from "./api.js";

/** Which cluster: a kubeconfig (file or text) and a context. The one name for it, from the CLI flags down to helm's. */
export interface ClusterTarget {
  /** An explicit kubeconfig file (like `kubectl --kubeconfig`). */
  kubeconfigPath?: string;
  /** Kubeconfig YAML text, e.g. from a Pulumi input. Wins over kubeconfigPath. */
  kubeconfigContent?: string;
  /** A context name (like `kubectl --context`); default: the kubeconfig's current-context. */
  context?: string;
  /**
   * The kubeconfig already loaded from the fields above (see loadClusterTarget), so that the
   * consumers of one operation (the client, helm's session) share one read of it.
   */
  loaded?: LoadedKubeconfig;
}

/**
 * Loads the target's kubeconfig once, for one operation: the client connects from the loaded
 * config and helm is handed the same target. A target that is already loaded is returned as is.
 */
export function loadClusterTarget(
  target: ClusterTarget,
  load: (opts: ClusterTarget) => LoadedKubeconfig = loadKubeconfig,
): ClusterTarget {
  if (target.loaded !== undefined) return target;
  return { ...target, loaded: load(target) };
}

/**
 * Connection failures of a server that may simply not be up yet (a cluster still starting, its DNS
 * name not published yet). A timeout counts only while the server has never answered this client
 * (see KubeClient.answered): later, it is a stall mid-run, which the engine retries.
 */
const NOT_UP_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

const USER_AGENT = `khook/${KHOOK_VERSION} (${process.platform}/${process.arch}) node/${process.versions.node}`;
const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * How long a new connection may take to be established: the TCP connect, then the TLS handshake.
 * client-go's numbers (its dialer's 30 s and TLSHandshakeTimeout's 10 s), so a server that accepts
 * connections and never answers fails as it does for kubectl (`TLS handshake timeout`), instead
 * of holding each request until its own, much longer, timeout.
 */
const CONNECT_TIMEOUT_MS = 30_000;
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Plain http has no handshake: a server's first response is its first sign of life. Until the
 * server has answered this client, a new connection's response must begin within the handshake's
 * bound, so a plain-http server that accepts and says nothing fails as an https one does.
 */
const FIRST_ANSWER_TIMEOUT_MS = TLS_HANDSHAKE_TIMEOUT_MS;

/** A request that got no answer in time: its connection, its handshake or its response. */
class NoAnswer extends Error {
  readonly code = "ETIMEDOUT";
  constructor(message: string) {
    super(message);
    this.name = "NoAnswer";
  }
}

/** A caller's own bound ran out (`AbortSignal.timeout`): the request went unanswered for that long. */
function isTimeoutAbort(e: unknown): boolean {
  return e instanceof Error && e.name === "TimeoutError";
}

export type { HttpMethod, QueryValue, RawResponse, RequestOptions };

export class KubeClient implements Transport, KubeApi {
  /** The API server URL, e.g. `https://127.0.0.1:6443`. */
  readonly server: string;
  /** The kubeconfig context in use. */
  readonly contextName: string;
  /** The context's namespace, else `default` (like kubectl). */
  readonly contextNamespace: string;
  readonly discovery: Discovery;
  /** Requests sent, per `METHOD path` (bounded by the distinct paths): the benchmark counts API calls with it. */
  readonly requestCounts = new Map<string, number>();
  readonly openapi: OpenApiCache;
  /**
   * What to add when the server cannot be reached because it is not up yet (nothing listens,
   * its name does not resolve yet, no route to it): the caller's way to wait for it, e.g.
   * `khook apply --wait-for-cluster 10m`. Set by the commands that have such a way.
   */
  notUpAdvice: string | undefined;
  /**
   * Whether the API server has answered any request of this client (any HTTP status). Until it
   * has, a request that times out means the server does not answer at all: it is treated as one
   * that refuses connections (not up; see KubeConnectionError.notUp), not as a stall to retry.
   */
  answered = false;
  /** The last failure to reach the server at all (refused, unresolvable, no answer), for a run's summary. */
  lastNotUp: KubeConnectionError | undefined;

  private readonly source: ConfigSource;
  /** The context's user, for 401 messages ("?" when the context names no defined user). */
  private readonly userName: string;
  private readonly credentials: Credentials;
  private readonly base: URL;
  private readonly isHttps: boolean;
  private agent: http.Agent;
  private watchAgent: http.Agent;
  private tls: TlsMaterial;
  private closed = false;

  private constructor(sel: KubeconfigSelection, base: URL, credentials: Credentials, tls: TlsMaterial) {
    this.source = sel.source;
    this.server = sel.server;
    this.contextName = sel.contextName;
    this.contextNamespace = sel.namespace;
    this.userName = sel.userDefined ? sel.user.name : "?";
    this.credentials = credentials;
    this.base = base;
    this.isHttps = base.protocol === "https:";
    this.tls = tls;
    this.agent = this.makeAgent(32);
    this.watchAgent = this.makeAgent(Infinity);
    this.discovery = new Discovery(this);
    this.openapi = new OpenApiCache(this);
  }

  /**
   * Loads the kubeconfig the standard way (explicit content, explicit path,
   * else `KUBECONFIG` (a path list, first file wins on duplicate names), else
   * ~/.kube/config, else the in-cluster service account; kubectl's rules, see
   * kubeconfig.ts) and prepares authentication. Does not contact the server.
   */
  static async connect(opts: ClusterTarget = {}): Promise<KubeClient> {
    const sel = selectContext(opts.loaded ?? loadKubeconfig(opts), opts.context);
    let base: URL;
    try {
      base = new URL(sel.server);
    } catch {
      throw new KubeConfigError(`cluster "${sel.cluster.name}" has an invalid server URL: ${sel.cluster.server}`);
    }
    const credentials = await credentialsFor(sel);
    // Exec plugins run now, so a broken one fails the connect rather than the first request.
    const { tls } = await credentials.current();
    return new KubeClient(sel, base, credentials, tls);
  }

  /** `the Kubernetes API server at URL (context "c" from kubeconfig F)`: where errors say khook tried to go. */
  describeServer(): string {
    return `the Kubernetes API server at ${this.server} (context "${this.contextName}" from ${describeSource(this.source)})`;
  }

  /** Closes pooled connections. In-flight watches are ended. */
  close(): void {
    this.closed = true;
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  // ---------------------------------------------------------------- transport

  /** Sends one request and reads the whole response. Failure statuses become KubeApiError. */
  async request(opts: RequestOptions): Promise<RawResponse> {
    const bound = this.bounded(opts);
    try {
      const res = await this.send(bound.opts, false);
      const text = await readBody(res, bound.opts.signal);
      const status = res.statusCode ?? 0;
      if (status >= 400) throw this.errorFrom(status, res.headers, text, opts);
      return { status, headers: res.headers, text };
    } catch (e) {
      throw this.unanswered(e, opts, bound.startedAt);
    } finally {
      bound.dispose();
    }
  }

  /**
   * The request with its deadline (if any) as a signal: the time left bounds the whole request,
   * connection, response and body alike. Without a deadline the request is as given.
   */
  private bounded(opts: RequestOptions): { opts: RequestOptions; startedAt: number; dispose(): void } {
    const startedAt = Date.now();
    if (opts.deadline === undefined) return { opts, startedAt, dispose: () => undefined };
    const left = Math.max(0, opts.deadline - startedAt);
    const timer = new AbortController();
    const t = setTimeout(
      () => timer.abort(new NoAnswer(`no answer within ${formatSeconds(left)}, the time left to wait`)),
      left,
    );
    const signal = opts.signal !== undefined ? AbortSignal.any([opts.signal, timer.signal]) : timer.signal;
    const timeoutMs = Math.min(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, Math.max(1, left));
    return { opts: { ...opts, signal, timeoutMs }, startedAt, dispose: () => clearTimeout(t) };
  }

  /**
   * A request that ran out of time before the server answered, by its deadline or by its caller's
   * own bound (`AbortSignal.timeout`, e.g. the state record's per-call bound), becomes the
   * connection error naming the server; with a server that has answered before, a caller's bound
   * stays what it was (the caller decides).
   */
  private unanswered(e: unknown, opts: RequestOptions, startedAt: number): unknown {
    if (e instanceof NoAnswer) return this.connectionError(e, opts);
    if (isTimeoutAbort(e) && !this.answered && !(e instanceof KhookError))
      return this.connectionError(new NoAnswer(`no answer within ${formatSeconds(Date.now() - startedAt)}`), opts);
    return e;
  }

  /** Sends a request and parses the JSON response. */
  async requestJson<T = unknown>(opts: RequestOptions): Promise<T> {
    const res = await this.request(opts);
    if (res.text === "") return undefined as T;
    try {
      return JSON.parse(res.text) as T;
    } catch {
      throw new KubeConnectionError(
        `the API server at ${this.server} sent a response that is not JSON for ${opts.method ?? "GET"} ${opts.path}: ${res.text.slice(0, 200)}`,
        this.server,
        undefined,
      );
    }
  }

  /** Opens a streaming response (watch, follow logs). The caller consumes and destroys it. */
  async stream(opts: RequestOptions): Promise<http.IncomingMessage> {
    const res = await this.send({ ...opts, timeoutMs: opts.timeoutMs ?? 0 }, true);
    const status = res.statusCode ?? 0;
    if (status >= 400) {
      const text = await readBody(res, opts.signal);
      throw this.errorFrom(status, res.headers, text, opts);
    }
    return res;
  }

  private errorFrom(status: number, headers: http.IncomingHttpHeaders, text: string, opts: RequestOptions): Error {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const target: ErrorTarget = opts.target ?? { what: `${opts.method ?? "GET"} ${opts.path}` };
    const err = apiErrorFromResponse(status, body, text, target, headers);
    if (status === 401) {
      return apiErrorFromResponse(
        status,
        {
          kind: "Status",
          reason: "Unauthorized",
          message: `${err.apiMessage} — the API server at ${this.server} rejected the credentials of user "${this.userName}" (context "${this.contextName}"); check that they are valid and not expired`,
        },
        text,
        target,
      );
    }
    return err;
  }

  private async send(opts: RequestOptions, streaming: boolean): Promise<http.IncomingMessage> {
    if (this.closed)
      throw new KubeConnectionError(`the connection to ${this.server} was closed`, this.server, undefined);
    let attempt = 0;
    for (;;) {
      attempt++;
      try {
        const res = await this.sendOnce(opts, streaming);
        const status = res.statusCode ?? 0;
        // API Priority and Fairness / overload: the request was not processed, so it is safe to retry.
        if ((status === 429 || (status === 503 && res.headers["retry-after"] !== undefined)) && attempt <= 5) {
          res.resume();
          const after = Number(res.headers["retry-after"] ?? "1");
          await sleep(Math.min(Math.max(Number.isFinite(after) ? after : 1, 0.2), 5) * 1000, opts.signal);
          continue;
        }
        return res;
      } catch (e) {
        if (e instanceof NoAnswer) throw this.connectionError(e, opts);
        if (opts.signal?.aborted) throw abortError(opts.signal);
        // A keep-alive socket the server already closed: Node's documented race; retry once.
        if (isStaleSocket(e) && attempt <= 2) continue;
        throw this.connectionError(e, opts);
      }
    }
  }

  private async sendOnce(opts: RequestOptions, streaming: boolean): Promise<http.IncomingMessage> {
    const key = `${opts.method ?? "GET"} ${opts.path}`;
    this.requestCounts.set(key, (this.requestCounts.get(key) ?? 0) + 1);
    const headers: http.OutgoingHttpHeaders = { ...(await this.authHeaders()) };
    headers["User-Agent"] = USER_AGENT;
    headers["Accept"] = opts.accept ?? "application/json";
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.isBuffer(opts.body)
        ? opts.body
        : Buffer.from(typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body), "utf8");
      headers["Content-Type"] = opts.contentType ?? "application/json";
      headers["Content-Length"] = String(payload.length);
    }
    const url = new URL(this.base.toString());
    url.pathname = joinPath(this.base.pathname, opts.path);
    url.search = encodeQuery(opts.query);
    const signal = opts.signal;
    if (signal?.aborted) throw abortError(signal);
    const mod = this.isHttps ? https : http;
    return await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = mod.request(url, {
        method: opts.method ?? "GET",
        headers,
        agent: streaming ? this.watchAgent : this.agent,
      });
      const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      if (timeout > 0) {
        req.setTimeout(timeout, () => {
          req.destroy(new NoAnswer(`no response within ${formatSeconds(timeout)}`));
        });
      }
      req.once("socket", (socket) => this.boundConnect(req, socket));
      const onAbort = (): void => {
        req.destroy(abortError(signal!));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("response", (res) => {
        this.answered = true;
        // Non-streaming requests keep the inactivity timeout while the body arrives; streams have none.
        if (streaming) req.setTimeout(0);
        res.on("close", () => signal?.removeEventListener("abort", onAbort));
        resolve(res);
      });
      req.on("error", (err) => {
        signal?.removeEventListener("abort", onAbort);
        Object.assign(err, { reusedSocket: req.reusedSocket });
        reject(err);
      });
      if (payload) req.end(payload);
      else req.end();
    });
  }

  /**
   * A new connection (not one reused from the pool) must connect, and for https finish its TLS
   * handshake, within client-go's bounds (for plain http to a server that has not answered yet:
   * begin its response within the handshake's); a server that accepts and then says nothing fails here.
   */
  private boundConnect(req: http.ClientRequest, socket: net.Socket): void {
    if (!socket.connecting) return;
    const stage = (ms: number, what: string): NodeJS.Timeout =>
      setTimeout(() => req.destroy(new NoAnswer(`${what} within ${formatSeconds(ms)}`)), ms);
    let timer = stage(CONNECT_TIMEOUT_MS, "no connection");
    const clear = (): void => clearTimeout(timer);
    socket.once("connect", () => {
      clear();
      if (this.isHttps) {
        timer = stage(TLS_HANDSHAKE_TIMEOUT_MS, "no TLS handshake");
        socket.once("secureConnect", clear);
      } else if (!this.answered) {
        timer = stage(FIRST_ANSWER_TIMEOUT_MS, "no response");
        req.once("response", clear);
      }
    });
    socket.once("close", clear);
  }

  private connectionError(e: unknown, opts: RequestOptions): Error {
    // Already ours (any KhookError subclass: a failed credential refresh, a cancellation) or an abort: keep it as it is.
    if (e instanceof KhookError || (e instanceof Error && e.name === "AbortError")) return e;
    const err = e as NodeJS.ErrnoException;
    const code = err.code ?? "";
    const what = `${opts.method ?? "GET"} ${opts.path}`;
    const where = this.describeServer();
    // Never answered: it accepts connections (or the OS gave up connecting) and says nothing.
    const silent = code === "ETIMEDOUT" && !this.answered;
    const notUp = NOT_UP_CODES.has(code) || silent;
    let hint: string;
    // The network codes first: a reset mid-handshake reads "...before secure TLS connection was
    // established", but the peer went away (a restarting API server); the certificates are fine.
    const network =
      code === "ECONNREFUSED" ||
      code === "ETIMEDOUT" ||
      code === "ECONNRESET" ||
      code === "EHOSTUNREACH" ||
      code === "ENETUNREACH";
    if (TLS_CODES.has(code) || (!network && /certificate|self[- ]signed|SSL|TLS/i.test(err.message ?? ""))) {
      hint = `TLS verification failed; check the cluster's certificate-authority(-data) and server name in the kubeconfig`;
    } else if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
      hint = `the host name does not resolve; check the server URL in the kubeconfig`;
    } else if (code === "ECONNREFUSED") {
      hint = `nothing is listening there; check that the cluster is running and that the kubeconfig/context point at it`;
    } else if (silent) {
      hint = `something accepts connections there but never answers; check that the cluster is running and that the kubeconfig/context point at it`;
    } else if (network) {
      hint = `check that the cluster is running and reachable from this machine (network, VPN, firewall)`;
    } else {
      hint = `check that the cluster is running and that the kubeconfig/context point at it`;
    }
    if (this.notUpAdvice !== undefined && notUp) hint += `; ${this.notUpAdvice}`;
    const failure = new KubeConnectionError(
      `cannot reach ${where} (${what}): ${code ? code + " " : ""}${err.message ?? String(e)} — ${hint}`,
      this.server,
      e,
      notUp,
    );
    if (notUp) this.lastNotUp = failure;
    return failure;
  }

  private makeAgent(maxSockets: number): http.Agent {
    const base = {
      keepAlive: true,
      keepAliveMsecs: 30_000,
      maxSockets,
      maxFreeSockets: 16,
      scheduling: "lifo" as const,
    };
    if (!this.isHttps) return new http.Agent(base);
    const t = this.tls;
    return new https.Agent({
      ...base,
      ...(t.ca !== undefined ? { ca: t.ca } : {}),
      ...(t.cert !== undefined ? { cert: t.cert } : {}),
      ...(t.key !== undefined ? { key: t.key } : {}),
      ...(t.servername !== undefined ? { servername: t.servername } : {}),
      ...(t.rejectUnauthorized !== undefined ? { rejectUnauthorized: t.rejectUnauthorized } : {}),
    });
  }

  /** Static credentials are computed once (a token file is re-read each minute); exec plugins / auth providers are asked per request (they cache). */
  private async authHeaders(): Promise<http.OutgoingHttpHeaders> {
    const { tls, headers } = await this.credentials.current();
    if (tls !== this.tls && (!sameBytes(tls.cert, this.tls.cert) || !sameBytes(tls.key, this.tls.key))) {
      // An exec plugin rotated the client certificate: new connections must use it.
      this.tls = tls;
      const old = [this.agent, this.watchAgent];
      this.agent = this.makeAgent(32);
      this.watchAgent = this.makeAgent(Infinity);
      for (const a of old) setTimeout(() => a.destroy(), 60_000).unref();
    }
    return headers;
  }

  // ---------------------------------------------------------------- discovery

  /** Resolves a kubectl-style resource string (`deploy`, `deployments.apps`, `deployment.v1.apps`). */
  resolveResource(arg: string, opts?: ResolveOptions): Promise<ApiResource> {
    return this.discovery.resolveResource(arg, opts);
  }

  /** Resolves a manifest's `{apiVersion, kind}`. */
  resolveKind(apiVersion: string, kind: string, opts?: ResolveOptions): Promise<ApiResource> {
    return this.discovery.resolveKind(apiVersion, kind, opts);
  }

  /** Resolves `type` or `type/name` (`daemonset/aws-node`, `pods`). */
  resolveTarget(arg: string, opts?: ResolveOptions): Promise<{ type: ApiResource; name: string | undefined }> {
    return this.discovery.resolveTarget(arg, opts);
  }

  /** `/version`'s gitVersion and every served API version (from the discovery catalog), sorted. */
  async capabilities(
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ kubernetesVersion: string; apiVersions: string[] }> {
    const [version, catalog] = await Promise.all([
      this.requestJson<{ gitVersion?: string }>({
        path: "/version",
        ...(opts.signal ? { signal: opts.signal } : {}),
        target: { what: "the server version (GET /version)" },
      }),
      this.discovery.catalog(opts.signal),
    ]);
    return {
      kubernetesVersion: version?.gitVersion ?? "",
      apiVersions: [...new Set(catalog.map((r) => apiVersionOf(r)))].sort(),
    };
  }

  // ---------------------------------------------------------------- objects

  get(rt: ResourceType, name: string, namespace?: string, opts?: objects.ReadOptions): Promise<KubeObject | undefined> {
    return objects.get(this, rt, name, namespace, opts);
  }
  list(rt: ResourceType, opts?: objects.ListOptions): Promise<objects.ObjectList> {
    return objects.list(this, rt, opts);
  }
  create(rt: ResourceType, obj: KubeObject, opts?: objects.WriteOptions): Promise<KubeObject> {
    return objects.create(this, rt, obj, opts);
  }
  replace(rt: ResourceType, obj: KubeObject, opts?: objects.WriteOptions): Promise<KubeObject> {
    return objects.replace(this, rt, obj, opts);
  }
  delete(
    rt: ResourceType,
    name: string,
    namespace?: string,
    opts?: objects.DeleteOptions,
  ): Promise<objects.DeleteResult> {
    return objects.remove(this, rt, name, namespace, opts);
  }
  patch(
    rt: ResourceType,
    name: string,
    namespace: string | undefined,
    type: objects.PatchType,
    body: unknown,
    opts?: objects.WriteOptions,
  ): Promise<KubeObject> {
    return objects.patch(this, rt, name, namespace, type, body, opts);
  }
  serverSideApply(
    rt: ResourceType,
    obj: KubeObject,
    opts?: objects.ServerSideApplyOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    return objects.serverSideApply(this, rt, obj, opts);
  }

  // ---------------------------------------------------------------- apply

  /** `kubectl apply` of one object: create, or a three-way patch from last-applied / manifest / live. */
  apply(manifest: KubeObject, opts?: applyMod.ApplyOptions): Promise<applyMod.ApplyResult> {
    return applyMod.applyObject(this, manifest, opts);
  }
  /** Applies several objects in order (namespaces and CRDs act as barriers). */
  applyAll(manifests: readonly KubeObject[], opts?: applyMod.ApplyAllOptions): Promise<applyMod.ApplyResult[]> {
    return applyMod.applyAll(this, manifests, opts);
  }
  /** Whether applying the manifest would change the live object, and which fields (apply.ts). */
  appliedDrift(manifest: KubeObject, live: KubeObject, opts?: applyMod.ApplyOptions): Promise<applyMod.AppliedDrift> {
    return applyMod.appliedDrift(this, manifest, live, opts);
  }

  // ---------------------------------------------------------------- watch / wait

  watch(rt: ResourceType, opts: watchMod.WatchOptions): AsyncGenerator<watchMod.WatchEvent> {
    return watchMod.watch(this, rt, opts);
  }
  waitFor<T = true>(scope: watchMod.WaitScope, check: watchMod.WaitCheck<T>, opts: watchMod.WaitOptions): Promise<T> {
    return watchMod.waitFor(this, scope, check, opts);
  }
  waitForDeletion(
    rt: ResourceType,
    name: string,
    namespace: string | undefined,
    opts: watchMod.WaitOptions & { uid?: string },
  ): Promise<void> {
    return watchMod.waitForDeletion(this, rt, name, namespace, opts);
  }
  waitForCondition(
    scope: watchMod.WaitScope,
    condition: WaitCondition,
    opts: watchMod.WaitOptions,
  ): Promise<KubeObject[]> {
    return watchMod.waitForCondition(this, scope, condition, opts);
  }
  waitForObjects(
    refs: readonly watchMod.ObjectRef[],
    condition: WaitCondition,
    opts: watchMod.WaitOptions,
  ): Promise<void> {
    return watchMod.waitForObjects(this, refs, condition, opts);
  }

  // ---------------------------------------------------------------- logs

  podLogs(namespace: string, pod: string, opts?: logsMod.LogOptions): Promise<string> {
    return logsMod.podLogs(this, namespace, pod, opts);
  }
  jobPods(namespace: string, job: string, opts?: { signal?: AbortSignal }): Promise<KubeObject[]> {
    return logsMod.jobPods(this, namespace, job, opts);
  }
}

// -------------------------------------------------------------------- helpers

const TLS_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_SIGNATURE_FAILURE",
  "EPROTO",
]);

/** `10s`, `1.5s`: a bound as people read it. */
function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) || s >= 10 ? Math.round(s) : s.toFixed(1)}s`;
}

function isStaleSocket(e: unknown): boolean {
  const err = e as NodeJS.ErrnoException & { reusedSocket?: boolean };
  return !!err && err.reusedSocket === true && (err.code === "ECONNRESET" || err.code === "EPIPE");
}

function sameBytes(a: Buffer | string | undefined, b: Buffer | string | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return Buffer.from(a).equals(Buffer.from(b));
}

function joinPath(basePath: string, p: string): string {
  const b = basePath.replace(/\/+$/, "");
  return b + (p.startsWith("/") ? p : `/${p}`);
}

function encodeQuery(q: Record<string, QueryValue> | undefined): string {
  if (!q) return "";
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) sp.append(k, x);
    else sp.append(k, String(v));
  }
  const s = sp.toString();
  return s === "" ? "" : `?${s}`;
}

async function readBody(res: http.IncomingMessage, signal: AbortSignal | undefined): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res) chunks.push(chunk as Buffer);
  } catch (e) {
    if (signal?.aborted) throw abortError(signal);
    throw e;
  }
  return Buffer.concat(chunks).toString("utf8");
}
