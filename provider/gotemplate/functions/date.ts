/**
 * sprig's duration functions (Go's time.Duration formatting and parsing). The date functions that
 * need a time.Time (unixEpoch, mustDateModify) are kept with Go's signatures; no pipeline can produce
 * a time.Time (toDate/now are excluded), so they fail with Go's type error.
 */
import { def } from "../conv.js";
import { type FuncDef, GoCallError, GoInt, type GoValue, T_ANY, T_STRING, T_TIME } from "../values.js";

const U64 = (1n << 64n) - 1n;
const SECOND = 1000000000n;

function fmtFrac(v: bigint, prec: number): [string, bigint] {
  let out = "";
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print = print || digit !== 0n;
    if (print) out = digit.toString() + out;
    v /= 10n;
  }
  if (print) out = "." + out;
  return [out, v];
}

/** time.Duration.String */
function durationString(d: bigint): string {
  d = BigInt.asIntN(64, d);
  const neg = d < 0n;
  let u = BigInt.asUintN(64, neg ? -d : d);
  let out: string;
  if (u < SECOND) {
    if (u === 0n) return "0s";
    let prec: number;
    let unit: string;
    if (u < 1000n) {
      prec = 0;
      unit = "ns";
    } else if (u < 1000000n) {
      prec = 3;
      unit = "\xc2\xb5s"; // µs (UTF-8 bytes)
    } else {
      prec = 6;
      unit = "ms";
    }
    const [frac, v] = fmtFrac(u, prec);
    out = v.toString() + frac + unit;
  } else {
    const [frac, v0] = fmtFrac(u, 9);
    u = v0;
    out = (u % 60n).toString() + frac + "s";
    u /= 60n;
    if (u > 0n) {
      out = (u % 60n).toString() + "m" + out;
      u /= 60n;
      if (u > 0n) out = u.toString() + "h" + out;
    }
  }
  return neg ? "-" + out : out;
}

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  "\xc2\xb5s": 1000n,
  "\xce\xbcs": 1000n,
  ms: 1000000n,
  s: SECOND,
  m: 60n * SECOND,
  h: 3600n * SECOND,
};

/** time.ParseDuration; undefined on error. */
function parseDuration(s: string): bigint | undefined {
  let neg = false;
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") return undefined;
  const LIM = 1n << 63n;
  let d = 0n;
  const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
  while (s !== "") {
    if (!(s[0] === "." || isDigit(s[0]))) return undefined;
    let i = 0;
    let v = 0n;
    for (; i < s.length && isDigit(s[i]); i++) {
      if (v > LIM / 10n) return undefined;
      v = v * 10n + BigInt(s.charCodeAt(i) - 0x30);
      if (v > LIM) return undefined;
    }
    const pre = i > 0;
    s = s.slice(i);
    let post = false;
    let f = 0n;
    let scale = 1;
    if (s !== "" && s[0] === ".") {
      s = s.slice(1);
      let k = 0;
      let overflow = false;
      for (; k < s.length && isDigit(s[k]); k++) {
        if (overflow) continue;
        if (f > (LIM - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt(s.charCodeAt(k) - 0x30);
        if (y > LIM) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = k > 0;
      s = s.slice(k);
    }
    if (!pre && !post) return undefined;
    let j = 0;
    for (; j < s.length; j++) if (s[j] === "." || isDigit(s[j])) break;
    if (j === 0) return undefined;
    const unit = UNITS[s.slice(0, j)];
    s = s.slice(j);
    if (unit === undefined) return undefined;
    if (v > LIM / unit) return undefined;
    v *= unit;
    if (f > 0n) {
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > LIM) return undefined;
    }
    d += v;
    if (d > LIM) return undefined;
  }
  if (neg) return BigInt.asIntN(64, -d);
  if (d > LIM - 1n) return undefined;
  return d;
}

function durationRound(v: GoValue): string {
  let d = 0n;
  if (typeof v === "string") d = parseDuration(v) ?? 0n;
  else if (v instanceof GoInt && v.type.str === "int64") d = v.v;
  let u = BigInt.asUintN(64, d);
  if (d < 0n) u = BigInt.asUintN(64, -d) & U64;
  const hour = 3600n * SECOND;
  const day = hour * 24n;
  const year = day * 365n;
  const month = day * 30n;
  if (u > year) return (u / year).toString() + "y";
  if (u > month) return (u / month).toString() + "mo";
  if (u > day) return (u / day).toString() + "d";
  if (u > hour) return (u / hour).toString() + "h";
  if (u > 60n * SECOND) return (u / (60n * SECOND)).toString() + "m";
  if (u > SECOND) return (u / SECOND).toString() + "s";
  return "0s";
}

function parseIntLenient(s: string): bigint {
  // strconv.ParseInt(s, 10, 64) with the error ignored (range errors keep the clamped value)
  const m = /^([+-]?)(\d+)$/.exec(s);
  if (!m) return 0n;
  const v = BigInt(m[2]!) * (m[1] === "-" ? -1n : 1n);
  if (v > (1n << 63n) - 1n) return (1n << 63n) - 1n;
  if (v < -(1n << 63n)) return -(1n << 63n);
  return v;
}

const unreachable = (): never => {
  throw new GoCallError("no time.Time value can be produced in a khook pipeline");
};

export const dateFunctions: Record<string, FuncDef> = {
  duration: def([T_ANY], ([v]) => {
    let n = 0n;
    if (typeof v === "string") n = parseIntLenient(v);
    else if (v instanceof GoInt && v.type.str === "int64") n = v.v;
    return durationString(BigInt.asIntN(64, n * SECOND));
  }),
  durationRound: def([T_ANY], ([v]) => durationRound(v!)),
  unixEpoch: def([T_TIME], unreachable),
  mustDateModify: def([T_STRING, T_TIME], unreachable),
  must_date_modify: def([T_STRING, T_TIME], unreachable),
};
