import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { unifiedDiff } from "../../provider/text-diff.js";

/** Applies a unified diff to the old text: the diff is correct iff this gives the new text. */
function applyUnified(oldText: string, diff: string): string {
  const a = oldText === "" ? [] : oldText.replace(/\n$/, "").split("\n");
  const out: string[] = [];
  let ai = 0;
  for (const line of diff.split("\n").slice(2)) {
    const m = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line);
    if (m) {
      const start = Number(m[2]) === 0 ? Number(m[1]) : Number(m[1]) - 1;
      while (ai < start) out.push(a[ai++]!);
      continue;
    }
    if (line.startsWith(" ")) {
      out.push(a[ai++]!);
    } else if (line.startsWith("-")) ai++;
    else if (line.startsWith("+")) out.push(line.slice(1));
  }
  while (ai < a.length) out.push(a[ai++]!);
  return out.length ? `${out.join("\n")}\n` : "";
}

test("unified diff: equal texts give no diff", () => {
  assert.equal(unifiedDiff("a\nb\n", "a\nb\n", { old: "x", new: "y" }), "");
});

test("unified diff: a changed line shows as - and + with context", () => {
  const d = unifiedDiff("a\nb\nc\n", "a\nB\nc\n", { old: "live", new: "dry-run" });
  assert.equal(d, "--- live\n+++ dry-run\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
});

test("unified diff: applying the diff to the old text gives the new text (property)", () => {
  const lines = fc
    .array(fc.constantFrom("a", "b", "c", "d", "e"), { maxLength: 30 })
    .map((l) => (l.length ? `${l.join("\n")}\n` : ""));
  fc.assert(
    fc.property(
      lines,
      lines,
      (x, y) => applyUnified(x, unifiedDiff(x, y, { old: "o", new: "n" }) || "--- o\n+++ n\n") === y,
    ),
  );
});
