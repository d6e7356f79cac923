/**
 * The values a helm: step hands to helm: every `valuesFrom` entry in order,
 * then `values`, deep-merged the way helm merges `-f` files (maps merge
 * recursively; anything else, lists included, replaces). A `null` is kept, so
 * that, as in helm, it removes the chart's default for that key.
 *
 * The merged map is written to one values file, so the release's
 * user-supplied values are exactly this map and a later run can compare.
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { executionError } from "../errors.js";
import type { Redactor } from "../redact.js";
import { describeChartText } from "../spec/chart.js";
import type { HelmAction } from "../spec/types.js";
import { parseValuesDocument } from "../spec/values-file.js";
import { fetchUrlText, URL_FETCH_TIMEOUT_MS } from "./sources.js";

export type Values = Record<string, unknown>;

export function isPlainMap(v: unknown): v is Values {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** helm's merge: `over` wins; maps merge recursively; everything else replaces. Inputs are not modified. */
export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const prev = out[k];
    out[k] = isPlainMap(prev) && isPlainMap(v) ? mergeValues(prev, v) : cloneValue(v);
  }
  return out;
}

function cloneValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(cloneValue);
  if (isPlainMap(v)) {
    const o: Values = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) o[k] = cloneValue(x);
    return o;
  }
  return v;
}

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
      throw executionError(`cannot read values file ${src.file} (${file}): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    return parseValuesText(text, src.file, ctx.redactor);
  }
  const timeout = Math.max(1, Math.min(URL_FETCH_TIMEOUT_MS, ctx.deadline));
  const text = await fetchUrlText(src.url, ctx, timeout);
  return parseValuesText(text, describeChartText(src.url), ctx.redactor);
}

/** valuesFrom (in order, fetched concurrently), then values, merged. */
export async function computeValues(helm: Pick<HelmAction, "values" | "valuesFrom">, ctx: ValuesContext): Promise<Values> {
  const layers = await Promise.all((helm.valuesFrom ?? []).map((src) => readValuesSource(src, ctx)));
  let out: Values = {};
  for (const layer of layers) out = mergeValues(out, layer);
  if (helm.values !== undefined && helm.values !== null) {
    if (!isPlainMap(helm.values)) throw executionError("values: must be a mapping");
    out = mergeValues(out, helm.values);
  }
  return out;
}

/** JSON-normalized form for comparing computed values with a release's user-supplied values. */
export function valuesKey(v: Values | null | undefined): string {
  return canonical(JSON.parse(JSON.stringify(v ?? {})) as unknown);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isPlainMap(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

export function sameValues(a: Values | null | undefined, b: Values | null | undefined): boolean {
  return valuesKey(a) === valuesKey(b);
}

/**
 * A release's previous values can hold secrets the current spec no longer
 * produces (a rotated secret variable, or a different pipeline over it), and
 * those would show in the clear in a diff against the deployed manifest. So
 * wherever the current values carry a secret, the deployed value at the same
 * path is registered with the redactor too.
 */
export function registerPreviousSecrets(redactor: Redactor, current: unknown, deployed: unknown): void {
  if (typeof current === "string") {
    if (typeof deployed === "string" && deployed !== current && redactor.redact(current) !== current) redactor.add(deployed);
    return;
  }
  if (Array.isArray(current) && Array.isArray(deployed)) {
    current.forEach((c, i) => registerPreviousSecrets(redactor, c, deployed[i]));
    return;
  }
  if (isPlainMap(current) && isPlainMap(deployed)) {
    for (const [k, v] of Object.entries(current)) registerPreviousSecrets(redactor, v, deployed[k]);
  }
}
