/**
 * text/template's builtin functions (sprig's `slice` replaces the builtin one). `call` is not offered:
 * it only calls function values, which no pipeline can produce (in Go it always fails there too).
 */
import { def, truth } from "../conv.js";
import { sprint, sprintf, sprintln, stringerOf } from "../gofmt.js";
import { decodeRune } from "../gostring.js";
import { queryEscape } from "../gourl.js";
import { isPrint } from "../unicode.js";
import {
  type FuncDef,
  GoCallError,
  GoComplex,
  GoInt,
  GoMap,
  GoPtr,
  GoSlice,
  GoStruct,
  type GoValue,
  isNilValue,
  kindOf,
  T_ANY,
  T_REFLECT_VALUE,
  T_STRING,
  typeString,
  zeroOf,
} from "../values.js";

const RV = T_REFLECT_VALUE;

type BasicKind = "bool" | "complex" | "int" | "float" | "string" | "uint" | "invalid";

function basicKind(v: GoValue): BasicKind {
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return "float";
  if (v instanceof GoComplex) return "complex";
  if (v instanceof GoInt) return v.signed ? "int" : "uint";
  return "invalid";
}

const errBadComparisonType = (): never => {
  throw new GoCallError("invalid type for comparison");
};

function incompatible(a: GoValue, b: GoValue): never {
  throw new GoCallError(`incompatible types for comparison: ${typeString(a)} and ${typeString(b)}`);
}

function eqOne(arg1: GoValue, arg: GoValue): boolean {
  const k1 = basicKind(arg1);
  const k2 = basicKind(arg);
  if (k1 !== k2) {
    if (k1 === "int" && k2 === "uint") return (arg1 as GoInt).v >= 0n && (arg1 as GoInt).v === (arg as GoInt).v;
    if (k1 === "uint" && k2 === "int") return (arg as GoInt).v >= 0n && (arg1 as GoInt).v === (arg as GoInt).v;
    if (arg1 !== null && arg !== null) incompatible(arg1, arg);
    return false;
  }
  switch (k1) {
    case "bool":
    case "string":
    case "float":
      return arg1 === arg;
    case "complex":
      return (arg1 as GoComplex).re === (arg as GoComplex).re && (arg1 as GoComplex).im === (arg as GoComplex).im;
    case "int":
    case "uint":
      return (arg1 as GoInt).v === (arg as GoInt).v;
  }
  // non-basic kinds
  const kk1 = kindOf(arg1);
  const kk2 = kindOf(arg);
  if (!(kk1 === kk2 || kk1 === "invalid" || kk2 === "invalid")) {
    throw new GoCallError(`non-comparable types ${typeString(arg1)} and ${typeString(arg)}`);
  }
  if (isNilValue(arg1) || isNilValue(arg)) return isNilValue(arg) === isNilValue(arg1);
  if (arg instanceof GoSlice || arg instanceof GoMap) throw new GoCallError(`non-comparable type ${typeString(arg)}`);
  if (arg1 instanceof GoPtr && arg instanceof GoPtr) return arg1.elem === arg.elem;
  if (arg1 instanceof GoStruct && arg instanceof GoStruct)
    return arg1.type.str === arg.type.str && arg1.fields.every((f, i) => f === arg.fields[i]);
  return false;
}

function eq(arg1: GoValue, rest: GoValue[]): boolean {
  if (rest.length === 0) throw new GoCallError("missing argument for comparison");
  for (const arg of rest) if (eqOne(arg1, arg)) return true;
  return false;
}

function lt(arg1: GoValue, arg2: GoValue): boolean {
  const k1 = basicKind(arg1);
  if (k1 === "invalid") errBadComparisonType();
  const k2 = basicKind(arg2);
  if (k2 === "invalid") errBadComparisonType();
  if (k1 !== k2) {
    if (k1 === "int" && k2 === "uint") return (arg1 as GoInt).v < 0n || (arg1 as GoInt).v < (arg2 as GoInt).v;
    if (k1 === "uint" && k2 === "int") return (arg2 as GoInt).v >= 0n && (arg1 as GoInt).v < (arg2 as GoInt).v;
    incompatible(arg1, arg2);
  }
  switch (k1) {
    case "bool":
    case "complex":
      return errBadComparisonType();
    case "float":
      return (arg1 as number) < (arg2 as number);
    case "int":
    case "uint":
      return (arg1 as GoInt).v < (arg2 as GoInt).v;
    case "string":
      return (arg1 as string) < (arg2 as string);
  }
  return false;
}

function le(a: GoValue, b: GoValue): boolean {
  return lt(a, b) || eq(a, [b]);
}

function indexArg(index: GoValue, cap: number): number {
  if (index === null) throw new GoCallError("cannot index slice/array with nil");
  if (!(index instanceof GoInt)) throw new GoCallError("cannot index slice/array with type " + typeString(index));
  const x = index.signed ? index.v : BigInt.asIntN(64, index.v);
  if (x < 0n || x > BigInt(cap)) throw new GoCallError("index out of range");
  return Number(x);
}

function index(item: GoValue, indexes: GoValue[]): GoValue {
  if (item === null) throw new GoCallError("index of untyped nil");
  for (const idx of indexes) {
    if (item instanceof GoPtr) {
      if (item.elem === null) throw new GoCallError("index of nil pointer");
      item = item.elem;
    }
    if (item === null) throw new GoCallError("index of untyped nil");
    if (typeof item === "string") {
      const x = indexArg(idx, item.length);
      if (x === item.length) throw new GoCallError(`reflect: string index out of range`);
      item = new GoInt({ kind: "uint8", str: "uint8" }, BigInt(item.charCodeAt(x)));
    } else if (item instanceof GoSlice) {
      const x = indexArg(idx, item.items.length);
      if (x === item.items.length) throw new GoCallError(`reflect: slice index out of range`);
      item = item.items[x] ?? null;
    } else if (item instanceof GoMap) {
      if (idx === null) throw new GoCallError("value is nil; should be of type " + item.type.key!.str);
      else {
        if (typeof idx !== "string")
          throw new GoCallError(`value has type ${typeString(idx)}; should be ${item.type.key!.str}`);
        item = item.m.has(idx) ? (item.m.get(idx) ?? null) : zeroOf(item.type.elem!);
      }
    } else {
      throw new GoCallError("can't index item of type " + typeString(item));
    }
  }
  return item;
}

function length(item: GoValue): GoValue {
  if (item instanceof GoPtr) {
    if (item.elem === null) throw new GoCallError("len of nil pointer");
    item = item.elem;
  }
  if (item === null) throw new GoCallError("len of type <nil>");
  if (typeof item === "string") return new GoInt({ kind: "int", str: "int" }, BigInt(item.length));
  if (item instanceof GoSlice) return new GoInt({ kind: "int", str: "int" }, BigInt(item.items.length));
  if (item instanceof GoMap) return new GoInt({ kind: "int", str: "int" }, BigInt(item.m.size));
  throw new GoCallError("len of type " + typeString(item));
}

/** text/template's evalArgs for html/js/urlquery. */
function evalArgs(args: GoValue[]): string {
  if (args.length === 1 && typeof args[0] === "string") return args[0];
  return sprint(
    args.map((a) => {
      if (a === null) return "<no value>";
      if (a instanceof GoPtr && a.elem !== null && !stringerOf(a)) return a.elem;
      return a;
    }),
  );
}

function htmlEscape(s: string): string {
  return s.replace(/[\x00"'&<>]/g, (c) =>
    c === "\x00"
      ? "\xef\xbf\xbd"
      : c === '"'
        ? "&#34;"
        : c === "'"
          ? "&#39;"
          : c === "&"
            ? "&amp;"
            : c === "<"
              ? "&lt;"
              : "&gt;",
  );
}

function jsEscape(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const special =
      c === 0x5c ||
      c === 0x27 ||
      c === 0x22 ||
      c === 0x3c ||
      c === 0x3e ||
      c === 0x26 ||
      c === 0x3d ||
      c < 0x20 ||
      c >= 0x80;
    if (!special) {
      out += s[i];
      continue;
    }
    if (c < 0x80) {
      const m: Record<number, string> = {
        0x5c: "\\\\",
        0x27: "\\'",
        0x22: '\\"',
        0x3c: "\\u003C",
        0x3e: "\\u003E",
        0x26: "\\u0026",
        0x3d: "\\u003D",
      };
      out += m[c] ?? "\\u00" + c.toString(16).toUpperCase().padStart(2, "0");
      continue;
    }
    const [r, size] = decodeRune(s, i);
    if (isPrint(r)) out += s.slice(i, i + size);
    else out += "\\u" + r.toString(16).toUpperCase().padStart(4, "0");
    i += size - 1;
  }
  return out;
}

export const builtinFunctions: Record<string, FuncDef> = {
  and: { params: [RV], variadic: RV, impl: () => null, builtin: true },
  or: { params: [RV], variadic: RV, impl: () => null, builtin: true },
  not: { ...def([RV], ([a]) => !truth(a!)), builtin: true },
  eq: { ...def([RV], ([a, ...rest]) => eq(a!, rest), RV), builtin: true },
  ne: { ...def([RV, RV], ([a, b]) => !eq(a!, [b!])), builtin: true },
  lt: { ...def([RV, RV], ([a, b]) => lt(a!, b!)), builtin: true },
  le: { ...def([RV, RV], ([a, b]) => le(a!, b!)), builtin: true },
  gt: { ...def([RV, RV], ([a, b]) => !le(a!, b!)), builtin: true },
  ge: { ...def([RV, RV], ([a, b]) => !lt(a!, b!)), builtin: true },
  index: { ...def([RV], ([a, ...rest]) => index(a!, rest), RV), builtin: true },
  len: { ...def([RV], ([a]) => length(a!)), builtin: true },
  print: { ...def([], (a) => sprint(a), T_ANY), builtin: true },
  printf: { ...def([T_STRING], ([f, ...a]) => sprintf(f as string, a), T_ANY), builtin: true },
  println: { ...def([], (a) => sprintln(a), T_ANY), builtin: true },
  html: { ...def([], (a) => htmlEscape(evalArgs(a)), T_ANY), builtin: true },
  js: { ...def([], (a) => jsEscape(evalArgs(a)), T_ANY), builtin: true },
  urlquery: { ...def([], (a) => queryEscape(evalArgs(a)), T_ANY), builtin: true },
};
