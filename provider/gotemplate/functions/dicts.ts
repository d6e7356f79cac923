/** sprig's dict functions, including mergo's merge semantics and copystructure's deepCopy. */
import { def, strval } from "../conv.js";
import {
  type FuncDef,
  GoCallError,
  GoInt,
  GoMap,
  GoPtr,
  GoSlice,
  GoStruct,
  type GoValue,
  kindOf,
  listOf,
  stringsOf,
  T_ANY,
  T_MAP_ANY,
  T_STRING,
  typeString,
  zeroOf,
} from "../values.js";

const A = T_ANY;
const M = T_MAP_ANY;
const S = T_STRING;

const sortedKeys = (m: GoMap): string[] => [...m.m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

function assignToNil(): never {
  throw new GoCallError("assignment to entry in nil map");
}

/** mergo's isEmptyValue(v, shouldDereference=true) for a value stored in an interface (null = nil/invalid). */
function mergoEmpty(v: GoValue): boolean {
  if (v === null) return true;
  if (typeof v === "string") return v.length === 0;
  if (typeof v === "boolean") return !v;
  if (typeof v === "number") return v === 0;
  if (v instanceof GoInt) return v.v === 0n;
  if (v instanceof GoSlice) return v.items.length === 0;
  if (v instanceof GoMap) return v.m.size === 0;
  if (v instanceof GoPtr) return v.elem === null ? true : mergoEmpty(v.elem);
  return false; // struct, complex
}

const ERR_DIFFERENT_TYPES = "src and dst must be of same type";

/** mergo.deepMerge for dst and src maps (dst is settable only at the top level). */
function mergeMaps(dst: GoMap, src: GoMap, overwrite: boolean): void {
  const srcIface = src.type.elem?.kind === "interface";
  // reflect.Value.SetMapIndex: the value must be assignable to the destination's element type
  const setChecked = (key: string, v: GoValue, staticType: string): void => {
    const elem = dst.type.elem!;
    if (elem.kind !== "interface" && staticType !== elem.str)
      throw new GoCallError(
        `reflect.Value.SetMapIndex: value of type ${staticType} is not assignable to type ${elem.str}`,
      );
    set(dst, key, v);
  };
  const elemType = (v: GoValue): string => (srcIface ? "interface {}" : typeString(v));
  for (const key of sortedKeys(src)) {
    const srcElement = src.m.get(key) ?? null;
    const hasDst = dst.m.has(key);
    const dstElement = hasDst ? (dst.m.get(key) ?? null) : null;
    // A nil interface (or nil map/slice element) in src only overwrites.
    const srcNil = srcIface
      ? srcElement === null
      : (srcElement instanceof GoMap || srcElement instanceof GoSlice) && srcElement.isNil;
    if (srcNil) {
      if (overwrite) setChecked(key, srcElement, elemType(srcElement));
      continue;
    }
    const concrete = kindOf(srcElement);
    if (concrete === "struct" || concrete === "ptr" || concrete === "map") {
      if (hasDst && dstElement !== null) deepMergeValues(dstElement, srcElement, overwrite);
    } else if (concrete === "slice") {
      const srcSlice = srcElement as GoSlice;
      let dstSlice: GoValue = !hasDst || dstElement === null ? new GoSlice(srcSlice.type, []) : dstElement;
      if (src.m.size > 0 && (overwrite || dst.m.size === 0)) dstSlice = srcSlice;
      setChecked(key, dstSlice, typeString(dstSlice));
    }
    if (hasDst && !mergoEmpty(dstElement)) {
      if (concrete === "slice") continue;
      if (concrete === "map" && kindOf(dstElement) === "map") continue;
    }
    if (overwrite || !hasDst || mergoEmpty(dstElement)) setChecked(key, srcElement, elemType(srcElement));
  }
}

function deepMergeValues(dst: GoValue, src: GoValue, overwrite: boolean): void {
  if (dst instanceof GoMap) {
    if (dst.isNil) return; // not settable: Go assigns to a local copy
    if (!(src instanceof GoMap)) return;
    mergeMaps(dst, src, overwrite);
    return;
  }
  if (dst instanceof GoPtr && !(src instanceof GoPtr) && !overwrite && dst.elem !== null) {
    throw new GoCallError(ERR_DIFFERENT_TYPES);
  }
  // structs, pointers and basic kinds inside a map are not settable: no effect
}

function set(m: GoMap, key: string, v: GoValue): void {
  if (m.isNil) assignToNil();
  m.m.set(key, v);
}

function doMerge(dst: GoMap, srcs: GoValue[], overwrite: boolean): GoMap {
  let d = dst;
  for (const s of srcs) {
    const src = s as GoMap;
    if (d.isNil && !src.isNil) d = new GoMap(d.type, new Map());
    mergeMaps(d, src, overwrite);
  }
  return d;
}

function merger(overwrite: boolean, must: boolean): FuncDef {
  return def(
    [M],
    ([dst, ...srcs]) => {
      try {
        return doMerge(dst as GoMap, srcs, overwrite);
      } catch (e) {
        if (!must && e instanceof GoCallError && e.message === ERR_DIFFERENT_TYPES) return "";
        throw e;
      }
    },
    M,
  );
}

/** copystructure.Copy */
function deepCopy(v: GoValue): GoValue {
  if (v instanceof GoSlice) return v.isNil ? v : new GoSlice(v.type, v.items.map(deepCopy));
  if (v instanceof GoMap) {
    if (v.isNil) return v;
    return new GoMap(v.type, new Map([...v.m].map(([k, x]) => [k, deepCopy(x)])));
  }
  // copystructure cannot set unexported fields: they come out as zero values
  if (v instanceof GoStruct)
    return new GoStruct(
      v.type,
      v.fields.map((f, i) => {
        const fd = v.type.fields?.[i];
        return fd && /^[A-Z]/.test(fd.name) ? deepCopy(f) : zeroOf(fd?.type ?? T_ANY);
      }),
    );
  if (v instanceof GoPtr) return v.elem === null ? v : new GoPtr(v.type, deepCopy(v.elem) as GoStruct);
  return v;
}

function mapArg(v: GoValue): GoMap {
  return v as GoMap;
}

function typeAssertMap(v: GoValue): GoMap {
  if (v instanceof GoMap && v.type === T_MAP_ANY) return v;
  if (v instanceof GoMap && v.type.str === "map[string]interface {}") return v;
  throw new GoCallError(
    "interface conversion: interface {} is " + (v === null ? "nil" : typeString(v)) + ", not map[string]interface {}",
  );
}

export const dictFunctions: Record<string, FuncDef> = {
  dict: def(
    [],
    (v) => {
      const m = new Map<string, GoValue>();
      for (let i = 0; i < v.length; i += 2) {
        const key = strval(v[i]!);
        m.set(key, i + 1 >= v.length ? "" : v[i + 1]!);
      }
      return new GoMap(T_MAP_ANY, m);
    },
    A,
  ),
  get: def([M, S], ([d, k]) => {
    const m = mapArg(d!);
    return m.m.has(k as string) ? (m.m.get(k as string) ?? null) : "";
  }),
  set: def([M, S, A], ([d, k, v]) => {
    set(mapArg(d!), k as string, v!);
    return d!;
  }),
  unset: def([M, S], ([d, k]) => {
    mapArg(d!).m.delete(k as string);
    return d!;
  }),
  hasKey: def([M, S], ([d, k]) => mapArg(d!).m.has(k as string)),
  pluck: def(
    [S],
    ([k, ...ds]) => {
      const res: GoValue[] = [];
      for (const d of ds) {
        const m = mapArg(d);
        if (m.m.has(k as string)) res.push(m.m.get(k as string) ?? null);
      }
      return listOf(res);
    },
    M,
  ),
  keys: def([], (ds) => stringsOf(ds.flatMap((d) => sortedKeys(mapArg(d)))), M),
  pick: def(
    [M],
    ([d, ...ks]) => {
      const m = mapArg(d!);
      const res = new Map<string, GoValue>();
      for (const k of ks) if (m.m.has(k as string)) res.set(k as string, m.m.get(k as string) ?? null);
      return new GoMap(T_MAP_ANY, res);
    },
    S,
  ),
  omit: def(
    [M],
    ([d, ...ks]) => {
      const m = mapArg(d!);
      const drop = new Set(ks as string[]);
      const res = new Map<string, GoValue>();
      for (const [k, v] of m.m) if (!drop.has(k)) res.set(k, v);
      return new GoMap(T_MAP_ANY, res);
    },
    S,
  ),
  merge: merger(false, false),
  mergeOverwrite: merger(true, false),
  mustMerge: merger(false, true),
  mustMergeOverwrite: merger(true, true),
  values: def([M], ([d]) => {
    const m = mapArg(d!);
    return listOf(sortedKeys(m).map((k) => m.m.get(k) ?? null));
  }),
  deepCopy: def([A], ([v]) => {
    if (v === null) throw new GoCallError("deepCopy error: reflect: call of reflect.Value.Type on zero Value");
    return deepCopy(v!);
  }),
  mustDeepCopy: def([A], ([v]) => {
    if (v === null) throw new GoCallError("reflect: call of reflect.Value.Type on zero Value");
    return deepCopy(v!);
  }),
  dig: def(
    [],
    (ps) => {
      if (ps.length < 3) throw new GoCallError("dig needs at least three arguments");
      let dict = typeAssertMap(ps[ps.length - 1]!);
      const d = ps[ps.length - 2]!;
      const ks = ps.slice(0, -2).map((k) => {
        if (typeof k !== "string")
          throw new GoCallError(
            "interface conversion: interface {} is " + (k === null ? "nil" : typeString(k)) + ", not string",
          );
        return k;
      });
      for (let i = 0; ; i++) {
        const k = ks[i]!;
        if (!dict.m.has(k)) return d;
        const step = dict.m.get(k) ?? null;
        if (i === ks.length - 1) return step;
        dict = typeAssertMap(step);
      }
    },
    A,
  ),
};
