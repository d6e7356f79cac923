/**
 * A model of the Go values a pipeline can produce, faithful enough that functions, comparisons,
 * printing, %T and kindOf behave like Go.
 *
 *   Go                         here
 *   string                     JS string holding bytes (see gostring.ts)
 *   bool                       JS boolean
 *   float64                    JS number
 *   int, int64, uint64, ...    GoInt (bigint payload, explicit type)
 *   complex128                 GoComplex
 *   []T                        GoSlice (typed; may be a nil slice)
 *   map[string]T               GoMap (typed; may be a nil map)
 *   struct                     GoStruct
 *   *T                         GoPtr
 *   nil interface / invalid    null
 */

type Kind =
  | "invalid"
  | "bool"
  | "int"
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "uint"
  | "uint8"
  | "uint16"
  | "uint32"
  | "uint64"
  | "uintptr"
  | "float32"
  | "float64"
  | "complex64"
  | "complex128"
  | "string"
  | "slice"
  | "map"
  | "struct"
  | "ptr"
  | "interface"
  | "func";

interface FieldDef {
  readonly name: string;
  readonly type: GoType;
}

export interface GoType {
  readonly kind: Kind;
  /** reflect.Type.String() */
  readonly str: string;
  readonly elem?: GoType;
  readonly key?: GoType;
  readonly fields?: readonly FieldDef[];
  /** Is this reflect.Value (the parameter type of text/template builtins)? */
  readonly reflectValue?: boolean;
  /** fmt.Stringer implemented by the struct type (and its pointer). */
  readonly stringer?: (s: GoStruct) => string;
  /** json.Marshaler implemented by the struct type (and its pointer): returns the JSON text. */
  readonly marshalJSON?: (s: GoStruct) => string;
  /** Methods callable from templates, e.g. (semver "1.2.3").Major */
  readonly methods?: ReadonlyMap<string, MethodDef>;
}

/** A Go function as text/template sees it: its parameter types and an implementation. */
export interface FuncDef {
  /** Fixed parameters. */
  readonly params: readonly GoType[];
  /** Element type of a final variadic parameter (`...T`), if any. */
  readonly variadic?: GoType;
  /** The implementation; throws GoCallError for a returned error or a panic. */
  readonly impl: (args: GoValue[]) => GoValue;
  /** A text/template builtin (and/or get special evaluation). */
  readonly builtin?: boolean;
}

export interface MethodDef {
  /** Has a pointer receiver (only callable through a pointer or an addressable value). */
  readonly ptr: boolean;
  readonly params: readonly GoType[];
  readonly impl: (recv: GoStruct, args: GoValue[]) => GoValue;
}

function basic(kind: Kind, str: string = kind): GoType {
  return { kind, str };
}

export const T_BOOL = basic("bool");
export const T_INT = basic("int");
const T_INT64 = basic("int64");
export const T_UINT32 = basic("uint32");
export const T_UINT64 = basic("uint64");
export const T_FLOAT64 = basic("float64");
const T_COMPLEX128 = basic("complex128");
export const T_STRING = basic("string");
export const T_ANY: GoType = { kind: "interface", str: "interface {}" };
export const T_REFLECT_VALUE: GoType = { kind: "struct", str: "reflect.Value", reflectValue: true };
export const T_TIME: GoType = { kind: "struct", str: "time.Time", fields: [] };

const sliceTypes = new Map<string, GoType>();
function sliceOf(elem: GoType): GoType {
  let t = sliceTypes.get(elem.str);
  if (!t) {
    t = { kind: "slice", str: "[]" + elem.str, elem };
    sliceTypes.set(elem.str, t);
  }
  return t;
}
const mapTypes = new Map<string, GoType>();
function mapOf(elem: GoType): GoType {
  let t = mapTypes.get(elem.str);
  if (!t) {
    t = { kind: "map", str: "map[string]" + elem.str, key: T_STRING, elem };
    mapTypes.set(elem.str, t);
  }
  return t;
}
export function ptrTo(elem: GoType): GoType {
  return { kind: "ptr", str: "*" + elem.str, elem };
}

export const T_SLICE_ANY = sliceOf(T_ANY);
export const T_SLICE_STRING = sliceOf(T_STRING);
export const T_SLICE_INT = sliceOf(T_INT);
export const T_SLICE_SLICE_ANY = sliceOf(T_SLICE_ANY);
export const T_MAP_ANY = mapOf(T_ANY);
export const T_MAP_STRING = mapOf(T_STRING);

export const INT_KINDS: ReadonlySet<Kind> = new Set(["int", "int8", "int16", "int32", "int64"]);
export const UINT_KINDS: ReadonlySet<Kind> = new Set(["uint", "uint8", "uint16", "uint32", "uint64", "uintptr"]);

export class GoInt {
  constructor(
    readonly type: GoType,
    readonly v: bigint,
  ) {}
  get signed(): boolean {
    return INT_KINDS.has(this.type.kind);
  }
}

export class GoComplex {
  constructor(
    readonly re: number,
    readonly im: number,
  ) {}
}

export class GoSlice {
  constructor(
    readonly type: GoType,
    readonly items: GoValue[],
    readonly isNil: boolean = false,
  ) {}
}

export class GoMap {
  constructor(
    readonly type: GoType,
    readonly m: Map<string, GoValue>,
    readonly isNil: boolean = false,
  ) {}
}

export class GoStruct {
  constructor(
    readonly type: GoType,
    readonly fields: GoValue[],
  ) {}
  field(name: string): GoValue {
    const i = this.type.fields?.findIndex((f) => f.name === name) ?? -1;
    return i < 0 ? null : (this.fields[i] ?? null);
  }
}

export class GoPtr {
  constructor(
    readonly type: GoType,
    readonly elem: GoStruct | null,
  ) {}
}

export type GoValue = null | string | boolean | number | GoInt | GoComplex | GoSlice | GoMap | GoStruct | GoPtr;

// ---- constructors -------------------------------------------------------------------------

export function goInt(n: number | bigint): GoInt {
  return new GoInt(T_INT, wrapInt(BigInt(n), 64, true));
}
export function goInt64(n: number | bigint): GoInt {
  return new GoInt(T_INT64, wrapInt(BigInt(n), 64, true));
}
export function listOf(items: GoValue[]): GoSlice {
  return new GoSlice(T_SLICE_ANY, items);
}
export function stringsOf(items: string[]): GoSlice {
  return new GoSlice(T_SLICE_STRING, items);
}

const INT_BITS: Record<string, number> = {
  int: 64,
  int8: 8,
  int16: 16,
  int32: 32,
  int64: 64,
  uint: 64,
  uint8: 8,
  uint16: 16,
  uint32: 32,
  uint64: 64,
  uintptr: 64,
};

/** Wraps an integer to the given width, two's complement, like Go conversions and overflow. */
function wrapInt(v: bigint, bits: number, signed: boolean): bigint {
  return signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

export function intOfType(t: GoType, v: bigint): GoInt {
  return new GoInt(t, wrapInt(v, INT_BITS[t.kind] ?? 64, INT_KINDS.has(t.kind)));
}

// ---- reflection ---------------------------------------------------------------------------

/** reflect.TypeOf(v); null for a nil interface. */
export function typeOf(v: GoValue): GoType | null {
  if (v === null) return null;
  switch (typeof v) {
    case "string":
      return T_STRING;
    case "boolean":
      return T_BOOL;
    case "number":
      return T_FLOAT64;
  }
  if (v instanceof GoComplex) return T_COMPLEX128;
  return v.type;
}

/** fmt's %T: "<nil>" for nil. */
export function typeString(v: GoValue): string {
  return typeOf(v)?.str ?? "<nil>";
}

/** reflect.Value.Kind().String() as sprig's kindOf reports it. */
export function kindOf(v: GoValue): string {
  const t = typeOf(v);
  return t ? t.kind : "invalid";
}

export function isNilValue(v: GoValue): boolean {
  if (v === null) return true;
  if (v instanceof GoSlice || v instanceof GoMap) return v.isNil;
  if (v instanceof GoPtr) return v.elem === null;
  return false;
}

/** Kinds that can be nil (reflect canBeNil). */
export function canBeNil(t: GoType): boolean {
  switch (t.kind) {
    case "slice":
    case "map":
    case "ptr":
    case "interface":
    case "func":
      return true;
    case "struct":
      return t.reflectValue === true;
  }
  return false;
}

/** reflect.Zero(t) for the nil-able types. */
export function zeroOf(t: GoType): GoValue {
  if (t.reflectValue) return null;
  switch (t.kind) {
    case "slice":
      return new GoSlice(t, [], true);
    case "map":
      return new GoMap(t, new Map(), true);
    case "ptr":
      return new GoPtr(t, null);
    case "string":
      return "";
    case "bool":
      return false;
    case "float64":
    case "float32":
      return 0;
    case "struct":
      return new GoStruct(
        t,
        (t.fields ?? []).map((f) => zeroOf(f.type)),
      );
  }
  if (INT_KINDS.has(t.kind) || UINT_KINDS.has(t.kind)) return new GoInt(t, 0n);
  return null;
}

/** reflect.DeepEqual */
export function deepEqual(a: GoValue, b: GoValue): boolean {
  if (a === null || b === null) return a === b;
  const ta = typeOf(a);
  const tb = typeOf(b);
  if (!ta || !tb || ta.str !== tb.str) return false;
  if (typeof a === "string" || typeof a === "boolean") return a === b;
  if (typeof a === "number") return a === b; // NaN != NaN, like Go
  if (a instanceof GoInt) return a.v === (b as GoInt).v;
  if (a instanceof GoComplex) return a.re === (b as GoComplex).re && a.im === (b as GoComplex).im;
  if (a instanceof GoSlice) {
    const bs = b as GoSlice;
    if (a.isNil !== bs.isNil) return false;
    if (a.items.length !== bs.items.length) return false;
    if (a === bs) return true;
    return a.items.every((x, i) => deepEqual(x, bs.items[i] ?? null));
  }
  if (a instanceof GoMap) {
    const bm = b as GoMap;
    if (a.isNil !== bm.isNil) return false;
    if (a.m.size !== bm.m.size) return false;
    if (a === bm) return true;
    for (const [k, v] of a.m) {
      if (!bm.m.has(k)) return false;
      if (!deepEqual(v, bm.m.get(k) ?? null)) return false;
    }
    return true;
  }
  if (a instanceof GoStruct) {
    const bs = b as GoStruct;
    return a.fields.every((x, i) => deepEqual(x, bs.fields[i] ?? null));
  }
  if (a instanceof GoPtr) {
    const bp = b as GoPtr;
    if (a.elem === bp.elem) return true;
    if (a.elem === null || bp.elem === null) return false;
    return deepEqual(a.elem, bp.elem);
  }
  return false;
}

/** A Go-semantics error raised by a function (the `error` result or a panic); becomes "error calling X: msg". */
export class GoCallError extends Error {}

/** text/template execution error (the message is already complete). */
export class ExecError extends Error {}
