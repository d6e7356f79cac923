/**
 * Drift guard: provider/dsl/types.ts (the TypeScript model) and
 * schema/v1/khook.json (the JSON Schema) describe the same document. This test
 * reads the interfaces with the TypeScript compiler API and compares, for each
 * one, the property names and their required/optional-ness with the schema's
 * `$defs` entry. Adding a field to one side only fails here.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import ts from "typescript";
import { loadLoaderSchema } from "../../provider/dsl/schema.js";
import { SPEC_DEFAULTS } from "../../provider/dsl/defaults.js";
import { API_VERSION, KIND, SKIP_IF_BY_TYPE, STEP_TYPES } from "../../provider/dsl/types.js";
import { repoRoot } from "../harness/util.js";

type Node = { [key: string]: unknown };

const root = repoRoot();
// The loader's schema: the model the loader validates (the editor schema also accepts ${...} references).
const schema = loadLoaderSchema() as Node;

function at(pointer: string): Node {
  let cur: unknown = schema;
  for (const seg of pointer === "" ? [] : pointer.slice(1).split("/")) {
    cur = (cur as Node)[seg.replace(/~1/g, "/").replace(/~0/g, "~")];
    assert.ok(cur !== undefined, `schema has no ${pointer}`);
  }
  return cur as Node;
}

function deref(node: Node): Node {
  const ref = node["$ref"];
  return typeof ref === "string" ? at(ref.slice(1)) : node;
}

/** name -> required?, from a schema object node. */
function schemaShape(node: Node, omit: readonly string[] = []): Record<string, boolean> {
  const props = Object.keys((node["properties"] as Node | undefined) ?? {}).filter((k) => !omit.includes(k));
  const required = new Set((node["required"] as string[] | undefined) ?? []);
  for (const r of required)
    assert.ok(props.includes(r) || omit.includes(r), `required "${r}" is not a declared property`);
  return Object.fromEntries(props.sort().map((p) => [p, required.has(p)]));
}

// --- TypeScript side --------------------------------------------------------

const typesFile = path.join(root, "provider", "dsl", "types.ts");
const program = ts.createProgram([typesFile], {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  types: [],
});
const checker = program.getTypeChecker();
const source = program.getSourceFile(typesFile)!;

function declaration(name: string): ts.InterfaceDeclaration | ts.TypeAliasDeclaration {
  for (const stmt of source.statements) {
    if ((ts.isInterfaceDeclaration(stmt) || ts.isTypeAliasDeclaration(stmt)) && stmt.name.text === name) return stmt;
  }
  throw new Error(`types.ts declares no ${name}`);
}

function typeOf(name: string): ts.Type {
  return checker.getTypeAtLocation(declaration(name).name);
}

function tsShape(type: ts.Type, omit: readonly string[] = []): Record<string, boolean> {
  const props = checker
    .getPropertiesOfType(type)
    .filter((s) => !omit.includes(s.name))
    .map((s) => [s.name, (s.flags & ts.SymbolFlags.Optional) === 0] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(props);
}

function propertyType(type: ts.Type, prop: string): ts.Type {
  const sym = checker.getPropertyOfType(type, prop);
  assert.ok(sym, `no property ${prop}`);
  return checker.getNonNullableType(checker.getTypeOfSymbol(sym));
}

function stringLiterals(type: ts.Type): string[] {
  const members = type.isUnion() ? type.types : [type];
  return members
    .filter((t) => !(t.flags & ts.TypeFlags.Undefined))
    .map((t) => {
      assert.ok(t.isStringLiteral(), `expected a string literal, got ${checker.typeToString(t)}`);
      return t.value;
    })
    .sort();
}

// --- The mapping ------------------------------------------------------------

/** Interface name -> schema pointer (and properties the schema node has that the interface does not). */
const OBJECTS: Record<string, { pointer: string; omit?: readonly string[] }> = {
  KhookDocument: { pointer: "" },
  Metadata: { pointer: "/$defs/metadata" },
  StepDefaults: { pointer: "/$defs/defaults" },
  StateConfig: { pointer: "/$defs/state" },
  // The step node declares the common fields plus every action key (exactly one is required via oneOf).
  StepCommon: { pointer: "/$defs/step", omit: STEP_TYPES },
  BasicAuth: { pointer: "/$defs/basicAuth" },
  JsonPatchOperation: { pointer: "/$defs/jsonPatchOperation" },
  HelmAction: { pointer: "/$defs/helmAction" },
  ApplyAction: { pointer: "/$defs/applyAction" },
  DeleteManifestsAction: { pointer: "/$defs/deleteByManifests" },
  DeleteResourceAction: { pointer: "/$defs/deleteByResource" },
  DeleteReleaseAction: { pointer: "/$defs/deleteByRelease" },
  PatchAction: { pointer: "/$defs/patchAction" },
  WaitAction: { pointer: "/$defs/waitAction" },
  RolloutAction: { pointer: "/$defs/rolloutAction" },
  JobAction: { pointer: "/$defs/jobAction" },
  HookSpec: { pointer: "/$defs/hook" },
  HookMatch: { pointer: "/$defs/hookMatch" },
  // exec is required through a tagged allOf (the loader words it); image exists only to be rejected with a pointer to exec.
  HookFunction: { pointer: "/$defs/hookFunction", omit: ["exec", "image"] },
  HookWebhook: { pointer: "/$defs/hookWebhook" },
  HookAllow: { pointer: "/$defs/hookAllow" },
};

/** Unions of single-key objects ("exactly one source") -> schema pointer. */
const SOURCE_UNIONS: Record<string, string> = {
  ManifestSource: "/$defs/manifestSource",
  ValuesSource: "/$defs/valuesSource",
};

/** Unions of whole forms -> schema pointer of a oneOf over $refs. */
const FORM_UNIONS: Record<string, string> = {
  DeleteAction: "/$defs/deleteAction",
};

/** Schema object nodes that legitimately have no interface of their own. */
const UNMAPPED_DEFS: readonly string[] = [];

const pointerOfInterface = (name: string): string | undefined =>
  OBJECTS[name]?.pointer ?? SOURCE_UNIONS[name] ?? FORM_UNIONS[name];

// --- Tests ------------------------------------------------------------------

for (const [name, { pointer, omit }] of Object.entries(OBJECTS)) {
  test(`drift: ${name} has the same fields and required-ness as ${pointer || "the schema root"}`, () => {
    assert.deepEqual(schemaShape(at(pointer), omit), tsShape(typeOf(name), omit));
  });
}

for (const [name, pointer] of Object.entries(SOURCE_UNIONS)) {
  test(`drift: ${name} offers the same sources as ${pointer} (exactly one key each)`, () => {
    const type = typeOf(name);
    assert.ok(type.isUnion(), `${name} is a union`);
    const tsKeys = type.types.map((member) => {
      const shape = tsShape(member);
      const keys = Object.keys(shape);
      assert.equal(keys.length, 1, `${name} member ${checker.typeToString(member)} has exactly one key`);
      assert.equal(shape[keys[0]!], true, `${name} member key ${keys[0]} is required`);
      return keys[0]!;
    });
    const node = at(pointer);
    assert.deepEqual(Object.keys(node["properties"] as Node).sort(), [...tsKeys].sort());
    assert.deepEqual(
      schemaShape(node),
      Object.fromEntries([...tsKeys].sort().map((k) => [k, false])),
      "each key optional on the node",
    );
    const branches = (node["oneOf"] as Node[]).map((b) => b["required"]);
    assert.deepEqual(
      branches,
      tsKeys.map((k) => [k]),
      "oneOf requires exactly one of the keys, in the union's order",
    );
    assert.equal(node["additionalProperties"], false);
  });
}

for (const [name, pointer] of Object.entries(FORM_UNIONS)) {
  test(`drift: ${name}'s forms are the oneOf branches of ${pointer}`, () => {
    const decl = declaration(name);
    assert.ok(ts.isTypeAliasDeclaration(decl) && ts.isUnionTypeNode(decl.type), `${name} is a union alias`);
    const memberNames = decl.type.types.map((t) =>
      ts.isTypeReferenceNode(t) ? t.typeName.getText(source) : t.getText(source),
    );
    const refs = (at(pointer)["oneOf"] as Node[]).map((b) => b["$ref"]);
    assert.deepEqual(
      refs,
      memberNames.map((m) => `#${pointerOfInterface(m)}`),
    );
  });
}

test("drift: the action keys equal STEP_TYPES, and each refers to its ActionByType interface's def", () => {
  const step = at("/$defs/step");
  const oneOfKeys = (step["oneOf"] as Node[]).map((b) => (b["required"] as string[])[0]);
  assert.deepEqual(oneOfKeys, [...STEP_TYPES]);
  const byType = typeOf("ActionByType");
  assert.deepEqual(Object.keys(tsShape(byType)).sort(), [...STEP_TYPES].sort());
  for (const t of STEP_TYPES) {
    const actionName = checker.typeToString(propertyType(byType, t));
    const pointer = pointerOfInterface(actionName);
    assert.ok(pointer !== undefined, `ActionByType.${t} (${actionName}) is mapped`);
    assert.equal((step["properties"] as Record<string, Node>)[t]?.["$ref"], `#${pointer}`, `step.${t} -> ${pointer}`);
  }
});

test("drift: the per-type skipIf enums equal SKIP_IF_BY_TYPE and the interfaces' literal types", () => {
  const step = at("/$defs/step");
  for (const t of STEP_TYPES) {
    const action = deref((step["properties"] as Record<string, Node>)[t]!);
    const branches = Array.isArray(action["oneOf"]) ? (action["oneOf"] as Node[]) : [];
    const forms =
      branches.length > 0 && branches.every((b) => typeof b["$ref"] === "string") ? branches.map(deref) : [action];
    const word = SKIP_IF_BY_TYPE[t];
    for (const form of forms) {
      const skipIf = (form["properties"] as Record<string, Node>)["skipIf"];
      if (word === undefined) {
        assert.equal(skipIf, undefined, `${t} steps have no skipIf`);
      } else {
        assert.deepEqual(skipIf?.["enum"], [word], `${t}.skipIf enum`);
      }
    }
    const actionName = checker.typeToString(propertyType(typeOf("ActionByType"), t));
    const actionType = typeOf(actionName);
    if (word !== undefined)
      assert.deepEqual(stringLiterals(propertyType(actionType, "skipIf")), [word], `${actionName}.skipIf literal`);
  }
});

test("drift: enums and constants agree (onError, patch type, json patch op, apiVersion, kind)", () => {
  assert.deepEqual([...(at("/$defs/onError")["enum"] as string[])].sort(), stringLiterals(typeOf("OnError")));
  assert.deepEqual(
    [...(at("/$defs/patchAction/properties/type")["enum"] as string[])].sort(),
    stringLiterals(typeOf("PatchType")),
  );
  assert.deepEqual(
    [...(at("/$defs/jsonPatchOperation/properties/op")["enum"] as string[])].sort(),
    stringLiterals(propertyType(typeOf("JsonPatchOperation"), "op")),
  );
  assert.equal(at("/properties/apiVersion")["const"], API_VERSION);
  assert.equal(at("/properties/kind")["const"], KIND);
});

test("drift: schema defaults equal SPEC_DEFAULTS", () => {
  const defaults = at("/$defs/defaults/properties");
  assert.equal((defaults["timeout"] as Node)["default"], SPEC_DEFAULTS.timeout);
  assert.equal((defaults["retries"] as Node)["default"], SPEC_DEFAULTS.retries);
  assert.equal((defaults["retryDelay"] as Node)["default"], SPEC_DEFAULTS.retryDelay);
  assert.equal((defaults["onError"] as Node)["default"], SPEC_DEFAULTS.onError);
  assert.equal(at("/$defs/state/properties/namespace")["default"], SPEC_DEFAULTS.stateNamespace);
  for (const def of ["helmAction", "patchAction", "jobAction", "deleteByRelease"]) {
    assert.equal(
      at(`/$defs/${def}/properties/namespace`)["default"],
      SPEC_DEFAULTS.namespace,
      `${def}.namespace default`,
    );
  }
});

test("drift: every object def in the schema is mapped to an interface", () => {
  const mapped = new Set([...Object.values(OBJECTS).map((o) => o.pointer), ...Object.values(SOURCE_UNIONS)]);
  const defs = at("/$defs");
  const objectDefs = Object.entries(defs)
    .filter(([, d]) => (d as Node)["properties"] !== undefined)
    .map(([name]) => `/$defs/${name}`);
  const unmapped = objectDefs.filter((p) => !mapped.has(p) && !UNMAPPED_DEFS.includes(p));
  assert.deepEqual(unmapped, []);
});
