/**
 * Valid YAML is parsed by js-yaml's core schema for speed and by the `yaml` library when
 * positions are needed: both must give the same value, or the hash and validation would
 * depend on which path ran.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { CORE_SCHEMA, loadAll } from "js-yaml";
import { parseAllDocuments } from "yaml";
import { generateSpec } from "../harness/generated-spec.js";
import { repoRoot } from "./support/spec-files.js";

function both(text: string): { fast: unknown[] | Error; positioned: unknown[] | Error } {
  let fast: unknown[] | Error;
  try {
    fast = loadAll(text, null, { schema: CORE_SCHEMA }) as unknown[];
  } catch (e) {
    fast = e as Error;
  }
  const docs = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [];
  const positioned = list.some((d) => d.errors.length > 0)
    ? new Error("yaml error")
    : list.map((d) => d.toJS() as unknown);
  return { fast, positioned };
}

function assertSame(text: string): void {
  const { fast, positioned } = both(text);
  if (fast instanceof Error || positioned instanceof Error) {
    assert.ok(
      fast instanceof Error && positioned instanceof Error,
      `only one parser rejects ${JSON.stringify(text)}: ${String(fast instanceof Error ? fast.message : (positioned as Error).message)}`,
    );
    return;
  }
  assert.deepStrictEqual(fast, positioned, JSON.stringify(text));
}

test("yaml parity: every example, manifest and values file parses to the same value both ways", () => {
  const root = path.join(repoRoot(), "examples");
  const files = fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name) && !/templates/.test(e.parentPath));
  assert.ok(files.length > 10);
  for (const f of files) assertSame(fs.readFileSync(path.join(f.parentPath, f.name), "utf8"));
});

test("yaml parity: generated specs parse to the same value both ways", () => {
  assertSame(generateSpec(300));
});

test("yaml parity: core-schema scalars (numbers, booleans, nulls, octal, hex, special floats, quoting)", () => {
  for (const v of [
    "017",
    "0o17",
    "0x1F",
    "+12",
    "-0",
    "1e3",
    ".5",
    "1.",
    ".inf",
    "-.Inf",
    ".NaN",
    "1_000",
    "0b101",
    "yes",
    "No",
    "on",
    "True",
    "FALSE",
    "~",
    "null",
    "Null",
    "",
    "'x'",
    '"a\\tb\\u00e9"',
    "2024-01-01",
    "12:30",
    "!!str 5",
    "!!int '7'",
  ]) {
    assertSame(`a: ${v}\n`);
  }
  assertSame("a: &x {b: 1}\nc: *x\n<<: {d: 2}\n");
  assertSame("a: |\n  line\n  two\nb: >-\n  folded\n  text\n");
  assertSame("a: 1\na: 2\n");
  assertSame("- [1, {a: b}]\n- {c: [d, e]}\n---\nsecond: doc\n");
});

test("yaml parity: arbitrary flat maps of scalars (property)", () => {
  const scalar = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 12 }),
  );
  fc.assert(
    fc.property(
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }).filter((k) => /^[a-z][a-z0-9]*$/.test(k)),
        scalar,
        { maxKeys: 6 },
      ),
      (obj) => {
        const text = Object.entries(obj)
          .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
          .join("\n");
        assertSame(text);
      },
    ),
  );
});
