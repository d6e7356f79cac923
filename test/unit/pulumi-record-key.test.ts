/**
 * The record key (provider/pulumi/bundle.ts recordKey) is read from the spec's top-level
 * `metadata:` and `state:` entries alone when the spec is a block-style mapping: whatever the
 * spec looks like, the key must be the one the whole document gives.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { parse } from "yaml";
import { recordKey, recordKeyOfDocument, topLevelEntries } from "../../provider/pulumi/bundle.js";
import { SPEC_DEFAULTS } from "../../provider/dsl/defaults.js";
import { SourceText } from "../../provider/dsl/source.js";
import { mergeVariables, substitute, type VariableSources } from "../../provider/dsl/vars.js";

const SOURCES: VariableSources = {
  set: [
    ["ENV", "dev"],
    ["NS", "boot-ns"],
  ],
  varFiles: [],
  secretVars: {},
  envVars: {},
};

/** The key of the whole document, substituted and parsed: what recordKey must give. */
function wholeDocumentKey(text: string): ReturnType<typeof recordKey> {
  try {
    return recordKeyOfDocument(
      parse(substitute(new SourceText(text, undefined), mergeVariables(SOURCES)).text, {
        prettyErrors: false,
        uniqueKeys: false,
      }),
    );
  } catch {
    return undefined;
  }
}

const STEPS =
  "steps:\n  - name: cm\n    apply:\n      namespace: ${NS}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: cm}\n";
const KEYS = { apiVersion: "apiVersion: khook.io/v1\n", kind: "kind: Khook\n", steps: STEPS };
const METADATA = [
  "metadata:\n  name: boot\n",
  "metadata:\n  name: boot-${ENV}\n",
  "metadata: {name: flow-style}\n",
  '"metadata":\n  # the name\n  name: quoted\n',
  "metadata:\n  labels: {a: b}\n  name: 'single'\n",
];
const STATE = [
  "",
  "state: {}\n",
  "state:\n  name: rec-${ENV}\n",
  "state:\n  namespace: ${NS}\n  name: rec\n",
  "state:\n  enabled: false\n",
  "state: {namespace: flow, name: inline}\n",
  "'state':\n\n  name: after-a-blank-line\n",
  "state: null\n",
];

describe("recordKey: read from metadata: and state: alone", () => {
  test("the record key read from metadata: and state: alone equals the whole document's, for any order, comments and quoting", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...METADATA),
        fc.constantFrom(...STATE),
        fc.shuffledSubarray(["apiVersion", "kind", "steps", "metadata", "state"] as const, {
          minLength: 5,
          maxLength: 5,
        }),
        fc.boolean(),
        fc.boolean(),
        (metadata, state, order, marker, comments) => {
          const parts = order.map((k) => (k === "metadata" ? metadata : k === "state" ? state : KEYS[k]));
          const text = (marker ? "---\n" : "") + parts.map((p) => (comments ? `# before\n${p}\n` : p)).join("");
          assert.deepEqual(recordKey(text, SOURCES), wholeDocumentKey(text), text);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("a spec in another form is parsed whole: flow style, several documents, an alias", () => {
    const flow = '{"apiVersion": "khook.io/v1", "kind": "Khook", "metadata": {"name": "json"}, "steps": []}';
    assert.equal(topLevelEntries(flow, ["metadata", "state"]), undefined);
    assert.equal(
      recordKey(flow, SOURCES)?.key,
      `record/${SPEC_DEFAULTS.stateNamespace}/${SPEC_DEFAULTS.stateNamePrefix}json`,
    );
    const aliased = "x-defaults: &d\n  name: from-anchor\nmetadata: {name: a}\nstate: *d\nsteps: []\n";
    assert.equal(topLevelEntries(aliased, ["metadata", "state"]), undefined);
    assert.equal(recordKey(aliased, SOURCES)?.key, `record/${SPEC_DEFAULTS.stateNamespace}/from-anchor`);
    assert.equal(topLevelEntries("metadata: {name: a}\n---\nmetadata: {name: b}\n", ["metadata"]), undefined);
  });

  test("a spec that does not give a name has no key", () => {
    assert.equal(recordKey("metadata: {}\nsteps: []\n", SOURCES), undefined);
    assert.equal(recordKey("metadata: [\n", SOURCES), undefined);
    assert.equal(recordKey("", SOURCES), undefined);
  });
});
