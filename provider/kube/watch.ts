/**
 * Watches, and waits built on them (including kubectl wait's conditions,
 * evaluated by provider/kubectl/conditions.ts).
 *
 * `observe` is a tiny informer: list, then watch from the list's
 * resourceVersion (with bookmarks), re-watch when the server ends the stream,
 * re-list on 410 Gone, and — like client-go's reflector — keep re-connecting
 * while the API server is unreachable (restarted, upgraded, its etcd down),
 * for as long as the caller waits. It yields the full set of matching objects after the
 * list and after every change, so `waitFor` decides the moment the state
 * changes — never by polling on an interval.
 */
import { KhookError } from "../errors.js";
import { checkObjects, evaluateCondition, type WaitVerdict } from "../kubectl/conditions.js";
import { describeObject, type KubeObject, type ResourceType } from "../kubectl/types.js";
import { formatWaitCondition, type WaitCondition } from "../kubectl/waitfor.js";
import { abortError, apiErrorFromResponse, KubeApiError, KubeConnectionError, WaitTimeoutError } from "./api-errors.js";
import { list, resourcePath } from "./objects.js";
import { sleep, type Transport } from "./transport.js";

export type { WaitVerdict };

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface WatchOptions {
  namespace?: string;
  allNamespaces?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this resourceVersion (from a list). */
  resourceVersion?: string;
  signal?: AbortSignal;
  /** Default true. */
  allowBookmarks?: boolean;
  /** Server-side end of the stream; default a random 5–10 minutes, like client-go. */
  timeoutSeconds?: number;
}

/** One watch request: yields events until the server closes the stream. ERROR events are yielded as-is. */
export async function* watch(client: Transport, rt: ResourceType, opts: WatchOptions): AsyncGenerator<WatchEvent> {
  const ns = rt.namespaced && !opts.allNamespaces ? opts.namespace : undefined;
  const res = await client.stream({
    path: resourcePath(rt, ns),
    query: {
      watch: "true",
      resourceVersion: opts.resourceVersion || undefined,
      allowWatchBookmarks: opts.allowBookmarks === false ? undefined : "true",
      labelSelector: opts.labelSelector || undefined,
      fieldSelector: opts.fieldSelector || undefined,
      timeoutSeconds: opts.timeoutSeconds ?? Math.floor(300 * (1 + Math.random())),
    },
    signal: opts.signal,
    target: { resource: rt, namespace: ns },
  });
  let buf = "";
  try {
    res.setEncoding("utf8");
    for await (const chunk of res) {
      buf += chunk as string;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line === "") continue;
        yield JSON.parse(line) as WatchEvent;
      }
    }
    const rest = buf.trim();
    if (rest !== "") yield JSON.parse(rest) as WatchEvent;
  } catch (e) {
    if (opts.signal?.aborted) throw abortError(opts.signal);
    throw e;
  } finally {
    res.destroy();
  }
}

/** Which objects a wait looks at. */
export interface WaitScope {
  resource: ResourceType;
  namespace?: string;
  allNamespaces?: boolean;
  /** A single object (also when it does not exist yet). */
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Decides from the current set of matching objects. */
export type WaitCheck<T = true> = (objects: readonly KubeObject[]) => WaitVerdict<T>;

export interface WaitOptions {
  signal?: AbortSignal;
  /** Give up after this long (the step's remaining time). */
  timeoutMs: number;
  /** Called when the pending message changes. */
  onProgress?: (message: string) => void;
  /** What is being waited for, e.g. `condition=Ready on pods`; used in the timeout error. */
  description?: string;
}

/**
 * Resolves as soon as `check` says done. Missing objects are simply absent
 * from the set, so "wait for it to appear" and "wait until all are gone" are
 * ordinary checks.
 */
export async function waitFor<T = true>(
  client: Transport,
  scope: WaitScope,
  check: WaitCheck<T>,
  opts: WaitOptions,
): Promise<T> {
  const ac = new AbortController();
  const timeoutReason = new KhookError("execution", "wait timed out");
  const onAbort = (): void => ac.abort(opts.signal?.reason);
  if (opts.signal?.aborted) throw abortError(opts.signal);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => ac.abort(timeoutReason), Math.max(0, opts.timeoutMs));
  let last = "nothing observed yet";
  const what = opts.description ?? describeScope(scope);
  try {
    const unreachable = (message: string): void => {
      // The timeout error then says why nothing was seen; progress shows the outage as it happens.
      if (message === last) return;
      last = message;
      opts.onProgress?.(message);
    };
    for await (const objects of observe(client, scope, ac.signal, unreachable)) {
      const v = check(objects);
      if (v.state === "done") return v.value;
      if (v.state === "failed") throw new KhookError("execution", v.message);
      if (v.message !== last) {
        last = v.message;
        opts.onProgress?.(v.message);
      }
    }
    throw new KhookError("execution", `watch of ${what} ended unexpectedly`);
  } catch (e) {
    if (ac.signal.reason === timeoutReason && !opts.signal?.aborted) {
      throw new WaitTimeoutError(`timed out after ${formatMs(opts.timeoutMs)} waiting for ${what}: ${last}`, last);
    }
    if (opts.signal?.aborted) throw abortError(opts.signal);
    throw e;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
    ac.abort();
  }
}

/** Waits until the named object is gone (or, with `uid`, until that incarnation is gone). */
export async function waitForDeletion(
  client: Transport,
  rt: ResourceType,
  name: string,
  namespace: string | undefined,
  opts: WaitOptions & { uid?: string },
): Promise<void> {
  await waitFor(
    client,
    { resource: rt, name, namespace },
    (objs) => {
      const left = objs.filter((o) => opts.uid === undefined || o.metadata?.uid === opts.uid);
      if (left.length === 0) return { state: "done", value: true };
      const fin = left[0]?.metadata?.finalizers;
      return {
        state: "pending",
        message: `${describeObject(rt, name, namespace)} still exists${fin && fin.length ? ` (finalizers: ${fin.join(", ")})` : ""}`,
      };
    },
    { description: `${describeObject(rt, name, namespace)} to be deleted`, ...opts },
  );
}

/** Reconnect pauses while the API server is unreachable: 0.5 s, 1 s, then every 2 s. */
const RECONNECT_MAX_MS = 2000;

/**
 * Lists, then follows changes; yields the full matching set after every change.
 * A dropped or refused connection is retried from a fresh list until `signal`
 * aborts; `onUnreachable` hears about each failed attempt.
 */
export async function* observe(
  client: Transport,
  scope: WaitScope,
  signal: AbortSignal,
  onUnreachable: (message: string) => void = () => undefined,
): AsyncGenerator<KubeObject[]> {
  const rt = scope.resource;
  const namespace = rt.namespaced && !scope.allNamespaces ? scope.namespace : undefined;
  const fieldSelector = [scope.name !== undefined ? `metadata.name=${scope.name}` : "", scope.fieldSelector ?? ""]
    .filter((s) => s !== "")
    .join(",");
  const sel = {
    namespace,
    allNamespaces: scope.allNamespaces,
    labelSelector: scope.labelSelector,
    fieldSelector: fieldSelector || undefined,
  };
  const store = new Map<string, KubeObject>();
  const key = (o: KubeObject): string => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
  let rv: string | undefined;
  let failures = 0;
  for (;;) {
    if (signal.aborted) throw abortError(signal);
    try {
      if (rv === undefined) {
        const l = await list(client, rt, { ...sel, signal });
        store.clear();
        for (const o of l.items) store.set(key(o), o);
        rv = l.resourceVersion;
        yield [...store.values()];
      }
      const opened = Date.now();
      let events = 0;
      for await (const ev of watch(client, rt, { ...sel, resourceVersion: rv, signal })) {
        failures = 0;
        events++;
        if (ev.type === "ERROR") {
          const st = ev.object as Record<string, unknown>;
          if (st["code"] === 410) {
            rv = undefined; // too old: re-list
            break;
          }
          throw apiErrorFromResponse(Number(st["code"] ?? 500), st, JSON.stringify(st), { resource: rt, namespace });
        }
        const newRv = ev.object.metadata?.resourceVersion;
        if (newRv) rv = newRv;
        if (ev.type === "BOOKMARK") continue;
        if (ev.type === "DELETED") store.delete(key(ev.object));
        else store.set(key(ev.object), ev.object);
        yield [...store.values()];
      }
      // The server ended the stream (timeoutSeconds): watch again from rv — after a pause if it
      // closed at once with nothing to say, so a misbehaving proxy cannot make this spin.
      if (rv !== undefined && events === 0 && Date.now() - opened < 1000) await sleep(1000, signal);
    } catch (e) {
      if (signal.aborted) throw abortError(signal);
      if (e instanceof KubeApiError && e.status === 410) {
        rv = undefined;
        continue;
      }
      // A dropped or refused connection: the API server restarts, or its etcd does. Waiting is
      // what the step asked for, so keep re-connecting (from a fresh list) until its deadline.
      if (e instanceof KubeConnectionError || isStreamError(e)) {
        failures++;
        onUnreachable(
          `the API server is unreachable (retrying until the step's timeout): ${(e as Error).message.split(" — ")[0]}`,
        );
        rv = undefined;
        await sleep(Math.min(250 * 2 ** failures, RECONNECT_MAX_MS), signal);
        continue;
      }
      throw e;
    }
  }
}

function isStreamError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || code === "EPIPE" || e instanceof SyntaxError;
}

export function describeScope(scope: WaitScope): string {
  const rt = scope.resource;
  if (scope.name !== undefined) return describeObject(rt, scope.name, rt.namespaced ? scope.namespace : undefined);
  let s = describeObject(rt);
  if (rt.namespaced)
    s += scope.allNamespaces ? " in all namespaces" : scope.namespace ? ` in namespace "${scope.namespace}"` : "";
  if (scope.labelSelector) s += ` matching ${scope.labelSelector}`;
  if (scope.fieldSelector) s += ` with ${scope.fieldSelector}`;
  return s;
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  const r = s % 60;
  return r === 0 ? `${m}m` : `${m}m${r}s`;
}

// ------------------------------------------------------------------ kubectl wait conditions

/** Waits until `scope` satisfies the condition (see checkObjects). Resolves with the matching objects. */
export function waitForCondition(
  client: Transport,
  scope: WaitScope,
  c: WaitCondition,
  opts: WaitOptions,
): Promise<KubeObject[]> {
  return waitFor(client, scope, (objs) => checkObjects(c, objs, scope.resource, scope.name), {
    description: `${formatWaitCondition(c)} on ${describeScopeShort(scope)}`,
    ...opts,
  });
}

export interface ObjectRef {
  resource: ResourceType;
  name: string;
  namespace?: string;
}

/**
 * Waits until every listed object meets the condition (apply.waitFor): one
 * watch per resource type and namespace, not one per object.
 */
export async function waitForObjects(
  client: Transport,
  refs: readonly ObjectRef[],
  c: WaitCondition,
  opts: WaitOptions,
): Promise<void> {
  const groups = new Map<string, { rt: ResourceType; namespace: string | undefined; names: Set<string> }>();
  for (const r of refs) {
    const ns = r.resource.namespaced ? r.namespace : undefined;
    const key = `${r.resource.group}/${r.resource.version}/${r.resource.resource}/${ns ?? ""}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { rt: r.resource, namespace: ns, names: new Set() }));
    g.names.add(r.name);
  }
  await Promise.all(
    [...groups.values()].map(async (g) => {
      const only = g.names.size === 1 ? [...g.names][0] : undefined;
      await waitFor(
        client,
        { resource: g.rt, namespace: g.namespace, name: only },
        (objs) => {
          const byName = new Map(
            objs.filter((o) => g.names.has(o.metadata?.name ?? "")).map((o) => [o.metadata?.name ?? "", o]),
          );
          const pending: string[] = [];
          for (const n of g.names) {
            const r = evaluateCondition(c, byName.get(n));
            if (!r.met) pending.push(`${g.rt.kind.toLowerCase()}/${n}: ${r.detail}`);
          }
          if (pending.length === 0) return { state: "done", value: true };
          return {
            state: "pending",
            message:
              pending.length === 1
                ? pending[0]!
                : `${pending.length} of ${g.names.size} not ready (${pending.slice(0, 3).join("; ")}${pending.length > 3 ? "; ..." : ""})`,
          };
        },
        {
          description: `${formatWaitCondition(c)} on ${g.names.size === 1 ? describeObject(g.rt, only, g.namespace) : `${g.names.size} ${g.rt.resource}${g.namespace ? ` in namespace "${g.namespace}"` : ""}`}`,
          ...opts,
        },
      );
    }),
  );
}

function describeScopeShort(scope: WaitScope): string {
  const rt = scope.resource;
  if (scope.name !== undefined)
    return `${rt.kind.toLowerCase()}/${scope.name}${rt.namespaced && scope.namespace ? ` in namespace "${scope.namespace}"` : ""}`;
  let s = rt.resource;
  if (rt.namespaced)
    s += scope.allNamespaces ? " in all namespaces" : scope.namespace ? ` in namespace "${scope.namespace}"` : "";
  if (scope.labelSelector) s += ` matching ${scope.labelSelector}`;
  if (scope.fieldSelector) s += ` with ${scope.fieldSelector}`;
  return s;
}
