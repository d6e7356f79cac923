/**
 * Evaluating a WaitCondition (`condition=…`, `jsonpath=…`, `delete`) against
 * objects, with kubectl wait's semantics, and the waits built on it.
 */
import { formatWaitCondition, type WaitCondition } from "../spec/waitfor.js";
import type { KubeClient } from "./client.js";
import { evaluateJsonPath, formatJsonPathValue, isNonEmptyValue } from "./jsonpath.js";
import { describeObject, isObject, type KubeObject, type ResourceType } from "./types.js";
import { waitFor, type WaitOptions, type WaitScope, type WaitVerdict } from "./watch.js";

export interface ConditionResult {
  met: boolean;
  /** What was seen, for people: `Ready is False (ContainersNotReady)`, `{.status.phase} is "Pending"`. */
  detail: string;
}

/** One object against a condition. `undefined` is "does not exist". */
export function evaluateCondition(c: WaitCondition, obj: KubeObject | undefined): ConditionResult {
  if (c.kind === "delete") return obj === undefined ? { met: true, detail: "deleted" } : { met: false, detail: "still exists" };
  if (obj === undefined) return { met: false, detail: "does not exist yet" };
  if (c.kind === "condition") return evaluateStatusCondition(obj, c.name, c.value);
  const values = evaluateJsonPath(c.expr, obj);
  if (c.value === undefined) {
    const met = values.some(isNonEmptyValue);
    return { met, detail: met ? `${c.expr.source} is ${show(values)}` : `${c.expr.source} has no value yet` };
  }
  const want = c.value.trim();
  const met = values.some((v) => !isObject(v) && !Array.isArray(v) && formatJsonPathValue(v).trim() === want);
  if (met) return { met, detail: `${c.expr.source} is ${JSON.stringify(want)}` };
  return { met, detail: values.length === 0 ? `${c.expr.source} has no value yet` : `${c.expr.source} is ${show(values)}, not ${JSON.stringify(want)}` };
}

/**
 * kubectl wait's condition check: the first condition whose type matches
 * (case-insensitively) decides; a condition older than the object's
 * generation (observedGeneration) does not count yet.
 */
function evaluateStatusCondition(obj: KubeObject, name: string, value: string): ConditionResult {
  const status = isObject(obj["status"]) ? obj["status"] : undefined;
  const conditions = status && Array.isArray(status["conditions"]) ? status["conditions"] : [];
  for (const raw of conditions) {
    if (!isObject(raw) || typeof raw["type"] !== "string" || raw["type"].toLowerCase() !== name.toLowerCase()) continue;
    if (typeof raw["status"] !== "string") continue;
    const generation = obj.metadata?.generation;
    if (typeof generation === "number") {
      const og = typeof raw["observedGeneration"] === "number" ? raw["observedGeneration"] : status && typeof status["observedGeneration"] === "number" ? status["observedGeneration"] : undefined;
      if (og !== undefined && og < generation) {
        return { met: false, detail: `${raw["type"]} was last observed at generation ${og}, the object is at ${generation}` };
      }
    }
    const met = raw["status"].toLowerCase() === value.toLowerCase();
    const why = typeof raw["reason"] === "string" && raw["reason"] !== "" ? ` (${raw["reason"]})` : "";
    return { met, detail: `${raw["type"]} is ${raw["status"]}${met ? "" : why}` };
  }
  return { met: false, detail: `no ${name} condition yet` };
}

function show(values: unknown[]): string {
  const s = values.map((v) => (typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v) ?? String(v))).join(", ");
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

/**
 * The verdict for a set of matching objects:
 * - delete: done when the set is empty;
 * - a named target: done when it exists and meets the condition (absent = wait for it to appear);
 * - a type/selector: done when at least one object matches and every match meets the condition.
 *   (kubectl fails with "no matching resources found"; a bootstrap waits for them to appear instead.)
 */
export function checkObjects(c: WaitCondition, objects: readonly KubeObject[], rt: ResourceType, name?: string): WaitVerdict<KubeObject[]> {
  const label = (o: KubeObject): string => `${rt.kind.toLowerCase()}/${o.metadata?.name ?? "?"}`;
  if (c.kind === "delete") {
    if (objects.length === 0) return { state: "done", value: [] };
    const names = objects.slice(0, 5).map(label).join(", ");
    return { state: "pending", message: `${objects.length} still exist${objects.length === 1 ? "s" : ""}: ${names}${objects.length > 5 ? ", ..." : ""}` };
  }
  if (objects.length === 0) {
    return { state: "pending", message: name !== undefined ? `${rt.kind.toLowerCase()}/${name} does not exist yet` : `no matching ${rt.resource} yet` };
  }
  const failing: string[] = [];
  for (const o of objects) {
    const r = evaluateCondition(c, o);
    if (!r.met) failing.push(`${label(o)}: ${r.detail}`);
  }
  if (failing.length === 0) return { state: "done", value: [...objects] };
  const head = objects.length === 1 ? failing[0]! : `${failing.length} of ${objects.length} not ready (${failing.slice(0, 3).join("; ")}${failing.length > 3 ? "; ..." : ""})`;
  return { state: "pending", message: head };
}

/** Waits until `scope` satisfies the condition (see checkObjects). Resolves with the matching objects. */
export function waitForCondition(client: KubeClient, scope: WaitScope, c: WaitCondition, opts: WaitOptions): Promise<KubeObject[]> {
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
export async function waitForObjects(client: KubeClient, refs: readonly ObjectRef[], c: WaitCondition, opts: WaitOptions): Promise<void> {
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
          const byName = new Map(objs.filter((o) => g.names.has(o.metadata?.name ?? "")).map((o) => [o.metadata?.name ?? "", o]));
          const pending: string[] = [];
          for (const n of g.names) {
            const r = evaluateCondition(c, byName.get(n));
            if (!r.met) pending.push(`${g.rt.kind.toLowerCase()}/${n}: ${r.detail}`);
          }
          if (pending.length === 0) return { state: "done", value: true };
          return { state: "pending", message: pending.length === 1 ? pending[0]! : `${pending.length} of ${g.names.size} not ready (${pending.slice(0, 3).join("; ")}${pending.length > 3 ? "; ..." : ""})` };
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
  if (scope.name !== undefined) return `${rt.kind.toLowerCase()}/${scope.name}${rt.namespaced && scope.namespace ? ` in namespace "${scope.namespace}"` : ""}`;
  let s = rt.resource;
  if (rt.namespaced) s += scope.allNamespaces ? " in all namespaces" : scope.namespace ? ` in namespace "${scope.namespace}"` : "";
  if (scope.labelSelector) s += ` matching ${scope.labelSelector}`;
  if (scope.fieldSelector) s += ` with ${scope.fieldSelector}`;
  return s;
}
