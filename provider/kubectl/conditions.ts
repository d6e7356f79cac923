/**
 * Evaluating a WaitCondition (`condition=…`, `jsonpath=…`, `delete`) against
 * objects, with kubectl wait's semantics. The waits that watch the cluster
 * until a verdict is reached live in provider/kube/watch.ts.
 */
import { evaluateJsonPath, formatJsonPathValue, isNonEmptyValue } from "./jsonpath.js";
import { isObject, type KubeObject, type ResourceType } from "./types.js";
import type { WaitCondition } from "./waitfor.js";

/** A decision from the current set of matching objects. */
export type WaitVerdict<T = true> =
  | { state: "done"; value: T }
  /** Not yet; `message` says what is missing (shown on timeout and as progress). */
  | { state: "pending"; message: string }
  /** Give up now with this message (e.g. a Deployment exceeded its progress deadline). */
  | { state: "failed"; message: string };

export interface ConditionResult {
  met: boolean;
  /** What was seen, for people: `Ready is False (ContainersNotReady)`, `{.status.phase} is "Pending"`. */
  detail: string;
}

/** One object against a condition. `undefined` is "does not exist". */
export function evaluateCondition(c: WaitCondition, obj: KubeObject | undefined): ConditionResult {
  if (c.kind === "delete")
    return obj === undefined ? { met: true, detail: "deleted" } : { met: false, detail: "still exists" };
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
  return {
    met,
    detail:
      values.length === 0
        ? `${c.expr.source} has no value yet`
        : `${c.expr.source} is ${show(values)}, not ${JSON.stringify(want)}`,
  };
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
      const og =
        typeof raw["observedGeneration"] === "number"
          ? raw["observedGeneration"]
          : status && typeof status["observedGeneration"] === "number"
            ? status["observedGeneration"]
            : undefined;
      if (og !== undefined && og < generation) {
        return {
          met: false,
          detail: `${raw["type"]} was last observed at generation ${og}, the object is at ${generation}`,
        };
      }
    }
    const met = raw["status"].toLowerCase() === value.toLowerCase();
    const why = typeof raw["reason"] === "string" && raw["reason"] !== "" ? ` (${raw["reason"]})` : "";
    return { met, detail: `${raw["type"]} is ${raw["status"]}${met ? "" : why}` };
  }
  return { met: false, detail: `no ${name} condition yet` };
}

function show(values: unknown[]): string {
  const s = values
    .map((v) => (typeof v === "string" ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v))))
    .join(", ");
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

/**
 * The verdict for a set of matching objects:
 * - delete: done when the set is empty;
 * - a named target: done when it exists and meets the condition (absent = wait for it to appear);
 * - a type/selector: done when at least one object matches and every match meets the condition.
 *   (kubectl fails with "no matching resources found"; a bootstrap waits for them to appear instead.)
 */
export function checkObjects(
  c: WaitCondition,
  objects: readonly KubeObject[],
  rt: ResourceType,
  name?: string,
): WaitVerdict<KubeObject[]> {
  const label = (o: KubeObject): string => `${rt.kind.toLowerCase()}/${o.metadata?.name ?? "?"}`;
  if (c.kind === "delete") {
    if (objects.length === 0) return { state: "done", value: [] };
    const names = objects.slice(0, 5).map(label).join(", ");
    return {
      state: "pending",
      message: `${objects.length} still exist${objects.length === 1 ? "s" : ""}: ${names}${objects.length > 5 ? ", ..." : ""}`,
    };
  }
  if (objects.length === 0) {
    return {
      state: "pending",
      message:
        name !== undefined ? `${rt.kind.toLowerCase()}/${name} does not exist yet` : `no matching ${rt.resource} yet`,
    };
  }
  const failing: string[] = [];
  for (const o of objects) {
    const r = evaluateCondition(c, o);
    if (!r.met) failing.push(`${label(o)}: ${r.detail}`);
  }
  if (failing.length === 0) return { state: "done", value: [...objects] };
  const head =
    objects.length === 1
      ? failing[0]!
      : `${failing.length} of ${objects.length} not ready (${failing.slice(0, 3).join("; ")}${failing.length > 3 ? "; ..." : ""})`;
  return { state: "pending", message: head };
}
