/**
 * A release's values: merged the way helm merges `-f` files, and compared with what a
 * release holds. Reading the layers (files, URLs) is the executor's (steps/helm/read-values.ts).
 */

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
 * A release's previous values can hold secrets the current spec no longer produces (a rotated
 * secret variable, or a different pipeline over it), and those would show in the clear in a
 * diff against the deployed manifest. So wherever a current value is secret, the deployed value
 * at the same path is one too: these are yielded, in document order, for the caller's redactor
 * (lazily, so that what the caller learns from one counts for the next).
 */
export function* previousSecretValues(
  current: unknown,
  deployed: unknown,
  isSecret: (value: string) => boolean,
): Generator<string> {
  if (typeof current === "string") {
    if (typeof deployed === "string" && deployed !== current && isSecret(current)) yield deployed;
    return;
  }
  if (Array.isArray(current) && Array.isArray(deployed)) {
    for (const [i, c] of current.entries()) yield* previousSecretValues(c, deployed[i], isSecret);
    return;
  }
  if (isPlainMap(current) && isPlainMap(deployed)) {
    for (const [k, v] of Object.entries(current)) yield* previousSecretValues(v, deployed[k], isSecret);
  }
}
