/**
 * API discovery: which groups, versions and resources the server serves.
 *
 * Uses aggregated discovery (`/api` + `/apis` as APIGroupDiscoveryList, two
 * requests for the whole catalog) when the server offers it, else the legacy
 * per-group-version documents. The catalog is cached; an unknown name triggers
 * a refresh, and names a recently applied CRD defines are polled for briefly
 * (the server only serves a CRD's resource once it is Established).
 *
 * An aggregated API that is not available (an APIService without its pod: metrics-server before
 * it runs) does not break discovery of the rest, as in kubectl: its group-version is left out and
 * `onWarning` hears about it once (kubectl's `couldn't get resource list for ...` line). A step
 * that uses its group finds its kind not served yet, which the engine waits out as transient.
 */
import { KhookError } from "../errors.js";
import type { Transport } from "./transport.js";
import { sleep } from "./transport.js";
import { abortError } from "./api-errors.js";
import { matchKind, matchResource, splitTarget, suggest } from "../kubectl/resourceref.js";
import { isObject, splitApiVersion, type ApiResource } from "../kubectl/types.js";

export interface ResolveOptions {
  signal?: AbortSignal;
  /**
   * Keep refreshing discovery for up to this long while the name is unknown.
   * Default 0; names of CRDs registered with `expect()` are polled for up to 30s regardless.
   */
  waitMs?: number;
}

/** The resource type is not served by the cluster (typo, or its CRD is not installed). */
export class UnknownResourceError extends KhookError {
  constructor(message: string) {
    super("execution", message);
    this.name = "UnknownResourceError";
  }
}

const AGGREGATED_ACCEPT = [
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
  "application/json",
].join(",");

/** How long a CRD that khook just applied may take to become resolvable. */
const EXPECTED_WAIT_MS = 30_000;
/** How long an expectation is remembered. */
const EXPECT_TTL_MS = 10 * 60_000;

/** One discovery fetch and how many callers still wait for it. */
interface SharedFetch {
  readonly promise: Promise<readonly ApiResource[]>;
  readonly controller: AbortController;
  waiters: number;
}

/** Waits for a shared fetch until `signal` aborts; the last waiter to give up cancels the fetch. */
function join(fetch: SharedFetch, signal: AbortSignal | undefined): Promise<readonly ApiResource[]> {
  fetch.waiters++;
  // Without a signal the caller waits to the end, and so does the fetch.
  if (signal === undefined) return fetch.promise;
  const leave = (): void => {
    if (--fetch.waiters === 0) fetch.controller.abort(abortError(signal));
  };
  if (signal.aborted) {
    leave();
    return Promise.reject(abortError(signal));
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      leave();
      reject(abortError(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    fetch.promise.then(
      (c) => {
        signal.removeEventListener("abort", onAbort);
        fetch.waiters--;
        resolve(c);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        fetch.waiters--;
        reject(e);
      },
    );
  });
}

interface Expected {
  group: string;
  kind: string;
  names: string[];
  at: number;
}

export class Discovery {
  private readonly client: Transport;
  private cached: readonly ApiResource[] | undefined;
  private inflight: SharedFetch | undefined;
  private expected: Expected[] = [];
  /** Which discovery protocol the server spoke, for diagnostics. */
  mode: "aggregated" | "legacy" | undefined;
  /** Ask for aggregated discovery first (default). False forces the per-group-version documents. */
  preferAggregated = true;
  /** Told once per group-version that discovery could not read (an unavailable aggregated API). */
  onWarning: ((message: string) => void) | undefined;
  private readonly warned = new Set<string>();

  constructor(client: Transport) {
    this.client = client;
  }

  /** The whole catalog, most preferred first: core group, then groups in server priority, preferred version first. */
  async catalog(signal?: AbortSignal): Promise<readonly ApiResource[]> {
    if (this.cached) return this.cached;
    return this.refresh(signal);
  }

  /**
   * Drops the cache and fetches again. Concurrent callers share one fetch, and each waits for it
   * only as long as its own signal allows: a step whose deadline comes first stops waiting then
   * (the others keep the fetch), and a caller that gives up never cancels it for the rest. The
   * fetch is cancelled when every caller has given up.
   */
  refresh(signal?: AbortSignal): Promise<readonly ApiResource[]> {
    if (!this.inflight) {
      const controller = new AbortController();
      const shared: SharedFetch = {
        controller,
        waiters: 0,
        promise: this.fetchAll(controller.signal)
          .then((c) => {
            this.cached = c;
            return c;
          })
          .finally(() => {
            if (this.inflight === shared) this.inflight = undefined;
          }),
      };
      this.inflight = shared;
    }
    return join(this.inflight, signal);
  }

  invalidate(): void {
    this.cached = undefined;
  }

  /**
   * Tells discovery that a CRD for these names was just created or changed, so
   * resolving them polls until the server serves them instead of failing.
   */
  expect(crd: {
    group: string;
    kind: string;
    plural?: string;
    singular?: string;
    shortNames?: readonly string[];
  }): void {
    const now = Date.now();
    this.expected = this.expected.filter(
      (e) => now - e.at < EXPECT_TTL_MS && !(e.group === crd.group && e.kind === crd.kind),
    );
    const names = [crd.kind.toLowerCase(), crd.plural, crd.singular, ...(crd.shortNames ?? [])].filter(
      (n): n is string => typeof n === "string" && n !== "",
    );
    this.expected.push({ group: crd.group, kind: crd.kind, names: names.map((n) => n.toLowerCase()), at: now });
    this.invalidate();
  }

  /** Resolves a kubectl-style resource argument (`pods`, `po`, `deployments.apps`, `deployment.v1.apps`). */
  async resolveResource(arg: string, opts: ResolveOptions = {}): Promise<ApiResource> {
    const hit = await this.lookup(
      (c) => matchResource(c, arg),
      (e) => expectationMatchesArg(e, arg),
      opts,
    );
    if (hit) return hit;
    const cat = this.cached ?? [];
    const hints = suggest(cat, arg);
    throw new UnknownResourceError(
      `the server doesn't have a resource type "${arg}"${hints.length ? ` (did you mean ${hints.join(", ")}?)` : ""}`,
    );
  }

  /** Resolves a manifest's apiVersion and kind. */
  async resolveKind(apiVersion: string, kind: string, opts: ResolveOptions = {}): Promise<ApiResource> {
    const { group, version } = splitApiVersion(apiVersion);
    const hit = await this.lookup(
      (c) => matchKind(c, group, version, kind),
      (e) => e.group === group && e.kind === kind,
      opts,
    );
    if (hit) return hit;
    const cat = this.cached ?? [];
    const sameKind = cat
      .filter((r) => r.kind === kind)
      .map((r) => (r.group === "" ? r.version : `${r.group}/${r.version}`));
    const hint = sameKind.length
      ? `; the server has kind "${kind}" in ${[...new Set(sameKind)].join(", ")}`
      : group !== "" && !cat.some((r) => r.group === group)
        ? `; the API group "${group}" is not served — is its CRD installed (and applied before this object)?`
        : "";
    throw new UnknownResourceError(`no matches for kind "${kind}" in version "${apiVersion}"${hint}`);
  }

  /** Resolves `type` or `type/name`. */
  async resolveTarget(
    arg: string,
    opts: ResolveOptions = {},
  ): Promise<{ type: ApiResource; name: string | undefined }> {
    const p = splitTarget(arg);
    if (!p.ok) throw new UnknownResourceError(p.message);
    return { type: await this.resolveResource(p.type, opts), name: p.name };
  }

  private async lookup(
    find: (c: readonly ApiResource[]) => ApiResource | undefined,
    isExpected: (e: Expected) => boolean,
    opts: ResolveOptions,
  ): Promise<ApiResource | undefined> {
    const first = find(await this.catalog(opts.signal));
    if (first) return first;
    // Unknown: the catalog may predate a CRD created in this run.
    const fresh = find(await this.refresh(opts.signal));
    if (fresh) return fresh;
    const now = Date.now();
    const expectedWait = this.expected.some((e) => now - e.at < EXPECT_TTL_MS && isExpected(e)) ? EXPECTED_WAIT_MS : 0;
    const budget = Math.max(opts.waitMs ?? 0, expectedWait);
    if (budget <= 0) return undefined;
    const until = now + budget;
    let delay = 100;
    while (Date.now() < until) {
      if (opts.signal?.aborted) throw abortError(opts.signal);
      await sleep(Math.min(delay, Math.max(until - Date.now(), 0)), opts.signal);
      delay = Math.min(delay * 2, 1000);
      const hit = find(await this.refresh(opts.signal));
      if (hit) return hit;
    }
    return undefined;
  }

  private warnUnavailable(groupVersion: string, why: string): void {
    if (this.warned.has(groupVersion)) return;
    this.warned.add(groupVersion);
    this.onWarning?.(
      `couldn't get resource list for ${groupVersion}: ${why}; steps that use this API wait for it, the others go on`,
    );
  }

  // ------------------------------------------------------------------ fetching

  private async fetchAll(signal: AbortSignal | undefined): Promise<readonly ApiResource[]> {
    const accept = this.preferAggregated ? AGGREGATED_ACCEPT : "application/json";
    const [core, groups] = await Promise.all([
      this.client.requestJson<unknown>({ path: "/api", accept, signal, target: { what: "discovery (GET /api)" } }),
      this.client.requestJson<unknown>({ path: "/apis", accept, signal, target: { what: "discovery (GET /apis)" } }),
    ]);
    if (isAggregated(core) && isAggregated(groups)) {
      this.mode = "aggregated";
      for (const gv of staleGroupVersions(groups))
        this.warnUnavailable(gv, "stale discovery: its APIService is not available");
      return [...parseAggregated(core), ...parseAggregated(groups)];
    }
    this.mode = "legacy";
    return this.fetchLegacy(core, groups, signal);
  }

  private async fetchLegacy(core: unknown, groups: unknown, signal: AbortSignal | undefined): Promise<ApiResource[]> {
    const gvs: { group: string; version: string; path: string }[] = [];
    const coreVersions = isObject(core) && Array.isArray(core["versions"]) ? (core["versions"] as unknown[]) : ["v1"];
    for (const v of coreVersions) if (typeof v === "string") gvs.push({ group: "", version: v, path: `/api/${v}` });
    const groupList = isObject(groups) && Array.isArray(groups["groups"]) ? (groups["groups"] as unknown[]) : [];
    for (const g of groupList) {
      if (!isObject(g) || typeof g["name"] !== "string") continue;
      const name = g["name"];
      const versions = Array.isArray(g["versions"]) ? (g["versions"] as unknown[]) : [];
      const preferred = isObject(g["preferredVersion"]) ? g["preferredVersion"]["version"] : undefined;
      const ordered = versions
        .filter(isObject)
        .map((v) => String(v["version"]))
        .sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : 0));
      for (const v of ordered) gvs.push({ group: name, version: v, path: `/apis/${name}/${v}` });
    }
    const lists = await mapLimit(gvs, 8, async (gv) => {
      try {
        return await this.client.requestJson<unknown>({
          path: gv.path,
          signal,
          target: { what: `discovery (GET ${gv.path})` },
        });
      } catch (e) {
        if (signal?.aborted) throw e;
        // Like kubectl: an unavailable aggregated API does not break discovery of the rest.
        const why = (e as { apiMessage?: unknown }).apiMessage;
        this.warnUnavailable(
          gv.group === "" ? gv.version : `${gv.group}/${gv.version}`,
          typeof why === "string" ? why : (e as Error).message,
        );
        return undefined;
      }
    });
    const out: ApiResource[] = [];
    gvs.forEach((gv, i) => {
      const list = lists[i];
      if (!isObject(list) || !Array.isArray(list["resources"])) return;
      for (const r of list["resources"] as unknown[]) {
        if (!isObject(r) || typeof r["name"] !== "string" || r["name"].includes("/")) continue;
        const kind = String(r["kind"] ?? "");
        out.push({
          group: gv.group,
          version: gv.version,
          resource: r["name"],
          kind,
          namespaced: r["namespaced"] === true,
          singular:
            typeof r["singularName"] === "string" && r["singularName"] !== "" ? r["singularName"] : kind.toLowerCase(),
          shortNames: strings(r["shortNames"]),
          verbs: strings(r["verbs"]),
          categories: strings(r["categories"]),
        });
      }
    });
    return out;
  }
}

/** Group-versions an aggregated discovery document marks stale (the aggregator could not read them). */
export function staleGroupVersions(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const item of doc["items"] as unknown[]) {
    if (!isObject(item)) continue;
    const group =
      isObject(item["metadata"]) && typeof item["metadata"]["name"] === "string" ? item["metadata"]["name"] : "";
    for (const v of Array.isArray(item["versions"]) ? (item["versions"] as unknown[]) : []) {
      if (isObject(v) && v["freshness"] === "Stale" && typeof v["version"] === "string")
        out.push(group === "" ? v["version"] : `${group}/${v["version"]}`);
    }
  }
  return out;
}

function isAggregated(v: unknown): v is Record<string, unknown> {
  return isObject(v) && v["kind"] === "APIGroupDiscoveryList" && Array.isArray(v["items"]);
}

/** Parses an APIGroupDiscoveryList (v2 and v2beta1 have the same shape). */
export function parseAggregated(doc: Record<string, unknown>): ApiResource[] {
  const out: ApiResource[] = [];
  for (const item of doc["items"] as unknown[]) {
    if (!isObject(item)) continue;
    const meta = isObject(item["metadata"]) ? item["metadata"] : {};
    const group = typeof meta["name"] === "string" ? meta["name"] : "";
    const versions = Array.isArray(item["versions"]) ? (item["versions"] as unknown[]) : [];
    for (const v of versions) {
      if (!isObject(v) || typeof v["version"] !== "string") continue;
      const version = v["version"];
      const resources = Array.isArray(v["resources"]) ? (v["resources"] as unknown[]) : [];
      for (const r of resources) {
        if (!isObject(r) || typeof r["resource"] !== "string") continue;
        const rk = isObject(r["responseKind"]) ? r["responseKind"] : {};
        const kind = typeof rk["kind"] === "string" ? rk["kind"] : "";
        out.push({
          group,
          version,
          resource: r["resource"],
          kind,
          namespaced: r["scope"] === "Namespaced",
          singular:
            typeof r["singularResource"] === "string" && r["singularResource"] !== ""
              ? r["singularResource"]
              : kind.toLowerCase(),
          shortNames: strings(r["shortNames"]),
          verbs: strings(r["verbs"]),
          categories: strings(r["categories"]),
        });
      }
    }
  }
  return out;
}

function expectationMatchesArg(e: Expected, arg: string): boolean {
  const type = arg.split("/")[0] ?? arg;
  const dot = type.indexOf(".");
  const name = (dot < 0 ? type : type.slice(0, dot)).toLowerCase();
  const rest = dot < 0 ? "" : type.slice(dot + 1);
  if (!e.names.includes(name)) return false;
  return rest === "" || rest === e.group || rest.endsWith(`.${e.group}`);
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i] as T);
    }
  });
  await Promise.all(workers);
  return out;
}
