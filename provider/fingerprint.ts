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
 * probability 2^-32. The words go through a 98-byte WebAssembly function (FNV_WORDS_WASM): in
 * JavaScript, before V8 has optimised the loop, half a megabyte took 2-3 ms of a 40 ms start.
 */
export function wordChecksum(data: Uint8Array): string {
  const whole = data.byteLength & ~3;
  let h = fnvWords(data.subarray(0, whole));
  for (let i = whole; i < data.byteLength; i++) h = Math.imul(h ^ data[i]!, FNV_PRIME);
  return hex32(Math.imul(h ^ data.byteLength, FNV_PRIME));
}

/** FNV-1a's step over the little-endian words of `words` (a whole number of them), in JavaScript: the definition. */
export function fnvWordsScript(words: Uint8Array, h: number = FNV_OFFSET_BASIS): number {
  const view = new DataView(words.buffer, words.byteOffset, words.byteLength);
  for (let i = 0; i < words.byteLength; i += 4) h = Math.imul(h ^ view.getUint32(i, true), FNV_PRIME);
  return h;
}

/**
 * The same loop as fnvWordsScript in WebAssembly, whose loads are little-endian on every machine:
 *
 *   (module
 *     (memory (export "memory") 1)
 *     (func (export "fnv1aWords") (param $at i32) (param $end i32) (param $h i32) (result i32)
 *       (block $done (loop $next
 *         (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
 *         (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load (local.get $at))) (i32.const 0x01000193)))
 *         (local.set $at (i32.add (local.get $at) (i32.const 4)))
 *         (br $next)))
 *       (local.get $h)))
 */
const FNV_WORDS_WASM =
  "AGFzbQEAAAABCAFgA39/fwF/AwIBAAUDAQABBxcCBm1lbW9yeQIACmZudjFhV29yZHMAAAosASoAAkADQCAAIAFPDQEgAiAAKAIAc0GTg4AIbCECIABBBGohAAwACwsgAgs=";

interface FnvWordsExports {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  fnv1aWords(at: number, end: number, h: number): number;
}

/** The part of the WebAssembly API used here (its types come with the DOM library, which khook does not compile against). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: unknown };
};

let wasm: FnvWordsExports | null | undefined;

function fnvWordsModule(): FnvWordsExports | null {
  if (wasm === undefined) {
    try {
      const module = new WebAssembly.Module(Buffer.from(FNV_WORDS_WASM, "base64"));
      wasm = new WebAssembly.Instance(module).exports as FnvWordsExports;
    } catch {
      wasm = null;
    }
  }
  return wasm;
}

/** The WebAssembly memory grown to hold at least `bytes`. */
function memoryFor(module: FnvWordsExports, bytes: number): ArrayBuffer {
  const pages = Math.ceil(bytes / 65536) - module.memory.buffer.byteLength / 65536;
  if (pages > 0) module.memory.grow(pages);
  return module.memory.buffer;
}

/**
 * `size` bytes where wordChecksum reads its data in place: a file read into them is checksummed
 * without a copy (the code cache's 0.4 MB on every start, launch.ts). Valid until the next call of
 * either function, which may move the memory.
 */
export function checksumScratch(size: number): Uint8Array {
  const module = fnvWordsModule();
  return module === null ? new Uint8Array(size) : new Uint8Array(memoryFor(module, size), 0, size);
}

/** FNV-1a's step over whole words: WebAssembly, or the script where there is none (node --jitless). */
function fnvWords(words: Uint8Array): number {
  const module = fnvWordsModule();
  if (module === null) return fnvWordsScript(words);
  if (words.buffer === module.memory.buffer)
    return module.fnv1aWords(words.byteOffset, words.byteOffset + words.byteLength, FNV_OFFSET_BASIS);
  new Uint8Array(memoryFor(module, words.byteLength), 0, words.byteLength).set(words);
  return module.fnv1aWords(0, words.byteLength, FNV_OFFSET_BASIS);
}

function hex32(h: number): string {
  return (h >>> 0).toString(16).padStart(8, "0");
}
