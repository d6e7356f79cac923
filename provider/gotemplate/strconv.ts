/** Ports of the parts of Go's strconv the evaluator needs (number parsing/formatting, quoting). */
import { decodeRune, encodeRune, RUNE_ERROR, validRune } from "./gostring.js";
import { isPrint } from "./unicode.js";

export class NumError extends Error {
  constructor(
    readonly kind: "syntax" | "range",
    /** The clamped value Go returns alongside a range error. */
    readonly value: bigint = 0n,
  ) {
    super(kind === "syntax" ? "invalid syntax" : "value out of range");
  }
}

const lower = (c: string): string => String.fromCharCode(c.charCodeAt(0) | 0x20);

function underscoreOK(s: string): boolean {
  let saw = "^";
  let i = 0;
  if (s.length >= 1 && (s[0] === "-" || s[0] === "+")) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === "0" && "box".includes(lower(s[1]!))) {
    i = 2;
    saw = "0";
    hex = lower(s[1]!) === "x";
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= "0" && c <= "9") || (hex && lower(c) >= "a" && lower(c) <= "f")) {
      saw = "0";
      continue;
    }
    if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
      continue;
    }
    if (saw === "_") return false;
    saw = "!";
  }
  return saw !== "_";
}

/** strconv.ParseUint; throws NumError. */
export function parseUint(s: string, base: number, bitSize = 64): bigint {
  if (s === "") throw new NumError("syntax");
  const base0 = base === 0;
  const s0 = s;
  if (base === 0) {
    base = 10;
    if (s[0] === "0") {
      const c1 = s.length >= 3 ? lower(s[1]!) : "";
      if (c1 === "b") {
        base = 2;
        s = s.slice(2);
      } else if (c1 === "o") {
        base = 8;
        s = s.slice(2);
      } else if (c1 === "x") {
        base = 16;
        s = s.slice(2);
      } else {
        base = 8;
        s = s.slice(1);
      }
    }
  } else if (base < 2 || base > 36) {
    throw new NumError("syntax");
  }
  const maxVal = (1n << BigInt(bitSize)) - 1n;
  const bigBase = BigInt(base);
  let underscores = false;
  let n = 0n;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let d: number;
    if (c === 0x5f && base0) {
      underscores = true;
      continue;
    } else if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) d = (c | 0x20) - 0x61 + 10;
    else throw new NumError("syntax");
    if (d >= base) throw new NumError("syntax");
    n = n * bigBase + BigInt(d);
    if (n > maxVal) throw new NumError("range", maxVal);
  }
  if (underscores && !underscoreOK(s0)) throw new NumError("syntax");
  return n;
}

/** strconv.ParseInt; throws NumError (range errors carry Go's clamped value). */
export function parseInt(s: string, base: number, bitSize = 64): bigint {
  if (s === "") throw new NumError("syntax");
  let neg = false;
  if (s[0] === "+") s = s.slice(1);
  else if (s[0] === "-") {
    neg = true;
    s = s.slice(1);
  }
  let un: bigint;
  try {
    un = parseUint(s, base, bitSize);
  } catch (e) {
    if (e instanceof NumError && e.kind === "range") un = e.value;
    else throw e;
  }
  const cutoff = 1n << BigInt(bitSize - 1);
  if (!neg && un >= cutoff) throw new NumError("range", cutoff - 1n);
  if (neg && un > cutoff) throw new NumError("range", -cutoff);
  return neg ? -un : un;
}

/** strconv.Atoi (as sprig's atoi uses it: the error is ignored, so the clamped/zero value is returned). */
export function atoiLenient(s: string): bigint {
  // Go's fast path for short inputs returns 0 on any syntax error; the slow path clamps on range errors.
  try {
    return parseInt(s, 10, 64);
  } catch (e) {
    if (e instanceof NumError && e.kind === "range") return e.value;
    return 0n;
  }
}

function commonPrefixLenIgnoreCase(s: string, prefix: string): number {
  let n = Math.min(prefix.length, s.length);
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) c += 32;
    if (c !== prefix.charCodeAt(i)) return i;
  }
  return n;
}

/** strconv.ParseFloat(s, 64); throws NumError (range errors: value is ±Inf, reported via .infinite). */
export function parseFloat(s: string): number {
  // special values
  {
    let sign = 1;
    let rest = s;
    let nsign = 0;
    let checkInf = false;
    let checkNan = false;
    if (rest[0] === "+" || rest[0] === "-") {
      if (rest[0] === "-") sign = -1;
      nsign = 1;
      rest = rest.slice(1);
      checkInf = true;
    } else if (rest[0] === "i" || rest[0] === "I") checkInf = true;
    else if (rest[0] === "n" || rest[0] === "N") checkNan = true;
    if (checkInf) {
      let n = commonPrefixLenIgnoreCase(rest, "infinity");
      if (3 < n && n < 8) n = 3;
      if (n === 3 || n === 8) {
        if (nsign + n !== s.length) throw new NumError("syntax");
        return sign * Infinity;
      }
    }
    if (checkNan && commonPrefixLenIgnoreCase(rest, "nan") === 3) {
      if (s.length !== 3) throw new NumError("syntax");
      return NaN;
    }
  }
  // readFloat syntax check
  let i = 0;
  let neg = false;
  let underscores = false;
  if (s[i] === "+") i++;
  else if (s[i] === "-") {
    i++;
    neg = true;
  }
  let hex = false;
  if (i + 2 < s.length && s[i] === "0" && lower(s[i + 1]!) === "x") {
    hex = true;
    i += 2;
  }
  const mantStart = i;
  let sawdot = false;
  let sawdigits = false;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === "_") {
      underscores = true;
      continue;
    }
    if (c === ".") {
      if (sawdot) break;
      sawdot = true;
      continue;
    }
    if ((c >= "0" && c <= "9") || (hex && lower(c) >= "a" && lower(c) <= "f")) {
      sawdigits = true;
      continue;
    }
    break;
  }
  if (!sawdigits) throw new NumError("syntax");
  const mantEnd = i;
  let exp = 0;
  const expChar = hex ? "p" : "e";
  if (i < s.length && lower(s[i]!) === expChar) {
    i++;
    if (i >= s.length) throw new NumError("syntax");
    let esign = 1;
    if (s[i] === "+") i++;
    else if (s[i] === "-") {
      i++;
      esign = -1;
    }
    if (i >= s.length || s[i]! < "0" || s[i]! > "9") throw new NumError("syntax");
    let e = 0;
    for (; i < s.length && ((s[i]! >= "0" && s[i]! <= "9") || s[i] === "_"); i++) {
      if (s[i] === "_") {
        underscores = true;
        continue;
      }
      if (e < 10000) e = e * 10 + (s.charCodeAt(i) - 0x30);
    }
    exp = e * esign;
  } else if (hex) {
    throw new NumError("syntax");
  }
  if (underscores && !underscoreOK(s.slice(0, i))) throw new NumError("syntax");
  if (i !== s.length) throw new NumError("syntax");
  const mant = s.slice(mantStart, mantEnd).replace(/_/g, "");
  let v: number;
  if (hex) {
    const [ip = "", fp = ""] = mant.split(".");
    const digits = (ip + fp).replace(/^0+/, "") || "0";
    const m = BigInt("0x" + digits);
    v = hexScale(m, exp - 4 * fp.length);
  } else {
    v = Number(mant + "e" + exp);
  }
  if (neg) v = -v;
  if (!Number.isFinite(v)) throw new NumError("range");
  return v;
}

/** m * 2^e, correctly rounded for normal results. */
function hexScale(m: bigint, e: number): number {
  if (m === 0n) return 0;
  if (e >= 0) return e > 2000 ? Infinity : Number(m << BigInt(e));
  // Keep 64+ significant bits, then let Number() round once.
  const bits = m.toString(2).length;
  let shift = -e;
  if (bits - shift > 1100) return Infinity;
  // Number(m) / 2^shift exactly when m fits; otherwise scale in two steps (ample for template constants).
  let v = Number(m);
  while (shift > 0) {
    const k = Math.min(shift, 1000);
    v /= 2 ** k;
    shift -= k;
  }
  return v;
}

// ---- float formatting -----------------------------------------------------------------------

interface Decimal {
  d: string; // digits, no leading/trailing zeros (empty for zero)
  dp: number; // decimal point position
}

/** The exact decimal expansion of a finite non-negative double. */
function exactDecimal(v: number): Decimal {
  if (v === 0) return { d: "", dp: 0 };
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, v);
  const bits = buf.getBigUint64(0);
  let exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (exp === 0) exp = 1;
  else mant |= 1n << 52n;
  exp -= 1075; // value = mant * 2^exp
  let digits: string;
  let dp: number;
  if (exp >= 0) {
    digits = (mant << BigInt(exp)).toString();
    dp = digits.length;
  } else {
    const scaled = mant * 5n ** BigInt(-exp); // value = scaled / 10^-exp
    digits = scaled.toString();
    dp = digits.length + exp;
  }
  // normalize
  const lead = digits.length - digits.replace(/^0+/, "").length;
  digits = digits.slice(lead);
  dp -= lead;
  digits = digits.replace(/0+$/, "");
  return { d: digits, dp };
}

/** Shortest digits that round-trip (same as Go's shortest mode). */
function shortestDecimal(v: number): Decimal {
  if (v === 0) return { d: "", dp: 0 };
  const s = v.toExponential(); // d.ddde±x, shortest round-trip digits
  const m = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s)!;
  const digits = (m[1]! + (m[2] ?? "")).replace(/0+$/, "");
  return { d: digits, dp: Number(m[3]) + 1 };
}

function roundDecimal(a: Decimal, nd: number): Decimal {
  if (nd < 0 || nd >= a.d.length) return a;
  const c = a.d[nd]!;
  let up: boolean;
  if (c === "5" && nd + 1 === a.d.length) up = nd > 0 && (a.d.charCodeAt(nd - 1) - 0x30) % 2 === 1;
  else up = c >= "5";
  if (!up) {
    return { d: a.d.slice(0, nd).replace(/0+$/, ""), dp: a.d.slice(0, nd).replace(/0+$/, "") === "" ? 0 : a.dp };
  }
  let i = nd - 1;
  while (i >= 0 && a.d[i] === "9") i--;
  if (i < 0) return { d: "1", dp: a.dp + 1 };
  return { d: a.d.slice(0, i) + String.fromCharCode(a.d.charCodeAt(i) + 1), dp: a.dp };
}

function fmtE(neg: boolean, d: Decimal, prec: number, fmt: string): string {
  let out = neg ? "-" : "";
  out += d.d.length ? d.d[0] : "0";
  if (prec > 0) {
    out += ".";
    let i = 1;
    const m = Math.min(d.d.length, prec + 1);
    if (i < m) {
      out += d.d.slice(i, m);
      i = m;
    }
    for (; i <= prec; i++) out += "0";
  }
  out += fmt;
  let exp = d.dp - 1;
  if (d.d.length === 0) exp = 0;
  out += exp < 0 ? "-" : "+";
  exp = Math.abs(exp);
  out += exp < 10 ? "0" + exp : String(exp);
  return out;
}

function fmtF(neg: boolean, d: Decimal, prec: number): string {
  let out = neg ? "-" : "";
  if (d.dp > 0) {
    const m = Math.min(d.d.length, d.dp);
    out += d.d.slice(0, m);
    for (let k = m; k < d.dp; k++) out += "0";
  } else out += "0";
  if (prec > 0) {
    out += ".";
    for (let i = 1; i <= prec; i++) {
      const j = d.dp + i - 1;
      out += j >= 0 && j < d.d.length ? d.d[j] : "0";
    }
  }
  return out;
}

function floatBits(v: number): { neg: boolean; mant: bigint; exp: number } {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, v);
  const bits = buf.getBigUint64(0);
  const neg = bits >> 63n === 1n;
  let exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (exp === 0) exp++;
  else mant |= 1n << 52n;
  exp += -1023;
  return { neg, mant, exp };
}

function fmtB(v: number): string {
  const { neg, mant, exp } = floatBits(v);
  const e = exp - 52;
  return (neg ? "-" : "") + mant.toString() + "p" + (e >= 0 ? "+" : "-") + Math.abs(e);
}

function fmtX(v: number, prec: number, fmt: "x" | "X"): string {
  let { neg, mant, exp } = floatBits(v);
  if (mant === 0n) exp = 0;
  const M60 = 1n << 60n;
  mant <<= 60n - 52n;
  while (mant !== 0n && (mant & M60) === 0n) {
    mant <<= 1n;
    exp--;
  }
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4);
    const extra = (mant << shift) & (M60 - 1n);
    mant >>= 60n - shift;
    if ((extra | (mant & 1n)) > 1n << 59n) mant++;
    mant <<= 60n - shift;
    if ((mant & (1n << 61n)) !== 0n) {
      mant >>= 1n;
      exp++;
    }
  }
  const hex = fmt === "X" ? "0123456789ABCDEF" : "0123456789abcdef";
  let out = neg ? "-" : "";
  out += "0" + fmt + String((mant >> 60n) & 1n);
  mant = (mant << 4n) & ((1n << 64n) - 1n);
  if (prec < 0 && mant !== 0n) {
    out += ".";
    while (mant !== 0n) {
      out += hex[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  } else if (prec > 0) {
    out += ".";
    for (let i = 0; i < prec; i++) {
      out += hex[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  }
  out += fmt === "X" ? "P" : "p";
  out += exp < 0 ? "-" : "+";
  exp = Math.abs(exp);
  out += exp < 10 ? "0" + exp : String(exp);
  return out;
}

/** strconv.FormatFloat(v, fmt, prec, 64). */
export function formatFloat(v: number, fmt: string, prec: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  const neg = v < 0 || Object.is(v, -0);
  if (fmt === "b") return fmtB(v);
  if (fmt === "x" || fmt === "X") return fmtX(v, prec, fmt);
  const av = Math.abs(v);
  const shortest = prec < 0;
  let digs: Decimal;
  if (shortest) {
    digs = shortestDecimal(av);
    switch (fmt) {
      case "e":
      case "E":
        prec = digs.d.length - 1;
        break;
      case "f":
        prec = Math.max(digs.d.length - digs.dp, 0);
        break;
      case "g":
      case "G":
        prec = digs.d.length;
        break;
    }
  } else {
    const d = exactDecimal(av);
    switch (fmt) {
      case "e":
      case "E":
        digs = roundDecimal(d, prec + 1);
        break;
      case "f":
        digs = roundDecimal(d, d.dp + prec);
        break;
      case "g":
      case "G":
        if (prec === 0) prec = 1;
        digs = roundDecimal(d, prec);
        break;
      default:
        digs = d;
    }
  }
  switch (fmt) {
    case "e":
    case "E":
      return fmtE(neg, digs, prec, fmt);
    case "f":
      return fmtF(neg, digs, prec);
    case "g":
    case "G": {
      let eprec = prec;
      if (eprec > digs.d.length && digs.d.length >= digs.dp) eprec = digs.d.length;
      if (shortest) eprec = 6;
      const exp = digs.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (prec > digs.d.length) prec = digs.d.length;
        return fmtE(neg, digs, prec - 1, fmt === "g" ? "e" : "E");
      }
      if (prec > digs.dp) prec = digs.d.length;
      return fmtF(neg, digs, Math.max(prec - digs.dp, 0));
    }
  }
  return "%" + fmt;
}

// ---- quoting ----------------------------------------------------------------------------------

const lowerhex = "0123456789abcdef";

function appendEscapedRune(r: number, quote: number, asciiOnly: boolean): string {
  if (r === quote || r === 0x5c) return "\\" + encodeRune(r);
  if (asciiOnly) {
    if (r < 0x80 && isPrint(r)) return String.fromCharCode(r);
  } else if (isPrint(r)) {
    return encodeRune(r);
  }
  switch (r) {
    case 0x07:
      return "\\a";
    case 0x08:
      return "\\b";
    case 0x0c:
      return "\\f";
    case 0x0a:
      return "\\n";
    case 0x0d:
      return "\\r";
    case 0x09:
      return "\\t";
    case 0x0b:
      return "\\v";
  }
  if (r < 0x20 || r === 0x7f) return "\\x" + lowerhex[(r >> 4) & 0xf] + lowerhex[r & 0xf];
  if (!validRune(r)) r = 0xfffd;
  if (r < 0x10000) return "\\u" + r.toString(16).padStart(4, "0");
  return "\\U" + r.toString(16).padStart(8, "0");
}

/** strconv.Quote / QuoteToASCII on a Go byte string; result is a Go byte string. */
export function quote(s: string, asciiOnly = false, q = 0x22): string {
  let out = String.fromCharCode(q);
  for (let i = 0; i < s.length;) {
    const c = s.charCodeAt(i);
    let r = c;
    let width = 1;
    if (c >= 0x80) [r, width] = decodeRune(s, i);
    if (width === 1 && r === RUNE_ERROR) {
      out += "\\x" + lowerhex[c >> 4] + lowerhex[c & 0xf];
      i++;
      continue;
    }
    out += appendEscapedRune(r, q, asciiOnly);
    i += width;
  }
  return out + String.fromCharCode(q);
}

/** strconv.QuoteRune / QuoteRuneToASCII */
export function quoteRune(r: number, asciiOnly = false): string {
  if (!validRune(r)) r = RUNE_ERROR;
  return "'" + appendEscapedRune(r, 0x27, asciiOnly) + "'";
}

export function canBackquote(s: string): boolean {
  for (let i = 0; i < s.length;) {
    const [r, wid] = decodeRune(s, i);
    i += wid;
    if (wid > 1) {
      if (r === 0xfeff) return false;
      continue;
    }
    if (r === RUNE_ERROR) return false;
    if ((r < 0x20 && r !== 0x09) || r === 0x60 || r === 0x7f) return false;
  }
  return true;
}

function unhex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/**
 * strconv.UnquoteChar on a Go byte string at position i. Returns [value, multibyte, next]:
 * value is a rune (multibyte) or a raw byte (\x, octal). Throws on syntax errors.
 */
export function unquoteChar(s: string, i: number, q: number): [number, boolean, number] {
  const c = s.charCodeAt(i);
  if (c === q && (q === 0x27 || q === 0x22)) throw new NumError("syntax");
  if (c >= 0x80) {
    const [r, size] = decodeRune(s, i);
    return [r, true, i + size];
  }
  if (c !== 0x5c) return [c, false, i + 1];
  if (i + 1 >= s.length) throw new NumError("syntax");
  const e = s[i + 1]!;
  let j = i + 2;
  switch (e) {
    case "a":
      return [7, false, j];
    case "b":
      return [8, false, j];
    case "f":
      return [12, false, j];
    case "n":
      return [10, false, j];
    case "r":
      return [13, false, j];
    case "t":
      return [9, false, j];
    case "v":
      return [11, false, j];
    case "x":
    case "u":
    case "U": {
      const n = e === "x" ? 2 : e === "u" ? 4 : 8;
      if (s.length - j < n) throw new NumError("syntax");
      let v = 0;
      for (let k = 0; k < n; k++) {
        const x = unhex(s.charCodeAt(j + k));
        if (x < 0) throw new NumError("syntax");
        v = v * 16 + x;
      }
      j += n;
      if (e === "x") return [v, false, j];
      if (!validRune(v)) throw new NumError("syntax");
      return [v, true, j];
    }
    case "0":
    case "1":
    case "2":
    case "3":
    case "4":
    case "5":
    case "6":
    case "7": {
      let v = e.charCodeAt(0) - 0x30;
      if (s.length - j < 2) throw new NumError("syntax");
      for (let k = 0; k < 2; k++) {
        const x = s.charCodeAt(j + k) - 0x30;
        if (x < 0 || x > 7) throw new NumError("syntax");
        v = (v << 3) | x;
      }
      j += 2;
      if (v > 255) throw new NumError("syntax");
      return [v, false, j];
    }
    case "\\":
      return [0x5c, false, j];
    case "'":
    case '"':
      if (e.charCodeAt(0) !== q) throw new NumError("syntax");
      return [e.charCodeAt(0), false, j];
  }
  throw new NumError("syntax");
}

/** strconv.Unquote for "..." and `...` literals (Go byte strings in and out). */
export function unquote(s: string): string {
  const q = s[0];
  if (s.length < 2 || s[s.length - 1] !== q) throw new NumError("syntax");
  const body = s.slice(1, -1);
  if (q === "`") {
    if (body.includes("`")) throw new NumError("syntax");
    return body.replace(/\r/g, "");
  }
  if (q !== '"') throw new NumError("syntax");
  let out = "";
  for (let i = 0; i < body.length;) {
    const c = body.charCodeAt(i);
    if (c === 0x0a) throw new NumError("syntax");
    const [v, multibyte, next] = unquoteChar(body, i, 0x22);
    out += multibyte || v >= 0x80 ? (multibyte ? encodeRune(v) : String.fromCharCode(v)) : String.fromCharCode(v);
    i = next;
  }
  return out;
}
