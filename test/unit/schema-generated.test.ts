/**
 * schema/v1/khook.json is generated from the definitions (the DSL's and each step kind's) by the
 * build, and committed for editors and for the loader. A hand edit, or a definition changed
 * without regenerating, fails here (and a build under CI, which only checks the file).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { HOOK_EVENTS } from "../../provider/dsl/hook-events.js";
import { generatedValidator, schemaSource } from "../../provider/dsl/schema.js";
import { generateSchemaText, schemaPath, syncSchemaFile } from "../../provider/steps/generate-schema.js";
import { KIND_NAMES } from "../../provider/steps/index.js";

test("the committed schema is what the definitions generate (regenerate it with npm run build)", () => {
  const committed = fs.readFileSync(schemaPath(), "utf8");
  const generated = generateSchemaText();
  if (committed !== generated) {
    const a = committed.split("\n");
    const b = generated.split("\n");
    const line = a.findIndex((l, i) => l !== b[i]);
    assert.fail(
      `schema/v1/khook.json differs from what the definitions generate, first at line ${line + 1}:\n` +
        `  committed: ${a[line] ?? "(end of file)"}\n  generated: ${b[line] ?? "(end of file)"}\n` +
        "Run `npm run build` (or `./dev schema`) and commit the result; never edit the file by hand.",
    );
  }
});

test("the generated validator was made from the committed schema (its stamp is the schema's checksum)", () => {
  // At run time the pair is trusted (dsl/schema.ts, compiledValidator): a pair out of step fails here.
  const generated = generatedValidator();
  assert.ok(generated !== undefined, "npm run build writes dist/provider/dsl/schema-validator.generated.js");
  assert.equal(
    generated.schemaChecksum,
    schemaSource().checksum,
    "the generated validator predates schema/v1/khook.json: run `npm run build`",
  );
});

test("the schema says it is generated, and by which command", () => {
  const schema = JSON.parse(fs.readFileSync(schemaPath(), "utf8")) as { $comment?: string };
  assert.match(schema.$comment ?? "", /Generated .* by the build \(`npm run build`/);
});

test("a build under CI checks the committed schema and never writes it; elsewhere it writes a stale one", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-schema-"));
  const file = path.join(dir, "khook.json");
  fs.writeFileSync(file, "{}\n");
  const checked = syncSchemaFile(file, "generated\n", true);
  assert.equal(checked.state, "stale");
  assert.match(checked.message ?? "", /differs from what the step kinds' definitions generate\. Run `npm run build`/);
  assert.equal(fs.readFileSync(file, "utf8"), "{}\n", "under CI the file is left as committed");
  assert.deepEqual(syncSchemaFile(file, "generated\n", false), { state: "written" });
  assert.equal(fs.readFileSync(file, "utf8"), "generated\n");
  assert.deepEqual(syncSchemaFile(file, "generated\n", true), { state: "unchanged" });
  fs.rmSync(dir, { recursive: true });
});

/** Every node of the schema with its JSON pointer. */
function walk(node: unknown, at = "", out: [string, unknown][] = []): [string, unknown][] {
  out.push([at, node]);
  if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${at}/${i}`, out));
  else if (node !== null && typeof node === "object")
    for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, out);
  return out;
}

// A definition's prose that enumerates the kinds or the events by hand would go stale when one is
// added: every list and every sentence that names several of them must name all of them, which
// only the generated ones (made from the one list) do.
test("every list of step kinds or hook events in the schema is the whole list, in order", () => {
  const schema = JSON.parse(fs.readFileSync(schemaPath(), "utf8")) as unknown;
  const kinds: readonly string[] = KIND_NAMES;
  let lists = 0;
  for (const [at, node] of walk(schema)) {
    if (!Array.isArray(node) || node.length < 2 || !node.every((v) => typeof v === "string")) continue;
    if (node.every((v) => kinds.includes(v as string))) {
      lists++;
      assert.deepEqual(node, kinds, `${at} lists step kinds`);
    }
    if (node.every((v) => (HOOK_EVENTS as readonly string[]).includes(v as string))) {
      lists++;
      assert.deepEqual(node, HOOK_EVENTS, `${at} lists hook events`);
    }
  }
  assert.ok(lists >= 3, `the lists were found (${lists})`);
});

test("every sentence of the schema that lists step kinds or hook events names all of them", () => {
  const schema = JSON.parse(fs.readFileSync(schemaPath(), "utf8")) as unknown;
  const word = (w: string): RegExp => new RegExp(`(?<![\\w-])${w}(?![\\w-])`);
  let kindSentences = 0;
  let eventSentences = 0;
  for (const [at, node] of walk(schema)) {
    if (typeof node !== "string" || at.includes("/enumDescriptions/")) continue;
    // A sentence naming three kinds or more lists them (fewer: it talks about those kinds).
    if (KIND_NAMES.filter((k) => new RegExp(`(?<![\\w-])${k}(?![\\w-])[,)]| or ${k}\\b`).test(node)).length >= 3) {
      kindSentences++;
      for (const k of KIND_NAMES) assert.match(node, word(k), `${at} lists step kinds but not ${k}: ${node}`);
    }
    if (HOOK_EVENTS.filter((e) => word(e).test(node)).length >= 2) {
      eventSentences++;
      for (const e of HOOK_EVENTS) assert.match(node, word(e), `${at} lists hook events but not ${e}: ${node}`);
    }
  }
  assert.ok(kindSentences >= 3 && eventSentences >= 2, `found ${kindSentences} and ${eventSentences} sentences`);
});
