/**
 * Golden vectors: what kubectl's own Go code (k8s.io/* v0.35.4) computes for the logic khook ports in
 * provider/kubectl/, recorded by test/golden/kubectl (a Go program) into vectors.json:
 * - JSONPath as `kubectl wait --for=jsonpath=` reads it (relaxed syntax, client-go jsonpath with missing
 *   keys allowed): the values, and fmt's %v of each scalar (what wait compares);
 * - the three-way strategic merge patch `kubectl apply` sends for built-in kinds (patch metadata of the
 *   Go types, written as an OpenAPI v3 schema for this side);
 * - the three-way JSON merge patch it sends for custom resources, and that patch applied to live.
 * No Go is needed here: only JSON. Deliberate deviations are listed in test/golden/kubectl/README.md.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { evaluateJsonPath, formatJsonPathValue, parseJsonPath } from "../../provider/kubectl/jsonpath.js";
import {
  applyMergePatch,
  createThreeWayJsonMergePatch,
  createThreeWayStrategicMergePatch,
  isMap,
  OpenApiV3PatchMeta,
  PatchComputationError,
  type JsonMap,
} from "../../provider/kubectl/threeway.js";
import { repoRoot } from "../harness/util.js";

interface JsonPathVector {
  name?: string;
  template: string;
  input: unknown;
  relaxed?: string;
  parseError?: string;
  evalError?: string;
  values?: unknown[];
  formatted?: string[];
  unordered?: boolean;
}

interface ThreeWayVector {
  name?: string;
  kind?: string;
  original: JsonMap | null;
  modified: JsonMap;
  current: JsonMap;
  patch?: JsonMap;
  error?: string;
  applied?: unknown;
}

interface Vectors {
  kubernetes: string;
  schemas: Record<string, unknown>;
  kinds: Record<string, string>;
  jsonpath: JsonPathVector[];
  strategic: ThreeWayVector[];
  jsonmerge: ThreeWayVector[];
}

const vectors: Vectors = JSON.parse(
  fs.readFileSync(path.join(repoRoot(), "test", "golden", "kubectl", "vectors.json"), "utf8"),
);

const label = (v: { name?: string }, i: number, what: string): string => v.name ?? `${what} #${i}`;
const show = (x: unknown): string => {
  const s = JSON.stringify(x);
  return s === undefined ? "undefined" : s.length > 400 ? s.slice(0, 400) + "…" : s;
};

/** JSON with sorted keys: the order of a multiset's elements when Go's map iteration order is random. */
function canonical(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonical).join(",")}]`;
  if (isMap(x))
    return `{${Object.keys(x)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(x[k])}`)
      .join(",")}}`;
  return JSON.stringify(x);
}

function sortedPairs(
  values: unknown[],
  formatted: (string | undefined)[],
): { values: unknown[]; formatted: (string | undefined)[] } {
  const pairs = values.map((v, i) => ({ v, f: formatted[i], k: canonical(v) }));
  pairs.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return { values: pairs.map((p) => p.v), formatted: pairs.map((p) => p.f) };
}

/** client-go evaluation errors that khook reports when parsing: they fail whenever evaluation gets there. */
const STRICTER_AT_PARSE = ["unrecognized identifier", "step must be > 0", "unrecognized filter operator"];

const PRECONDITION_MESSAGE = "At least one of apiVersion, kind and name was changed";

const isScalar = (v: unknown): boolean => !isMap(v) && !Array.isArray(v);

test("the kubectl golden vectors are substantial", () => {
  assert.ok(vectors.jsonpath.length >= 300, `only ${vectors.jsonpath.length} JSONPath vectors`);
  assert.ok(vectors.strategic.length >= 250, `only ${vectors.strategic.length} strategic merge vectors`);
  assert.ok(vectors.jsonmerge.length >= 150, `only ${vectors.jsonmerge.length} JSON merge vectors`);
  assert.ok(
    vectors.strategic.some((v) => v.patch && JSON.stringify(v.patch).includes('"$retainKeys"')),
    "no vector exercises $retainKeys",
  );
  assert.ok(
    vectors.strategic.some((v) => v.patch && JSON.stringify(v.patch).includes('"$deleteFromPrimitiveList/')),
    "no vector exercises $deleteFromPrimitiveList",
  );
  assert.ok(
    vectors.strategic.some((v) => v.patch && JSON.stringify(v.patch).includes('"$patch":"delete"')),
    "no vector exercises $patch: delete",
  );
});

test("JSONPath: every vector yields what kubectl wait's jsonpath yields", () => {
  const failures: string[] = [];
  vectors.jsonpath.forEach((v, i) => {
    const name = `${label(v, i, "jsonpath")}: ${JSON.stringify(v.template)}`;
    const parsed = parseJsonPath(v.template);
    if (v.parseError !== undefined) {
      if (parsed.ok)
        failures.push(`${name}: kubectl rejects it (${v.parseError}) but khook parses it as ${parsed.expr.source}`);
      return;
    }
    if (!parsed.ok) {
      // Stricter on purpose (README): what kubectl only rejects once evaluation reaches it is a validation error.
      if (STRICTER_AT_PARSE.some((m) => v.evalError?.startsWith(m))) return;
      // ...and so is an empty field name, where kubectl looks up the key "" and yields nothing.
      if (parsed.message.includes("empty field name") && (v.evalError !== undefined || (v.values ?? []).length === 0))
        return;
      failures.push(`${name}: khook rejects it (${parsed.message}) but kubectl parses it as ${v.relaxed}`);
      return;
    }
    if (parsed.expr.source !== v.relaxed)
      failures.push(`${name}: normalized to ${parsed.expr.source}, kubectl to ${v.relaxed}`);
    const got = evaluateJsonPath(parsed.expr, v.input);
    if (v.evalError !== undefined) {
      // Deviation (README): evaluation is total; where kubectl fails, khook yields nothing ("not yet").
      if (got.length > 0) failures.push(`${name}: kubectl fails (${v.evalError}) but khook yields ${show(got)}`);
      return;
    }
    let want = { values: v.values ?? [], formatted: (v.formatted ?? []) as (string | undefined)[] };
    let have = {
      values: got,
      formatted: got.map((x) => (isScalar(x) ? formatJsonPathValue(x) : "")) as (string | undefined)[],
    };
    if (v.unordered) {
      want = sortedPairs(want.values, want.formatted);
      have = sortedPairs(have.values, have.formatted);
    }
    if (!sameJson(have.values, want.values)) {
      failures.push(`${name}: khook yields ${show(have.values)}, kubectl ${show(want.values)}`);
      return;
    }
    if (show(have.formatted) !== show(want.formatted)) {
      failures.push(`${name}: khook prints ${show(have.formatted)}, kubectl ${show(want.formatted)}`);
    }
  });
  assert.equal(
    failures.length,
    0,
    `${failures.length}/${vectors.jsonpath.length} JSONPath vectors differ from kubectl:\n` + failures.join("\n"),
  );
});

/**
 * Compares one three-way vector: the same patch as kubectl, or an error where kubectl fails (`sameError`
 * decides whether khook's error stands for kubectl's). Returns the patch when both computed one.
 */
function comparePatch(
  name: string,
  v: ThreeWayVector,
  compute: () => JsonMap,
  sameError: (e: PatchComputationError, goError: string) => boolean,
  failures: string[],
): JsonMap | undefined {
  let patch: JsonMap;
  try {
    patch = compute();
  } catch (e) {
    if (v.error !== undefined && e instanceof PatchComputationError && sameError(e, v.error)) return undefined;
    failures.push(
      `${name}: threw ${(e as Error).message}; kubectl ${v.error !== undefined ? `fails with ${v.error}` : `computes ${show(v.patch)}`}`,
    );
    return undefined;
  }
  if (v.error !== undefined) {
    failures.push(`${name}: kubectl fails (${v.error}) but khook computes ${show(patch)}`);
    return undefined;
  }
  if (!sameJson(patch, v.patch)) {
    failures.push(`${name}: khook computes ${show(patch)}, kubectl ${show(v.patch)}`);
    return undefined;
  }
  return patch;
}

/** Equal as JSON values: key order is irrelevant, list order is not. */
function sameJson(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

test("three-way strategic merge: every vector's patch is the one kubectl apply computes", () => {
  const failures: string[] = [];
  vectors.strategic.forEach((v, i) => {
    const name = label(v, i, "strategic");
    const schemaName = vectors.kinds[v.kind ?? ""];
    const schema = schemaName === undefined ? undefined : vectors.schemas[schemaName];
    if (!isMap(schema)) {
      failures.push(`${name}: no schema for kind ${v.kind}`);
      return;
    }
    const meta = new OpenApiV3PatchMeta(vectors.schemas, schema);
    comparePatch(
      name,
      v,
      () => createThreeWayStrategicMergePatch(v.original ?? undefined, v.modified, v.current, meta),
      () => true,
      failures,
    );
  });
  assert.equal(
    failures.length,
    0,
    `${failures.length}/${vectors.strategic.length} strategic merge vectors differ from kubectl:\n` +
      failures.join("\n"),
  );
});

test("three-way JSON merge: every vector's patch, and the patch applied to live, are kubectl's", () => {
  const failures: string[] = [];
  // Deviation (README): kubectl prints "precondition failed for: <the patch>" (its intended message is
  // unreachable); khook says what kubectl meant to, without dumping values that may be secret.
  const sameError = (e: PatchComputationError, goError: string): boolean =>
    goError.startsWith("precondition failed for: ") ? e.message === PRECONDITION_MESSAGE : true;
  vectors.jsonmerge.forEach((v, i) => {
    const name = label(v, i, "jsonmerge");
    const patch = comparePatch(
      name,
      v,
      () => createThreeWayJsonMergePatch(v.original ?? undefined, v.modified, v.current),
      sameError,
      failures,
    );
    if (patch === undefined) return;
    const applied = applyMergePatch(v.current, patch);
    if (!sameJson(applied, v.applied))
      failures.push(`${name}: applied to live, khook gets ${show(applied)}, kubectl ${show(v.applied)}`);
  });
  assert.equal(
    failures.length,
    0,
    `${failures.length}/${vectors.jsonmerge.length} JSON merge vectors differ from kubectl:\n` + failures.join("\n"),
  );
});
