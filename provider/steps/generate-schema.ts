/**
 * The build's step (and `npm run schema`'s) that writes schema/v1/khook.json, the JSON Schema
 * editors and the loader read, from the DSL's definitions and every step kind's
 * (dsl/schema-assembly.ts). The file is committed, so under CI (`CI` set) this only checks it and
 * fails when it differs: a clean clone's build must not quietly repair a schema nobody committed.
 * test/unit/schema-generated.test.ts checks the same. Build time only: it loads typebox.
 */
import fs from "node:fs";
import path from "node:path";
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

/**
 * Brings `file` to `text`, or with `checkOnly` (under CI) only says whether it differs: returns
 * what happened, and the message for a stale file that was not written.
 */
export function syncSchemaFile(
  file: string,
  text: string,
  checkOnly: boolean,
): { state: "unchanged" | "written" | "stale"; message?: string } {
  const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  if (before === text) return { state: "unchanged" };
  if (checkOnly)
    return {
      state: "stale",
      message: `khook: ${file} differs from what the step kinds' definitions generate. Run \`npm run build\` (or \`./dev schema\`) and commit the file.`,
    };
  fs.writeFileSync(file, text);
  return { state: "written" };
}

if (require.main === module) {
  const file = schemaPath();
  const ci = process.env["CI"] ?? "";
  const result = syncSchemaFile(file, generateSchemaText(), ci !== "" && ci !== "false");
  if (result.state === "stale") {
    process.stderr.write(`${result.message}\n`);
    process.exit(1);
  }
  if (result.state === "written") process.stdout.write(`${path.relative(process.cwd(), file)}: written\n`);
}
