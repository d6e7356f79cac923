/**
 * The values a helm: step hands to helm: every `valuesFrom` entry in order,
 * then `values`, deep-merged the way helm merges `-f` files (maps merge
 * recursively; anything else, lists included, replaces). A `null` is kept, so
 * that, as in helm, it removes the chart's default for that key.
 *
 * The merged map is written to one values file, so the release's
 * user-supplied values are exactly this map and a later run can compare.
 * The merge and the comparison are pure (provider/helm/release-values.ts); this module reads.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { executionError } from "../../errors.js";
import type { Redactor } from "../../redact.js";
import { describeChartText } from "../../helm/chart.js";
import { isPlainMap, mergeValues, previousSecretValues, type Values } from "../../helm/release-values.js";
import type { HelmAction } from "./definition.js";
import { parseValuesDocument } from "../../dsl/values-file.js";
import { fetchUrlText, URL_FETCH_TIMEOUT_MS } from "../manifests/read-sources.js";

/** A values document (see parseValuesDocument); a problem is an execution error, redacted. */
export function parseValuesText(text: string, origin: string, redactor: Redactor): Values {
  const parsed = parseValuesDocument(text, origin);
  if (!parsed.ok) throw executionError(redactor.redact(parsed.message));
  return parsed.value;
}

export interface ValuesContext {
  baseDir: string;
  signal: AbortSignal;
  redactor: Redactor;
  /** Milliseconds left in the attempt: a url: fetch is bounded by it too. */
  deadline: number;
}

/** Reads one valuesFrom entry. */
async function readValuesSource(src: { file: string } | { url: string }, ctx: ValuesContext): Promise<Values> {
  if ("file" in src) {
    const file = path.resolve(ctx.baseDir, src.file);
    let text: string;
    try {
      text = await fs.readFile(file, "utf8");
    } catch (e) {
      throw executionError(
        `cannot read values file ${src.file} (${file}): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    return parseValuesText(text, src.file, ctx.redactor);
  }
  const timeout = Math.max(1, Math.min(URL_FETCH_TIMEOUT_MS, ctx.deadline));
  const text = await fetchUrlText(src.url, ctx, timeout);
  return parseValuesText(text, describeChartText(src.url), ctx.redactor);
}

/** valuesFrom (in order, fetched concurrently), then values, merged. */
export async function computeValues(
  helm: Pick<HelmAction, "values" | "valuesFrom">,
  ctx: ValuesContext,
): Promise<Values> {
  const layers = await Promise.all((helm.valuesFrom ?? []).map((src) => readValuesSource(src, ctx)));
  let out: Values = {};
  for (const layer of layers) out = mergeValues(out, layer);
  if (helm.values !== undefined && helm.values !== null) {
    if (!isPlainMap(helm.values)) throw executionError("values: must be a mapping");
    out = mergeValues(out, helm.values);
  }
  return out;
}

/**
 * Registers with the redactor the deployed values that sit where the current values hold a
 * secret (see previousSecretValues).
 */
export function registerPreviousSecrets(redactor: Redactor, current: Values, deployed: Values): void {
  for (const v of previousSecretValues(current, deployed, (s) => redactor.redact(s) !== s)) redactor.add(v);
}
