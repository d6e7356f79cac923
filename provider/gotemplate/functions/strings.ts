/** sprig's string functions. */
import { checkSize, def, strval } from "../conv.js";
import { sprintV } from "../gofmt.js";
import { encodeRune, fromRunes, runesOf } from "../gostring.js";
import * as gs from "../gostrings.js";
import { quote as goQuote } from "../strconv.js";
import { isLower, isSpace, isTitle, isUpper, toLower, toTitle, toUpper } from "../unicode.js";
import {
  type FuncDef,
  GoCallError,
  GoInt,
  GoMap,
  GoSlice,
  type GoValue,
  T_ANY,
  T_INT,
  T_MAP_STRING,
  T_SLICE_STRING,
  T_STRING,
  stringsOf,
} from "../values.js";
import { camelCase, kebabCase, snakeCase } from "./xstrings.js";

const S = T_STRING;
const I = T_INT;
const A = T_ANY;

const int = (v: GoValue): number => Number((v as GoInt).v);
const str = (v: GoValue): string => v as string;

function negativeRepeat(): never {
  throw new GoCallError("strings: negative Repeat count");
}

function sliceBounds(): never {
  // Go also prints the indexes and the length; they may be derived from the value, so they are left out
  throw new GoCallError("runtime error: slice bounds out of range");
}

/** goutils.AbbreviateFull (errors → ""). */
function abbreviateFull(s: string, offset: number, maxWidth: number): string {
  if (s === "") return "";
  if (maxWidth < 4) return "";
  if (s.length <= maxWidth) return s;
  if (offset > s.length) offset = s.length;
  if (s.length - offset < maxWidth - 3) offset = s.length - (maxWidth - 3);
  const marker = "...";
  if (offset <= 4) return s.slice(0, maxWidth - 3) + marker;
  if (maxWidth < 7) return "";
  if (offset + maxWidth - 3 < s.length) return marker + abbreviateFull(s.slice(offset), 0, maxWidth - 3);
  return marker + s.slice(s.length - (maxWidth - 3));
}

/** goutils.WrapCustom */
function wrapCustom(s: string, wrapLength: number, newLine: string, wrapLongWords: boolean): string {
  if (s === "") return "";
  if (newLine === "") newLine = "\n";
  if (wrapLength < 1) wrapLength = 1;
  const inputLineLength = s.length;
  let offset = 0;
  let out = "";
  while (inputLineLength - offset > wrapLength) {
    if (s[offset] === " ") {
      offset++;
      continue;
    }
    const end = wrapLength + offset + 1;
    const spaceToWrapAt = s.slice(offset, end).lastIndexOf(" ") + offset;
    if (spaceToWrapAt >= offset) {
      out += s.slice(offset, spaceToWrapAt) + newLine;
      offset = spaceToWrapAt + 1;
    } else if (wrapLongWords) {
      out += s.slice(offset, wrapLength + offset) + newLine;
      offset += wrapLength;
    } else {
      const e = wrapLength + offset;
      const index = s.slice(e).indexOf(" ");
      if (index === -1) {
        out += s.slice(offset);
        offset = inputLineLength;
      } else {
        const at = index + e;
        out += s.slice(offset, at) + newLine;
        offset = at + 1;
      }
    }
    checkSize(out.length);
  }
  return out + s.slice(offset);
}

/** sprig's strslice */
function strslice(v: GoValue): GoSlice {
  if (v instanceof GoSlice) {
    if (v.type === T_SLICE_STRING || v.type.str === "[]string") return v;
    return stringsOf(v.items.filter((x) => x !== null).map(strval));
  }
  if (v === null) return stringsOf([]);
  return stringsOf([strval(v)]);
}

function indent(spaces: number, v: string): string {
  if (spaces < 0) negativeRepeat();
  checkSize(v.length + (gs.count(v, "\n") + 1) * spaces);
  const pad = gs.repeat(" ", spaces, negativeRepeat);
  const out = pad + gs.replace(v, "\n", "\n" + pad, -1);
  checkSize(out.length);
  return out;
}

function splitToMap(parts: string[] | null): GoMap {
  const m = new Map<string, GoValue>();
  (parts ?? []).forEach((p, i) => m.set("_" + i, p));
  return new GoMap(T_MAP_STRING, m);
}

export const stringFunctions: Record<string, FuncDef> = {
  hello: def([], () => "Hello!"),
  abbrev: def([I, S], ([w, s]) => (int(w!) < 4 ? str(s!) : abbreviateFull(str(s!), 0, int(w!)))),
  abbrevboth: def([I, I, S], ([l, r, s]) => {
    const left = int(l!);
    const right = int(r!);
    if (right < 4 || (left > 0 && right < 7)) return str(s!);
    return abbreviateFull(str(s!), left, right);
  }),
  trunc: def([I, S], ([cv, sv]) => {
    const c = int(cv!);
    const s = str(sv!);
    if (c < 0 && s.length + c > 0) return s.slice(s.length + c);
    if (c >= 0 && s.length > c) return s.slice(0, c);
    return s;
  }),
  trim: def([S], ([s]) => gs.trimSpace(str(s!))),
  upper: def([S], ([s]) => gs.toUpperStr(str(s!))),
  lower: def([S], ([s]) => gs.toLowerStr(str(s!))),
  title: def([S], ([s]) => gs.title(str(s!))),
  untitle: def([S], ([sv]) => {
    const s = str(sv!);
    if (s === "") return s;
    const rs = runesOf(s);
    let next = true;
    for (let i = 0; i < rs.length; i++) {
      if (isSpace(rs[i]!)) next = true;
      else if (next) {
        rs[i] = toLower(rs[i]!);
        next = false;
      }
    }
    return fromRunes(rs);
  }),
  substr: def([I, I, S], ([a, b, sv]) => {
    const start = int(a!);
    const end = int(b!);
    const s = str(sv!);
    if (start < 0) {
      if (end < 0) sliceBounds();
      if (end > s.length) sliceBounds();
      return s.slice(0, end);
    }
    if (end < 0 || end > s.length) {
      if (start > s.length) sliceBounds();
      return s.slice(start);
    }
    if (start > end) sliceBounds();
    return s.slice(start, end);
  }),
  repeat: def([I, S], ([c, s]) => {
    const n = int(c!);
    if (n < 0) negativeRepeat();
    checkSize(n * str(s!).length);
    return str(s!).repeat(n);
  }),
  trimall: def([S, S], ([a, b]) => gs.trim(str(b!), str(a!))),
  trimAll: def([S, S], ([a, b]) => gs.trim(str(b!), str(a!))),
  trimSuffix: def([S, S], ([a, b]) => {
    const s = str(b!);
    const x = str(a!);
    return x.length && s.endsWith(x) ? s.slice(0, s.length - x.length) : s;
  }),
  trimPrefix: def([S, S], ([a, b]) => {
    const s = str(b!);
    const x = str(a!);
    return s.startsWith(x) ? s.slice(x.length) : s;
  }),
  nospace: def([S], ([sv]) => {
    const s = str(sv!);
    let out = "";
    let count = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (!isSpace(c)) {
        out += encodeRune(c);
        count++;
      }
    }
    return count === s.length ? s : out;
  }),
  initials: def([S], ([sv]) => {
    const s = str(sv!);
    let out = "";
    let lastWasGap = true;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (isSpace(c)) lastWasGap = true;
      else if (lastWasGap) {
        out += encodeRune(c);
        lastWasGap = false;
      }
    }
    return out;
  }),
  swapcase: def([S], ([sv]) => {
    const s = str(sv!);
    if (s === "") return s;
    const rs = runesOf(s);
    let whitespace = true;
    for (let i = 0; i < rs.length; i++) {
      const ch = rs[i]!;
      if (isUpper(ch)) {
        rs[i] = toLower(ch);
        whitespace = false;
      } else if (isTitle(ch)) {
        rs[i] = toLower(ch);
        whitespace = false;
      } else if (isLower(ch)) {
        if (whitespace) {
          rs[i] = toTitle(ch);
          whitespace = false;
        } else rs[i] = toUpper(ch);
      } else whitespace = isSpace(ch);
    }
    return fromRunes(rs);
  }),
  snakecase: def([S], ([s]) => snakeCase(str(s!))),
  camelcase: def([S], ([s]) => camelCase(str(s!))),
  kebabcase: def([S], ([s]) => kebabCase(str(s!))),
  wrap: def([I, S], ([l, s]) => wrapCustom(str(s!), int(l!), "", false)),
  wrapWith: def([I, S, S], ([l, sep, s]) => wrapCustom(str(s!), int(l!), str(sep!), true)),
  contains: def([S, S], ([a, b]) => str(b!).includes(str(a!))),
  hasPrefix: def([S, S], ([a, b]) => str(b!).startsWith(str(a!))),
  hasSuffix: def([S, S], ([a, b]) => str(b!).endsWith(str(a!))),
  quote: def(
    [],
    (args) =>
      args
        .filter((x) => x !== null)
        .map((x) => goQuote(strval(x)))
        .join(" "),
    A,
  ),
  squote: def(
    [],
    (args) =>
      args
        .filter((x) => x !== null)
        .map((x) => "'" + sprintV(x) + "'")
        .join(" "),
    A,
  ),
  cat: def(
    [],
    (args) =>
      args
        .filter((x) => x !== null)
        .map((x) => sprintV(x))
        .join(" "),
    A,
  ),
  indent: def([I, S], ([n, s]) => indent(int(n!), str(s!))),
  nindent: def([I, S], ([n, s]) => "\n" + indent(int(n!), str(s!))),
  replace: def([S, S, S], ([o, n, s]) => {
    const src = str(s!);
    const old = str(o!);
    const nw = str(n!);
    if (old !== nw) checkSize(src.length + gs.count(src, old) * (nw.length - old.length));
    return gs.replace(src, old, nw, -1);
  }),
  plural: def([S, S, I], ([one, many, c]) => ((c as GoInt).v === 1n ? str(one!) : str(many!))),
  toString: def([A], ([v]) => strval(v!)),
  split: def([S, S], ([sep, s]) => splitToMap(gs.splitN(str(s!), str(sep!), -1))),
  splitList: def([S, S], ([sep, s]) => {
    const parts = gs.splitN(str(s!), str(sep!), -1);
    return parts === null ? new GoSlice(T_SLICE_STRING, [], true) : stringsOf(parts);
  }),
  splitn: def([S, I, S], ([sep, n, s]) => splitToMap(gs.splitN(str(s!), str(sep!), int(n!)))),
  toStrings: def([A], ([v]) => strslice(v!)),
  join: def([S, A], ([sep, v]) =>
    strslice(v!)
      .items.map((x) => x as string)
      .join(str(sep!)),
  ),
  sortAlpha: def([A], ([v]) => {
    if (v instanceof GoSlice) {
      const s = strslice(v);
      (s.items as string[]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return s;
    }
    return stringsOf([strval(v!)]);
  }),
};
