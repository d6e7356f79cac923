/**
 * Multi-document YAML streams (manifests), parsed once per distinct text:
 * validation, hashing and the apply step all read the same inline manifests.
 */
import { parseAllDocuments } from "yaml";

export type StreamDocument = { value: unknown; error?: undefined } | { value?: undefined; error: string };

const cache = new Map<string, readonly StreamDocument[]>();
const MAX_CACHED = 2000;

/** Each document's value, or the first line of its YAML error. Callers must not mutate the values. */
export function parseYamlStream(text: string): readonly StreamDocument[] {
  let docs = cache.get(text);
  if (docs === undefined) {
    const parsed = parseAllDocuments(text, { prettyErrors: false });
    const list = Array.isArray(parsed) ? parsed : [];
    docs = list.map((d): StreamDocument => {
      const err = d.errors[0];
      return err ? { error: err.message.split("\n")[0] ?? err.message } : { value: d.toJS() as unknown };
    });
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(text, docs);
  }
  return docs;
}
