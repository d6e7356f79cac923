/**
 * Drift guard for the lists of step types and hook events in the JSON Schema
 * (schema/v1/khook.json, the editor's schema as committed): every one of them
 * equals STEP_TYPES or HOOK_EVENTS (provider/dsl/types.ts). The compiler asks
 * for a new type's or event's entry in every TypeScript table; the schema is
 * JSON, so these tests ask for it there: the step's exactly-one group and action
 * keys, the editor's "one action key" branches, exclusion lists and completions,
 * hookMatch.types, the hookEvent enum and its descriptions, and every sentence
 * that lists the types or the events.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { HOOK_EVENTS, STEP_TYPES } from "../../provider/dsl/types.js";
import { repoRoot } from "./support/spec-files.js";

type Node = { [key: string]: unknown };

const schema = JSON.parse(fs.readFileSync(path.join(repoRoot(), "schema", "v1", "khook.json"), "utf8")) as Node;
const defs = schema["$defs"] as Record<string, Node>;
const step = defs["step"]!;
const types: readonly string[] = STEP_TYPES;
const events: readonly string[] = HOOK_EVENTS;

const isNode = (v: unknown): v is Node => v !== null && typeof v === "object" && !Array.isArray(v);
const editorBranches = (node: Node): Node[] =>
  ((node["allOf"] as unknown[] | undefined) ?? []).filter(isNode).filter((b) => b["x-khook-editor"] === true);
/** `helm, apply, ..., rollout or job`: how the schema's sentences list the step types. */
const spoken = (list: readonly string[]): string => `${list.slice(0, -1).join(", ")} or ${list.at(-1)!}`;

/** Every node of the schema with its JSON pointer. */
function walk(node: unknown, at = "", out: [string, unknown][] = []): [string, unknown][] {
  out.push([at, node]);
  if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${at}/${i}`, out));
  else if (isNode(node))
    for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, out);
  return out;
}

test("drift: the step's exactly-one group and its action keys are STEP_TYPES", () => {
  assert.deepEqual(step["x-khook-exactly-one"], types);
  assert.deepEqual(
    Object.keys(step["patternProperties"] as Node),
    types.map((t) => `^${t}$`),
  );
  for (const t of types) {
    assert.deepEqual(
      (step["patternProperties"] as Record<string, Node>)[`^${t}$`],
      { $ref: `#/$defs/${t}Action` },
      `${t}: its action def is ${t}Action`,
    );
    assert.ok(defs[`${t}Action`] !== undefined, `the schema defines ${t}Action`);
  }
});

test("drift: the editor's one-action-key branches, exclusion lists and completions name every step type", () => {
  const branches = editorBranches(step);
  const anyOf = branches.find((b) => Array.isArray(b["anyOf"]))!["anyOf"] as Node[];
  assert.deepEqual(
    anyOf.map((b) => (b["required"] as string[])[0]),
    types,
    "A step needs one action key: one branch per type",
  );
  for (const b of anyOf) assert.equal(b["errorMessage"], `A step needs one action key: ${spoken(types)}.`);
  for (const t of types) {
    const branch = branches.find(
      (b) => isNode(b["if"]) && JSON.stringify(b["if"]) === JSON.stringify({ required: [t] }),
    );
    assert.ok(branch !== undefined, `an editor branch excludes the other keys once ${t} is present`);
    const then = branch["then"] as Node;
    assert.deepEqual(
      then["properties"],
      Object.fromEntries(types.filter((o) => o !== t).map((o) => [o, false])),
      `${t} excludes every other type`,
    );
    assert.equal(
      then["errorMessage"],
      `A step has exactly one action key, and this step already has ${t}: put this action in a step of its own.`,
    );
  }
  const none = branches.find((b) => isNode(b["if"]) && isNode(b["if"]["not"]))!;
  assert.deepEqual(
    (none["if"] as { not: { anyOf: Node[] } }).not.anyOf.map((b) => (b["required"] as string[])[0]),
    types,
    "no action key yet: offer every type",
  );
  assert.deepEqual(
    (none["then"] as Node)["properties"],
    Object.fromEntries(types.map((t) => [t, { $ref: `#/$defs/${t}Action` }])),
  );
});

test("drift: hookMatch.types offers STEP_TYPES, and the hookEvent enum is HOOK_EVENTS with one description each", () => {
  const items = ((defs["hookMatch"]!["properties"] as Record<string, Node>)["types"]!["items"] as { anyOf: Node[] })
    .anyOf;
  assert.deepEqual(items.find((b) => Array.isArray(b["enum"]))!["enum"], types);
  const event = (defs["hookEvent"]!["anyOf"] as Node[]).find((b) => Array.isArray(b["enum"]))!;
  assert.deepEqual(event["enum"], events);
  assert.equal((event["enumDescriptions"] as string[]).length, events.length, "one enumDescription per event");
  assert.deepEqual((defs["hook"]!["properties"] as Record<string, Node>)["on"]!["items"], {
    $ref: "#/$defs/hookEvent",
  });
});

test("drift: every list in the schema made only of step types or only of events is the whole list", () => {
  for (const [at, node] of walk(schema)) {
    if (Array.isArray(node) && node.length > 1 && node.every((v) => typeof v === "string")) {
      if (node.every((v) => types.includes(v as string))) assert.deepEqual(node, types, `${at} lists step types`);
      if (node.every((v) => events.includes(v as string))) assert.deepEqual(node, events, `${at} lists hook events`);
    }
  }
});

test("drift: every sentence of the schema that lists the step types or the events names all of them", () => {
  const word = (w: string): RegExp => new RegExp(`(?<![\\w-])${w}(?![\\w-])`);
  let typeSentences = 0;
  let eventSentences = 0;
  for (const [at, node] of walk(schema)) {
    if (typeof node !== "string" || at.includes("/enumDescriptions/")) continue;
    // A sentence naming three types or more is a list of them (fewer: it talks about those types).
    if (types.filter((t) => new RegExp(`(?<![\\w-])${t}(?![\\w-])[,)]| or ${t}\\b`).test(node)).length >= 3) {
      typeSentences++;
      assert.ok(
        node.includes(spoken(types)) || node.includes(types.join(", ")),
        `${at} lists step types but not all of them: ${node}`,
      );
    }
    if (events.filter((e) => word(e).test(node)).length >= 2) {
      eventSentences++;
      for (const e of events) assert.match(node, word(e), `${at} lists hook events but not ${e}: ${node}`);
    }
  }
  assert.ok(
    typeSentences >= 3 && eventSentences >= 2,
    `the sentences were found (${typeSentences} listing types, ${eventSentences} listing events)`,
  );
});
