/** sprig's numeric functions (integer math on int64, float math via shopspring/decimal, cast conversions). */
import { checkListLen, def, toFloat64, toInt64 } from "../conv.js";
import { sprint } from "../gofmt.js";
import { atoiLenient, formatFloat, parseInt as goParseInt } from "../strconv.js";
import {
  type FuncDef,
  GoCallError,
  GoInt,
  GoSlice,
  type GoValue,
  goInt,
  goInt64,
  T_ANY,
  T_FLOAT64,
  T_INT,
  T_SLICE_INT,
  T_STRING,
} from "../values.js";

const A = T_ANY;
const I = T_INT;
const wrap64 = (v: bigint): bigint => BigInt.asIntN(64, v);

function divZero(): never {
  throw new GoCallError("runtime error: integer divide by zero");
}

// ---- shopspring/decimal (the subset sprig uses) -------------------------------------------------

interface Dec {
  c: bigint;
  e: number;
}

function decFromFloat(f: number): Dec {
  if (!Number.isFinite(f)) throw new GoCallError("Cannot create a Decimal from " + formatFloat(f, "g", -1));
  if (f === 0) return { c: 0n, e: 0 };
  const s = Math.abs(f).toExponential();
  const m = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s)!;
  const digits = m[1]! + (m[2] ?? "");
  const dp = Number(m[3]) + 1;
  const c = BigInt(digits) * (f < 0 ? -1n : 1n);
  return { c, e: dp - digits.length };
}

function align(a: Dec, b: Dec): [bigint, bigint, number] {
  if (a.e === b.e) return [a.c, b.c, a.e];
  if (a.e < b.e) return [a.c, b.c * 10n ** BigInt(b.e - a.e), a.e];
  return [a.c * 10n ** BigInt(a.e - b.e), b.c, b.e];
}

const decAdd = (a: Dec, b: Dec): Dec => {
  const [x, y, e] = align(a, b);
  return { c: x + y, e };
};
const decSub = (a: Dec, b: Dec): Dec => {
  const [x, y, e] = align(a, b);
  return { c: x - y, e };
};
const decMul = (a: Dec, b: Dec): Dec => ({ c: a.c * b.c, e: a.e + b.e });
function decDiv(a: Dec, b: Dec): Dec {
  if (b.c === 0n) throw new GoCallError("decimal division by 0");
  const precision = 16;
  const k = a.e - b.e + precision;
  let n = a.c;
  let d = b.c;
  if (k >= 0) n *= 10n ** BigInt(k);
  else d *= 10n ** BigInt(-k);
  let q = n / d;
  const r = n - q * d;
  const absR = r < 0n ? -r : r;
  const absD = d < 0n ? -d : d;
  if (2n * absR >= absD && r !== 0n) {
    const neg = a.c < 0n !== b.c < 0n;
    q += neg ? -1n : 1n;
  }
  return { c: q, e: -precision };
}
function decToFloat(d: Dec): number {
  return Number(d.c.toString() + "e" + d.e);
}

function decimalOp(a: GoValue, b: GoValue[], f: (x: Dec, y: Dec) => Dec): number {
  let prt = decFromFloat(toFloat64(a));
  for (const x of b) prt = f(prt, decFromFloat(toFloat64(x)));
  return decToFloat(prt);
}

// ---- Go math ---------------------------------------------------------------------------------

function frexp(f: number): [number, number] {
  if (f === 0 || !Number.isFinite(f)) return [f, 0];
  let e = Math.max(-1073, Math.floor(Math.log2(Math.abs(f))) + 1);
  let x = f * 2 ** -e;
  while (Math.abs(x) < 0.5) {
    x *= 2;
    e--;
  }
  while (Math.abs(x) >= 1) {
    x /= 2;
    e++;
  }
  return [x, e];
}

function ldexp(frac: number, exp: number): number {
  if (frac === 0 || !Number.isFinite(frac)) return frac;
  // scale in steps to stay exact until the final rounding
  while (exp > 1000) {
    frac *= 2 ** 1000;
    exp -= 1000;
  }
  while (exp < -1000) {
    const step = Math.max(exp, -1000);
    if (Math.abs(frac) * 2 ** step === 0) return frac < 0 ? -0 : 0;
    frac *= 2 ** -1000;
    exp += 1000;
  }
  return frac * 2 ** exp;
}

/** math.Pow for the integral exponents sprig's round uses (Go's own algorithm). */
function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (y === 1) return x;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0 || !Number.isFinite(y) || !Number.isFinite(x) || !Number.isInteger(y)) return Math.pow(x, y);
  const yi = Math.abs(y);
  if (yi >= 2 ** 63) return Math.pow(x, y);
  let a1 = 1;
  let ae = 0;
  let [x1, xe] = frexp(x);
  for (let i = BigInt(yi); i !== 0n; i >>= 1n) {
    if (xe < -(1 << 12) || 1 << 12 < xe) {
      ae += xe;
      break;
    }
    if ((i & 1n) === 1n) {
      a1 *= x1;
      ae += xe;
    }
    x1 *= x1;
    xe <<= 1;
    if (x1 < 0.5) {
      x1 += x1;
      xe--;
    }
  }
  if (y < 0) {
    a1 = 1 / a1;
    ae = -ae;
  }
  return ldexp(a1, ae);
}

function goMax(x: number, y: number): number {
  if (x === Infinity || y === Infinity) return Infinity;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0 && x === y) return Object.is(x, -0) ? y : x;
  return x > y ? x : y;
}

function goMin(x: number, y: number): number {
  if (x === -Infinity || y === -Infinity) return -Infinity;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0 && x === y) return Object.is(x, -0) ? x : y;
  return x < y ? x : y;
}

function untilStep(start: number, stop: number, step: number): GoSlice {
  const v: GoValue[] = [];
  const push = (i: number): void => {
    v.push(goInt(i));
    checkListLen(v.length);
  };
  if (stop < start) {
    if (step >= 0) return new GoSlice(T_SLICE_INT, v);
    for (let i = start; i > stop; i += step) push(i);
    return new GoSlice(T_SLICE_INT, v);
  }
  if (step <= 0) return new GoSlice(T_SLICE_INT, v);
  for (let i = start; i < stop; i += step) push(i);
  return new GoSlice(T_SLICE_INT, v);
}

const intArg = (v: GoValue): number => Number((v as GoInt).v);

function seqString(s: GoSlice): string {
  return s.items.map((x) => (x as GoInt).v.toString()).join(" ");
}

export const mathFunctions: Record<string, FuncDef> = {
  atoi: def([T_STRING], ([s]) => goInt(atoiLenient(s as string))),
  int64: def([A], ([v]) => goInt64(toInt64(v!))),
  int: def([A], ([v]) => goInt(toInt64(v!))),
  float64: def([A], ([v]) => toFloat64(v!)),
  toDecimal: def([A], ([v]) => {
    try {
      return goInt64(goParseInt(sprint([v!]), 8, 64));
    } catch {
      return goInt64(0);
    }
  }),
  seq: def(
    [],
    (params) => {
      const p = params.map(intArg);
      let increment = 1;
      switch (p.length) {
        case 0:
          return "";
        case 1: {
          const start = 1;
          const end = p[0]!;
          if (end < start) increment = -1;
          return seqString(untilStep(start, end + increment, increment));
        }
        case 3: {
          const start = p[0]!;
          const end = p[2]!;
          const step = p[1]!;
          if (end < start) {
            increment = -1;
            if (step > 0) return "";
          }
          return seqString(untilStep(start, end + increment, step));
        }
        case 2: {
          const start = p[0]!;
          const end = p[1]!;
          const step = end < start ? -1 : 1;
          return seqString(untilStep(start, end + step, step));
        }
      }
      return "";
    },
    I,
  ),
  until: def([I], ([c]) => {
    const count = intArg(c!);
    return untilStep(0, count, count < 0 ? -1 : 1);
  }),
  untilStep: def([I, I, I], ([a, b, c]) => untilStep(intArg(a!), intArg(b!), intArg(c!))),
  add1: def([A], ([v]) => goInt64(wrap64(toInt64(v!) + 1n))),
  add: def([], (vs) => goInt64(vs.reduce((acc: bigint, b) => wrap64(acc + toInt64(b)), 0n)), A),
  sub: def([A, A], ([a, b]) => goInt64(wrap64(toInt64(a!) - toInt64(b!)))),
  div: def([A, A], ([a, b]) => {
    const y = toInt64(b!);
    if (y === 0n) divZero();
    return goInt64(wrap64(toInt64(a!) / y));
  }),
  mod: def([A, A], ([a, b]) => {
    const y = toInt64(b!);
    if (y === 0n) divZero();
    return goInt64(wrap64(toInt64(a!) % y));
  }),
  mul: def([A], ([a, ...rest]) => goInt64(rest.reduce((acc: bigint, b) => wrap64(acc * toInt64(b)), toInt64(a!))), A),
  add1f: def([A], ([v]) => decimalOp(v!, [goInt(1)], decAdd)),
  addf: def([], (vs) => decimalOp(0, vs, decAdd), A),
  subf: def([A], ([a, ...rest]) => decimalOp(a!, rest, decSub), A),
  divf: def([A], ([a, ...rest]) => decimalOp(a!, rest, decDiv), A),
  mulf: def([A], ([a, ...rest]) => decimalOp(a!, rest, decMul), A),
  biggest: def(
    [A],
    ([a, ...rest]) => goInt64(rest.reduce((acc: bigint, b) => (toInt64(b) > acc ? toInt64(b) : acc), toInt64(a!))),
    A,
  ),
  max: def(
    [A],
    ([a, ...rest]) => goInt64(rest.reduce((acc: bigint, b) => (toInt64(b) > acc ? toInt64(b) : acc), toInt64(a!))),
    A,
  ),
  min: def(
    [A],
    ([a, ...rest]) => goInt64(rest.reduce((acc: bigint, b) => (toInt64(b) < acc ? toInt64(b) : acc), toInt64(a!))),
    A,
  ),
  maxf: def([A], ([a, ...rest]) => rest.reduce((acc: number, b) => goMax(acc, toFloat64(b)), toFloat64(a!)), A),
  minf: def([A], ([a, ...rest]) => rest.reduce((acc: number, b) => goMin(acc, toFloat64(b)), toFloat64(a!)), A),
  ceil: def([A], ([a]) => Math.ceil(toFloat64(a!))),
  floor: def([A], ([a]) => Math.floor(toFloat64(a!))),
  round: def(
    [A, I],
    ([a, p, ...rOpt]) => {
      const roundOn = rOpt.length > 0 ? (rOpt[0] as number) : 0.5;
      const val = toFloat64(a!);
      const places = Number((p as GoInt).v);
      const pow = goPow(10, places);
      const digit = pow * val;
      const intPart = Math.trunc(digit);
      const frac = Number.isFinite(digit) ? digit - intPart : Number.isNaN(digit) ? NaN : 0;
      const r = frac >= roundOn ? Math.ceil(digit) : Math.floor(digit);
      return r / pow;
    },
    T_FLOAT64,
  ),
};
