/**
 * Assembles the khook v1 JSON Schema (schema/v1/khook.json) from the definitions: the
 * document's frame and shared fields (definitions.ts) and each step kind's action block, so
 * that every list of kinds in it (the action keys, the editor's branches, `hookMatch.types`,
 * the sentences) is made from the one list of kinds. Build time only (typebox).
 */
import {
  defaults,
  documentRoot,
  hook,
  hookAllow,
  hookEvent,
  hookFunction,
  hookMatch,
  hookWebhook,
  metadata,
  SHARED_DEFS,
  state,
  step,
  type Def,
  type SchemaOptions,
} from "./definitions.js";

/** What a kind contributes: its action block (under its own name) and the definitions it refers to. */
export interface KindDefinitions {
  readonly name: string;
  readonly action: Def;
  readonly defs: readonly Def[];
  /** Its defaults by definition name, written into the fields' `default`s. */
  readonly defaults?: { readonly [definition: string]: Readonly<Record<string, unknown>> };
}

export const SCHEMA_COMMENT =
  "Generated from the DSL's definitions (provider/dsl/definitions.ts) and each step kind's (provider/steps/<kind>/definition.ts) by the build (`npm run build`, or `npm run schema` alone). Do not edit: a build under CI fails, and so does test/unit/schema-generated.test.ts, when this file differs from what they generate.";

export function assembleSchema(kinds: readonly KindDefinitions[]): SchemaOptions {
  const names = kinds.map((k) => k.name);
  const match = hookMatch(names);
  const defs = new Map<string, Def>();
  const add = (d: Def): void => {
    const seen = defs.get(d.name);
    if (seen !== undefined && seen !== d) throw new Error(`two definitions are named ${d.name}`);
    defs.set(d.name, d);
  };
  for (const d of [...SHARED_DEFS, metadata, defaults, state, hook, hookEvent, match, hookAllow]) add(d);
  for (const d of [hookFunction, hookWebhook, step(kinds)]) add(d);
  for (const k of kinds) for (const d of [k.action, ...k.defs]) add(d);
  const plainDefs = Object.fromEntries([...defs].map(([name, d]) => [name, plain(d.schema) as Node]));
  describeKinds(kinds, plainDefs);
  for (const k of kinds) writeDefaults(k, plainDefs);
  const schema: SchemaOptions = { ...documentRoot(names), $comment: SCHEMA_COMMENT, $defs: plainDefs };
  const unresolved = refsOf(schema).filter((r) => !defs.has(r.slice("#/$defs/".length)));
  if (unresolved.length > 0) throw new Error(`the schema refers to undefined definitions: ${unresolved.join(", ")}`);
  return plain(schema) as SchemaOptions;
}

type Node = Record<string, unknown>;

/**
 * The loader's wording that depends on the kinds together: each action block (and each form of
 * one, like delete's) is "<kind> step" in messages; a skipIf word is offered by kind; and a kind
 * without skipIf says which kinds have one.
 */
function describeKinds(kinds: readonly KindDefinitions[], defs: Record<string, Node>): void {
  const formsOf = (k: KindDefinitions): Node[] => {
    const action = defs[k.action.name]!;
    const branches = Array.isArray(action["oneOf"]) ? (action["oneOf"] as Node[]) : [];
    const refs = branches.map((b) =>
      typeof b["$ref"] === "string" ? defs[b["$ref"].slice("#/$defs/".length)] : undefined,
    );
    return refs.length > 0 && refs.every((r) => r !== undefined) ? (refs as Node[]) : [action];
  };
  const skipIfOf = (form: Node): { node: Node; word: string } | undefined => {
    const node = (form["properties"] as Record<string, Node> | undefined)?.["skipIf"];
    const strict = (node?.["anyOf"] as Node[] | undefined)?.find((a) => Array.isArray(a["enum"]));
    const word = (strict?.["enum"] as string[] | undefined)?.[0];
    return node !== undefined && word !== undefined ? { node, word } : undefined;
  };
  const skipPolicies = kinds.flatMap((k) => {
    const word = formsOf(k)
      .map(skipIfOf)
      .find((w) => w !== undefined)?.word;
    return word === undefined ? [] : [`${k.name} (${word})`];
  });
  for (const k of kinds) {
    const action = defs[k.action.name]!;
    const forms = formsOf(k);
    if (forms[0] !== action) {
      action["x-khook-noun"] = `${k.name} step`;
      action["x-khook-forms-of"] = k.name;
      addMessages(action, { oneOf: "{subject} must use exactly one of its forms ({keys}); {present}" });
    }
    for (const form of forms) {
      form["x-khook-noun"] = `${k.name} step`;
      const skipIf = skipIfOf(form);
      if (skipIf !== undefined) {
        const article = /^[aeiou]/.test(k.name) ? "an" : "a";
        addMessages(skipIf.node, {
          enum: `skipIf: {short} is not valid for ${article} ${k.name} step; use ${JSON.stringify(skipIf.word)}`,
        });
      } else {
        addMessages(form, {
          "unknown:skipIf": `skipIf is not supported by ${k.name} steps; only ${skipPolicies.join(", ")} have a skip policy`,
        });
      }
    }
  }
}

/** The kind's defaults table, as the `default` of each field it names. */
function writeDefaults(k: KindDefinitions, defs: Record<string, Node>): void {
  for (const [definition, table] of Object.entries(k.defaults ?? {})) {
    const properties = defs[definition]?.["properties"] as Record<string, Node> | undefined;
    for (const [field, value] of Object.entries(table)) {
      const property = properties?.[field];
      if (property === undefined)
        throw new Error(
          `the ${k.name} kind has a default for ${definition}.${field}, which its definition does not have`,
        );
      property["default"] = value;
    }
  }
}

function addMessages(node: Node, byKeyword: Record<string, string>): void {
  node["x-khook-messages"] = { ...(node["x-khook-messages"] as Record<string, string> | undefined), ...byKeyword };
}

/** The JSON value alone (typebox marks its schemas with non-enumerable properties). */
function plain(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

function refsOf(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) refsOf(x, out);
  else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) {
      if (k === "$ref" && typeof x === "string") out.push(x);
      else refsOf(x, out);
    }
  return out;
}

/** Keys a reader looks for first; the rest keep their order. */
const KEY_ORDER = [
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
  "x-khook-rule",
  "$ref",
  "type",
  "const",
  "enum",
  "enumDescriptions",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "minItems",
  "uniqueItems",
  "default",
  "required",
  "additionalProperties",
];

const WIDTH = 120;

/** JSON as people write it: a value on one line when it fits in 120 columns, else one entry per line. */
export function printSchema(schema: SchemaOptions): string {
  return `${print(schema, "")}\n`;
}

function ordered(o: Record<string, unknown>): [string, unknown][] {
  const rank = (k: string): number => {
    const i = KEY_ORDER.indexOf(k);
    return i === -1 ? KEY_ORDER.length : i;
  };
  return Object.entries(o).sort(([a], [b]) => rank(a) - rank(b));
}

function inline(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(inline).join(", ")}]`;
  if (v !== null && typeof v === "object")
    return `{${ordered(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${inline(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v);
}

function print(v: unknown, indent: string, prefix = ""): string {
  const flat = inline(v);
  if (indent.length + prefix.length + flat.length <= WIDTH || v === null || typeof v !== "object") return flat;
  const inner = `${indent}  `;
  if (Array.isArray(v)) return `[\n${v.map((x) => inner + print(x, inner)).join(",\n")}\n${indent}]`;
  const entries = ordered(v as Record<string, unknown>).map(([k, x]) => {
    const key = `${JSON.stringify(k)}: `;
    return inner + key + print(x, inner, key);
  });
  return `{\n${entries.join(",\n")}\n${indent}}`;
}
