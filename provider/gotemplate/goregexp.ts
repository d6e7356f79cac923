/**
 * Go's regexp (RE2 syntax, leftmost-first semantics) on top of JavaScript RegExp.
 *
 * The Go pattern is parsed with Go's own rules (same accepted syntax, same errors) and translated to
 * an equivalent JavaScript pattern (flags `dgv`): `.` never matches only `\n`, `\s` is ASCII, `$`
 * without (?m) is end of text, (?i)/(?m)/(?s)/(?U) are applied per atom, (?P<name>) groups are kept
 * as plain numbered groups with Go's names recorded. Matching runs on the UTF-8 decoding of the Go
 * byte string and positions are mapped back to byte offsets, so results are byte-exact like Go.
 */
import * as vm from "node:vm";
import { decodeRune, validString } from "./gostring.js";
import { isDigit, isLetter, toLower, toUpper } from "./unicode.js";
import { CASE_RANGES, FOLD_ORBITS } from "./unicode-tables.js";

export class RegexSyntaxError extends Error {}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

interface Item {
  src: string;
  isRepeat: boolean;
}

interface Frame {
  alts: string[];
  items: Item[];
  savedFlags: Flags;
  cap: number; // 0: non-capturing
}

function hex(c: number): string {
  return "\\u{" + c.toString(16) + "}";
}

function atomChar(c: number): string {
  if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return String.fromCharCode(c);
  return hex(c);
}

type Range = [number, number];

function rangesSrc(rs: readonly Range[]): string {
  return rs.map(([a, b]) => (a === b ? hex(a) : hex(a) + "-" + hex(b))).join("");
}

function negate(rs: readonly Range[]): Range[] {
  const sorted = [...rs].sort((x, y) => x[0] - y[0]);
  const out: Range[] = [];
  let next = 0;
  for (const [a, b] of sorted) {
    if (a > next) out.push([next, a - 1]);
    next = Math.max(next, b + 1);
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

let orbitIndex: Map<number, readonly number[]> | undefined;
/** The case-folding orbit of r (unicode.SimpleFold closure). */
function foldOrbit(r: number): number[] {
  if (!orbitIndex) {
    orbitIndex = new Map();
    for (const o of FOLD_ORBITS) for (const x of o) orbitIndex.set(x, o);
  }
  const o = orbitIndex.get(r);
  if (o) return [...o];
  const out = [r];
  const l = toLower(r);
  const u = toUpper(r);
  if (l !== r) out.push(l);
  if (u !== r && u !== l) out.push(u);
  return out;
}

let casedOrbits: number[][] | undefined;
/** Every case-folding orbit with more than one member (the only runes folding can add). */
function allOrbits(): number[][] {
  if (casedOrbits) return casedOrbits;
  const seen = new Set<number>();
  const out: number[][] = [];
  for (const o of FOLD_ORBITS) {
    out.push([...o]);
    for (const x of o) seen.add(x);
  }
  for (const [lo, hi] of CASE_RANGES) {
    for (let r = lo; r <= hi; r++) {
      if (seen.has(r)) continue;
      const o = foldOrbit(r);
      for (const x of o) seen.add(x);
      if (o.length > 1) out.push(o);
    }
  }
  casedOrbits = out;
  return out;
}

const foldExtrasCache = new Map<string, Range[]>();
/** Runes outside a JS class operand whose case-folding orbit meets it. */
function foldExtras(operand: string): Range[] {
  const hit = foldExtrasCache.get(operand);
  if (hit) return hit;
  const re = new RegExp("^[" + operand + "]$", "v");
  const extras: Range[] = [];
  for (const o of allOrbits()) {
    const inside = o.map((r) => re.test(String.fromCodePoint(r)));
    if (inside.some(Boolean)) o.forEach((r, i) => inside[i] || extras.push([r, r]));
  }
  foldExtrasCache.set(operand, extras);
  return extras;
}

const MIN_FOLD = 0x41;
const MAX_FOLD = 0x1e943;

/** Go's appendFoldedRange: the range plus every case variant of its members. */
function foldRanges(rs: readonly Range[]): Range[] {
  const out: Range[] = [];
  for (const [lo, hi] of rs) {
    out.push([lo, hi]);
    if (lo <= MIN_FOLD && hi >= MAX_FOLD) continue;
    for (let r = Math.max(lo, MIN_FOLD); r <= Math.min(hi, MAX_FOLD); r++) {
      for (const f of foldOrbit(r)) if (f < lo || f > hi) out.push([f, f]);
    }
  }
  return normalize(out);
}

function normalize(rs: readonly Range[]): Range[] {
  const sorted = [...rs].sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** A character class under construction: explicit ranges plus JS class operands (\p{..}, nested classes). */
class ClassBuilder {
  ranges: Range[] = [];
  operands: string[] = [];
  constructor(private readonly fold: boolean) {}
  add(rs: readonly Range[], negated = false): void {
    if (!this.fold) {
      // a nested negated class keeps Go's "negate after folding" semantics under the engine's i flag
      if (negated) this.operands.push("[^" + rangesSrc(rs) + "]");
      else this.ranges.push(...rs);
      return;
    }
    const r = foldRanges(rs);
    this.ranges.push(...(negated ? negate(r) : r));
  }
  src(negated: boolean): string {
    return "[" + (negated ? "^" : "") + rangesSrc(normalize(this.ranges)) + this.operands.join("") + "]";
  }
}

const PERL: Record<string, Range[]> = {
  d: [[0x30, 0x39]],
  s: [
    [0x09, 0x0a],
    [0x0c, 0x0d],
    [0x20, 0x20],
  ],
  w: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
};

const POSIX: Record<string, Range[]> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

const GO_CATEGORIES = new Set([
  "L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
  "S", "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf", "Co", "Cs", "LC",
]);

/** A JS class-set operand for a Go \p{name}; undefined if unknown. */
function unicodeClass(name: string, negated: boolean): string | undefined {
  let src: string | undefined;
  if (name === "Any") src = "[\\u{0}-\\u{10ffff}]";
  else if (name === "Assigned") src = "\\P{Cn}";
  else if (name === "Ascii" || name === "ASCII") src = "[\\u{0}-\\u{7f}]";
  else if (name === "C") src = "[\\p{Cc}\\p{Cf}\\p{Co}\\p{Cs}]";
  else if (name === "Lc") src = "\\p{LC}";
  else if (GO_CATEGORIES.has(name)) src = "\\p{gc=" + name + "}";
  else if (/^[A-Za-z_]+$/.test(name)) {
    try {
      new RegExp("\\p{sc=" + name + "}", "v");
      src = "\\p{sc=" + name + "}";
    } catch {
      try {
        new RegExp("\\p{" + name + "}", "v");
        src = "\\p{" + name + "}";
      } catch {
        src = undefined;
      }
    }
  }
  if (src === undefined) return undefined;
  return negated ? "[^" + src + "]" : src;
}

const isalnum = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

function unhex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

class Translator {
  private readonly cs: number[];
  private i = 0;
  private flags: Flags = { i: false, m: false, s: false, U: false };
  numCap = 0;
  readonly names: string[] = [""];
  /** Number of quantifiers, and whether one applies to a group (backtracking risk in JS). */
  quantifiers = 0;
  quantifiedGroup = false;

  constructor(pattern: string) {
    this.cs = [...pattern].map((c) => c.codePointAt(0)!);
  }

  private err(code: string): never {
    throw new RegexSyntaxError("error parsing regexp: " + code);
  }

  private peek(k = 0): number | undefined {
    return this.cs[this.i + k];
  }

  /** Use the engine's i flag (whole pattern case-insensitive) instead of explicit folding. */
  globalI = false;

  private fold(): boolean {
    return this.flags.i && !this.globalI;
  }

  private literal(c: number): string {
    if (!this.flags.i) return atomChar(c);
    if (this.globalI) return "[" + hex(c) + "]";
    const b = new ClassBuilder(true);
    b.add([[c, c]]);
    return b.src(false);
  }

  translate(): string {
    const stack: Frame[] = [];
    let cur: Frame = { alts: [], items: [], savedFlags: { ...this.flags }, cap: 0 };
    let lastRepeat = false;
    const push = (src: string): void => {
      cur.items.push({ src, isRepeat: false });
    };
    while (this.i < this.cs.length) {
      const c = this.cs[this.i]!;
      let repeat = false;
      switch (c) {
        case 0x28: {
          // (
          if (this.peek(1) === 0x3f) {
            const r = this.perlFlags();
            if (r.kind === "group") {
              stack.push(cur);
              cur = { alts: [], items: [], savedFlags: r.saved, cap: r.cap };
            }
            break;
          }
          this.i++;
          this.numCap++;
          this.names.push("");
          stack.push(cur);
          cur = { alts: [], items: [], savedFlags: { ...this.flags }, cap: this.numCap };
          break;
        }
        case 0x7c: // |
          cur.alts.push(cur.items.map((x) => x.src).join(""));
          cur.items = [];
          this.i++;
          break;
        case 0x29: {
          // )
          const outer = stack.pop();
          if (!outer) this.err("unexpected )");
          cur.alts.push(cur.items.map((x) => x.src).join(""));
          const body = cur.alts.join("|");
          const src = cur.cap > 0 ? "(" + body + ")" : "(?:" + body + ")";
          this.flags = cur.savedFlags;
          cur = outer;
          push(src);
          this.i++;
          break;
        }
        case 0x5e: // ^
          push(this.flags.m ? "(?:^|(?<=\\n))" : "(?:^)");
          this.i++;
          break;
        case 0x24: // $
          push(this.flags.m ? "(?:$|(?=\\n))" : "(?:$)");
          this.i++;
          break;
        case 0x2e: // .
          push(this.flags.s ? "[\\u{0}-\\u{10ffff}]" : "[^\\n]");
          this.i++;
          break;
        case 0x5b: // [
          push(this.parseClass());
          break;
        case 0x2a:
        case 0x2b:
        case 0x3f: {
          this.i++;
          const q = c === 0x2a ? "*" : c === 0x2b ? "+" : "?";
          this.repeat(cur, q, lastRepeat);
          repeat = true;
          break;
        }
        case 0x7b: {
          // {
          const save = this.i;
          const r = this.parseRepeat();
          if (!r) {
            this.i = save + 1;
            push(this.literal(0x7b));
            break;
          }
          const [min, max] = r;
          if (min < 0 || min > 1000 || max > 1000 || (max >= 0 && min > max)) this.err("invalid repeat count");
          const q = max === -1 ? "{" + min + ",}" : min === max ? "{" + min + "}" : "{" + min + "," + max + "}";
          this.repeat(cur, q, lastRepeat);
          repeat = true;
          break;
        }
        case 0x5c: {
          // backslash
          const n = this.peek(1);
          if (n === 0x41) {
            push("(?:^)");
            this.i += 2;
            break;
          }
          if (n === 0x62 || n === 0x42) {
            push(n === 0x62 ? "(?:\\b)" : "(?:\\B)");
            this.i += 2;
            break;
          }
          if (n === 0x43) this.err("invalid escape sequence");
          if (n === 0x51) {
            // \Q ... \E
            this.i += 2;
            while (this.i < this.cs.length && !(this.cs[this.i] === 0x5c && this.cs[this.i + 1] === 0x45)) {
              push(this.literal(this.cs[this.i]!));
              this.i++;
            }
            if (this.i < this.cs.length) this.i += 2;
            break;
          }
          if (n === 0x7a) {
            push("(?:$)");
            this.i += 2;
            break;
          }
          if (n === 0x70 || n === 0x50) {
            const b = new ClassBuilder(this.fold());
            b.operands.push(this.unicodeClassEscape());
            push(b.src(false));
            break;
          }
          const b = new ClassBuilder(this.fold());
          if (this.perlClass(b)) {
            push(b.src(false));
            break;
          }
          push(this.literal(this.parseEscape()));
          break;
        }
        default:
          push(this.literal(c));
          this.i++;
      }
      lastRepeat = repeat;
    }
    if (stack.length > 0) this.err("missing closing )");
    cur.alts.push(cur.items.map((x) => x.src).join(""));
    return cur.alts.join("|");
  }

  private repeat(cur: Frame, q: string, lastRepeat: boolean): void {
    let lazy = false;
    if (this.peek() === 0x3f) {
      this.i++;
      lazy = true;
    }
    if (lastRepeat) this.err("invalid nested repetition operator");
    const last = cur.items[cur.items.length - 1];
    if (!last) this.err("missing argument to repetition operator");
    if (this.flags.U) lazy = !lazy;
    this.quantifiers++;
    if (last.src.startsWith("(") && !last.src.startsWith("(?:^") && !last.src.startsWith("(?:$") && !last.src.startsWith("(?:\\b") && !last.src.startsWith("(?:\\B"))
      this.quantifiedGroup = true;
    const src = last.isRepeat ? "(?:" + last.src + ")" : last.src;
    cur.items[cur.items.length - 1] = { src: src + q + (lazy ? "?" : ""), isRepeat: true };
  }

  private parseInt(): number | undefined {
    const c = this.peek();
    if (c === undefined || c < 0x30 || c > 0x39) return undefined;
    if (c === 0x30 && this.peek(1) !== undefined && this.peek(1)! >= 0x30 && this.peek(1)! <= 0x39) return undefined;
    let n = 0;
    while (this.peek() !== undefined && this.peek()! >= 0x30 && this.peek()! <= 0x39) {
      if (n >= 1e8) n = -1;
      else if (n >= 0) n = n * 10 + (this.peek()! - 0x30);
      this.i++;
    }
    return n;
  }

  private parseRepeat(): [number, number] | undefined {
    this.i++; // {
    let min = this.parseInt();
    if (min === undefined) return undefined;
    if (this.peek() === undefined) return undefined;
    let max: number;
    if (this.peek() !== 0x2c) max = min;
    else {
      this.i++;
      if (this.peek() === undefined) return undefined;
      if (this.peek() === 0x7d) max = -1;
      else {
        const m = this.parseInt();
        if (m === undefined) return undefined;
        max = m;
        if (max < 0) min = -1;
      }
    }
    if (this.peek() !== 0x7d) return undefined;
    this.i++;
    return [min, max];
  }

  private perlFlags(): { kind: "group"; saved: Flags; cap: number } | { kind: "flags" } {
    const t = this.cs;
    const start = this.i;
    const startsWithP = t.length - start > 4 && t[start + 2] === 0x50 && t[start + 3] === 0x3c;
    const startsWithName = t.length - start > 3 && t[start + 2] === 0x3c;
    if (startsWithP || startsWithName) {
      const exprStart = start + (startsWithName ? 3 : 4);
      let end = -1;
      for (let k = start; k < t.length; k++)
        if (t[k] === 0x3e) {
          end = k;
          break;
        }
      if (end < 0) this.err("invalid named capture");
      const name = String.fromCodePoint(...t.slice(exprStart, end));
      if (name === "" || ![...name].every((ch) => ch === "_" || isalnum(ch.codePointAt(0)!)))
        this.err("invalid named capture");
      this.numCap++;
      this.names.push(name);
      this.i = end + 1;
      return { kind: "group", saved: { ...this.flags }, cap: this.numCap };
    }
    this.i += 2;
    const flags = { ...this.flags };
    let sign = 1;
    let sawFlag = false;
    const set = (k: keyof Flags): void => {
      flags[k] = sign > 0;
      sawFlag = true;
    };
    while (this.i < t.length) {
      const c = t[this.i++]!;
      switch (c) {
        case 0x69:
          set("i");
          continue;
        case 0x6d:
          set("m");
          continue;
        case 0x73:
          set("s");
          continue;
        case 0x55:
          set("U");
          continue;
        case 0x2d:
          if (sign < 0) break;
          sign = -1;
          sawFlag = false;
          continue;
        case 0x3a:
        case 0x29:
          if (sign < 0 && !sawFlag) break;
          if (c === 0x3a) {
            const saved = { ...this.flags };
            this.flags = flags;
            return { kind: "group", saved, cap: 0 };
          }
          this.flags = flags;
          return { kind: "flags" };
      }
      break;
    }
    this.err("invalid or unsupported Perl syntax");
  }

  /** \d \D \s \S \w \W at the cursor: adds to the class and returns true, or returns false. */
  private perlClass(b: ClassBuilder): boolean {
    if (this.peek() !== 0x5c) return false;
    const n = this.peek(1);
    if (n === undefined) return false;
    const ch = String.fromCharCode(n);
    if (!"dDsSwW".includes(ch)) return false;
    this.i += 2;
    const lowerName = ch.toLowerCase();
    b.add(PERL[lowerName]!, ch !== lowerName);
    return true;
  }

  private unicodeClassEscape(): string {
    const t = this.cs;
    const start = this.i;
    let negated = t[start + 1] === 0x50;
    let name: string;
    const c = t[start + 2];
    if (c === undefined) this.err("invalid character class range");
    if (c !== 0x7b) {
      name = String.fromCodePoint(c);
      this.i = start + 3;
    } else {
      let end = -1;
      for (let k = start; k < t.length; k++)
        if (t[k] === 0x7d) {
          end = k;
          break;
        }
      if (end < 0) this.err("invalid character class range");
      name = String.fromCodePoint(...t.slice(start + 3, end));
      this.i = end + 1;
    }
    if (name.startsWith("^")) {
      negated = !negated;
      name = name.slice(1);
    }
    const positive = unicodeClass(name, false);
    if (positive === undefined) this.err("invalid character class range");
    if (!this.fold()) return negated ? "[^" + positive + "]" : positive;
    // (?i): add the case variants of the cased letters in the class, like Go's fold tables do
    const extras = rangesSrc(normalize(foldExtras(positive)));
    return negated ? "[^" + positive + extras + "]" : "[" + positive + extras + "]";
  }

  private parseEscape(): number {
    this.i++; // backslash
    const c = this.peek();
    if (c === undefined) this.err("trailing backslash at end of expression");
    this.i++;
    if (c < 0x80 && !isalnum(c)) return c;
    switch (c) {
      case 0x31:
      case 0x32:
      case 0x33:
      case 0x34:
      case 0x35:
      case 0x36:
      case 0x37:
      case 0x30: {
        if (c !== 0x30) {
          const n = this.peek();
          if (n === undefined || n < 0x30 || n > 0x37) break;
        }
        let r = c - 0x30;
        for (let k = 1; k < 3; k++) {
          const n = this.peek();
          if (n === undefined || n < 0x30 || n > 0x37) break;
          r = r * 8 + n - 0x30;
          this.i++;
        }
        return r;
      }
      case 0x78: {
        // x
        const n = this.peek();
        if (n === undefined) break;
        this.i++;
        if (n === 0x7b) {
          let nhex = 0;
          let r = 0;
          for (;;) {
            const d = this.peek();
            if (d === undefined) this.err("invalid escape sequence");
            this.i++;
            if (d === 0x7d) break;
            const v = unhex(d);
            if (v < 0) this.err("invalid escape sequence");
            r = r * 16 + v;
            if (r > 0x10ffff) this.err("invalid escape sequence");
            nhex++;
          }
          if (nhex === 0) this.err("invalid escape sequence");
          return r;
        }
        const y = this.peek();
        if (y === undefined) this.err("invalid escape sequence");
        this.i++;
        const a = unhex(n);
        const b = unhex(y);
        if (a < 0 || b < 0) break;
        return a * 16 + b;
      }
      case 0x61:
        return 7;
      case 0x66:
        return 12;
      case 0x6e:
        return 10;
      case 0x72:
        return 13;
      case 0x74:
        return 9;
      case 0x76:
        return 11;
    }
    this.err("invalid escape sequence");
  }

  private classChar(): number {
    if (this.i >= this.cs.length) this.err("missing closing ]");
    if (this.peek() === 0x5c) return this.parseEscape();
    return this.cs[this.i++]!;
  }

  private parseClass(): string {
    this.i++; // [
    let neg = false;
    if (this.peek() === 0x5e) {
      neg = true;
      this.i++;
    }
    const b = new ClassBuilder(this.fold());
    let first = true;
    while (this.i >= this.cs.length || this.peek() !== 0x5d || first) {
      if (this.i >= this.cs.length) this.err("missing closing ]");
      first = false;
      // [:name:]
      if (this.peek() === 0x5b && this.peek(1) === 0x3a) {
        let end = -1;
        for (let k = this.i + 2; k + 1 < this.cs.length; k++)
          if (this.cs[k] === 0x3a && this.cs[k + 1] === 0x5d) {
            end = k;
            break;
          }
        if (end >= 0) {
          let name = String.fromCodePoint(...this.cs.slice(this.i + 2, end));
          let negated = false;
          if (name.startsWith("^")) {
            negated = true;
            name = name.slice(1);
          }
          const rs = POSIX[name];
          if (!rs) this.err("invalid character class range");
          b.add(rs, negated);
          this.i = end + 2;
          continue;
        }
      }
      if (this.peek() === 0x5c && (this.peek(1) === 0x70 || this.peek(1) === 0x50)) {
        b.operands.push(this.unicodeClassEscape());
        continue;
      }
      if (this.perlClass(b)) continue;
      const lo = this.classChar();
      let hi = lo;
      if (this.peek() === 0x2d && this.peek(1) !== undefined && this.peek(1) !== 0x5d) {
        this.i++;
        hi = this.classChar();
        if (hi < lo) this.err("invalid character class range");
      }
      b.add([[lo, hi]]);
    }
    this.i++; // ]
    return b.src(neg);
  }
}

export interface GoRegexp {
  readonly re: RegExp;
  /** JavaScript's engine backtracks; patterns that can blow up run under a time limit. */
  readonly risky: boolean;
  readonly numSubexp: number;
  readonly names: readonly string[];
  /** The Go pattern (bytes). */
  readonly expr: string;
}

const cache = new Map<string, GoRegexp>();

/** regexp.Compile; throws RegexSyntaxError with Go's error code text (without the pattern). */
export function compile(expr: string): GoRegexp {
  const hit = cache.get(expr);
  if (hit) return hit;
  if (!validString(expr)) throw new RegexSyntaxError("error parsing regexp: invalid UTF-8");
  let pattern = "";
  for (let i = 0; i < expr.length; ) {
    const [r, size] = decodeRune(expr, i);
    pattern += String.fromCodePoint(r);
    i += size;
  }
  const t = new Translator(pattern);
  // A pattern that is case-insensitive throughout uses the engine's i flag (exact for \p classes too);
  // otherwise (?i) regions are folded explicitly, like Go's parser does.
  t.globalI = /^\(\?[msU]*i[msU]*\)/.test(pattern) && !/\(\?[imsU]*-/.test(pattern);
  const src = t.translate();
  let re: RegExp;
  try {
    re = new RegExp(src, t.globalI ? "dgiv" : "dgv");
  } catch {
    throw new RegexSyntaxError("error parsing regexp: invalid character class range");
  }
  const out: GoRegexp = { re, numSubexp: t.numCap, names: t.names, expr, risky: t.quantifiers >= 2 || t.quantifiedGroup };
  if (cache.size > 500) cache.clear();
  cache.set(expr, out);
  return out;
}

export class RegexTimeoutError extends Error {}

/** Time limit for one regex function call on a risky pattern or a long subject (Go needs microseconds). */
export const REGEX_TIME_LIMIT_MS = 2000;
const LONG_SUBJECT = 4096;

let guardContext: vm.Context | undefined;
let guardScript: vm.Script | undefined;

/**
 * Runs f (regex matching) under a time limit when the pattern can backtrack catastrophically in
 * JavaScript (Go's RE2 engine is linear-time, so it never hangs): nested or repeated quantifiers, or
 * long subjects. Other patterns run directly.
 */
export function guarded<T>(g: GoRegexp, subjectLength: number, f: () => T): T {
  if (!g.risky && subjectLength <= LONG_SUBJECT) return f();
  guardContext ??= vm.createContext({});
  guardScript ??= new vm.Script("f()");
  const ctx = guardContext as { f?: () => T };
  ctx.f = f;
  try {
    return guardScript.runInContext(guardContext, { timeout: REGEX_TIME_LIMIT_MS }) as T;
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT")
      throw new RegexTimeoutError(
        `regular expression evaluation exceeded ${REGEX_TIME_LIMIT_MS}ms (catastrophic backtracking in the JavaScript engine; simplify the pattern)`,
      );
    throw e;
  } finally {
    ctx.f = undefined;
  }
}

/** A Go byte string prepared for matching: its UTF-8 decoding and index maps. */
class Subject {
  readonly js: string;
  readonly b2j: Int32Array;
  readonly j2b: Int32Array;
  constructor(readonly s: string) {
    let js = "";
    const b2j = new Int32Array(s.length + 1).fill(-1);
    const j2b: number[] = [];
    for (let i = 0; i < s.length; ) {
      const [r, size] = decodeRune(s, i);
      b2j[i] = js.length;
      const ch = String.fromCodePoint(r);
      for (let k = 0; k < ch.length; k++) j2b.push(i);
      js += ch;
      i += size;
    }
    b2j[s.length] = js.length;
    j2b.push(s.length);
    this.js = js;
    this.b2j = b2j;
    this.j2b = Int32Array.from(j2b);
  }

  /** doExecute from byte position pos: [start0, end0, start1, end1, ...] in bytes (-1 = unset), or null. */
  exec(g: GoRegexp, pos: number): number[] | null {
    const jpos = this.b2j[pos];
    if (jpos === undefined || jpos < 0) return null;
    g.re.lastIndex = jpos;
    const m = g.re.exec(this.js);
    if (!m) return null;
    const out: number[] = [];
    const ind = m.indices!;
    for (let k = 0; k <= g.numSubexp; k++) {
      const p = ind[k];
      if (!p) out.push(-1, -1);
      else out.push(this.j2b[p[0]]!, this.j2b[p[1]]!);
    }
    return out;
  }
}

function runeWidthAt(s: string, pos: number): number {
  return decodeRune(s, pos)[1];
}

/** re.FindAllStringSubmatchIndex(s, n) (n < 0: all). */
export function findAllIndex(g: GoRegexp, s: string, n: number): number[][] {
  const subj = new Subject(s);
  if (n < 0) n = s.length + 1;
  const out: number[][] = [];
  const end = s.length;
  for (let pos = 0, i = 0, prevMatchEnd = -1; i < n && pos <= end; ) {
    const m = subj.exec(g, pos);
    if (!m) break;
    let accept = true;
    if (m[1] === pos) {
      if (m[0] === prevMatchEnd) accept = false;
      const width = runeWidthAt(s, pos);
      pos = width > 0 ? pos + width : end + 1;
    } else {
      pos = m[1]!;
    }
    prevMatchEnd = m[1]!;
    if (accept) {
      out.push(m);
      i++;
    }
  }
  return out;
}

export function matchString(g: GoRegexp, s: string): boolean {
  return new Subject(s).exec(g, 0) !== null;
}

export function findString(g: GoRegexp, s: string): string {
  const m = new Subject(s).exec(g, 0);
  return m ? s.slice(m[0], m[1]) : "";
}

/** FindAllString; null means Go's nil slice. */
export function findAllString(g: GoRegexp, s: string, n: number): string[] | null {
  const ms = findAllIndex(g, s, n);
  if (ms.length === 0) return null;
  return ms.map((m) => s.slice(m[0], m[1]));
}

function extract(str: string): { name: string; num: number; rest: string } | undefined {
  if (str === "") return undefined;
  let brace = false;
  if (str[0] === "{") {
    brace = true;
    str = str.slice(1);
  }
  let i = 0;
  while (i < str.length) {
    const [r, size] = decodeRune(str, i);
    if (!isLetter(r) && !isDigit(r) && r !== 0x5f) break;
    i += size;
  }
  if (i === 0) return undefined;
  const name = str.slice(0, i);
  if (brace) {
    if (i >= str.length || str[i] !== "}") return undefined;
    i++;
  }
  let num = 0;
  for (let k = 0; k < name.length; k++) {
    const c = name.charCodeAt(k);
    if (c < 0x30 || c > 0x39 || num >= 1e8) {
      num = -1;
      break;
    }
    num = num * 10 + c - 0x30;
  }
  if (name[0] === "0" && name.length > 1) num = -1;
  return { name, num, rest: str.slice(i) };
}

function expand(g: GoRegexp, template: string, src: string, match: number[]): string {
  let dst = "";
  for (;;) {
    const k = template.indexOf("$");
    if (k < 0) break;
    dst += template.slice(0, k);
    template = template.slice(k + 1);
    if (template !== "" && template[0] === "$") {
      dst += "$";
      template = template.slice(1);
      continue;
    }
    const e = extract(template);
    if (!e) {
      dst += "$";
      continue;
    }
    template = e.rest;
    if (e.num >= 0) {
      if (2 * e.num + 1 < match.length && match[2 * e.num]! >= 0) dst += src.slice(match[2 * e.num], match[2 * e.num + 1]);
    } else {
      for (let i = 0; i < g.names.length; i++) {
        if (e.name === g.names[i] && 2 * i + 1 < match.length && match[2 * i]! >= 0) {
          dst += src.slice(match[2 * i], match[2 * i + 1]);
          break;
        }
      }
    }
  }
  return dst + template;
}

function replaceAll(g: GoRegexp, src: string, repl: (m: number[]) => string): string {
  const subj = new Subject(src);
  let lastMatchEnd = 0;
  let searchPos = 0;
  let buf = "";
  const endPos = src.length;
  while (searchPos <= endPos) {
    const a = subj.exec(g, searchPos);
    if (!a) break;
    buf += src.slice(lastMatchEnd, a[0]);
    if (a[1]! > lastMatchEnd || a[0] === 0) buf += repl(a);
    lastMatchEnd = a[1]!;
    const width = searchPos < src.length ? runeWidthAt(src, searchPos) : 0;
    if (searchPos + width > a[1]!) searchPos += width;
    else if (searchPos + 1 > a[1]!) searchPos++;
    else searchPos = a[1]!;
  }
  return buf + src.slice(lastMatchEnd);
}

export function replaceAllString(g: GoRegexp, src: string, repl: string): string {
  return replaceAll(g, src, (m) => expand(g, repl, src, m));
}

export function replaceAllLiteralString(g: GoRegexp, src: string, repl: string): string {
  return replaceAll(g, src, () => repl);
}

/** re.Split; null means Go's nil slice. */
export function split(g: GoRegexp, s: string, n: number): string[] | null {
  if (n === 0) return null;
  if (g.expr.length > 0 && s.length === 0) return [""];
  const matches = findAllIndex(g, s, n);
  const out: string[] = [];
  let beg = 0;
  let end = 0;
  for (const m of matches) {
    if (n > 0 && out.length === n - 1) break;
    end = m[0]!;
    if (m[1] !== 0) out.push(s.slice(beg, end));
    beg = m[1]!;
  }
  if (end !== s.length) out.push(s.slice(beg));
  return out;
}

const META = new Set([..."\\.+*?()|[]{}^$"].map((c) => c.charCodeAt(0)));

/** regexp.QuoteMeta */
export function quoteMeta(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (META.has(c)) out += "\\";
    out += s[i];
  }
  return out;
}

