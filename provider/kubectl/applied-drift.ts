/**
 * Drift between what khook applied and what the cluster holds, as pure functions: which fields
 * of a live object differ from what an apply would make of it, named by path and never by value
 * (a Secret's drift names its keys, not their contents).
 *
 * Fields that controllers and defaulting set are not drift. The caller tells them apart with
 * kubectl's own rules: a client-side apply sends the three-way patch of (last-applied, manifest,
 * live), which leaves alone every field the manifest never set (threeway.ts); a server-side
 * apply owns only the fields it sent, so a live object that holds every one of them with the
 * sent value (`holdsApplied`) is as applied. What either finds is then confirmed by a dry run of
 * that apply, compared here (`differingFields`) with the live object.
 */
import { LAST_APPLIED_ANNOTATION } from "./lastapplied.js";
import { isMap, type JsonMap } from "./threeway.js";
import type { KubeObject } from "./types.js";

/** Metadata that changes on every write (or is the server's own), never drift. */
const VOLATILE_METADATA = ["managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"];

const LAST_APPLIED_PATH = childPath("metadata.annotations", LAST_APPLIED_ANNOTATION);

/** At most this many fields are named per object; the rest are counted. */
export const MAX_NAMED_FIELDS = 8;

/**
 * The paths (`data.color`, `spec.template.spec.containers[0].image`,
 * `metadata.labels["app.kubernetes.io/name"]`) where `after` differs from `before`, in a stable
 * order: a map or list that is wholly added or removed is named once, not leaf by leaf. Status,
 * volatile metadata and kubectl's last-applied annotation are left out: they are not what an
 * apply sets.
 */
export function differingFields(before: KubeObject | undefined, after: KubeObject | undefined): string[] {
  const out: string[] = [];
  walk(comparable(before), comparable(after), "", out);
  return out;
}

function comparable(o: KubeObject | undefined): JsonMap {
  if (o === undefined) return {};
  const copy = structuredClone(o) as JsonMap;
  delete copy["status"];
  const meta = copy["metadata"];
  if (isMap(meta)) {
    for (const k of VOLATILE_METADATA) delete meta[k];
    const annotations = meta["annotations"];
    if (isMap(annotations)) {
      delete annotations[LAST_APPLIED_ANNOTATION];
      if (Object.keys(annotations).length === 0) delete meta["annotations"];
    }
  }
  return copy;
}

function walk(a: unknown, b: unknown, path: string, out: string[]): void {
  if (isMap(a) && isMap(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) walk(a[k], b[k], childPath(path, k), out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`, out);
    return;
  }
  if (!sameValue(a, b)) out.push(path === "" ? "(the whole object)" : path);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `data.key`, or `data["app.properties"]` when the key is not a plain word. */
export function childPath(parent: string, key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return parent === "" ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** The paths of a merge patch (threeway.ts's output): each key it sets or removes, directives left out. */
export function patchedFields(patch: JsonMap): string[] {
  const out: string[] = [];
  const visit = (p: JsonMap, path: string): void => {
    for (const k of Object.keys(p).sort()) {
      if (k.startsWith("$")) continue;
      const v = p[k];
      const here = childPath(path, k);
      if (here === LAST_APPLIED_PATH) continue;
      if (isMap(v) && Object.keys(v).some((x) => !x.startsWith("$"))) visit(v, here);
      else out.push(here);
    }
  };
  visit(patch, "");
  return out;
}

/**
 * Whether `live` holds every field of `applied` with the same value: what a server-side apply
 * of `applied` would leave unchanged. Lists compare element by element and must be as long
 * (a longer live list may be one the apply replaces); a `null` in `applied` asks for the field
 * to be absent. Extra fields in `live` (defaults, controllers, other managers) do not count.
 */
export function holdsApplied(applied: unknown, live: unknown): boolean {
  if (applied === null) return live === null || live === undefined;
  if (isMap(applied)) {
    if (!isMap(live)) return false;
    return Object.keys(applied).every((k) => holdsApplied(applied[k], live[k]));
  }
  if (Array.isArray(applied)) {
    if (!Array.isArray(live) || live.length !== applied.length) return false;
    return applied.every((x, i) => holdsApplied(x, live[i]));
  }
  return sameValue(applied, live);
}

/**
 * A Secret's `stringData` as the API server stores it: merged into `data`, base64-encoded, and
 * gone. Comparing a manifest's `stringData` with a live Secret (which never has any) would
 * otherwise always differ. Other objects are returned as they are.
 */
export function withStringDataMerged<T extends JsonMap | KubeObject | undefined>(o: T): T {
  if (o === undefined || o["kind"] !== "Secret" || !isMap(o["stringData"])) return o;
  const copy = structuredClone(o) as JsonMap;
  const stringData = copy["stringData"] as JsonMap;
  const data: JsonMap = isMap(copy["data"]) ? { ...copy["data"] } : {};
  for (const [k, v] of Object.entries(stringData))
    data[k] = Buffer.from(typeof v === "string" ? v : String(v), "utf8").toString("base64");
  copy["data"] = data;
  delete copy["stringData"];
  return copy as T;
}

/** `data.a, data.b and 3 more`: a field list for one line. */
export function describeFields(fields: readonly string[]): string {
  if (fields.length <= MAX_NAMED_FIELDS) return fields.join(", ");
  return `${fields.slice(0, MAX_NAMED_FIELDS).join(", ")} and ${fields.length - MAX_NAMED_FIELDS} more`;
}
