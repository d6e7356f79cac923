/**
 * schema/v1/khook.json is generated from the definitions (the DSL's and each step kind's) by
 * `npm run schema`, and committed for editors and for the loader. A hand edit, or a definition
 * changed without regenerating, fails here.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { test } from "node:test";
import { generateSchemaText, schemaPath } from "../../provider/steps/generate-schema.js";

test("the committed schema is what the definitions generate (regenerate it with npm run schema)", () => {
  const committed = fs.readFileSync(schemaPath(), "utf8");
  const generated = generateSchemaText();
  if (committed !== generated) {
    const a = committed.split("\n");
    const b = generated.split("\n");
    const line = a.findIndex((l, i) => l !== b[i]);
    assert.fail(
      `schema/v1/khook.json differs from what the definitions generate, first at line ${line + 1}:\n` +
        `  committed: ${a[line] ?? "(end of file)"}\n  generated: ${b[line] ?? "(end of file)"}\n` +
        "Run `npm run schema` and commit the result; never edit the file by hand.",
    );
  }
});

test("the schema says it is generated, and by which command", () => {
  const schema = JSON.parse(fs.readFileSync(schemaPath(), "utf8")) as { $comment?: string };
  assert.match(schema.$comment ?? "", /Generated .* by `npm run schema`/);
});
