/** sprig's encoding and hashing functions, with Go's base64/base32 decoders (and their error texts). */
import { createHash } from "node:crypto";
import { def } from "../conv.js";
import { fromBytes, toBytes } from "../gostring.js";
import { type FuncDef, T_STRING } from "../values.js";

const S = T_STRING;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function decodeMap(alphabet: string): Int16Array {
  const m = new Int16Array(256).fill(-1);
  for (let i = 0; i < alphabet.length; i++) m[alphabet.charCodeAt(i)] = i;
  return m;
}
const B64_MAP = decodeMap(B64);
const B32_MAP = decodeMap(B32);

class CorruptInputError extends Error {
  constructor(offset: number) {
    super("illegal base64 data at input byte " + offset);
  }
}

/** base64.StdEncoding.DecodeString; throws CorruptInputError. */
export function base64Decode(src: string): string {
  const out: number[] = [];
  let si = 0;
  const pad = 0x3d;
  while (si < src.length) {
    const dbuf = [0, 0, 0, 0];
    let dlen = 4;
    let err: CorruptInputError | undefined;
    for (let j = 0; j < 4; j++) {
      if (src.length === si) {
        if (j === 0) return fromBytes(Uint8Array.from(out));
        throw new CorruptInputError(si - j);
      }
      const inc = src.charCodeAt(si);
      si++;
      const o = B64_MAP[inc]!;
      if (o >= 0) {
        dbuf[j] = o;
        continue;
      }
      if (inc === 0x0a || inc === 0x0d) {
        j--;
        continue;
      }
      if (inc !== pad) throw new CorruptInputError(si - 1);
      switch (j) {
        case 0:
        case 1:
          throw new CorruptInputError(si - 1);
        case 2:
          while (si < src.length && (src.charCodeAt(si) === 0x0a || src.charCodeAt(si) === 0x0d)) si++;
          if (si === src.length) throw new CorruptInputError(src.length);
          if (src.charCodeAt(si) !== pad) throw new CorruptInputError(si - 1);
          si++;
      }
      while (si < src.length && (src.charCodeAt(si) === 0x0a || src.charCodeAt(si) === 0x0d)) si++;
      if (si < src.length) err = new CorruptInputError(si);
      dlen = j;
      break;
    }
    const val = (dbuf[0]! << 18) | (dbuf[1]! << 12) | (dbuf[2]! << 6) | dbuf[3]!;
    const b = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
    if (dlen >= 2) out.push(b[0]!);
    if (dlen >= 3) out.push(b[1]!);
    if (dlen >= 4) out.push(b[2]!);
    if (err) throw err;
    if (dlen < 4) break;
  }
  return fromBytes(Uint8Array.from(out));
}

/** base32.StdEncoding.DecodeString; throws an Error with Go's text. */
function base32Decode(s: string): string {
  const src = s.replace(/[\r\n]/g, "");
  const olen = src.length;
  const corrupt = (n: number): Error => new Error("illegal base32 data at input byte " + n);
  const out: number[] = [];
  let rest = src;
  let end = false;
  while (rest.length > 0 && !end) {
    const dbuf = [0, 0, 0, 0, 0, 0, 0, 0];
    let dlen = 8;
    for (let j = 0; j < 8;) {
      if (rest.length === 0) throw corrupt(olen - rest.length - j);
      const inc = rest.charCodeAt(0);
      rest = rest.slice(1);
      if (inc === 0x3d && j >= 2 && rest.length < 8) {
        if (rest.length + j < 8 - 1) throw corrupt(olen);
        for (let k = 0; k < 8 - 1 - j; k++) {
          if (rest.length > k && rest.charCodeAt(k) !== 0x3d) throw corrupt(olen - rest.length + k - 1);
        }
        dlen = j;
        end = true;
        if (dlen === 1 || dlen === 3 || dlen === 6) throw corrupt(olen - rest.length - 1);
        break;
      }
      const v = B32_MAP[inc]!;
      if (v < 0) throw corrupt(olen - rest.length - 1);
      dbuf[j] = v;
      j++;
    }
    const d = dbuf as [number, number, number, number, number, number, number, number];
    const bytes = [
      ((d[0] << 3) | (d[1] >> 2)) & 0xff,
      ((d[1] << 6) | (d[2] << 1) | (d[3] >> 4)) & 0xff,
      ((d[3] << 4) | (d[4] >> 1)) & 0xff,
      ((d[4] << 7) | (d[5] << 2) | (d[6] >> 3)) & 0xff,
      ((d[6] << 5) | d[7]) & 0xff,
    ];
    const n = { 8: 5, 7: 4, 5: 3, 4: 2, 2: 1 }[dlen] ?? 0;
    out.push(...bytes.slice(0, n));
  }
  return fromBytes(Uint8Array.from(out));
}

function base32Encode(s: string): string {
  const b = toBytes(s);
  let out = "";
  for (let i = 0; i < b.length; i += 5) {
    const chunk = [...b.subarray(i, i + 5)];
    const n = chunk.length;
    while (chunk.length < 5) chunk.push(0);
    let bits = 0n;
    for (const c of chunk) bits = (bits << 8n) | BigInt(c);
    let enc = "";
    for (let k = 7; k >= 0; k--) enc += B32[Number((bits >> BigInt(k * 5)) & 31n)];
    const keep = { 1: 2, 2: 4, 3: 5, 4: 7, 5: 8 }[n]!;
    out += enc.slice(0, keep) + "=".repeat(8 - keep);
  }
  return out;
}

function adler32(b: Uint8Array): number {
  let a = 1;
  let c = 0;
  for (const x of b) {
    a = (a + x) % 65521;
    c = (c + a) % 65521;
  }
  return ((c << 16) | a) >>> 0;
}

const hash = (alg: string) => (s: string) => createHash(alg).update(toBytes(s)).digest("hex");

export const encodingFunctions: Record<string, FuncDef> = {
  b64enc: def([S], ([s]) => toBytes(s as string).toString("base64")),
  b64dec: def([S], ([s]) => {
    try {
      return base64Decode(s as string);
    } catch (e) {
      return (e as Error).message;
    }
  }),
  b32enc: def([S], ([s]) => base32Encode(s as string)),
  b32dec: def([S], ([s]) => {
    try {
      return base32Decode(s as string);
    } catch (e) {
      return (e as Error).message;
    }
  }),
  sha1sum: def([S], ([s]) => hash("sha1")(s as string)),
  sha256sum: def([S], ([s]) => hash("sha256")(s as string)),
  sha512sum: def([S], ([s]) => hash("sha512")(s as string)),
  adler32sum: def([S], ([s]) => String(adler32(toBytes(s as string)))),
};
