/** `khook schema` prints the committed JSON Schema byte for byte. */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { main } from "../../provider/cli/main.js";
import { repoRoot } from "./support/spec-files.js";

test("khook schema prints the committed schema byte for byte", async () => {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on("data", (d: Buffer) => chunks.push(d));
  const code = await main(["schema"], { stdout, stderr: new PassThrough(), env: {} });
  assert.equal(code, 0);
  const committed = fs.readFileSync(path.join(repoRoot(), "schema", "v1", "khook.json"));
  const printed = Buffer.concat(chunks);
  // The schema's own text carries example URLs (helm.repo's description) that an output
  // redactor would rewrite; any such change makes the bytes differ.
  assert.ok(committed.includes("://"), "the committed schema has URLs in it, so the comparison can catch a redactor");
  assert.ok(
    printed.equals(committed),
    `khook schema differs from schema/v1/khook.json (printed ${printed.length} bytes, committed ${committed.length})`,
  );
});
