/**
 * Structural validation of a parsed khook document against the committed JSON
 * Schema (schema/v1/khook.json), with ajv's raw errors translated into
 * diagnostics a person understands.
 *
 * The translation leans on the schema's shape rather than on ajv's schemaPath
 * strings (which are relative to whichever $ref was followed): ajv runs with
 * `verbose`, so every error carries the schema object that produced it, and
 * the objects are looked up by identity in an index built once from the schema:
 *
 * - "exactly one of" groups: a node whose `oneOf` branches are all
 *   `{ required: [key] }` (steps, manifest and values sources, rollout). The
 *   per-branch `required` noise is dropped and the `oneOf` failure becomes one
 *   "must have exactly one ... found none / found 2: a, b" message.
 * - discriminated unions: a node whose `oneOf` branches are `$ref`s to objects
 *   each requiring its own key (delete by manifests | resource | release). When
 *   exactly one discriminator is present only that branch's errors are kept.
 * - `$defs` identity: pattern/length errors say what the value should be
 *   (a duration, an RFC 1123 name, a URL, ...), by the def they came from.
 * - `errorMessage` on `then`/`not` subschemas: cross-field rules (chart forms,
 *   namespace vs allNamespaces, patch body vs type) carry their own wording,
 *   which editors that understand the keyword show as well.
 *
 * Division of labour with the loader's semantic rules (provider/dsl/rules.ts):
 * the schema spells out every rule it can, for editors. Subschemas that also
 * have a semantic rule in the loader — with a richer, field-specific message —
 * are tagged `"x-khook-rule": "<rule id>"` (chart-source, chart-auth,
 * wait-for-grammar, apply-wait-for-grammar, rollout-kind, namespace-or-all,
 * resource-reference, patch-body-shape, source-url, local-path). By default
 * validateSchema leaves those to the loader, so every problem is reported once,
 * by its best reporter; `{ semanticRules: true }` reports them here too. A wrong
 * type is never left to the loader: its rules take the schema's types as given.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { createHash } from "node:crypto";
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import type { Diagnostic, PositionLookup } from "../errors.js";
import { SEA_ASSETS, singleExecutableText } from "../sea-assets.js";
import { SKIP_IF_BY_TYPE, STEP_TYPES, type StepType } from "./types.js";
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
function schemaText(): string {
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
//   become ordinary `properties`.

const REFERENCE_REF = "#/$defs/reference";
const EXACTLY_ONE_KEYWORD = "x-khook-exactly-one";
const EDITOR_ONLY_KEYWORD = "x-khook-editor";

export function deriveLoaderSchema(editor: SchemaNode): SchemaNode {
  const derive = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(derive);
    if (!isNode(v)) return v;
    let node: SchemaNode = {};
    for (const [k, x] of Object.entries(v)) node[k] = derive(x);
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
  ajv.addVocabulary([...EDITOR_KEYWORDS, SEMANTIC_RULE_KEYWORD, EXACTLY_ONE_KEYWORD, EDITOR_ONLY_KEYWORD]);
  return ajv;
}

/** The committed schema's text and its sha256, which ties a generated validator to the schema it was built from. */
export function schemaSource(): { text: string; sha256: string } {
  const text = schemaText();
  return { text, sha256: createHash("sha256").update(text).digest("hex") };
}

export const GENERATED_VALIDATOR = "schema-validator.generated.js";

/**
 * The build precompiles the validator (ajv standalone code), which saves a ~200 ms
 * compile on every CLI start; without it, or when the schema changed since, compile now.
 */
function compiledValidator(): ValidateFunction {
  const generated = generatedValidator();
  if (generated !== undefined && generated.schemaSha256 === schemaSource().sha256) return generated;
  return createAjv().compile(schemaObject());
}

/** A literal require, so the CLI bundle carries the validator; absent while the build generates it. */
function generatedValidator(): (ValidateFunction & { schemaSha256?: string }) | undefined {
  try {
    return require("./schema-validator.generated.js") as ValidateFunction & { schemaSha256?: string };
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
  defName: string;
  key: string;
  properties: string[];
}

interface Union {
  branches: UnionBranch[];
}

interface SchemaIndex {
  root: SchemaNode;
  defName: Map<object, string>;
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
    defName: new Map(),
    exactlyOne: new Map(),
    exactlyOneBranches: new Set(),
    unions: new Map(),
    unionBranchDefs: new Map(),
  };
  const defs = isNode(root["$defs"]) ? root["$defs"] : {};
  for (const [name, def] of Object.entries(defs)) if (isNode(def)) index.defName.set(def, name);

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
                defName: index.defName.get(def) ?? "",
                key,
                properties: Object.keys(isNode(def["properties"]) ? def["properties"] : {}),
              });
            }
          });
          if (branches.length === defsOf.length) {
            const union = { branches };
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

function stepTypeAt(segs: readonly string[]): StepType | undefined {
  if (segs[0] !== "steps" || segs.length < 3) return undefined;
  return (STEP_TYPES as readonly string[]).includes(segs[2] ?? "") ? (segs[2] as StepType) : undefined;
}

/** What the object at a path is, for "unknown field ... in X" and "X is missing ...". */
function contextOf(segs: readonly string[], doc: unknown): string {
  if (segs.length === 0) return "the document";
  if (segs[0] === "steps" && segs.length >= 2 && isIndex(segs[1] ?? "")) {
    if (segs.length === 2) return stepLabel(doc, segs[1]!);
    const type = stepTypeAt(segs);
    if (type !== undefined) {
      const tail = segs.slice(3);
      if (tail.length === 0) return `${type} step`;
      if (tail.length === 1 && tail[0] === "auth") return `${type} auth`;
      if (tail.length === 2 && tail[0] === "valuesFrom") return "valuesFrom entry";
      if (tail.length === 2 && tail[0] === "manifests") return "manifest entry";
      if (tail.length === 2 && type === "patch" && tail[0] === "patch") return "json patch operation";
    }
  }
  if (segs.length === 1) return segs[0]!;
  return fieldLabel(segs);
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

// Name rules, by the $def a pattern/length error came from.
const LABEL_RULE = "lowercase letters, digits and '-', starting and ending with a letter or digit";
const SUBDOMAIN_RULE =
  "dot-separated parts of lowercase letters, digits and '-', each starting and ending with a letter or digit";
const NAME_DEFS: Record<string, { noun: string; rule: string; limitNote?: string }> = {
  stepName: { noun: "step name", rule: `an RFC 1123 label: ${LABEL_RULE}, at most 63 characters` },
  namespace: { noun: "namespace", rule: `an RFC 1123 label: ${LABEL_RULE}, at most 63 characters` },
  subdomain: { noun: "name", rule: `an RFC 1123 subdomain: ${SUBDOMAIN_RULE}, at most 253 characters` },
  specName: {
    noun: "metadata.name",
    rule: `an RFC 1123 subdomain: ${SUBDOMAIN_RULE}, at most 241 characters`,
    limitNote: "so that khook-state-<name> fits in 253",
  },
  releaseName: { noun: "Helm release name", rule: `${SUBDOMAIN_RULE}, at most 53 characters` },
};

function nameNoun(defName: string, segs: readonly string[]): string {
  const last = segs[segs.length - 1];
  if (defName === "subdomain") {
    if (last === "serviceAccount") return "ServiceAccount name";
    if (segs[0] === "state" && last === "name") return "state record name";
  }
  return NAME_DEFS[defName]?.noun ?? "name";
}

function patternMessage(defName: string | undefined, value: unknown, label: string, hint: unknown): string {
  const v = JSON.stringify(value);
  switch (defName) {
    case "duration":
      return `${v} is not a duration; use Go syntax like 90s, 5m, 1h30m`;
    case "httpUrl":
      return `${label}: ${v} is not an http:// or https:// URL`;
    case "localPath":
      return `${label}: ${v} is a URL, not a local path; use url: for remote sources`;
    case "kustomizePath":
      return `kustomize: ${v} is not a local path; kustomize sources must start with ./, ../ or / (remote bases are not supported)`;
    case "resourceRef":
      return `${label}: ${v} is not a resource type (pods) or kind/name (daemonset/aws-node)`;
    case "kindName":
      return `${label}: ${v} is not kind/name, e.g. daemonset/aws-node`;
    case "rolloutTarget":
      return `${label}: ${v} is not a rollout target; use deployment/<name>, daemonset/<name> or statefulset/<name>`;
    case "waitCondition":
      return `${label}: ${v} is not a wait condition; use condition=<Name>[=<value>], jsonpath=<expr>[=<value>] or delete`;
    case "applyWaitCondition":
      return `${label}: ${v} is not a wait condition; use condition=<Name>[=<value>] or jsonpath=<expr>[=<value>] (delete is for wait: steps)`;
    default:
      return typeof hint === "string"
        ? `${label}: ${v} is not valid. ${hint}`
        : `${label}: ${v} is not in the expected format`;
  }
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

const SKIP_IF_SUMMARY = STEP_TYPES.flatMap((type): string[] => {
  const word: string | undefined = SKIP_IF_BY_TYPE[type];
  return word === undefined ? [] : [`${type} (${word})`];
}).join(", ");

function exactlyOneMessage(
  segs: readonly string[],
  doc: unknown,
  keys: readonly string[],
  present: readonly string[],
): string {
  const found = present.length === 0 ? "found none" : `found ${present.length}: ${present.join(", ")}`;
  const list = keys.join(", ");
  const type = stepTypeAt(segs);
  if (segs.length === 2 && segs[0] === "steps")
    return `${stepLabel(doc, segs[1]!)} must have exactly one action key (${list}); ${found}`;
  const what = contextOf(segs, doc);
  if (what === "manifest entry" || what === "valuesFrom entry")
    return `${what} must have exactly one source (${list}); ${found}`;
  if (segs.length === 3 && type === "delete")
    return `delete step must use exactly one of its forms (${list}); ${found}`;
  return `${what} must have exactly one of ${list}; ${found}`;
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
  const defName = index.defName.get(parent);
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
      return { path: at, message: `${contextOf(segs, doc)} is missing required field "${missing}"` };
    }

    case "additionalProperties": {
      const field = String(params["additionalProperty"]);
      const where = contextOf(segs, doc);
      const type = stepTypeAt(segs);
      const fieldPath = join(at, field);
      if (field === "skipIf" && segs.length === 3 && type !== undefined) {
        return {
          path: fieldPath,
          message: `skipIf is not supported by ${type} steps; only ${SKIP_IF_SUMMARY} have a skip policy`,
        };
      }
      const allowed = Object.keys(isNode(parent["properties"]) ? parent["properties"] : {});
      let message = `unknown field "${field}" in ${where}`;
      const union = index.unionBranchDefs.get(parent);
      const branch = union?.branches.find((b) => b.def === parent);
      if (union !== undefined && branch !== undefined) {
        message = `unknown field "${field}" in ${where} (by ${branch.key})`;
        const owners = union.branches
          .filter((b) => b !== branch && b.properties.includes(field))
          .map((b) => `delete by ${b.key}`);
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
      if (defName === "duration")
        return {
          path: at,
          message: `${label} must be a duration string like 90s, 5m, 1h30m; found ${describeValue(data)}`,
        };
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
      const type = stepTypeAt(segs);
      if (segs[segs.length - 1] === "skipIf" && segs.length === 4 && type !== undefined) {
        return {
          path: at,
          message: `skipIf: ${shortJson(e.data)} is not valid for ${/^[aeiou]/.test(type) ? "an" : "a"} ${type} step; use ${quoteList(allowed)}`,
        };
      }
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
        return {
          path: join(at, propertyName),
          message:
            `${JSON.stringify(propertyName)} is not a valid ${label === "env" || label.endsWith(".env") ? "environment variable" : "key"} name. ${String(parent["patternErrorMessage"] ?? "")}`.trim(),
        };
      }
      if (defName !== undefined && NAME_DEFS[defName] !== undefined) {
        const rule = NAME_DEFS[defName]!;
        return {
          path: at,
          message: `${JSON.stringify(e.data)} is not a valid ${nameNoun(defName, segs)}: use ${rule.rule}`,
        };
      }
      return { path: at, message: patternMessage(defName, e.data, label, parent["patternErrorMessage"]) };
    }

    case "maxLength": {
      const limit = Number(params["limit"]);
      const data = typeof e.data === "string" ? e.data : "";
      if (defName !== undefined && NAME_DEFS[defName] !== undefined) {
        const note = NAME_DEFS[defName]!.limitNote;
        const shown = data.length > 70 ? `${data.slice(0, 67)}...` : data;
        return {
          path: at,
          message: `${nameNoun(defName, segs)} "${shown}" is ${data.length} characters; the limit is ${limit}${note ? ` (${note})` : ""}`,
        };
      }
      return { path: at, message: `${label} is ${data.length} characters; the limit is ${limit}` };
    }

    case "minLength":
      return { path: at, message: `${label} must not be empty` };

    case "minItems": {
      const limit = Number(params["limit"]);
      if (segs.length === 1 && segs[0] === "steps") return { path: at, message: "steps must list at least one step" };
      if (segs[segs.length - 1] === "manifests")
        return { path: at, message: `${label} must list at least one source (inline, file, url or kustomize)` };
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
