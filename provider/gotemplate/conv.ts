/** Conversions sprig relies on: spf13/cast, sprig's strval/empty, text/template truth. */
import { sprintV, stringerOf } from "./gofmt.js";
import { NumError, parseFloat as goParseFloat, parseInt as goParseInt } from "./strconv.js";
import {
  GoCallError,
  GoComplex,
  GoInt,
  GoMap,
  GoPtr,
  GoSlice,
  GoStruct,
  type GoType,
  type GoValue,
  type FuncDef,
} from "./values.js";

/** Go's float64 → int64 conversion as amd64 does it (out of range and NaN give MinInt64). */
function floatToInt64(f: number): bigint {
  if (Number.isNaN(f) || f >= 9223372036854775808 || f < -9223372036854775808) return -9223372036854775808n;
  return BigInt(Math.trunc(f));
}

function trimZeroDecimal(s: string): string {
  let foundZero = false;
  for (let i = s.length; i > 0; i--) {
    switch (s[i - 1]) {
      case ".":
        if (foundZero) return s.slice(0, i - 1);
        break;
      case "0":
        foundZero = true;
        break;
      default:
        return s;
    }
  }
  return s;
}

function indirect(v: GoValue): GoValue {
  if (v instanceof GoPtr) return v.elem;
  return v;
}

/** cast.ToInt64E; returns [value, ok]. */
function castToInt64(v: GoValue): [bigint, boolean] {
  v = indirect(v);
  if (v === null) return [0n, true];
  if (v instanceof GoInt) return [BigInt.asIntN(64, v.v), true];
  if (typeof v === "number") return [floatToInt64(v), true];
  if (typeof v === "boolean") return [v ? 1n : 0n, true];
  if (typeof v === "string") {
    try {
      return [goParseInt(trimZeroDecimal(v), 0, 64), true];
    } catch (e) {
      if (e instanceof NumError) return [0n, false];
      throw e;
    }
  }
  return [0n, false];
}

export function toInt64(v: GoValue): bigint {
  return castToInt64(v)[0];
}

/** cast.ToFloat64E; returns [value, ok]. */
function castToFloat64(v: GoValue): [number, boolean] {
  v = indirect(v);
  if (v === null) return [0, true];
  if (v instanceof GoInt) return [Number(v.v), true];
  if (typeof v === "number") return [v, true];
  if (typeof v === "boolean") return [v ? 1 : 0, true];
  if (typeof v === "string") {
    try {
      return [goParseFloat(v), true];
    } catch (e) {
      if (e instanceof NumError) return [0, false];
      throw e;
    }
  }
  return [0, false];
}

export function toFloat64(v: GoValue): number {
  return castToFloat64(v)[0];
}

/** sprig's strval */
export function strval(v: GoValue): string {
  if (typeof v === "string") return v;
  const s = stringerOf(v);
  if (s) return s();
  return sprintV(v);
}

/** sprig's empty */
export function isEmpty(v: GoValue): boolean {
  if (v === null) return true;
  if (typeof v === "string") return v.length === 0;
  if (typeof v === "boolean") return !v;
  if (typeof v === "number") return v === 0;
  if (v instanceof GoInt) return v.v === 0n;
  if (v instanceof GoComplex) return v.re === 0 && v.im === 0;
  if (v instanceof GoSlice) return v.items.length === 0;
  if (v instanceof GoMap) return v.m.size === 0;
  if (v instanceof GoStruct) return false;
  if (v instanceof GoPtr) return v.elem === null;
  return false;
}

/** text/template's truth (isTrue) */
export function truth(v: GoValue): boolean {
  if (v === null) return false;
  if (v instanceof GoStruct) return true;
  return !isEmpty(v);
}

/** Builds a FuncDef. */
export function def(params: readonly GoType[], impl: (args: GoValue[]) => GoValue, variadic?: GoType): FuncDef {
  return variadic ? { params, impl, variadic } : { params, impl };
}

/** Go's panic from reflect.TypeOf(nil).Kind() */
export function nilDeref(): never {
  throw new GoCallError("runtime error: invalid memory address or nil pointer dereference");
}

/** Limits that keep a hostile pipeline from exhausting memory (Go has no such limits). */
const MAX_RESULT_BYTES = 16 << 20;
const MAX_LIST_LEN = 1 << 20;

export function checkSize(n: number, what = "result"): void {
  if (n > MAX_RESULT_BYTES) throw new GoCallError(what + " too large (khook limits pipeline results to 16 MiB)");
}

export function checkListLen(n: number): void {
  if (n > MAX_LIST_LEN) throw new GoCallError("list too long (khook limits pipeline lists to 1048576 elements)");
}
