/**
 * Build step (`npm run build`): writes the schema validator as ajv standalone code
 * next to schema.js, stamped with the schema's checksum so a stale one is never used.
 */
import fs from "node:fs";
import path from "node:path";
import standaloneCode from "ajv/dist/standalone/index.js";
import { GENERATED_VALIDATOR, createAjv, loadLoaderSchema, schemaSource } from "./schema.js";

export function generateValidator(): string {
  const { checksum } = schemaSource();
  const ajv = createAjv({ code: { source: true } });
  const validate = ajv.compile(loadLoaderSchema());
  return `${standaloneCode(ajv, validate)}\nmodule.exports.schemaChecksum = ${JSON.stringify(checksum)};\n`;
}

if (require.main === module) {
  fs.writeFileSync(path.join(__dirname, GENERATED_VALIDATOR), generateValidator());
}
