/**
 * The in-process fingerprints (provider/fingerprint.ts): FNV-1a pinned to the published test
 * vectors, and the cache checksum's promise that any one damaged word changes it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { execFileSync } from "node:child_process";
import { checksumScratch, fnv1a32Hex, fnvWordsScript, wordChecksum } from "../../provider/fingerprint.js";

describe("fingerprints", () => {
  test("fnv1a32Hex gives FNV-1a's published 32-bit values", () => {
    // From the FNV reference test suite (http://www.isthe.com/chongo/src/fnv/test_fnv.c).
    assert.equal(fnv1a32Hex(""), "811c9dc5");
    assert.equal(fnv1a32Hex("a"), "e40c292c");
    assert.equal(fnv1a32Hex("foobar"), "bf9cf968");
  });

  test("wordChecksum changes when any one word or trailing byte is damaged, and with the length", () => {
    const data = Buffer.alloc(1027);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const original = wordChecksum(data);
    assert.match(original, /^[0-9a-f]{8}$/);
    for (let i = 0; i < data.length; i++) {
      const damaged = Buffer.from(data);
      damaged[i] = damaged[i]! ^ 0x10;
      assert.notEqual(wordChecksum(damaged), original, `byte ${i}`);
    }
    assert.notEqual(wordChecksum(Buffer.concat([data, Buffer.alloc(4)])), original, "zero words appended");
    assert.notEqual(wordChecksum(data.subarray(0, 1024)), original, "truncated");
  });

  test("wordChecksum reads data at any offset of its buffer the same, as little-endian words", () => {
    const data = Buffer.from("a cache file's data, some bytes long");
    const backing = Buffer.alloc(data.length + 3);
    data.copy(backing, 3);
    assert.equal(wordChecksum(backing.subarray(3)), wordChecksum(data));
    // One word, 0x04030201 read little-endian: (basis ^ word) * prime, then ^ length * prime, mod 2^32.
    const prime = 0x01000193;
    const expected = Math.imul(Math.imul(0x811c9dc5 ^ 0x04030201, prime) ^ 4, prime) >>> 0;
    assert.equal(wordChecksum(Uint8Array.of(1, 2, 3, 4)), expected.toString(16).padStart(8, "0"));
  });

  test("wordChecksum's WebAssembly loop gives the script's value, from one word to past a memory page", () => {
    let seed = 1;
    const random = (): number => (seed = Math.imul(seed, 48271) % 0x7fffffff) & 0xff;
    for (const length of [0, 3, 4, 5, 64, 1000, 65536, 65540, 200_003]) {
      const data = Uint8Array.from({ length }, random);
      const whole = length & ~3;
      let h = fnvWordsScript(data.subarray(0, whole));
      for (let i = whole; i < length; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
      const expected = (Math.imul(h ^ length, 0x01000193) >>> 0).toString(16).padStart(8, "0");
      assert.equal(wordChecksum(data), expected, `${length} bytes`);
    }
  });

  test("data in checksumScratch is checksummed where it lies, at any offset, as a copy of it would be", () => {
    let seed = 7;
    const random = (): number => (seed = Math.imul(seed, 48271) % 0x7fffffff) & 0xff;
    for (const length of [9, 1000, 65_537, 300_001]) {
      const data = Uint8Array.from({ length }, random);
      // Taken first: a checksum of data elsewhere is computed in the same memory, over the scratch.
      const expected = [0, 1, 8].map((skip) => wordChecksum(data.subarray(skip)));
      for (const [i, skip] of [0, 1, 8].entries()) {
        const scratch = checksumScratch(length);
        scratch.set(data);
        assert.equal(wordChecksum(scratch.subarray(skip)), expected[i], `${length} bytes from ${skip}`);
      }
      // A larger scratch grows (and so moves) the memory: the checksum still reads what it is given.
      const larger = checksumScratch(length * 2 + 65_536);
      larger.set(data, 3);
      assert.equal(wordChecksum(larger.subarray(3, 3 + length)), expected[0], `${length} bytes, moved`);
    }
  });

  test("without WebAssembly (node --jitless) wordChecksum falls back to the script and gives the same value", () => {
    const data = Buffer.from("a checksum that must not depend on how it was computed, 61 bytes");
    const script = `process.stdout.write(require(${JSON.stringify(require.resolve("../../provider/fingerprint.js"))}).wordChecksum(Buffer.from(${JSON.stringify(data.toString())})) + " " + typeof WebAssembly)`;
    const out = execFileSync(process.execPath, ["--jitless", "-e", script], { encoding: "utf8" });
    assert.equal(out, `${wordChecksum(data)} undefined`);
  });
});
