/** Go's unicode package predicates and simple case mapping, backed by tables generated from Go. */
import {
  CASE_RANGES,
  DIGIT_RANGES,
  LETTER_RANGES,
  LOWER_RANGES,
  NUMBER_RANGES,
  PRINT_RANGES,
  PUNCT_RANGES,
  SPACE_RANGES,
  TITLE_RANGES,
  UPPER_RANGES,
} from "./unicode-tables.js";

type RangeTable = { starts: Int32Array; ends: Int32Array; latin1: Uint8Array };

function decode(encoded: string): RangeTable {
  const parts = encoded === "" ? [] : encoded.split(",");
  const starts = new Int32Array(parts.length);
  const ends = new Int32Array(parts.length);
  let prevEnd = 0;
  parts.forEach((p, i) => {
    const [gap, len] = p.split(".");
    const start = prevEnd + parseInt(gap ?? "0", 36);
    const end = start + parseInt(len ?? "0", 36); // exclusive
    starts[i] = start;
    ends[i] = end;
    prevEnd = end;
  });
  const latin1 = new Uint8Array(256);
  for (let r = 0; r < 256; r++) latin1[r] = search(starts, ends, r) ? 1 : 0;
  return { starts, ends, latin1 };
}

function search(starts: Int32Array, ends: Int32Array, r: number): boolean {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (r < starts[m]!) hi = m;
    else if (r >= ends[m]!) lo = m + 1;
    else return true;
  }
  return false;
}

function lazy(encoded: string): (r: number) => boolean {
  let t: RangeTable | undefined;
  return (r: number) => {
    t ??= decode(encoded);
    if (r < 0) return false;
    if (r < 256) return t.latin1[r] === 1;
    return search(t.starts, t.ends, r);
  };
}

export const isLetter = lazy(LETTER_RANGES);
export const isDigit = lazy(DIGIT_RANGES);
export const isNumber = lazy(NUMBER_RANGES);
export const isUpper = lazy(UPPER_RANGES);
export const isLower = lazy(LOWER_RANGES);
export const isTitle = lazy(TITLE_RANGES);
export const isPunct = lazy(PUNCT_RANGES);
/** unicode.IsPrint (identical to strconv.IsPrint; the generator checks that). */
export const isPrint = lazy(PRINT_RANGES);
export const isSpace = lazy(SPACE_RANGES);

const UPPER_LOWER = 0x110000;
const UPPER_CASE = 0;
const LOWER_CASE = 1;
const TITLE_CASE = 2;

function to(which: number, r: number): number {
  let lo = 0;
  let hi = CASE_RANGES.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    const cr = CASE_RANGES[m]!;
    if (cr[0] <= r && r <= cr[1]) {
      const delta = cr[2 + which]!;
      if (delta > 0x10ffff || delta === UPPER_LOWER) {
        return cr[0] + (((r - cr[0]) & ~1) | (which & 1));
      }
      return r + delta;
    }
    if (r < cr[0]) hi = m;
    else lo = m + 1;
  }
  return r;
}

export function toUpper(r: number): number {
  if (r < 0x80) return r >= 0x61 && r <= 0x7a ? r - 32 : r;
  return to(UPPER_CASE, r);
}

export function toLower(r: number): number {
  if (r < 0x80) return r >= 0x41 && r <= 0x5a ? r + 32 : r;
  return to(LOWER_CASE, r);
}

export function toTitle(r: number): number {
  if (r < 0x80) return r >= 0x61 && r <= 0x7a ? r - 32 : r;
  return to(TITLE_CASE, r);
}
