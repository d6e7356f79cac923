// When khook's client-side apply gives way to server-side apply: exactly when the API server would
// refuse the last-applied copy (`metadata.annotations: Too long`), counted as the API server counts.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ANNOTATIONS_LIMIT_BYTES,
  LAST_APPLIED_ANNOTATION,
  lastAppliedTooLarge,
  withLastApplied,
} from "../../provider/kubectl/lastapplied.js";

/** A ConfigMap whose annotations (with the last-applied copy) come to exactly `total` bytes. */
function sized(total: number, blobChar = "x") {
  const base = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "x", annotations: { note: "" } },
    data: { blob: "" },
  };
  const size = (o: typeof base) =>
    Object.entries(withLastApplied(o).metadata!.annotations!).reduce(
      (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v),
      0,
    );
  const empty = size(base);
  // Each blob character appears once in data (not counted) and once in the last-applied copy (counted).
  const perChar = Buffer.byteLength(blobChar);
  const chars = Math.floor((total - empty) / perChar);
  const o = structuredClone(base);
  o.data.blob = blobChar.repeat(chars);
  o.metadata.annotations.note = "n".repeat(total - empty - chars * perChar);
  // The note also appears in the copy: trim back until the size is exact.
  while (size(o) > total) o.metadata.annotations.note = o.metadata.annotations.note.slice(1);
  while (size(o) < total) o.data.blob += blobChar.length === 1 ? blobChar : "x";
  assert.equal(size(o), total);
  return o;
}

test("annotations (last-applied copy included) of exactly 256 KiB still apply client-side; one byte more goes server-side", () => {
  assert.equal(ANNOTATIONS_LIMIT_BYTES, 262144);
  assert.equal(lastAppliedTooLarge(sized(ANNOTATIONS_LIMIT_BYTES)), false);
  assert.equal(lastAppliedTooLarge(sized(ANNOTATIONS_LIMIT_BYTES + 1)), true);
});

test("bytes, not characters, count: a multi-byte text crosses the limit with fewer characters", () => {
  const blob = "é".repeat(140_000); // 280,000 bytes, 140,000 characters
  const o = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { blob } };
  assert.equal(lastAppliedTooLarge(o), true);
  assert.equal(lastAppliedTooLarge({ ...o, data: { blob: "e".repeat(140_000) } }), false);
});

test("an old last-applied annotation on the manifest is not counted twice", () => {
  const o = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "x", annotations: { [LAST_APPLIED_ANNOTATION]: "y".repeat(200_000) } },
    data: { a: "1" },
  };
  assert.equal(lastAppliedTooLarge(o), false);
});
