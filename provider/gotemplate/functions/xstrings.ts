/** A port of huandu/xstrings v1.5.0 ToSnakeCase, ToKebabCase and ToPascalCase (sprig's camelcase). */
import { decodeRune, encodeRune, RUNE_ERROR } from "../gostring.js";
import { isLetter, isNumber, isPunct, isSpace, isUpper, toLower, toUpper } from "../unicode.js";

const isConnector = (r: number): boolean => r === 0x2d || r === 0x5f || isSpace(r);

function isAlphabet(r: number): boolean {
  if (!isLetter(r)) return false;
  if (r < 0x3400) return true;
  if (r >= 0x4e00 && r <= 0x9fcc) return false;
  if (r >= 0x3400 && r <= 0x4d85) return false;
  if (r >= 0x20000 && r <= 0x2b81d) return false;
  return true;
}

export function camelCase(str: string): string {
  return toCamelCase(str, true);
}

function toCamelCase(str: string, isBig: boolean): string {
  if (str.length === 0) return "";
  let buf = "";
  let isFirstRuneUpper = false;
  let r0 = 0;
  let r1 = 0;
  let size = 0;
  while (str.length > 0) {
    [r0, size] = decodeRune(str, 0);
    str = str.slice(size);
    if (!isConnector(r0)) {
      isFirstRuneUpper = isUpper(r0);
      r0 = isBig ? toUpper(r0) : toLower(r0);
      break;
    }
    buf += encodeRune(r0);
  }
  if (str.length === 0) {
    if (size !== 0) buf += encodeRune(r0);
    return buf;
  }
  while (str.length > 0) {
    r1 = r0;
    [r0, size] = decodeRune(str, 0);
    str = str.slice(size);
    if (isConnector(r0) && isConnector(r1)) {
      buf += encodeRune(r1);
      continue;
    }
    if (isConnector(r1)) {
      isFirstRuneUpper = isUpper(r0);
      r0 = toUpper(r0);
    } else {
      if (isFirstRuneUpper) {
        if (isUpper(r0)) r0 = toLower(r0);
        else isFirstRuneUpper = false;
      }
      buf += encodeRune(r1);
    }
  }
  if (isFirstRuneUpper && !isBig) r0 = toLower(r0);
  buf += encodeRune(r0);
  return buf;
}

const enum WT {
  invalid,
  number,
  upperCase,
  alphabet,
  connector,
  punct,
  other,
}

function nextValidRune(str: string, prev: number): [number, number] {
  let size = 0;
  let i = 0;
  while (i < str.length) {
    const [r, sz] = decodeRune(str, i);
    size += sz;
    if (r !== RUNE_ERROR) return [r, size];
    i += sz;
  }
  return [prev, size];
}

function nextWord(str: string): [WT, string, string] {
  if (str.length === 0) return [WT.invalid, "", ""];
  let offset = 0;
  let remaining = str;
  let [r, size] = nextValidRune(remaining, RUNE_ERROR);
  offset += size;
  if (r === RUNE_ERROR) return [WT.invalid, str.slice(0, offset), str.slice(offset)];
  let wt: WT;
  if (isConnector(r)) {
    wt = WT.connector;
    remaining = remaining.slice(size);
    while (remaining.length > 0) {
      [r, size] = nextValidRune(remaining, r);
      if (!isConnector(r)) break;
      offset += size;
      remaining = remaining.slice(size);
    }
  } else if (isPunct(r)) {
    wt = WT.punct;
    remaining = remaining.slice(size);
    while (remaining.length > 0) {
      [r, size] = nextValidRune(remaining, r);
      if (!isPunct(r)) break;
      offset += size;
      remaining = remaining.slice(size);
    }
  } else if (isUpper(r)) {
    wt = WT.upperCase;
    remaining = remaining.slice(size);
    if (remaining.length > 0) {
      [r, size] = nextValidRune(remaining, r);
      if (isUpper(r)) {
        let prevSize = size;
        offset += size;
        remaining = remaining.slice(size);
        while (remaining.length > 0) {
          [r, size] = nextValidRune(remaining, r);
          if (!isUpper(r)) break;
          prevSize = size;
          offset += size;
          remaining = remaining.slice(size);
        }
        if (remaining.length > 0 && isAlphabet(r)) {
          offset -= prevSize;
          remaining = str.slice(offset);
        }
      } else if (isAlphabet(r)) {
        offset += size;
        remaining = remaining.slice(size);
        while (remaining.length > 0) {
          [r, size] = nextValidRune(remaining, r);
          if (!isAlphabet(r) || isUpper(r)) break;
          offset += size;
          remaining = remaining.slice(size);
        }
      }
    }
  } else if (isAlphabet(r)) {
    wt = WT.alphabet;
    remaining = remaining.slice(size);
    while (remaining.length > 0) {
      [r, size] = nextValidRune(remaining, r);
      if (!isAlphabet(r) || isUpper(r)) break;
      offset += size;
      remaining = remaining.slice(size);
    }
  } else if (isNumber(r)) {
    wt = WT.number;
    remaining = remaining.slice(size);
    while (remaining.length > 0) {
      [r, size] = nextValidRune(remaining, r);
      if (!isNumber(r)) break;
      offset += size;
      remaining = remaining.slice(size);
    }
  } else {
    wt = WT.other;
    remaining = remaining.slice(size);
    while (remaining.length > 0) {
      [r, size] = nextValidRune(remaining, r);
      if (size === 0 || isConnector(r) || isAlphabet(r) || isNumber(r) || isPunct(r)) break;
      offset += size;
      remaining = remaining.slice(size);
    }
  }
  return [wt, str.slice(0, offset), remaining];
}

function lowerWord(wt: WT, s: string, connector: number): string {
  if (wt !== WT.upperCase && wt !== WT.connector) return s;
  let out = "";
  for (let i = 0; i < s.length;) {
    const [r, size] = decodeRune(s, i);
    i += size;
    if (isConnector(r)) out += encodeRune(connector);
    else if (isUpper(r)) out += encodeRune(toLower(r));
    else out += encodeRune(r);
  }
  return out;
}

function camelCaseToLowerCase(str: string, connector: number): string {
  if (str.length === 0) return "";
  let buf = "";
  const conn = encodeRune(connector);
  let [wt, word, remaining] = nextWord(str);
  while (remaining.length > 0) {
    if (wt !== WT.connector) buf += lowerWord(wt, word, connector);
    const prev = wt;
    const last = word;
    [wt, word, remaining] = nextWord(remaining);
    switch (prev) {
      case WT.number:
        while (wt === WT.alphabet || wt === WT.number) {
          buf += lowerWord(wt, word, connector);
          [wt, word, remaining] = nextWord(remaining);
        }
        if (wt !== WT.invalid && wt !== WT.punct && wt !== WT.connector) buf += conn;
        break;
      case WT.connector:
        buf += lowerWord(prev, last, connector);
        break;
      case WT.punct:
        break;
      default: {
        if (wt !== WT.number) {
          if (wt !== WT.connector && wt !== WT.punct) buf += conn;
          break;
        }
        if (remaining.length === 0) break;
        const last2 = word;
        [wt, word, remaining] = nextWord(remaining);
        if (wt !== WT.alphabet) {
          buf += lowerWord(WT.number, last2, connector);
          if (wt !== WT.connector && wt !== WT.punct) buf += conn;
          break;
        }
        buf += conn;
        buf += lowerWord(WT.number, last2, connector);
        while (wt === WT.alphabet || wt === WT.number) {
          buf += lowerWord(wt, word, connector);
          [wt, word, remaining] = nextWord(remaining);
        }
        if (wt !== WT.invalid && wt !== WT.connector && wt !== WT.punct) buf += conn;
      }
    }
  }
  buf += lowerWord(wt, word, connector);
  return buf;
}

export function snakeCase(s: string): string {
  return camelCaseToLowerCase(s, 0x5f);
}

export function kebabCase(s: string): string {
  return camelCaseToLowerCase(s, 0x2d);
}
