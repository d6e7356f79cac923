/** Ports of Go's strings package functions used by sprig (on Go byte strings). */
import { decodeLastRune, decodeRune, mapRunes, RUNE_ERROR, runeCount, runesOf } from "./gostring.js";
import { isDigit, isLetter, isSpace, toLower, toTitle, toUpper } from "./unicode.js";

export function toUpperStr(s: string): string {
  if (/^[\x00-\x7f]*$/.test(s)) return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
  return mapRunes(s, toUpper);
}

export function toLowerStr(s: string): string {
  if (/^[\x00-\x7f]*$/.test(s)) return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
  return mapRunes(s, toLower);
}

function isSeparator(r: number): boolean {
  if (r <= 0x7f) {
    if (r >= 0x30 && r <= 0x39) return false;
    if (r >= 0x61 && r <= 0x7a) return false;
    if (r >= 0x41 && r <= 0x5a) return false;
    if (r === 0x5f) return false;
    return true;
  }
  if (isLetter(r) || isDigit(r)) return false;
  return isSpace(r);
}

/** strings.Title */
export function title(s: string): string {
  let prev = 0x20;
  return mapRunes(s, (r) => {
    if (isSeparator(prev)) {
      prev = r;
      return toTitle(r);
    }
    prev = r;
    return r;
  });
}

/** strings.TrimFunc(s, unicode.IsSpace) — i.e. strings.TrimSpace */
export function trimSpace(s: string): string {
  let start = 0;
  while (start < s.length) {
    const [r, size] = decodeRune(s, start);
    if (!isSpace(r)) break;
    start += size;
  }
  let stop = s.length;
  while (stop > start) {
    const [r, size] = decodeLastRune(s, stop);
    if (!isSpace(r)) break;
    stop -= size;
  }
  return s.slice(start, stop);
}

function cutsetHas(cutset: string): (r: number, size: number) => boolean {
  const set = new Set(runesOf(cutset));
  const hasInvalid = set.has(RUNE_ERROR);
  return (r, size) => {
    if (r === RUNE_ERROR && size === 1) return hasInvalid;
    return set.has(r);
  };
}

/** strings.Trim */
export function trim(s: string, cutset: string): string {
  if (s === "" || cutset === "") return s;
  const has = cutsetHas(cutset);
  let start = 0;
  while (start < s.length) {
    const [r, size] = decodeRune(s, start);
    if (!has(r, size)) break;
    start += size;
  }
  let stop = s.length;
  while (stop > start) {
    const [r, size] = decodeLastRune(s, stop);
    if (!has(r, size)) break;
    stop -= size;
  }
  return s.slice(start, stop);
}

/** strings.Count */
export function count(s: string, substr: string): number {
  if (substr.length === 0) return runeCount(s) + 1;
  let n = 0;
  for (let i = s.indexOf(substr); i >= 0; i = s.indexOf(substr, i + substr.length)) n++;
  return n;
}

/** strings.Replace(s, old, new, n) */
export function replace(s: string, old: string, nw: string, n: number): string {
  if (old === nw || n === 0) return s;
  const m = count(s, old);
  if (m === 0) return s;
  if (n < 0 || m < n) n = m;
  let out = "";
  let start = 0;
  for (let i = 0; i < n; i++) {
    let j = start;
    if (old.length === 0) {
      if (i > 0) j += decodeRune(s, start)[1];
    } else j = s.indexOf(old, start);
    out += s.slice(start, j) + nw;
    start = j + old.length;
  }
  return out + s.slice(start);
}

function explode(s: string, n: number): string[] {
  const l = runeCount(s);
  if (n < 0 || n > l) n = l;
  const a: string[] = [];
  for (let i = 0; i < n - 1; i++) {
    const size = decodeRune(s, 0)[1];
    a.push(s.slice(0, size));
    s = s.slice(size);
  }
  if (n > 0) a.push(s);
  return a;
}

/** strings.SplitN; null is Go's nil slice. */
export function splitN(s: string, sep: string, n: number): string[] | null {
  if (n === 0) return null;
  if (sep === "") return explode(s, n);
  if (n < 0) n = count(s, sep) + 1;
  if (n > s.length + 1) n = s.length + 1;
  const a: string[] = [];
  n--;
  let i = 0;
  while (i < n) {
    const m = s.indexOf(sep);
    if (m < 0) break;
    a.push(s.slice(0, m));
    s = s.slice(m + sep.length);
    i++;
  }
  a.push(s);
  return a;
}

/** strings.Repeat (panics on negative counts) */
export function repeat(s: string, n: number, onNegative: () => never): string {
  if (n < 0) onNegative();
  return s.repeat(n);
}
