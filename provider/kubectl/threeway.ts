/**
 * The patches `kubectl apply` computes, as pure functions.
 *
 * - createThreeWayStrategicMergePatch: a port of apimachinery's
 *   strategicpatch.CreateThreeWayMergePatch (diffMaps + mergeMap), driven by
 *   patch metadata (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`)
 *   read from the server's OpenAPI v3 document, as kubectl does.
 * - createThreeWayJsonMergePatch: jsonmergepatch.CreateThreeWayJSONMergePatch,
 *   used for custom resources and anything else that does not accept strategic
 *   merge patches.
 *
 * Both take (original = last-applied, modified = the new manifest, current = live)
 * and return the patch as an object; `{}` means nothing to do ("unchanged").
 */

import { goSliceStable, goSort } from "./gosort.js";

export type JsonMap = { [key: string]: unknown };

const DIRECTIVE = "$patch";
const DELETE = "delete";
const REPLACE = "replace";
const MERGE = "merge";
const RETAIN_KEYS_STRATEGY = "retainKeys";
const RETAIN_KEYS = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER = "$setElementOrder";

export class PatchComputationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PatchComputationError";
  }
}

// ------------------------------------------------------------------ patch meta

export interface FieldPatchMeta {
  /** Metadata of the field's value (for a list: of its elements). */
  meta: PatchMeta;
  /** e.g. ["merge"], ["retainKeys"], ["merge", "retainKeys"], ["replace"]. */
  strategies: readonly string[];
  /** The list merge key, e.g. `name` for containers; "" when none. */
  mergeKey: string;
}

/** Where the diff looks up how a field merges. */
export interface PatchMeta {
  forStruct(key: string): FieldPatchMeta;
  forSlice(key: string): FieldPatchMeta;
}

/** No metadata: every list is replaced wholesale, every map is merged. */
export const NO_PATCH_META: PatchMeta = {
  forStruct: () => ({ meta: NO_PATCH_META, strategies: [], mergeKey: "" }),
  forSlice: () => ({ meta: NO_PATCH_META, strategies: [], mergeKey: "" }),
};

type Schema = JsonMap;

/**
 * Patch metadata from an OpenAPI v3 document's `components.schemas`, like
 * strategicpatch.PatchMetaFromOpenAPIV3 — except that map-valued fields
 * (`additionalProperties`) resolve to their value schema, which is what
 * kubectl's struct-based fallback does when the v3 walk cannot continue.
 */
export class OpenApiV3PatchMeta implements PatchMeta {
  constructor(
    private readonly schemas: Readonly<Record<string, unknown>>,
    private readonly schema: Schema | undefined,
  ) {}

  forStruct(key: string): FieldPatchMeta {
    const sub = this.traverse(key);
    if (!sub) return { meta: NO_PATCH_META, strategies: [], mergeKey: "" };
    return { meta: new OpenApiV3PatchMeta(this.schemas, this.resolve(sub)), ...extensions(sub) };
  }

  forSlice(key: string): FieldPatchMeta {
    const sub = this.traverse(key);
    if (!sub) return { meta: NO_PATCH_META, strategies: [], mergeKey: "" };
    const items = this.resolve(sub);
    const elem = items && isMap(items["items"]) ? (items["items"] as Schema) : items;
    return { meta: new OpenApiV3PatchMeta(this.schemas, this.resolve(elem)), ...extensions(sub) };
  }

  private traverse(key: string): Schema | undefined {
    const s = this.schema;
    if (!s) return undefined;
    const props = s["properties"];
    if (isMap(props) && isMap(props[key])) return props[key] as Schema;
    const ap = s["additionalProperties"];
    if (isMap(ap)) return ap as Schema;
    return undefined;
  }

  private resolve(s: Schema | undefined): Schema | undefined {
    let cur = s;
    for (let i = 0; i < 8 && cur; i++) {
      const allOf = cur["allOf"];
      if (Array.isArray(allOf) && isMap(allOf[0])) {
        cur = allOf[0] as Schema;
        continue;
      }
      const ref = cur["$ref"];
      if (typeof ref === "string") {
        const name = ref.replace(/^#\/components\/schemas\//, "");
        const target = this.schemas[name];
        cur = isMap(target) ? (target as Schema) : undefined;
        continue;
      }
      return cur;
    }
    return cur;
  }
}

function extensions(s: Schema): { strategies: string[]; mergeKey: string } {
  const st = s["x-kubernetes-patch-strategy"];
  const mk = s["x-kubernetes-patch-merge-key"];
  return {
    strategies: typeof st === "string" && st !== "" ? st.split(",") : [],
    mergeKey: typeof mk === "string" ? mk : "",
  };
}

function retainKeysAndStrategy(strategies: readonly string[]): { retainKeys: boolean; strategy: string } {
  if (strategies.length === 0) return { retainKeys: false, strategy: "" };
  if (strategies.length === 1) {
    const s = strategies[0]!;
    return s === RETAIN_KEYS_STRATEGY ? { retainKeys: true, strategy: "" } : { retainKeys: false, strategy: s };
  }
  if (strategies.length === 2) {
    if (strategies[0] === RETAIN_KEYS_STRATEGY) return { retainKeys: true, strategy: strategies[1]! };
    if (strategies[1] === RETAIN_KEYS_STRATEGY) return { retainKeys: true, strategy: strategies[0]! };
  }
  throw new PatchComputationError(`unexpected patch strategy: ${strategies.join(",")}`);
}

// ------------------------------------------------------------------ three-way strategic

interface DiffOptions {
  ignoreChangesAndAdditions: boolean;
  ignoreDeletions: boolean;
  setElementOrder: boolean;
  buildRetainKeysDirective: boolean;
}

/**
 * kubectl apply's patch for built-in types: changes and additions from current
 * to modified, plus deletions from original (last-applied) to modified.
 */
export function createThreeWayStrategicMergePatch(
  original: JsonMap | undefined,
  modified: JsonMap,
  current: JsonMap,
  meta: PatchMeta,
): JsonMap {
  const o = clone(original ?? {});
  const m = clone(modified);
  const c = clone(current);
  const delta = diffMaps(c, m, meta, {
    ignoreDeletions: true,
    ignoreChangesAndAdditions: false,
    setElementOrder: true,
    buildRetainKeysDirective: false,
  });
  const deletions = diffMaps(o, m, meta, {
    ignoreDeletions: false,
    ignoreChangesAndAdditions: true,
    setElementOrder: true,
    buildRetainKeysDirective: false,
  });
  return mergeMap(deletions, delta, meta);
}

function diffMaps(original: JsonMap, modified: JsonMap, meta: PatchMeta, opts: DiffOptions): JsonMap {
  const patch: JsonMap = {};
  const retainKeysList: unknown[] = [];
  for (const key of Object.keys(modified)) {
    const modifiedValue = modified[key];
    if (opts.buildRetainKeysDirective && modifiedValue !== null) retainKeysList.push(key);
    if (!(key in original)) {
      if (!opts.ignoreChangesAndAdditions) patch[key] = modifiedValue;
      continue;
    }
    const originalValue = original[key];
    if (key === DIRECTIVE) {
      if (typeof originalValue !== "string" || typeof modifiedValue !== "string") {
        throw new PatchComputationError(`invalid value for special key: ${DIRECTIVE}`);
      }
      if (modifiedValue !== originalValue) patch[DIRECTIVE] = modifiedValue;
      continue;
    }
    if (typeOf(originalValue) !== typeOf(modifiedValue)) {
      if (!opts.ignoreChangesAndAdditions) patch[key] = modifiedValue;
      continue;
    }
    if (isMap(originalValue)) {
      handleMapDiff(key, originalValue, modifiedValue as JsonMap, patch, meta, opts);
    } else if (Array.isArray(originalValue)) {
      handleSliceDiff(key, originalValue, modifiedValue as unknown[], patch, meta, opts);
    } else {
      replaceIfNotEqual(key, originalValue, modifiedValue, patch, opts);
    }
  }
  if (!opts.ignoreDeletions) {
    for (const key of Object.keys(original)) if (!(key in modified)) patch[key] = null;
  }
  if (retainKeysList.length > 0 && (Object.keys(patch).length > 0 || hasAdditionalNewField(original, modified))) {
    patch[RETAIN_KEYS] = sortScalars(retainKeysList);
  }
  return patch;
}

function handleMapDiff(
  key: string,
  originalValue: JsonMap,
  modifiedValue: JsonMap,
  patch: JsonMap,
  meta: PatchMeta,
  opts: DiffOptions,
): void {
  const f = meta.forStruct(key);
  const { retainKeys, strategy } = retainKeysAndStrategy(f.strategies);
  const sub = { ...opts, buildRetainKeysDirective: retainKeys };
  if (strategy === REPLACE) {
    if (!opts.ignoreChangesAndAdditions) patch[key] = modifiedValue;
    return;
  }
  const p = diffMaps(originalValue, modifiedValue, f.meta, sub);
  if (Object.keys(p).length > 0) patch[key] = p;
}

function handleSliceDiff(
  key: string,
  originalValue: unknown[],
  modifiedValue: unknown[],
  patch: JsonMap,
  meta: PatchMeta,
  opts: DiffOptions,
): void {
  const f = meta.forSlice(key);
  const { retainKeys, strategy } = retainKeysAndStrategy(f.strategies);
  if (strategy !== MERGE) {
    replaceIfNotEqual(key, originalValue, modifiedValue, patch, opts);
    return;
  }
  const { patchList, deleteList, setOrderList } = diffLists(originalValue, modifiedValue, f.meta, f.mergeKey, {
    ...opts,
    buildRetainKeysDirective: retainKeys,
  });
  if (patchList.length > 0) patch[key] = patchList;
  if (deleteList.length > 0) patch[`${DELETE_FROM_PRIMITIVE_LIST}/${key}`] = deleteList;
  if (setOrderList.length > 0) patch[`${SET_ELEMENT_ORDER}/${key}`] = setOrderList;
}

function replaceIfNotEqual(key: string, original: unknown, modified: unknown, patch: JsonMap, opts: DiffOptions): void {
  if (opts.ignoreChangesAndAdditions) return;
  if (deepEqual(original, modified)) return;
  patch[key] = modified;
}

function hasAdditionalNewField(original: JsonMap, modified: JsonMap): boolean {
  for (const [k, v] of Object.entries(original)) {
    if (v === null) continue;
    if (!(k in modified)) return true;
  }
  return false;
}

function diffLists(
  original: unknown[],
  modified: unknown[],
  meta: PatchMeta,
  mergeKey: string,
  opts: DiffOptions,
): { patchList: unknown[]; deleteList: unknown[]; setOrderList: unknown[] } {
  if (original.length === 0) {
    if (modified.length === 0 || opts.ignoreChangesAndAdditions)
      return { patchList: [], deleteList: [], setOrderList: [] };
    return { patchList: modified, deleteList: [], setOrderList: [] };
  }
  const kind = sliceElementKind(original, modified);
  if (kind === "map") {
    const r = diffListsOfMaps(original, modified, mergeKey, meta, opts);
    let patchList = normalizeSliceOrder(r.patch, modified, mergeKey, kind);
    const orderSame = isOrderSame(original, modified, mergeKey);
    patchList = [...patchList, ...r.deletions];
    let setOrderList: unknown[] = [];
    if (
      opts.setElementOrder &&
      ((!opts.ignoreChangesAndAdditions && (patchList.length > 0 || !orderSame)) ||
        (!opts.ignoreDeletions && patchList.length > 0))
    ) {
      setOrderList = modified.map((v) => ({ [mergeKey]: (v as JsonMap)[mergeKey] }));
    }
    return { patchList, deleteList: [], setOrderList };
  }
  if (kind === "array") throw new PatchComputationError("lists of lists are not supported");
  const r = diffListsOfScalars(original, modified, opts);
  const patchList = normalizeSliceOrder(r.add, modified, mergeKey, kind);
  let setOrderList: unknown[] = [];
  if (
    opts.setElementOrder &&
    ((!opts.ignoreDeletions && r.deletions.length > 0) ||
      (!opts.ignoreChangesAndAdditions && !deepEqual(original, modified)))
  ) {
    setOrderList = modified;
  }
  return { patchList, deleteList: r.deletions, setOrderList };
}

function isOrderSame(original: unknown[], modified: unknown[], mergeKey: string): boolean {
  if (original.length !== modified.length) return false;
  for (let i = 0; i < modified.length; i++) {
    if (!mergeKeyValueEqual(original[i], modified[i], mergeKey)) return false;
  }
  return true;
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === "") return left === right;
  if (!isMap(left) || !isMap(right)) throw new PatchComputationError("list element is not an object");
  if (!(mergeKey in left) || !(mergeKey in right))
    throw new PatchComputationError(`list element has no merge key "${mergeKey}"`);
  return left[mergeKey] === right[mergeKey];
}

function diffListsOfScalars(
  original: unknown[],
  modified: unknown[],
  opts: DiffOptions,
): { add: unknown[]; deletions: unknown[] } {
  // Go sorts `original` in place (the caller's DeepEqual then sees it sorted) and a copy of `modified`.
  const os = sortScalars(original);
  const ms = sortScalars([...modified]);
  let oi = 0;
  let mi = 0;
  const add: unknown[] = [];
  const deletions: unknown[] = [];
  for (;;) {
    const oin = oi < os.length;
    const min = mi < ms.length;
    if (!oin && !min) break;
    const ov = oin ? os[oi] : undefined;
    const mv = min ? ms[mi] : undefined;
    const ostr = oin ? goString(ov) : "";
    const mstr = min ? goString(mv) : "";
    if (oin && min && ostr === mstr) {
      oi++;
      mi++;
    } else if (!oin || (oin && min && ostr > mstr)) {
      if (!opts.ignoreChangesAndAdditions) add.push(mv);
      mi++;
    } else {
      if (!opts.ignoreDeletions) deletions.push(ov);
      oi++;
    }
  }
  return { add, deletions: deduplicateScalars(deletions) };
}

function diffListsOfMaps(
  original: unknown[],
  modified: unknown[],
  mergeKey: string,
  meta: PatchMeta,
  opts: DiffOptions,
): { patch: unknown[]; deletions: unknown[] } {
  const patch: unknown[] = [];
  const deletions: unknown[] = [];
  const os = sortMapsByField(original, mergeKey);
  const ms = sortMapsByField(modified, mergeKey);
  let oi = 0;
  let mi = 0;
  for (;;) {
    const oin = oi < os.length;
    const min = mi < ms.length;
    if (!oin && !min) break;
    const oe = oin ? mapWithKey(os[oi], mergeKey) : undefined;
    const me = min ? mapWithKey(ms[mi], mergeKey) : undefined;
    const ostr = oe ? goString(oe[mergeKey]) : "";
    const mstr = me ? goString(me[mergeKey]) : "";
    if (oe && me && ostr === mstr) {
      const p = diffMaps(oe, me, meta, opts);
      if (Object.keys(p).length > 0) {
        p[mergeKey] = me[mergeKey];
        patch.push(p);
      }
      oi++;
      mi++;
    } else if (!oin || (oe && me && ostr > mstr)) {
      if (!opts.ignoreChangesAndAdditions) patch.push(me);
      mi++;
    } else {
      if (!opts.ignoreDeletions) deletions.push({ [mergeKey]: oe![mergeKey], [DIRECTIVE]: DELETE });
      oi++;
    }
  }
  return { patch, deletions };
}

function mapWithKey(v: unknown, mergeKey: string): JsonMap {
  if (!isMap(v)) throw new PatchComputationError(`list element is not an object: ${JSON.stringify(v)}`);
  if (!(mergeKey in v))
    throw new PatchComputationError(`list element has no merge key "${mergeKey}": ${JSON.stringify(v)}`);
  return v;
}

// ------------------------------------------------------------------ merging two patches

/** mergeMap with MergeOptions{MergeParallelList: false, IgnoreUnmatchedNulls: false}: applies `patch` onto the patch `original`. */
function mergeMap(original: JsonMap, patch: JsonMap, meta: PatchMeta): JsonMap {
  if (DIRECTIVE in patch) {
    const d = patch[DIRECTIVE];
    if (d === REPLACE) {
      delete patch[DIRECTIVE];
      return patch;
    }
    if (d === DELETE) return {};
    throw new PatchComputationError(`unknown patch type: ${String(d)}`);
  }
  // $retainKeys: keep (they must agree when both patches carry it).
  if (RETAIN_KEYS in patch) {
    const rk = patch[RETAIN_KEYS];
    delete patch[RETAIN_KEYS];
    if (RETAIN_KEYS in original) {
      if (!deepEqual(original[RETAIN_KEYS], rk))
        throw new PatchComputationError("$retainKeys directives disagree in the three-way diff");
    } else {
      original[RETAIN_KEYS] = rk;
    }
  }
  mergeSetElementOrder(original, patch, meta);
  for (const key of Object.keys(patch)) {
    const patchV = patch[key];
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      original[key] = patchV;
      continue;
    }
    if (patchV === null) delete original[key];
    if (!(key in original)) {
      const [v, keep] = removeDirectives(patchV);
      if (keep) original[key] = v;
      else delete original[key];
      continue;
    }
    const ov = original[key];
    if (typeOf(ov) !== typeOf(patchV)) {
      const [v, keep] = removeDirectives(patchV);
      if (keep) original[key] = v;
      else delete original[key];
      continue;
    }
    if (isMap(ov)) {
      const f = meta.forStruct(key);
      const { strategy } = retainKeysAndStrategy(f.strategies);
      original[key] = strategy !== REPLACE ? mergeMap(ov, patchV as JsonMap, f.meta) : patchV;
    } else if (Array.isArray(ov)) {
      const f = meta.forSlice(key);
      const { strategy } = retainKeysAndStrategy(f.strategies);
      original[key] = strategy === MERGE ? mergeSlice(ov, patchV as unknown[], f.meta, f.mergeKey) : patchV;
    } else {
      const [v, keep] = removeDirectives(patchV);
      if (keep) original[key] = v;
      else delete original[key];
    }
  }
  return original;
}

/** mergePatchIntoOriginal with MergeParallelList=false: moves $setElementOrder lists to original and merges their lists. */
function mergeSetElementOrder(original: JsonMap, patch: JsonMap, meta: PatchMeta): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[key];
    if (key in original) {
      if (!deepEqual(original[key], order))
        throw new PatchComputationError("$setElementOrder lists disagree in the three-way diff");
    } else {
      original[key] = order;
    }
    delete patch[key];
    if (!Array.isArray(order)) throw new PatchComputationError(`${key} is not a list`);
    const slash = key.indexOf("/");
    if (slash < 0) throw new PatchComputationError(`bad ${SET_ELEMENT_ORDER} key: ${key}`);
    const listKey = key.slice(slash + 1);
    const foundOriginal = listKey in original;
    const foundPatch = listKey in patch;
    const originalList = original[listKey];
    const patchList = patch[listKey];
    if (foundOriginal && !Array.isArray(originalList)) throw new PatchComputationError(`${listKey} is not a list`);
    if (foundPatch && !Array.isArray(patchList)) throw new PatchComputationError(`${listKey} is not a list`);
    const f = meta.forSlice(listKey);
    const { strategy } = retainKeysAndStrategy(f.strategies);
    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalList as unknown[];
    else if (!foundOriginal && foundPatch) {
      const [v] = removeDirectives(patchList);
      merged = v as unknown[];
    } else if (foundOriginal && foundPatch) {
      merged =
        strategy === MERGE
          ? mergeSlice(originalList as unknown[], patchList as unknown[], f.meta, f.mergeKey)
          : (patchList as unknown[]);
    } else continue;
    const kind = sliceElementKindOrUndefined(
      foundOriginal ? (originalList as unknown[]) : [],
      foundPatch ? (patchList as unknown[]) : [],
    );
    const { inPatch, serverOnly } = partition(merged, order, f.mergeKey);
    original[listKey] = normalizeElementOrder(
      inPatch,
      serverOnly,
      order,
      foundOriginal ? (originalList as unknown[]) : [],
      f.mergeKey,
      kind ?? "scalar",
    );
    delete patch[listKey];
  }
}

function mergeSlice(original: unknown[], patch: unknown[], meta: PatchMeta, mergeKey: string): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  let merged: unknown[];
  let orig = original;
  if (kind !== "map") {
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (mergeKey === "") throw new PatchComputationError("cannot merge lists without merge key");
    // special elements in the patch ($patch: delete / replace)
    const plain: unknown[] = [];
    let replace = false;
    for (const v of patch) {
      const m = v as JsonMap;
      if (!(DIRECTIVE in m)) {
        plain.push(v);
        continue;
      }
      if (m[DIRECTIVE] === DELETE) {
        if (!(mergeKey in m)) throw new PatchComputationError(`delete directive without merge key "${mergeKey}"`);
        orig = orig.filter((x) => !(isMap(x) && x[mergeKey] === m[mergeKey]));
      } else if (m[DIRECTIVE] === REPLACE) {
        replace = true;
      } else {
        throw new PatchComputationError(`unknown patch type in list: ${String(m[DIRECTIVE])}`);
      }
    }
    if (replace) return plain;
    merged = [...orig];
    for (const v of plain) {
      const m = mapWithKey(v, mergeKey);
      const i = merged.findIndex((x) => isMap(x) && x[mergeKey] === m[mergeKey]);
      if (i >= 0) merged[i] = mergeMap(merged[i] as JsonMap, m, meta);
      else merged.push(v);
    }
  }
  const { inPatch, serverOnly } = partition(merged, patch, mergeKey);
  return normalizeElementOrder(inPatch, serverOnly, patch, orig, mergeKey, kind);
}

function partition(items: unknown[], by: unknown[], mergeKey: string): { inPatch: unknown[]; serverOnly: unknown[] } {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of items) {
    const found =
      mergeKey === "" ? by.some((b) => b === v) : by.some((b) => isMap(b) && isMap(v) && b[mergeKey] === v[mergeKey]);
    (found ? inPatch : serverOnly).push(v);
  }
  return { inPatch, serverOnly };
}

type ElemKind = "map" | "array" | "scalar";

function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: ElemKind,
): unknown[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  // mergeSortedSlice(left = server-only, right = patch items)
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < s.length || j < p.length) {
    if (i >= s.length) out.push(p[j++]);
    else if (j >= p.length) out.push(s[i++]);
    else {
      const li = indexOf(serverOrder, s[i], mergeKey, kind);
      const ri = indexOf(serverOrder, p[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(s[i++]);
      else out.push(p[j++]);
    }
  }
  return out;
}

function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: ElemKind): unknown[] {
  let items = toSort;
  let toDelete: unknown[] = [];
  if (kind === "map") {
    items = toSort.filter((v) => !(isMap(v) && v[DIRECTIVE] === DELETE));
    toDelete = toSort.filter((v) => isMap(v) && v[DIRECTIVE] === DELETE);
  }
  // sort.SliceStable with Go's comparator, which says "less" whenever either item is missing from `order`:
  // the result depends on the algorithm, so it is Go's.
  const sorted = [...items];
  goSliceStable(sorted, (i, j) => {
    const ii = indexOf(order, sorted[i], mergeKey, kind);
    if (ii < 0) return true;
    const ij = indexOf(order, sorted[j], mergeKey, kind);
    return ij < 0 || ii < ij;
  });
  return [...sorted, ...toDelete];
}

function indexOf(list: unknown[], v: unknown, mergeKey: string, kind: ElemKind): number {
  const val = (x: unknown): unknown => (kind === "map" ? (isMap(x) ? x[mergeKey] : undefined) : x);
  const target = val(v);
  return list.findIndex((x) => val(x) === target);
}

/** Drops maps carrying `$patch` (directives) from a value that is copied into the result. */
function removeDirectives(v: unknown): [unknown, boolean] {
  if (v === null || v === undefined) return [v, true];
  if (isMap(v)) {
    if (DIRECTIVE in v) return [undefined, false];
    for (const k of Object.keys(v)) {
      const [nv, keep] = removeDirectives(v[k]);
      if (keep) v[k] = nv;
      else delete v[k];
    }
    return [v, true];
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const [nx, keep] = removeDirectives(x);
      if (keep) out.push(nx);
    }
    return [out, true];
  }
  return [v, true];
}

// ------------------------------------------------------------------ three-way JSON merge

/** kubectl's patch for custom resources: RFC 7386 merge patch, deletions only from last-applied. */
export function createThreeWayJsonMergePatch(
  original: JsonMap | undefined,
  modified: JsonMap,
  current: JsonMap,
): JsonMap {
  const addAndChange = keepOrDeleteNull(createMergePatch(current, modified), false);
  const deletions = keepOrDeleteNull(createMergePatch(original ?? {}, modified), true);
  const patch = mergeJsonPatches(deletions, addAndChange);
  for (const key of ["apiVersion", "kind"]) {
    if (key in patch) throw new PatchComputationError("At least one of apiVersion, kind and name was changed");
  }
  const md = patch["metadata"];
  if (isMap(md) && "name" in md)
    throw new PatchComputationError("At least one of apiVersion, kind and name was changed");
  return patch;
}

/** RFC 7386: the merge patch turning `a` into `b`. */
export function createMergePatch(a: JsonMap, b: JsonMap): JsonMap {
  const patch: JsonMap = {};
  for (const key of Object.keys(b)) {
    const bv = b[key];
    if (!(key in a)) {
      patch[key] = clone(bv);
      continue;
    }
    const av = a[key];
    if (isMap(av) && isMap(bv)) {
      const sub = createMergePatch(av, bv);
      if (Object.keys(sub).length > 0) patch[key] = sub;
    } else if (!deepEqual(av, bv)) {
      patch[key] = clone(bv);
    }
  }
  for (const key of Object.keys(a)) if (!(key in b)) patch[key] = null;
  return patch;
}

function keepOrDeleteNull(m: JsonMap, keepNull: boolean): JsonMap {
  const out: JsonMap = {};
  for (const [key, val] of Object.entries(m)) {
    if (val === null) {
      if (keepNull) out[key] = null;
      continue;
    }
    if (isMap(val)) {
      if (Object.keys(val).length === 0) {
        if (!keepNull) out[key] = val;
        continue;
      }
      const sub = keepOrDeleteNull(val, keepNull);
      if (Object.keys(sub).length > 0) out[key] = sub;
      continue;
    }
    if (!keepNull) out[key] = val;
  }
  return out;
}

/** Applies merge patch `patch` onto the merge patch `doc` (kubectl uses jsonpatch.MergePatch for it). */
function mergeJsonPatches(doc: JsonMap, patch: JsonMap): JsonMap {
  const out = clone(doc);
  mergeDocs(out, patch);
  return out;
}

// ------------------------------------------------------------------ applying merge patches (for previews)

/**
 * Applies an RFC 7386 merge patch to a document, as evanphx/json-patch's MergePatch (which kubectl and
 * the API server use) does: a value that replaces a missing, null or non-object one loses its null
 * members, also inside lists of objects; a list or scalar replacing an object is taken as it is.
 */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return clone(patch);
  const base: JsonMap = isMap(doc) ? clone(doc) : {};
  mergeDocs(base, patch);
  return base;
}

/** json-patch's mergeDocs (not merging two merge patches): `doc` is changed in place. */
function mergeDocs(doc: JsonMap, patch: JsonMap): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete doc[k];
      continue;
    }
    const cur = doc[k];
    if (isMap(cur) && isMap(v)) mergeDocs(cur, v);
    else if (isMap(cur)) doc[k] = clone(v);
    else doc[k] = pruneNulls(clone(v));
  }
}

/** Drops null members of objects, recursively, also inside lists (null list items stay). */
function pruneNulls(v: unknown): unknown {
  if (isMap(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else pruneNulls(v[k]);
    }
  } else if (Array.isArray(v)) {
    for (const x of v) if (x !== null) pruneNulls(x);
  }
  return v;
}

// ------------------------------------------------------------------ helpers

export function isMap(v: unknown): v is JsonMap {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function typeOf(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

function sliceElementKindOrUndefined(...lists: unknown[][]): ElemKind | undefined {
  let kind: string | undefined;
  for (const l of lists) {
    for (const v of l) {
      const t = typeOf(v);
      if (kind === undefined) {
        kind = t;
        if (t === "array") throw new PatchComputationError("lists of lists are not supported");
      } else if (kind !== t) {
        throw new PatchComputationError("list element types are not identical");
      }
    }
  }
  if (kind === undefined) return undefined;
  return kind === "object" ? "map" : kind === "array" ? "array" : "scalar";
}

function sliceElementKind(...lists: unknown[][]): ElemKind {
  const k = sliceElementKindOrUndefined(...lists);
  if (k === undefined) throw new PatchComputationError("no elements in any of the given slices");
  return k;
}

/** fmt.Sprintf("%v") for JSON scalars. */
function goString(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  return String(v);
}

/** sortScalars: sort.Sort in place, "less" being `%v` strings in order *or equal* (so equal items swap). */
function sortScalars(s: unknown[]): unknown[] {
  goSort(s, (i, j) => goString(s[i]) <= goString(s[j]));
  return s;
}

/** deduplicateScalars, which moves the last item into each duplicate's place. */
function deduplicateScalars(list: unknown[]): unknown[] {
  const s = [...list];
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

/** sortMapsBasedOnField on a copy, with the same "less or equal" as sortScalars. */
function sortMapsByField(list: unknown[], field: string): unknown[] {
  const s = [...list];
  const key = (v: unknown): string => goString(isMap(v) ? v[field] : undefined);
  goSort(s, (i, j) => key(s[i]) <= key(s[j]));
  return s;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (typeof a === "object") {
    const ka = Object.keys(a as JsonMap);
    const kb = Object.keys(b as JsonMap);
    if (ka.length !== kb.length) return false;
    for (const k of ka) {
      if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
      if (!deepEqual((a as JsonMap)[k], (b as JsonMap)[k])) return false;
    }
    return true;
  }
  return false;
}

export function clone<T>(v: T): T {
  return v === undefined ? v : (structuredClone(v) as T);
}
