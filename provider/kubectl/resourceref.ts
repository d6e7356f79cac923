/**
 * kubectl's resource-argument rules, as pure functions over a discovery catalog:
 * `pods`, `pod`, `po`, `Pod`, `deployments.apps`, `deployment.v1.apps`,
 * `Deployment.apps`, and the `type/name` split (`daemonset/aws-node`).
 */
import type { ApiResource } from "./types.js";

export interface ResourceQuery {
  /** Lower-cased resource (or kind) name, e.g. `deployment`. */
  resource: string;
  group?: string;
  version?: string;
}

export type TargetParse = { ok: true; type: string; name: string | undefined } | { ok: false; message: string };

/** Splits `type/name` (or a bare `type`). Names never contain `/`. */
export function splitTarget(arg: string): TargetParse {
  const s = arg.trim();
  if (s === "") return { ok: false, message: "resource is empty" };
  const parts = s.split("/");
  if (parts.length === 1) return { ok: true, type: s, name: undefined };
  if (parts.length > 2) {
    return {
      ok: false,
      message: `"${s}" is not a resource type or kind/name: use TYPE or TYPE/NAME, e.g. daemonset/aws-node`,
    };
  }
  const [type, name] = parts as [string, string];
  if (type === "")
    return {
      ok: false,
      message: `"${s}" has no resource type before "/" (expected TYPE/NAME, e.g. daemonset/aws-node)`,
    };
  if (name === "")
    return { ok: false, message: `"${s}" has no name after "/" (expected TYPE/NAME, e.g. daemonset/aws-node)` };
  return { ok: true, type, name };
}

/**
 * kubectl's schema.ParseResourceArg: the interpretations of a resource argument,
 * most specific first. `deployment.v1.apps` → {deployment, v1, apps} then
 * {deployment, group "v1.apps"}; `deployments.apps` → {deployments, group apps};
 * `pods` → {pods}.
 */
export function parseResourceArg(arg: string): ResourceQuery[] {
  const s = arg.trim();
  const dot = s.indexOf(".");
  if (dot < 0) return [{ resource: s.toLowerCase() }];
  const resource = s.slice(0, dot).toLowerCase();
  const rest = s.slice(dot + 1);
  const out: ResourceQuery[] = [];
  const dot2 = rest.indexOf(".");
  if (dot2 > 0) out.push({ resource, version: rest.slice(0, dot2), group: rest.slice(dot2 + 1) });
  out.push({ resource, group: rest });
  return out;
}

/**
 * Finds the resource an argument names in a catalog ordered by preference
 * (core group first, then groups in server priority order, each group's
 * preferred version first) — the first match wins, as in kubectl's priority
 * REST mapper. Matches plural, singular and short names, then kinds.
 */
export function matchResource(catalog: readonly ApiResource[], arg: string): ApiResource | undefined {
  const queries = parseResourceArg(arg);
  for (const q of queries) {
    const hit = catalog.find((r) => groupVersionMatches(r, q) && namesMatch(r, q.resource));
    if (hit) return hit;
  }
  // kubectl falls back to treating the argument as a kind (`Deployment.apps`, `deployment`).
  for (const q of queries) {
    const hit = catalog.find((r) => groupVersionMatches(r, q) && r.kind.toLowerCase() === q.resource);
    if (hit) return hit;
  }
  return undefined;
}

/** The exact `apiVersion`+`kind` of a manifest. Kinds are case-sensitive, as in kubectl. */
export function matchKind(
  catalog: readonly ApiResource[],
  group: string,
  version: string,
  kind: string,
): ApiResource | undefined {
  return catalog.find(
    (r) => r.group === group && r.version === version && r.kind === kind && !r.resource.includes("/"),
  );
}

function groupVersionMatches(r: ApiResource, q: ResourceQuery): boolean {
  if (q.group !== undefined && r.group !== q.group) return false;
  if (q.version !== undefined && r.version !== q.version) return false;
  return true;
}

function namesMatch(r: ApiResource, name: string): boolean {
  return r.resource === name || r.singular === name || r.shortNames.includes(name);
}

/** The kinds a resource argument could plausibly mean, for a helpful "did you mean" list. */
export function suggest(catalog: readonly ApiResource[], arg: string, max = 5): string[] {
  const q = parseResourceArg(arg)[0]?.resource ?? arg.toLowerCase();
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of catalog) {
    const key = r.group === "" ? r.resource : `${r.resource}.${r.group}`;
    if (seen.has(key)) continue;
    if (r.resource.startsWith(q.slice(0, 3)) || r.singular.includes(q) || q.includes(r.singular)) {
      seen.add(key);
      out.push(key);
      if (out.length >= max) break;
    }
  }
  return out;
}
