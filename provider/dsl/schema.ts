/**
 * Structural validation of a parsed document against schema/v1/khook.json, with ajv's errors
 * translated into one message per problem. The wording comes from the schema, which is
 * generated from the definitions (dsl/definitions.ts, steps/<kind>/definition.ts): templates
 * by keyword (`x-khook-messages`), what an object is called (`x-khook-noun`), the "exactly one
 * of" groups (`x-khook-exactly-one`) and cross-field rules' `errorMessage`. ajv runs `verbose`,
 * so each error carries the schema node it failed, looked up by identity.
 *
 * The schema states every rule it can, for editors; a subschema whose rule the loader's
 * semantic pass words better is tagged `x-khook-rule` and left to it (`semanticRules: true`
 * reports it here too), except a wrong type, which the rules take as given.
 */
import fs from "node:fs";
import path from "node:path";
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import type { Diagnostic, PositionLookup } from "../errors.js";
import { wordChecksum } from "../fingerprint.js";
import { SEA_ASSETS, singleExecutableText } from "../sea-assets.js";
import type * as Ajv2020Module from "ajv/dist/2020.js";

const SCHEMA_RELATIVE = path.join("schema", "v1", "khook.json");

/** Annotation keywords the schema uses for editors (VS Code / yaml-language-server). */
const EDITOR_KEYWORDS = [
  "patternErrorMessage",
  "errorMessage",
  "enumDescriptions",
  "markdownDescription",
  "defaultSnippets",
  "doNotSuggest",
];

/** Marks a subschema whose rule the loader's semantic pass owns (see the header). */
const SEMANTIC_RULE_KEYWORD = "x-khook-rule";

/**
 * The loader's wording, written in the definitions beside the rules it words
 * (dsl/definitions.ts `messages`, `noun`): templates by keyword, what an object is called,
 * and, on a union of forms, whose forms they are.
 */
const MESSAGES_KEYWORD = "x-khook-messages";
const NOUN_KEYWORD = "x-khook-noun";
const FORMS_OF_KEYWORD = "x-khook-forms-of";

export interface ValidateSchemaOptions {
  /**
   * Also report the rules tagged `x-khook-rule` in the schema, which the
   * loader's semantic rules report with more specific messages. Default false.
   */
  semanticRules?: boolean;
}

type SchemaNode = { [key: string]: unknown };

let schemaCache: SchemaNode | undefined;
let validatorCache: ValidateFunction | undefined;
let indexCache: SchemaIndex | undefined;

/** Finds schema/v1/khook.json by walking up from this file (works from provider/dsl/ and dist/provider/dsl/). */
function schemaFile(): string {
  const tried: string[] = [];
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    const candidate = path.join(dir, SCHEMA_RELATIVE);
    tried.push(candidate);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  const fromCwd = path.resolve(SCHEMA_RELATIVE);
  if (fs.existsSync(fromCwd)) return fromCwd;
  tried.push(fromCwd);
  throw new Error(`khook: cannot find the JSON schema; looked at:\n  ${tried.join("\n  ")}`);
}

/** The committed schema's text: from disk, or from the single executable that carries it (sea-assets.ts). */
export function schemaText(): string {
  return singleExecutableText(SEA_ASSETS.schema) ?? fs.readFileSync(schemaFile(), "utf8");
}

/** The loader's schema (see deriveLoaderSchema), derived once from the committed file. */
function schemaObject(): SchemaNode {
  if (schemaCache === undefined) {
    schemaCache = deriveLoaderSchema(JSON.parse(schemaText()) as SchemaNode);
  }
  return schemaCache;
}

/** The committed JSON Schema, the one editors use (a fresh copy: callers may modify it). */
export function loadSchema(): object {
  return JSON.parse(schemaText()) as object;
}

/** The schema the loader validates substituted specs against (a fresh copy). */
export function loadLoaderSchema(): object {
  return structuredClone(schemaObject());
}

// ---------------------------------------------------------------------------
// The loader's schema, derived from the editor's
//
// schema/v1/khook.json is written for editors, which see the spec before substitution: every
// typed scalar also accepts a ${...} reference, and the cross-field rules are shaped so that
// yaml-language-server puts their message on the offending key. The loader sees the spec after
// substitution and must stay strict, so it validates against a variant derived mechanically:
//
// - `anyOf: [<strict>, {$ref: #/$defs/reference}]` becomes <strict> (merged into the node);
// - `"x-khook-exactly-one": [keys]` becomes `oneOf: [{required: [key]}, ...]`, the group the
//   diagnostics below turn into "must have exactly one ... found 2: a, b";
// - `allOf` entries marked `"x-khook-editor": true` (messages and completions for editors,
//   whose rules the exactly-one groups already state) are dropped;
// - `patternProperties` of single literal keys (`^helm$`, where editors cannot complete them)
//   become ordinary `properties`;
// - what only people and editors read (descriptions, completions) is left out: the precompiled
//   validator carries the schema's nodes for its errors, and every byte of it is loaded at start.

const REFERENCE_REF = "#/$defs/reference";
const EXACTLY_ONE_KEYWORD = "x-khook-exactly-one";
const EDITOR_ONLY_KEYWORD = "x-khook-editor";
/** Keywords for people and editors, which the loader's validation and wording never read. */
const FOR_READERS_ONLY = new Set([
  "$comment",
  "title",
  "description",
  "markdownDescription",
  "enumDescriptions",
  "defaultSnippets",
  "doNotSuggest",
]);
/** Keywords whose value maps names to schemas (a name there is not a keyword). */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs"]);

export function deriveLoaderSchema(editor: SchemaNode): SchemaNode {
  const derive = (v: unknown, names = false): unknown => {
    if (Array.isArray(v)) return v.map((x) => derive(x));
    if (!isNode(v)) return v;
    if (names) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, derive(x)]));
    let node: SchemaNode = {};
    for (const [k, x] of Object.entries(v)) if (!FOR_READERS_ONLY.has(k)) node[k] = derive(x, NAME_MAPS.has(k));
    const anyOf = node["anyOf"];
    if (Array.isArray(anyOf) && anyOf.some((a) => isNode(a) && a["$ref"] === REFERENCE_REF)) {
      const strict = anyOf.filter((a) => !(isNode(a) && a["$ref"] === REFERENCE_REF));
      delete node["anyOf"];
      if (strict.length === 1 && isNode(strict[0])) node = { ...node, ...strict[0] };
      else node["anyOf"] = strict;
    }
    const keys = node[EXACTLY_ONE_KEYWORD];
    if (Array.isArray(keys)) {
      delete node[EXACTLY_ONE_KEYWORD];
      node["oneOf"] = keys.map((k) => ({ required: [k] }));
    }
    const allOf = node["allOf"];
    if (Array.isArray(allOf)) {
      const kept = allOf.filter((e) => !(isNode(e) && e[EDITOR_ONLY_KEYWORD] === true));
      if (kept.length === 0) delete node["allOf"];
      else node["allOf"] = kept;
    }
    const patterns = node["patternProperties"];
    if (isNode(patterns) && isNode(node["properties"])) {
      const literal = Object.keys(patterns).filter((p) => /^\^[A-Za-z][A-Za-z0-9]*\$$/.test(p));
      const properties: SchemaNode = { ...node["properties"] };
      for (const p of literal) properties[p.slice(1, -1)] = patterns[p];
      node["properties"] = properties;
      const rest = Object.fromEntries(Object.entries(patterns).filter(([p]) => !literal.includes(p)));
      if (Object.keys(rest).length === 0) delete node["patternProperties"];
      else node["patternProperties"] = rest;
    }
    return node;
  };
  const out = derive(editor) as SchemaNode;
  if (isNode(out["$defs"])) delete out["$defs"]["reference"];
  return out;
}

/** The one Ajv configuration, shared by the runtime compile and the build-time code generator. */
export function createAjv(extra: { code?: { source: boolean } } = {}): Ajv2020 {
  // Required here, not at the top: loading ajv's compiler costs more than the rest of a
  // `khook validate` start, and only the build (or a stale generated validator) needs it.
  const { Ajv2020: AjvClass } = require("ajv/dist/2020.js") as typeof Ajv2020Module;
  const ajv = new AjvClass({
    allErrors: true,
    verbose: true,
    strict: true,
    // `oneOf: [{ required: [helm] }, ...]` is the idiomatic "exactly one key" form;
    // the keys are declared in the parent's `properties`, which strictRequired does not see.
    strictRequired: false,
    // `patch: { type: [object, array] }`.
    allowUnionTypes: true,
    ...extra,
  });
  ajv.addVocabulary([
    ...EDITOR_KEYWORDS,
    SEMANTIC_RULE_KEYWORD,
    EXACTLY_ONE_KEYWORD,
    EDITOR_ONLY_KEYWORD,
    MESSAGES_KEYWORD,
    NOUN_KEYWORD,
    FORMS_OF_KEYWORD,
  ]);
  return ajv;
}

/**
 * The committed schema's text and its checksum, which ties a generated validator to the schema it
 * was built from: the build stamps it (schema-codegen.ts) and a test compares (fingerprint.ts's: a
 * check against a stale build, not a guard against anyone). No command needs the checksum.
 */
export function schemaSource(): { text: string; checksum: string } {
  const text = schemaText();
  return { text, checksum: wordChecksum(Buffer.from(text, "utf8")) };
}

export const GENERATED_VALIDATOR = "schema-validator.generated.js";

/**
 * The build precompiles the validator (ajv standalone code), which saves a ~200 ms compile on
 * every CLI start; without it (while the build generates it), compile now. The one build command
 * writes the schema from the definitions and then the validator from the schema, so at run time
 * the pair is trusted rather than checked: reading and checksumming the schema for it cost a
 * `validate` about a millisecond. Its stamp (`schemaChecksum`) is checked by a test instead
 * (schema-generated.test.ts), where a pair out of step can come from.
 */
function compiledValidator(): ValidateFunction {
  return generatedValidator() ?? createAjv().compile(schemaObject());
}

/** A literal require, so the CLI bundle carries the validator; absent while the build generates it. */
export function generatedValidator(): (ValidateFunction & { schemaChecksum?: string }) | undefined {
  try {
    return require("./schema-validator.generated.js") as ValidateFunction & { schemaChecksum?: string };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND") return undefined;
    throw e;
  }
}

function validator(): ValidateFunction {
  validatorCache ??= compiledValidator();
  return validatorCache;
}

/** Built on the first invalid document only: it serves the error messages, and a valid spec has none. */
function schemaIndex(): SchemaIndex {
  indexCache ??= indexSchema(schemaObject());
  return indexCache;
}

// ---------------------------------------------------------------------------
// Schema index

interface ExactlyOneGroup {
  keys: string[];
}

interface UnionBranch {
  def: SchemaNode;
  key: string;
  properties: string[];
}

interface Union {
  node: SchemaNode;
  branches: UnionBranch[];
}

interface SchemaIndex {
  root: SchemaNode;
  exactlyOne: Map<object, ExactlyOneGroup>;
  exactlyOneBranches: Set<object>;
  unions: Map<object, Union>;
  unionBranchDefs: Map<object, Union>;
}

function isNode(v: unknown): v is SchemaNode {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function resolveRef(root: SchemaNode, ref: unknown): SchemaNode | undefined {
  if (typeof ref !== "string" || !ref.startsWith("#/$defs/")) return undefined;
  const defs = root["$defs"];
  if (!isNode(defs)) return undefined;
  const def = defs[ref.slice("#/$defs/".length)];
  return isNode(def) ? def : undefined;
}

function indexSchema(root: SchemaNode): SchemaIndex {
  const index: SchemaIndex = {
    root,
    exactlyOne: new Map(),
    exactlyOneBranches: new Set(),
    unions: new Map(),
    unionBranchDefs: new Map(),
  };

  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (!isNode(node)) return;
    const oneOf = node["oneOf"];
    if (Array.isArray(oneOf) && oneOf.length > 0) {
      const keys = oneOf.map((b): unknown =>
        isNode(b) && Array.isArray(b["required"]) && b["required"].length === 1 && b["$ref"] === undefined
          ? b["required"][0]
          : undefined,
      );
      if (keys.every((k): k is string => typeof k === "string")) {
        index.exactlyOne.set(node, { keys });
        for (const b of oneOf) index.exactlyOneBranches.add(b as object);
      } else {
        const defsOf = oneOf.map((b) => (isNode(b) ? resolveRef(root, b["$ref"]) : undefined));
        if (defsOf.every((d): d is SchemaNode => d !== undefined)) {
          const requiredSets = defsOf.map((d) => (Array.isArray(d["required"]) ? (d["required"] as string[]) : []));
          const branches: UnionBranch[] = [];
          defsOf.forEach((def, i) => {
            const own = (requiredSets[i] ?? []).filter((k) => requiredSets.every((r, j) => j === i || !r.includes(k)));
            const key = own[0];
            if (key !== undefined) {
              branches.push({
                def,
                key,
                properties: Object.keys(isNode(def["properties"]) ? def["properties"] : {}),
              });
            }
          });
          if (branches.length === defsOf.length) {
            const union = { node, branches };
            index.unions.set(node, union);
            for (const b of branches) index.unionBranchDefs.set(b.def, union);
          }
        }
      }
    }
    for (const v of Object.values(node)) visit(v);
  };
  visit(root);
  return index;
}

// ---------------------------------------------------------------------------
// Paths and wording

function unescapePointer(s: string): string {
  return s.replace(/~1/g, "/").replace(/~0/g, "~");
}

function escapePointer(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

function segmentsOf(pointer: string): string[] {
  return pointer === "" ? [] : pointer.slice(1).split("/").map(unescapePointer);
}

function join(pointer: string, key: string): string {
  return `${pointer}/${escapePointer(key)}`;
}

const isIndex = (s: string): boolean => /^[0-9]+$/.test(s);

/** `/steps/0/helm/chart` -> `helm.chart`; `/steps/0/apply/manifests/1/url` -> `manifests[1].url`. */
function fieldLabel(segs: readonly string[]): string {
  let s = segs;
  if (s.length > 2 && s[0] === "steps" && isIndex(s[1] ?? "")) s = s.slice(2);
  if (s.length === 0) return "the document";
  const atoms: string[] = [];
  for (const seg of s) {
    if (isIndex(seg) && atoms.length > 0) atoms[atoms.length - 1] += `[${seg}]`;
    else atoms.push(seg);
  }
  return atoms.slice(-2).join(".");
}

function valueAt(doc: unknown, segs: readonly string[]): unknown {
  let cur: unknown = doc;
  for (const seg of segs) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isNode(cur)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}

function stepLabel(doc: unknown, index: string): string {
  const name = valueAt(doc, ["steps", index, "name"]);
  return typeof name === "string" && name !== "" ? `step "${name}"` : `steps[${index}]`;
}

/** What an object is called in messages: its definition's noun, else where it is. */
function contextOf(segs: readonly string[], doc: unknown, node?: SchemaNode): string {
  if (segs.length === 0) return "the document";
  if (segs.length === 2 && segs[0] === "steps" && isIndex(segs[1] ?? "")) return stepLabel(doc, segs[1]!);
  const noun = node?.[NOUN_KEYWORD];
  if (typeof noun === "string") return noun;
  if (segs.length === 1) return segs[0]!;
  return fieldLabel(segs);
}

/** The node's template for `keyword`, filled in; undefined when the definition words nothing. */
function worded(node: SchemaNode | undefined, keyword: string, values: Record<string, string>): string | undefined {
  const all = node?.[MESSAGES_KEYWORD];
  const template = isNode(all) ? all[keyword] : undefined;
  if (typeof template !== "string") return undefined;
  return template.replace(/\{([a-z]+)\}/g, (m, name: string) => values[name] ?? m);
}

/** The values a template may name, for an error on `data` at `segs`. */
function templateValues(
  segs: readonly string[],
  data: unknown,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    label: fieldLabel(segs),
    value: JSON.stringify(data) ?? String(data),
    short: shortJson(data),
    found: describeValue(data),
    ...extra,
  };
}

function describeValue(v: unknown): string {
  if (v === null || v === undefined) return "null (empty)";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  if (typeof v === "string") return `string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}

function shortJson(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  object: "a mapping",
  array: "a list",
  boolean: "true or false",
  integer: "a whole number",
  number: "a number",
  null: "null",
};

function expectedTypeWords(t: unknown): string {
  const list = Array.isArray(t) ? t : [t];
  const words = list.map((x) => TYPE_WORDS[String(x)] ?? String(x));
  return words.length <= 1
    ? (words[0] ?? "another type")
    : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
function editDistance(a: string, b: string): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) d.push(new Array<number>(b.length + 1).fill(0));
  const at = (i: number, j: number): number => d[i]![j]!;
  for (let i = 0; i <= a.length; i++) d[i]![0] = i;
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i]![j] = v;
    }
  }
  return at(a.length, b.length);
}

/** The closest candidate, if it is close enough to be a plausible typo. */
function suggest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const dist = c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase());
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  const limit = word.length <= 3 ? 1 : word.length <= 6 ? 2 : 3;
  return best !== undefined && bestDistance <= limit ? best : undefined;
}

// ---------------------------------------------------------------------------
// Translation

interface Raw {
  path: string;
  message: string;
}

interface UnionFailure {
  union: Union;
  chosen: UnionBranch | undefined;
  isObject: boolean;
}

function exactlyOneMessage(
  segs: readonly string[],
  doc: unknown,
  node: SchemaNode,
  keys: readonly string[],
  present: readonly string[],
): string {
  const values = {
    subject: contextOf(segs, doc, node),
    keys: keys.join(", "),
    present: present.length === 0 ? "found none" : `found ${present.length}: ${present.join(", ")}`,
  };
  return (
    worded(node, "oneOf", values) ?? `${values.subject} must have exactly one of ${values.keys}; ${values.present}`
  );
}

function translate(
  e: ErrorObject,
  index: SchemaIndex,
  doc: unknown,
  unions: Map<string, UnionFailure>,
): Raw | undefined {
  const at = e.instancePath;
  const segs = segmentsOf(at);
  const label = fieldLabel(segs);
  const parent = isNode(e.parentSchema) ? e.parentSchema : {};
  const params = e.params as Record<string, unknown>;

  // Unions (delete): keep only the branch the author evidently meant.
  for (const [unionPath, failure] of unions) {
    if (at !== unionPath && !at.startsWith(`${unionPath}/`)) continue;
    const inBranch = index.unionBranchDefs.get(parent) === failure.union;
    if (at === unionPath && e.keyword === "oneOf" && index.unions.get(parent) === failure.union) {
      if (failure.chosen !== undefined || !failure.isObject) return undefined;
      const present = failure.union.branches
        .map((b) => b.key)
        .filter((k) => isNode(valueAt(doc, segs)) && k in (valueAt(doc, segs) as object));
      return {
        path: at,
        message: exactlyOneMessage(
          segs,
          doc,
          failure.union.node,
          failure.union.branches.map((b) => b.key),
          present,
        ),
      };
    }
    if (at === unionPath && inBranch) {
      if (failure.chosen === undefined) {
        if (failure.isObject) return undefined;
      } else if (parent !== failure.chosen.def) return undefined;
    }
    if (at !== unionPath && failure.chosen !== undefined) {
      const prop = segmentsOf(at.slice(unionPath.length))[0] ?? "";
      if (!failure.chosen.properties.includes(prop)) return undefined;
    }
  }

  // "Exactly one of" groups.
  if (index.exactlyOneBranches.has(parent)) return undefined;
  if (e.keyword === "oneOf" && index.exactlyOne.has(parent)) {
    const data = e.data;
    if (!isNode(data)) return undefined;
    const keys = index.exactlyOne.get(parent)!.keys;
    return {
      path: at,
      message: exactlyOneMessage(
        segs,
        doc,
        parent,
        keys,
        keys.filter((k) => k in data),
      ),
    };
  }

  const custom = typeof parent["errorMessage"] === "string" ? (parent["errorMessage"] as string) : undefined;

  switch (e.keyword) {
    case "if":
    case "propertyNames":
      return undefined;

    case "not": {
      // Point at the offending field when the forbidden thing is a field.
      let focus = at;
      const data = e.data;
      const not = isNode(parent["not"]) ? parent["not"] : {};
      const alternatives = Array.isArray(not["anyOf"]) ? (not["anyOf"] as unknown[]) : [not];
      if (isNode(data)) {
        for (const alt of alternatives) {
          const req = isNode(alt) && Array.isArray(alt["required"]) ? (alt["required"] as string[]) : [];
          const hit = req.find((k) => k in data);
          if (hit !== undefined) {
            focus = join(at, hit);
            break;
          }
        }
      }
      return { path: focus, message: custom ?? `${label} is not allowed here` };
    }

    case "false schema":
      // A key a cross-field rule forbids (see withThenSchemas): the path is the key itself.
      return { path: at, message: custom ?? `${label} is not allowed here` };

    case "required": {
      const missing = String(params["missingProperty"]);
      if (custom !== undefined) return { path: at, message: custom };
      return { path: at, message: `${contextOf(segs, doc, parent)} is missing required field "${missing}"` };
    }

    case "additionalProperties": {
      const field = String(params["additionalProperty"]);
      const where = contextOf(segs, doc, parent);
      const fieldPath = join(at, field);
      const own = worded(parent, `unknown:${field}`, templateValues(segs, e.data));
      if (own !== undefined) return { path: fieldPath, message: own };
      const allowed = Object.keys(isNode(parent["properties"]) ? parent["properties"] : {});
      let message = `unknown field "${field}" in ${where}`;
      const union = index.unionBranchDefs.get(parent);
      const branch = union?.branches.find((b) => b.def === parent);
      if (union !== undefined && branch !== undefined) {
        message = `unknown field "${field}" in ${where} (by ${branch.key})`;
        const owners = union.branches
          .filter((b) => b !== branch && b.properties.includes(field))
          .map((b) => `${String(union.node[FORMS_OF_KEYWORD] ?? "")} by ${b.key}`.trim());
        if (owners.length > 0)
          return { path: fieldPath, message: `${message}: ${field} only applies to ${owners.join(" and ")}` };
      }
      const guess = suggest(field, allowed);
      return {
        path: fieldPath,
        message:
          guess !== undefined ? `${message} (did you mean "${guess}"?)` : `${message}; allowed: ${allowed.join(", ")}`,
      };
    }

    case "type": {
      const expected = params["type"];
      const data = e.data;
      const own = worded(parent, "type", templateValues(segs, data));
      if (own !== undefined) return { path: at, message: own };
      let message = `${label} must be ${expectedTypeWords(expected)}; found ${describeValue(data)}`;
      if (custom !== undefined) message = `${custom}; found ${describeValue(data)}`;
      if (at === "/state" && typeof data === "boolean")
        message += " (write state: {} to turn the state record on, or leave it out)";
      if (expected === "string" && (typeof data === "number" || typeof data === "boolean")) {
        message += ` (quote it in YAML; unquoted, it is read as a ${typeof data})`;
      } else if (expected === "boolean" && typeof data === "string" && /^(true|false|yes|no|on|off)$/i.test(data)) {
        message += " (write true or false without quotes)";
      } else if (
        (expected === "integer" || expected === "number") &&
        typeof data === "string" &&
        /^-?[0-9]+(\.[0-9]+)?$/.test(data)
      ) {
        message += " (remove the quotes)";
      }
      return { path: at, message };
    }

    case "const":
      return {
        path: at,
        message: `${label} must be ${JSON.stringify(params["allowedValue"])}; found ${describeValue(e.data)}`,
      };

    case "enum": {
      const allowed = (params["allowedValues"] as unknown[]) ?? [];
      const own = worded(parent, "enum", templateValues(segs, e.data));
      if (own !== undefined) return { path: at, message: own };
      let message = `${label} must be one of ${quoteList(allowed)}; found ${describeValue(e.data)}`;
      if (typeof e.data === "string") {
        const guess = suggest(e.data, allowed.map(String));
        if (guess !== undefined) message += ` (did you mean "${guess}"?)`;
      }
      return { path: at, message };
    }

    case "pattern": {
      const propertyName = (e as ErrorObject & { propertyName?: string }).propertyName;
      if (propertyName !== undefined) {
        const values = templateValues(segs, e.data, { key: JSON.stringify(propertyName) });
        return {
          path: join(at, propertyName),
          message:
            worded(parent, "pattern", values) ??
            `${values.key} is not a valid key name. ${String(parent["patternErrorMessage"] ?? "")}`.trim(),
        };
      }
      const own = worded(parent, "pattern", templateValues(segs, e.data));
      if (own !== undefined) return { path: at, message: own };
      const v = JSON.stringify(e.data);
      const hint = parent["patternErrorMessage"];
      return {
        path: at,
        message:
          typeof hint === "string"
            ? `${label}: ${v} is not valid. ${hint}`
            : `${label}: ${v} is not in the expected format`,
      };
    }

    case "maxLength": {
      const limit = Number(params["limit"]);
      const data = typeof e.data === "string" ? e.data : "";
      const own = worded(
        parent,
        "maxLength",
        templateValues(segs, e.data, {
          shown: data.length > 70 ? `${data.slice(0, 67)}...` : data,
          length: String(data.length),
          limit: String(limit),
        }),
      );
      if (own !== undefined) return { path: at, message: own };
      return { path: at, message: `${label} is ${data.length} characters; the limit is ${limit}` };
    }

    case "minLength":
      return { path: at, message: `${label} must not be empty` };

    case "minItems": {
      const limit = Number(params["limit"]);
      const own = worded(parent, "minItems", templateValues(segs, e.data, { limit: String(limit) }));
      if (own !== undefined) return { path: at, message: own };
      return { path: at, message: `${label} must have at least ${limit} item${limit === 1 ? "" : "s"}` };
    }

    case "uniqueItems": {
      const j = Number(params["j"]);
      const dup = Array.isArray(e.data) ? e.data[j] : undefined;
      return { path: at, message: `${label} lists ${shortJson(dup)} more than once` };
    }

    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { path: at, message: `${label} ${e.message ?? "is out of range"}; found ${describeValue(e.data)}` };

    case "oneOf":
    case "anyOf":
      return { path: at, message: `${label} does not match any allowed form` };

    default:
      return { path: at, message: custom ?? `${label} ${e.message ?? "is invalid"}` };
  }
}

/**
 * Validates a parsed document against the khook v1 schema. Returns one
 * diagnostic per distinct problem (rule "schema"), ordered by source position.
 */
/**
 * The schema index is keyed by node identity, but a precompiled validator reports literal
 * copies of the nodes: map each error's parentSchema back to the committed schema's node
 * with the same JSON text (built on the first error; valid specs never pay for it).
 */
let nodesByJson: Map<string, SchemaNode> | undefined;

function canonicalNodes(): Map<string, SchemaNode> {
  if (nodesByJson === undefined) {
    const map = new Map<string, SchemaNode>();
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (isNode(v)) {
        const key = JSON.stringify(v);
        if (!map.has(key)) map.set(key, v);
        Object.values(v).forEach(visit);
      }
    };
    visit(schemaObject());
    nodesByJson = map;
  }
  return nodesByJson;
}

function withCanonicalParent(e: ErrorObject): ErrorObject {
  if (!isNode(e.parentSchema)) return e;
  const node = canonicalNodes().get(JSON.stringify(e.parentSchema));
  return node === undefined || node === e.parentSchema ? e : { ...e, parentSchema: node };
}

/**
 * A cross-field rule written as `if: ... then: {properties: {repo: false}, errorMessage: ...}`
 * fails with a "false schema" error whose parentSchema is `false`; its wording and rule tag are
 * on the `then` node, which the sibling "if" error (same object, same schema prefix) carries.
 */
function withThenSchemas(errors: ErrorObject[]): ErrorObject[] {
  return errors.map((e) => {
    if (e.keyword !== "false schema") return e;
    const m = /^(.*)then\/properties\/[^/]+\/false schema$/.exec(e.schemaPath);
    if (m === null) return e;
    const objectPath = e.instancePath.slice(0, e.instancePath.lastIndexOf("/"));
    const owner = errors.find(
      (f) => f.keyword === "if" && f.instancePath === objectPath && f.schemaPath === `${m[1]}if`,
    );
    const then = owner !== undefined && isNode(owner.parentSchema) ? owner.parentSchema["then"] : undefined;
    return isNode(then) ? { ...e, parentSchema: then } : e;
  });
}

export function validateSchema(
  doc: unknown,
  positionOf: PositionLookup,
  options: ValidateSchemaOptions = {},
): Diagnostic[] {
  const validate = validator();
  if (validate(doc)) return [];
  const index = schemaIndex();
  // A wrong type is the schema's to report: the semantic rules read the value as the type the schema promises.
  const deferred = (e: ErrorObject): boolean =>
    e.keyword !== "type" && isNode(e.parentSchema) && typeof e.parentSchema[SEMANTIC_RULE_KEYWORD] === "string";
  const errors = withThenSchemas((validate.errors ?? []).map(withCanonicalParent)).filter(
    (e) => options.semanticRules === true || !deferred(e),
  );

  // Unions that failed, and which branch (if any) the author meant.
  const unions = new Map<string, UnionFailure>();
  for (const e of errors) {
    const union = isNode(e.parentSchema) ? index.unions.get(e.parentSchema) : undefined;
    if (e.keyword !== "oneOf" || union === undefined) continue;
    const data = e.data;
    const present = isNode(data) ? union.branches.filter((b) => b.key in data) : [];
    unions.set(e.instancePath, {
      union,
      chosen: present.length === 1 ? present[0] : undefined,
      isObject: isNode(data),
    });
  }

  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const e of errors) {
    const raw = translate(e, index, doc, unions);
    if (raw === undefined) continue;
    const key = `${raw.path}\u0000${raw.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const position = positionOf(raw.path);
    const d: Diagnostic = { severity: "error", path: raw.path, message: raw.message, rule: "schema" };
    if (position !== undefined) d.position = position;
    out.push(d);
  }

  out.sort((a, b) => {
    const la = a.position?.line ?? 0;
    const lb = b.position?.line ?? 0;
    if (la !== lb) return la - lb;
    const ca = a.position?.column ?? 0;
    const cb = b.position?.column ?? 0;
    if (ca !== cb) return ca - cb;
    if (a.path !== b.path) return a.path < b.path ? -1 : 1;
    return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
  });
  return out;
}
