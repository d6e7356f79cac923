/**
 * Build step (`npm run build`): writes the schema validator as ajv standalone code
 * next to schema.js, stamped with the schema's sha256 so a stale one is never used.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import standaloneCode from "ajv/dist/standalone/index.js";
import { GENERATED_VALIDATOR, createAjv, loadLoaderSchema, schemaSource } from "./schema.js";

export function generateValidator(): string {
  const { sha256 } = schemaSource();
  const ajv = createAjv({ code: { source: true } });
  const validate = ajv.compile(loadLoaderSchema());
  return `${standaloneCode(ajv, validate)}\nmodule.exports.schemaSha256 = ${JSON.stringify(sha256)};\n`;
}

if (require.main === module) {
  fs.writeFileSync(path.join(__dirname, GENERATED_VALIDATOR), generateValidator());
}
