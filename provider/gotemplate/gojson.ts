/** Go's encoding/json (Marshal, MarshalIndent, Encoder without HTML escaping, Unmarshal into interface{}). */
import { decodeRune, fromJs, RUNE_ERROR, toJs } from "./gostring.js";
import { formatFloat } from "./strconv.js";
import {
  GoCallError,
  GoComplex,
  GoInt,
  GoMap,
  GoPtr,
  GoSlice,
  GoStruct,
  type GoValue,
  listOf,
  T_MAP_ANY,
  typeString,
} from "./values.js";

const hexDigits = "0123456789abcdef";

/** JSON string encoding of a Go byte string (encoding/json appendString). */
export function jsonString(s: string, escapeHTML: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length;) {
    const b = s.charCodeAt(i);
    if (b < 0x80) {
      if (b >= 0x20 && b !== 0x22 && b !== 0x5c && (!escapeHTML || (b !== 0x3c && b !== 0x3e && b !== 0x26))) {
        out += s[i];
      } else {
        switch (b) {
          case 0x5c:
          case 0x22:
            out += "\\" + s[i];
            break;
          case 0x08:
            out += "\\b";
            break;
          case 0x0c:
            out += "\\f";
            break;
          case 0x0a:
            out += "\\n";
            break;
          case 0x0d:
            out += "\\r";
            break;
          case 0x09:
            out += "\\t";
            break;
          default:
            out += "\\u00" + hexDigits[b >> 4] + hexDigits[b & 0xf];
        }
      }
      i++;
      continue;
    }
    const [r, size] = decodeRune(s, i);
    if (r === RUNE_ERROR && size === 1) {
      out += "\\ufffd";
      i++;
      continue;
    }
    if (r === 0x2028 || r === 0x2029) {
      out += "\\u202" + hexDigits[r & 0xf];
      i += size;
      continue;
    }
    out += s.slice(i, i + size);
    i += size;
  }
  return out + '"';
}

function jsonFloat(f: number): string {
  if (!Number.isFinite(f)) throw new GoCallError("json: unsupported value: " + formatFloat(f, "g", -1));
  const abs = Math.abs(f);
  let fmt = "f";
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) fmt = "e";
  let b = formatFloat(f, fmt, -1);
  if (fmt === "e") {
    const n = b.length;
    if (n >= 4 && b[n - 4] === "e" && b[n - 3] === "-" && b[n - 2] === "0") b = b.slice(0, n - 2) + b[n - 1];
  }
  return b;
}

/**
 * json.Marshal (indent "" → compact; otherwise MarshalIndent(v, "", indent)).
 * Throws GoCallError like Go's errors ("json: unsupported type: ...").
 */
export function marshal(v: GoValue, escapeHTML: boolean, indent = ""): string {
  return enc(v, escapeHTML, indent, "");
}

function enc(v: GoValue, escapeHTML: boolean, indent: string, prefix: string): string {
  if (v === null) return "null";
  if (typeof v === "string") return jsonString(v, escapeHTML);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return jsonFloat(v);
  if (v instanceof GoInt) return v.v.toString();
  if (v instanceof GoComplex) throw new GoCallError("json: unsupported type: complex128");
  const inner = prefix + indent;
  const nl = indent ? "\n" : "";
  if (v instanceof GoSlice) {
    if (v.isNil) return "null";
    if (v.items.length === 0) return "[]";
    const parts = v.items.map((x) => (indent ? inner : "") + enc(x, escapeHTML, indent, inner));
    return "[" + nl + parts.join("," + nl) + nl + (indent ? prefix : "") + "]";
  }
  if (v instanceof GoMap) {
    if (v.isNil) return "null";
    if (v.m.size === 0) return "{}";
    const keys = [...v.m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const sep = indent ? ": " : ":";
    const parts = keys.map(
      (k) =>
        (indent ? inner : "") + jsonString(k, escapeHTML) + sep + enc(v.m.get(k) ?? null, escapeHTML, indent, inner),
    );
    return "{" + nl + parts.join("," + nl) + nl + (indent ? prefix : "") + "}";
  }
  if (v instanceof GoPtr) {
    if (v.elem === null) return "null";
    return enc(v.elem, escapeHTML, indent, prefix);
  }
  if (v instanceof GoStruct) {
    if (v.type.marshalJSON) return v.type.marshalJSON(v);
    const fields = (v.type.fields ?? []).map((f, i) => [f.name, v.fields[i] ?? null] as const);
    const exported = fields.filter(([name]) => /^[A-Z]/.test(name));
    if (exported.length === 0) return "{}";
    const sep = indent ? ": " : ":";
    const parts = exported.map(
      ([k, x]) => (indent ? inner : "") + jsonString(k, escapeHTML) + sep + enc(x, escapeHTML, indent, inner),
    );
    return "{" + nl + parts.join("," + nl) + nl + (indent ? prefix : "") + "}";
  }
  throw new GoCallError("json: unsupported type: " + typeString(v));
}

/**
 * json.Unmarshal into interface{}: objects → map[string]interface{}, arrays → []interface{},
 * numbers → float64. Returns the value and whether an error occurred (Go still returns the partial
 * value for type errors such as numbers out of float64 range).
 */
/** Go's decoder allows 10000 levels; khook stops at 1000 so deep data cannot exhaust the JS stack. */
const MAX_JSON_DEPTH = 1000;

function tooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export function unmarshal(data: string): { value: GoValue; error?: string } {
  const text = toJs(data);
  if (tooDeep(text)) return { value: null, error: "exceeded max depth (khook allows 1000 levels)" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { value: null, error: "invalid JSON input" };
  }
  let typeError: string | undefined;
  const conv = (x: unknown): GoValue => {
    if (x === null) return null;
    if (typeof x === "string") return fromJs(x);
    if (typeof x === "boolean") return x;
    if (typeof x === "number") {
      if (!Number.isFinite(x)) {
        typeError ??= "json: cannot unmarshal number into Go value of type float64";
        return null;
      }
      return x;
    }
    if (Array.isArray(x)) return listOf(x.map(conv));
    const m = new Map<string, GoValue>();
    for (const [k, val] of Object.entries(x as Record<string, unknown>)) m.set(fromJs(k), conv(val));
    return new GoMap(T_MAP_ANY, m);
  };
  const value = conv(parsed);
  return typeError ? { value, error: typeError } : { value };
}
