/**
 * `npm run schema`: writes schema/v1/khook.json, the JSON Schema editors and the loader read,
 * from the DSL's definitions and every step kind's (dsl/schema-assembly.ts). The file is
 * committed; test/unit/schema-generated.test.ts fails when it differs from what this writes.
 * Build time only: it loads typebox.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { assembleSchema, printSchema } from "../dsl/schema-assembly.js";
import * as helm from "./helm/definition.js";
import * as apply from "./apply/definition.js";
import * as del from "./delete/definition.js";
import * as patch from "./patch/definition.js";
import * as wait from "./wait/definition.js";
import * as rollout from "./rollout/definition.js";
import * as job from "./job/definition.js";

/** The schema's text, as committed. */
export function generateSchemaText(): string {
  const kinds = [
    { name: "helm", action: helm.action, defs: helm.DEFS },
    { name: "apply", action: apply.action, defs: apply.DEFS },
    { name: "delete", action: del.action, defs: del.DEFS },
    { name: "patch", action: patch.action, defs: patch.DEFS },
    { name: "wait", action: wait.action, defs: wait.DEFS },
    { name: "rollout", action: rollout.action, defs: rollout.DEFS },
    { name: "job", action: job.action, defs: job.DEFS },
  ];
  return printSchema(assembleSchema(kinds));
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
