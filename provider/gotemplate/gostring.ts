/**
 * Go strings are byte sequences. Inside the evaluator a Go string is a JavaScript "binary string":
 * every char code is one byte (0..255). That makes len/index/slicing byte-exact like Go, and lets
 * strings carry invalid UTF-8 (e.g. after `trunc` cuts a multibyte character), exactly as Go does.
 *
 * fromJs/toJs convert at the boundary; toJs decodes like Go does when such bytes are shown
 * (each invalid byte becomes U+FFFD, as Go's encoding/json and range loops do).
 */

export const RUNE_ERROR = 0xfffd;
const MAX_RUNE = 0x10ffff;

/** UTF-8 encodes a JavaScript string into a Go byte string (lone surrogates become U+FFFD). */
export function fromJs(s: string): string {
  // Fast path: pure ASCII is byte-identical.
  if (/^[\x00-\x7f]*$/.test(s)) return s;
  return Buffer.from(s, "utf8").toString("latin1");
}

/** Decodes a Go byte string for display: valid UTF-8 as is, each invalid byte as U+FFFD. */
export function toJs(b: string): string {
  if (/^[\x00-\x7f]*$/.test(b)) return b;
  let out = "";
  for (let i = 0; i < b.length;) {
    const [r, size] = decodeRune(b, i);
    out += String.fromCodePoint(r);
    i += size;
  }
  return out;
}

/** Bytes of a Go string. */
export function toBytes(s: string): Buffer {
  return Buffer.from(s, "latin1");
}

/** A Go string from bytes. */
export function fromBytes(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1");
}

function cont(s: string, i: number, lo = 0x80, hi = 0xbf): number {
  if (i >= s.length) return -1;
  const c = s.charCodeAt(i);
  return c >= lo && c <= hi ? c & 0x3f : -1;
}

/** utf8.DecodeRuneInString(s[i:]): [rune, size]; [RuneError, 1] for an invalid byte, [RuneError, 0] at the end. */
export function decodeRune(s: string, i: number): [number, number] {
  if (i >= s.length) return [RUNE_ERROR, 0];
  const c0 = s.charCodeAt(i);
  if (c0 < 0x80) return [c0, 1];
  if (c0 < 0xc2 || c0 > 0xf4) return [RUNE_ERROR, 1];
  if (c0 < 0xe0) {
    const c1 = cont(s, i + 1);
    if (c1 < 0) return [RUNE_ERROR, 1];
    return [((c0 & 0x1f) << 6) | c1, 2];
  }
  if (c0 < 0xf0) {
    const lo = c0 === 0xe0 ? 0xa0 : 0x80;
    const hi = c0 === 0xed ? 0x9f : 0xbf;
    const c1 = cont(s, i + 1, lo, hi);
    if (c1 < 0) return [RUNE_ERROR, 1];
    const c2 = cont(s, i + 2);
    if (c2 < 0) return [RUNE_ERROR, 1];
    return [((c0 & 0x0f) << 12) | (c1 << 6) | c2, 3];
  }
  const lo = c0 === 0xf0 ? 0x90 : 0x80;
  const hi = c0 === 0xf4 ? 0x8f : 0xbf;
  const c1 = cont(s, i + 1, lo, hi);
  if (c1 < 0) return [RUNE_ERROR, 1];
  const c2 = cont(s, i + 2);
  if (c2 < 0) return [RUNE_ERROR, 1];
  const c3 = cont(s, i + 3);
  if (c3 < 0) return [RUNE_ERROR, 1];
  return [((c0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3, 4];
}

/** utf8.DecodeLastRuneInString(s[:end]). */
export function decodeLastRune(s: string, end: number = s.length): [number, number] {
  if (end <= 0) return [RUNE_ERROR, 0];
  const last = s.charCodeAt(end - 1);
  if (last < 0x80) return [last, 1];
  const lim = Math.max(0, end - 4);
  let start = end - 1;
  for (start--; start >= lim; start--) {
    const c = s.charCodeAt(start);
    if ((c & 0xc0) !== 0x80) break; // rune start
  }
  if (start < 0) start = 0;
  const [r, size] = decodeRune(s, start);
  if (start + size !== end) return [RUNE_ERROR, 1];
  return [r, size];
}

/** utf8.ValidRune */
export function validRune(r: number): boolean {
  return (r >= 0 && r < 0xd800) || (r > 0xdfff && r <= MAX_RUNE);
}

/** utf8.AppendRune / string(rune): invalid runes encode as U+FFFD. */
export function encodeRune(r: number): string {
  if (r >= 0 && r < 0x80) return String.fromCharCode(r);
  if (!validRune(r)) r = RUNE_ERROR;
  if (r < 0x800) return String.fromCharCode(0xc0 | (r >> 6), 0x80 | (r & 0x3f));
  if (r < 0x10000) return String.fromCharCode(0xe0 | (r >> 12), 0x80 | ((r >> 6) & 0x3f), 0x80 | (r & 0x3f));
  return String.fromCharCode(0xf0 | (r >> 18), 0x80 | ((r >> 12) & 0x3f), 0x80 | ((r >> 6) & 0x3f), 0x80 | (r & 0x3f));
}

/** []rune(s): invalid bytes become U+FFFD. */
export function runesOf(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length;) {
    const [r, size] = decodeRune(s, i);
    out.push(r);
    i += size;
  }
  return out;
}

/** string([]rune) */
export function fromRunes(rs: readonly number[]): string {
  let out = "";
  for (const r of rs) out += encodeRune(r);
  return out;
}

export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length;) {
    i += decodeRune(s, i)[1];
    n++;
  }
  return n;
}

export function validString(s: string): boolean {
  for (let i = 0; i < s.length;) {
    const [r, size] = decodeRune(s, i);
    if (r === RUNE_ERROR && size === 1) return false;
    i += size;
  }
  return true;
}

/** strings.Map: invalid bytes are mapped as U+FFFD; a negative result drops the rune. */
export function mapRunes(s: string, f: (r: number) => number): string {
  let out = "";
  for (let i = 0; i < s.length;) {
    const [r, size] = decodeRune(s, i);
    const m = f(r);
    if (m >= 0) out += encodeRune(m);
    i += size;
  }
  return out;
}
