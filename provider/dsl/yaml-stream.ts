/**
 * Multi-document YAML streams (manifests), parsed once per distinct text:
 * validation, hashing and the apply step all read the same inline manifests.
 */
import { CORE_SCHEMA, loadAll } from "js-yaml";
import { boundedToJS, mayHoldAlias, yamlLibrary } from "./yaml.js";

export type StreamDocument = { value: unknown; error?: undefined } | { value?: undefined; error: string };

const cache = new Map<string, readonly StreamDocument[]>();
const MAX_CACHED = 2000;

/** Each document's value, or the first line of its YAML error. Callers must not mutate the values. */
export function parseYamlStream(text: string): readonly StreamDocument[] {
  let docs = cache.get(text);
  if (docs === undefined) {
    docs = fastStream(text) ?? positionedStream(text);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(text, docs);
  }
  return docs;
}

/** js-yaml's core schema when the stream is valid (see provider/dsl/yaml.ts for why). */
function fastStream(text: string): StreamDocument[] | undefined {
  if (mayHoldAlias(text)) return undefined;
  try {
    return (loadAll(text, null, { schema: CORE_SCHEMA }) as unknown[]).map((value) => ({ value }));
  } catch {
    return undefined;
  }
}

/** The `yaml` library's per-document errors, for a stream that is not valid or may hold aliases. */
function positionedStream(text: string): StreamDocument[] {
  // logLevel "error": the library's warnings (e.g. a `{{ .Values.x }}` key) would go straight to stderr.
  const parsed = yamlLibrary().parseAllDocuments(text, { prettyErrors: false, logLevel: "error" });
  const list = Array.isArray(parsed) ? parsed : [];
  return list.map((d): StreamDocument => {
    const err = d.errors[0];
    if (err) return { error: err.message.split("\n")[0] ?? err.message };
    const js = boundedToJS(d);
    return "problem" in js ? { error: js.problem.message } : { value: js.value };
  });
}
