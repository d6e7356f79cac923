/**
 * Go's regexp for sprig's regex functions, on re2js: a maintained JavaScript
 * port of RE2, the engine behind Go's regexp, with Go's syntax, its errors and
 * linear-time matching (no backtracking, so no time limit is needed).
 *
 * What stays here is what re2js does not do the Go way: Go's replacement
 * syntax (`$1`, `${name}`, `$$`; re2js follows Java's), and Go's loops over
 * matches (FindAll's and ReplaceAll's handling of empty matches, Split).
 * Subjects are Go byte strings, matched as UTF-8 bytes, so every position is
 * a byte offset, exactly as in Go.
 */
import { RE2JS, RE2JSSyntaxException } from "re2js";
import { decodeRune, validString } from "./gostring.js";
import { isDigit, isLetter } from "./unicode.js";

export class RegexSyntaxError extends Error {}

export interface GoRegexp {
  readonly re: RE2JS;
  readonly numSubexp: number;
  /** Go's SubexpNames: index 0 and unnamed groups are "". */
  readonly names: readonly string[];
  /** The Go pattern (bytes). */
  readonly expr: string;
}

const cache = new Map<string, GoRegexp>();

/** regexp.Compile; throws RegexSyntaxError with Go's error text (without the offending fragment). */
export function compile(expr: string): GoRegexp {
  const hit = cache.get(expr);
  if (hit) return hit;
  if (!validString(expr)) throw new RegexSyntaxError("error parsing regexp: invalid UTF-8");
  let re: RE2JS;
  try {
    re = RE2JS.compile(Buffer.from(expr, "latin1").toString("utf8"));
  } catch (e) {
    if (e instanceof RE2JSSyntaxException) throw new RegexSyntaxError(`error parsing regexp: ${e.getDescription()}`);
    throw e;
  }
  const numSubexp = re.re2().numberOfCapturingGroups();
  const names = new Array<string>(numSubexp + 1).fill("");
  for (const [name, index] of Object.entries(re.re2().namedGroups as Record<string, number>)) names[index] = name;
  const out: GoRegexp = { re, numSubexp, names, expr };
  if (cache.size > 500) cache.clear();
  cache.set(expr, out);
  return out;
}

/** A Go byte string prepared for matching. */
class Subject {
  private readonly matcher;
  constructor(
    private readonly g: GoRegexp,
    readonly s: string,
  ) {
    this.matcher = g.re.matcher(Buffer.from(s, "latin1"));
  }

  /** doExecute from byte position pos: [start0, end0, start1, end1, ...] in bytes (-1 = unset), or null. */
  exec(pos: number): number[] | null {
    if (pos > this.s.length || !this.matcher.find(pos)) return null;
    const out: number[] = [];
    for (let k = 0; k <= this.g.numSubexp; k++) out.push(this.matcher.start(k), this.matcher.end(k));
    return out;
  }
}

function runeWidthAt(s: string, pos: number): number {
  return decodeRune(s, pos)[1];
}

/** re.FindAllStringSubmatchIndex(s, n) (n < 0: all). */
export function findAllIndex(g: GoRegexp, s: string, n: number): number[][] {
  const subj = new Subject(g, s);
  if (n < 0) n = s.length + 1;
  const out: number[][] = [];
  const end = s.length;
  for (let pos = 0, i = 0, prevMatchEnd = -1; i < n && pos <= end;) {
    const m = subj.exec(pos);
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
  return new Subject(g, s).exec(0) !== null;
}

export function findString(g: GoRegexp, s: string): string {
  const m = new Subject(g, s).exec(0);
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
      if (2 * e.num + 1 < match.length && match[2 * e.num]! >= 0)
        dst += src.slice(match[2 * e.num], match[2 * e.num + 1]);
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
  const subj = new Subject(g, src);
  let lastMatchEnd = 0;
  let searchPos = 0;
  let buf = "";
  const endPos = src.length;
  while (searchPos <= endPos) {
    const a = subj.exec(searchPos);
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
