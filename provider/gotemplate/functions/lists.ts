/** sprig's list functions (reflection-based in Go: any slice type is accepted). */
import { checkListLen, def, isEmpty, nilDeref, toInt64 } from "../conv.js";
import {
  deepEqual,
  type FuncDef,
  GoCallError,
  GoInt,
  GoSlice,
  type GoValue,
  kindOf,
  listOf,
  T_ANY,
  T_INT,
  T_SLICE_ANY,
  T_SLICE_SLICE_ANY,
} from "../values.js";

const A = T_ANY;

/** The reflect kind check sprig does first; nil panics like reflect.TypeOf(nil).Kind(). */
function asList(v: GoValue, err: (kind: string) => string): GoSlice {
  if (v === null) nilDeref();
  if (v instanceof GoSlice) return v;
  throw new GoCallError(err(kindOf(v)));
}

function mustAndLax(
  name: string,
  params: (typeof A)[],
  impl: (args: GoValue[]) => GoValue,
  variadic?: typeof A,
): Record<string, FuncDef> {
  const d = def(params, impl, variadic);
  return { [name]: d, ["must" + name[0]!.toUpperCase() + name.slice(1)]: d };
}

function inList(haystack: GoValue[], needle: GoValue): boolean {
  return haystack.some((h) => deepEqual(needle, h));
}

const nilList = (): GoSlice => new GoSlice(T_SLICE_ANY, [], true);

export const listFunctions: Record<string, FuncDef> = {
  list: def([], (v) => listOf(v), A),
  tuple: def([], (v) => listOf(v), A),
  ...mustAndLax("push", [A, A], ([l, v]) => {
    const out = [...asList(l!, (k) => "Cannot push on type " + k).items, v!];
    checkListLen(out.length);
    return listOf(out);
  }),
  ...mustAndLax("append", [A, A], ([l, v]) => {
    const out = [...asList(l!, (k) => "Cannot push on type " + k).items, v!];
    checkListLen(out.length);
    return listOf(out);
  }),
  ...mustAndLax("prepend", [A, A], ([l, v]) => listOf([v!, ...asList(l!, (k) => "Cannot prepend on type " + k).items])),
  ...mustAndLax("chunk", [T_INT, A], ([s, l]) => {
    const list = asList(l!, (k) => "Cannot chunk type " + k);
    const size = Number((s as GoInt).v);
    const n = list.items.length;
    const goInt = (f: number): number => (Number.isFinite(f) && Math.abs(f) < 2 ** 63 ? Math.trunc(f) : -(2 ** 63));
    const makeslice = (len: number): void => {
      if (len < 0) throw new GoCallError("runtime error: makeslice: len out of range");
      checkListLen(len);
    };
    const cs = goInt(Math.floor((n - 1) / size) + 1);
    makeslice(cs);
    const out: GoValue[] = [];
    for (let i = 0; i < cs; i++) {
      let clen = size;
      if (i === cs - 1) {
        clen = goInt(Math.floor(n % size));
        if (clen === 0) clen = size;
      }
      makeslice(clen);
      const row: GoValue[] = [];
      for (let j = 0; j < clen; j++) {
        const ix = i * size + j;
        if (ix >= n) throw new GoCallError("runtime error: index out of range");
        row.push(list.items[ix] ?? null);
      }
      out.push(listOf(row));
    }
    return new GoSlice(T_SLICE_SLICE_ANY, out);
  }),
  ...mustAndLax("last", [A], ([l]) => {
    const list = asList(l!, (k) => "Cannot find last on type " + k);
    return list.items.length === 0 ? null : list.items[list.items.length - 1]!;
  }),
  ...mustAndLax("first", [A], ([l]) => {
    const list = asList(l!, (k) => "Cannot find first on type " + k);
    return list.items.length === 0 ? null : list.items[0]!;
  }),
  ...mustAndLax("rest", [A], ([l]) => {
    const list = asList(l!, (k) => "Cannot find rest on type " + k);
    return list.items.length === 0 ? nilList() : listOf(list.items.slice(1));
  }),
  ...mustAndLax("initial", [A], ([l]) => {
    const list = asList(l!, (k) => "Cannot find initial on type " + k);
    return list.items.length === 0 ? nilList() : listOf(list.items.slice(0, -1));
  }),
  ...mustAndLax("reverse", [A], ([l]) =>
    listOf([...asList(l!, (k) => "Cannot find reverse on type " + k).items].reverse()),
  ),
  ...mustAndLax("compact", [A], ([l]) =>
    listOf(asList(l!, (k) => "Cannot compact on type " + k).items.filter((x) => !isEmpty(x))),
  ),
  ...mustAndLax("uniq", [A], ([l]) => {
    const dest: GoValue[] = [];
    for (const item of asList(l!, (k) => "Cannot find uniq on type " + k).items)
      if (!inList(dest, item)) dest.push(item);
    return listOf(dest);
  }),
  ...mustAndLax(
    "without",
    [A],
    ([l, ...omit]) =>
      listOf(asList(l!, (k) => "Cannot find without on type " + k).items.filter((x) => !inList(omit, x))),
    A,
  ),
  ...mustAndLax("has", [A, A], ([needle, haystack]) => {
    if (haystack === null) return false;
    return inList(asList(haystack!, (k) => "Cannot find has on type " + k).items, needle!);
  }),
  ...mustAndLax(
    "slice",
    [A],
    ([l, ...indices]) => {
      const list = asList(l!, (k) => "list should be type of slice or array but " + k);
      const n = list.items.length;
      if (n === 0) return null;
      const start = indices.length > 0 ? Number(toInt64(indices[0]!)) : 0;
      const end = indices.length < 2 ? n : Number(toInt64(indices[1]!));
      if (start < 0 || end < start || end > n) throw new GoCallError("reflect: slice index out of range");
      return new GoSlice(list.type, list.items.slice(start, end));
    },
    A,
  ),
  concat: def(
    [],
    (lists) => {
      const res: GoValue[] = [];
      for (const l of lists) {
        if (l === null) nilDeref();
        if (!(l instanceof GoSlice)) throw new GoCallError("Cannot concat type " + kindOf(l) + " as list");
        res.push(...l.items);
        checkListLen(res.length);
      }
      return res.length === 0 ? nilList() : listOf(res);
    },
    A,
  ),
};
