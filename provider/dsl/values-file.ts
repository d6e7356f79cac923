/**
 * A helm values document, parsed the way helm parses `-f` files (YAML 1.1 scalars:
 * `yes`/`on` are booleans). Pure, so that the loader can reject a malformed local
 * valuesFrom file at validation and the helm executor reads url: sources by the same rule.
 */
import { boundedToJS, yamlLibrary } from "./yaml.js";

export type ValuesParse = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** An empty document is an empty map; a second document, invalid YAML or anything but a mapping is a problem. */
export function parseValuesDocument(text: string, origin: string): ValuesParse {
  // logLevel "error": the library's warnings (e.g. a `{{ .Values.x }}` key) would go straight to stderr.
  const docs = yamlLibrary().parseAllDocuments(text, { version: "1.1", prettyErrors: false, logLevel: "error" });
  const list = Array.isArray(docs) ? docs : [];
  const nonEmpty = list.filter((d) => d.contents !== null || d.errors.length > 0);
  if (nonEmpty.length === 0) return { ok: true, value: {} };
  const doc = nonEmpty[0]!;
  const err = doc.errors[0];
  if (err) return { ok: false, message: `values from ${origin} are not valid YAML: ${err.message.split("\n")[0]}` };
  if (nonEmpty.length > 1)
    return {
      ok: false,
      message: `values from ${origin} hold ${nonEmpty.length} YAML documents; a values file is one mapping`,
    };
  const js = boundedToJS(doc);
  if ("problem" in js) return { ok: false, message: `values from ${origin}: ${js.problem.message}` };
  const value = js.value;
  if (value === null || value === undefined) return { ok: true, value: {} };
  if (typeof value !== "object" || Array.isArray(value)) {
    return {
      ok: false,
      message: `values from ${origin} must be a mapping (key: value), not ${Array.isArray(value) ? "a list" : `a ${typeof value}`}`,
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
