/**
 * `npm run schema`: writes schema/v1/khook.json, the JSON Schema editors and the loader read,
 * from the DSL's definitions and every step kind's (dsl/schema-assembly.ts). The file is
 * committed; test/unit/schema-generated.test.ts fails when it differs from what this writes.
 * Build time only: it loads typebox.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { assembleSchema, printSchema } from "../dsl/schema-assembly.js";
import type { KindDefinition } from "./contract.js";
import { KINDS, KIND_NAMES } from "./index.js";

/** The schema's text, as committed. */
export function generateSchemaText(): string {
  return printSchema(
    assembleSchema(KIND_NAMES.map((name) => ({ name, ...definitionOf(name), defaults: KINDS[name].defaults }))),
  );
}

/** A kind's definition: DEFINITION of steps/<kind>/definition.ts, beside its kind.ts. */
function definitionOf(name: string): KindDefinition {
  const file = path.join(__dirname, name, "definition.js");
  const definition = fs.existsSync(file) ? (require(file) as { DEFINITION?: KindDefinition }).DEFINITION : undefined;
  if (definition === undefined)
    throw new Error(
      `khook: the ${name} kind has no definition: write provider/steps/${name}/definition.ts exporting DEFINITION (its block's schema and type)`,
    );
  return definition;
}

/** Where the committed schema lives, from provider/steps/ or dist/provider/steps/. */
export function schemaPath(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("khook: cannot find the project root above " + __dirname);
    dir = parent;
  }
  return path.join(dir, "schema", "v1", "khook.json");
}

if (require.main === module) {
  const file = schemaPath();
  const text = generateSchemaText();
  const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  if (before !== text) fs.writeFileSync(file, text);
  process.stdout.write(`${path.relative(process.cwd(), file)}: ${before === text ? "unchanged" : "written"}\n`);
}
