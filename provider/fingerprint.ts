/**
 * Fingerprints that guard nothing against an adversary: a cache file's name and its integrity
 * check (cli/launch.ts), and the stamp that ties the generated schema validator to the schema it
 * was built from (dsl/schema.ts). Pure JavaScript, because loading
 * node:crypto (or node:zlib for its crc32) costs a short command like `khook validate` more than
 * everything it does with its spec. Anything stored or compared across runs that must not collide
 * by design (step hashes, the spec hash) stays SHA-256 (dsl/hash.ts).
 */

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a (32 bits) of a string's UTF-16 code units, as 8 hex digits. */
export function fnv1a32Hex(text: string): string {
  let h = FNV_OFFSET_BASIS;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return hex32(h);
}

/**
 * A checksum of `data` as 8 hex digits: FNV-1a's step taken over little-endian 32-bit words (the
 * last 0-3 bytes one by one), then the length. Each step is a bijection of the running value, so
 * one damaged word always changes the result, and any other damage leaves it unchanged with
 * probability 2^-32. Word by word it reads half a megabyte in a millisecond or two, before V8 has
 * optimised it.
 */
export function wordChecksum(data: Uint8Array): string {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const whole = data.byteLength & ~3;
  let h = FNV_OFFSET_BASIS;
  for (let i = 0; i < whole; i += 4) h = Math.imul(h ^ view.getUint32(i, true), FNV_PRIME);
  for (let i = whole; i < data.byteLength; i++) h = Math.imul(h ^ data[i]!, FNV_PRIME);
  return hex32(Math.imul(h ^ data.byteLength, FNV_PRIME));
}

function hex32(h: number): string {
  return (h >>> 0).toString(16).padStart(8, "0");
}
