/**
 * The editor schema (schema/v1/khook.json) as an editor sees it: the real yaml-language-server,
 * driven over LSP stdio. References are accepted wherever substitution can put a value, the
 * cross-field rules put their message on the offending key, and completion offers what fits.
 * The loader validates against a strict variant derived from the same file (last tests).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { KhookError } from "../../provider/errors.js";
import { loadSpec } from "../../provider/load-spec.js";
import { loadLoaderSchema } from "../../provider/dsl/schema.js";
import { KIND_NAMES } from "../../provider/steps/index.js";
import { repoRoot, specText, tempSpecDir } from "./support/spec-files.js";
import {
  YamlLanguageServer,
  withLocalSchema,
  type LspCompletionItem,
  type LspDiagnostic,
} from "./support/yaml-language-server.js";

const root = repoRoot();
const schemaFile = path.join(root, "schema", "v1", "khook.json");

let server: YamlLanguageServer;
let documents = 0;
const nextUri = (): string => `file:///khook-editor-test/spec-${++documents}.khook.yaml`;

before(async () => {
  server = await YamlLanguageServer.start();
});
after(async () => {
  await server.stop();
});

/** The spec as the editor holds it: with a modeline naming the committed schema. */
function editorText(text: string): string {
  return withLocalSchema(text, schemaFile);
}

function show(ds: readonly LspDiagnostic[]): string {
  return JSON.stringify(ds.map((d) => `${d.range.start.line}:${d.range.start.character} ${d.message}`));
}

/** Line and character of the first occurrence of `needle` (a key, e.g. "      repo:"), trimmed of leading spaces. */
function positionOf(text: string, needle: string): { line: number; character: number } {
  const offset = text.indexOf(needle);
  assert.ok(offset >= 0, `"${needle}" is in the text`);
  const before = text.slice(0, offset + (needle.length - needle.trimStart().length));
  const lines = before.split("\n");
  return { line: lines.length - 1, character: lines[lines.length - 1]!.length };
}

async function diagnosticsOf(text: string): Promise<{ text: string; diagnostics: LspDiagnostic[] }> {
  const full = editorText(text);
  return { text: full, diagnostics: await server.diagnose(nextUri(), full) };
}

/** Completions at the `|` marker. */
async function completionsAt(textWithCursor: string): Promise<LspCompletionItem[]> {
  const full = editorText(textWithCursor);
  const { line, character } = positionOf(full, "|");
  return server.complete(nextUri(), full.replace("|", ""), line, character);
}

const inserted = (item: LspCompletionItem): string => item.textEdit?.newText ?? item.insertText ?? item.label;

const ENVELOPE = "apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: test\n";

describe("editor schema: valid specs get no diagnostics", () => {
  const examples = fs.readdirSync(path.join(root, "examples")).filter((f) => f.endsWith(".khook.yaml"));

  test("editor schema: every example validates with no diagnostics", async () => {
    assert.ok(examples.length >= 10, `found the examples: ${examples.join(", ")}`);
    for (const file of examples) {
      const { diagnostics } = await diagnosticsOf(fs.readFileSync(path.join(root, "examples", file), "utf8"));
      assert.deepEqual(diagnostics, [], `${file}: ${show(diagnostics)}`);
    }
  });

  test("editor schema: a ${...} reference is accepted in every typed, patterned and enumerated field", async () => {
    const { diagnostics } = await diagnosticsOf(REFERENCES_EVERYWHERE);
    assert.deepEqual(diagnostics, [], show(diagnostics));
  });
});

describe("editor schema: mistakes are still flagged", () => {
  test("editor schema: an unknown key is flagged on the key", async () => {
    const { text, diagnostics } = await diagnosticsOf(
      `${ENVELOPE}steps:\n  - name: a\n    bogus: 1\n    wait:\n      for: delete\n      on: pods\n`,
    );
    expectAt(diagnostics, positionOf(text, "    bogus:"), /Property bogus is not allowed/);
  });

  test("editor schema: a wrong action key is flagged, and the step is told it needs one", async () => {
    const { text, diagnostics } = await diagnosticsOf(`${ENVELOPE}steps:\n  - name: a\n    helmm:\n      chart: x\n`);
    expectAt(diagnostics, positionOf(text, "    helmm:"), /Property helmm is not allowed/);
    assert.ok(
      diagnostics.some((d) =>
        d.message.includes(
          `A step needs one action key: ${KIND_NAMES.slice(0, -1).join(", ")} or ${KIND_NAMES.at(-1)!}`,
        ),
      ),
      show(diagnostics),
    );
  });

  test("editor schema: a skipIf word of another step type is flagged with the right one", async () => {
    for (const [type, block, wrong, right] of [
      ["helm", "helm:\n      chart: ./c", "exists", "installed"],
      ["apply", "apply:\n      manifests:\n        - file: ./m.yaml", "succeeded", "exists"],
      ["job", "job:\n      image: busybox", "installed", "succeeded"],
    ] as const) {
      const { text, diagnostics } = await diagnosticsOf(
        `${ENVELOPE}steps:\n  - name: a\n    ${block}\n      skipIf: ${wrong}\n`,
      );
      expectAt(
        diagnostics,
        {
          ...positionOf(text, `skipIf: ${wrong}`),
          character: positionOf(text, `skipIf: ${wrong}`).character + "skipIf: ".length,
        },
        new RegExp(`Valid values: "${right}"`),
        type,
      );
    }
  });

  test("editor schema: a literal that is not a duration is still flagged", async () => {
    const { text, diagnostics } = await diagnosticsOf(
      `${ENVELOPE}steps:\n  - name: a\n    timeout: soon\n    wait:\n      for: delete\n      on: pods\n`,
    );
    const at = positionOf(text, "timeout: soon");
    expectAt(diagnostics, { line: at.line, character: at.character + "timeout: ".length }, /Not a duration/);
  });
});

/** Each cross-field rule, with its message on the key that breaks it. */
const CROSS_FIELD_RULES: { rule: string; steps: string; key: string; message: RegExp; hooks?: string }[] = [
  {
    rule: "two action keys",
    steps: "  - name: a\n    helm:\n      chart: ./c\n    apply:\n      manifests:\n        - file: ./m.yaml\n",
    key: "    apply:",
    message: /^A step has exactly one action key, and this step already has helm: put this action in a step of its own/,
  },
  {
    rule: "repo with an oci:// chart",
    steps:
      "  - name: a\n    helm:\n      chart: oci://registry.example/charts/app:1.0.0\n      repo: https://charts.example\n",
    key: "      repo:",
    message: /^repo: is only for bare chart names; an oci:\/\/ reference or a local path must not set it/,
  },
  {
    rule: "a local chart with version",
    steps: "  - name: a\n    helm:\n      chart: ./charts/app\n      version: 1.2.3\n",
    key: "      version:",
    message: /^a local chart path takes neither version:/,
  },
  {
    rule: "URL userinfo with auth",
    steps:
      "  - name: a\n    helm:\n      chart: app\n      repo: https://user:pass@charts.example\n      auth:\n        username: user\n        password: pass\n",
    key: "      auth:",
    message: /^credentials come either as userinfo in the URL or as an auth: block, never both/,
  },
  {
    rule: "a json patch with a mapping",
    steps:
      "  - name: a\n    patch:\n      target: deployment/x\n      type: json\n      patch:\n        spec:\n          replicas: 2\n",
    key: "      patch:\n        spec",
    message: /^type: json needs a list of operations/,
  },
  {
    rule: "namespace with allNamespaces",
    steps: "  - name: a\n    wait:\n      for: delete\n      on: pods\n      namespace: a\n      allNamespaces: true\n",
    key: "      namespace:",
    message: /^namespace and allNamespaces: true are mutually exclusive/,
  },
  {
    rule: "rollout restart with status",
    steps: "  - name: a\n    rollout:\n      restart: deployment/a\n      status: deployment/a\n      namespace: a\n",
    key: "      status:",
    message: /^rollout takes exactly one of restart: or status:, and this one already has restart/,
  },
  {
    rule: "a container hook function (image:)",
    hooks:
      "hooks:\n  - name: h\n    on:\n      - post-render\n    function:\n      exec: ./fn\n      image: gcr.io/fn:1\n",
    steps: "  - name: a\n    wait:\n      for: delete\n      on: pods\n",
    key: "      image:",
    message: /^container functions \(image:\) are not supported/,
  },
];

describe("editor schema: cross-field rules put their message on the offending key", () => {
  for (const c of CROSS_FIELD_RULES) {
    test(`editor schema: ${c.rule} is reported on the offending key`, async () => {
      const { text, diagnostics } = await diagnosticsOf(`${ENVELOPE}${c.hooks ?? ""}steps:\n${c.steps}`);
      expectAt(diagnostics, positionOf(text, c.key), c.message);
      for (const d of diagnostics)
        assert.doesNotMatch(
          d.message,
          /Matches (a schema that is not allowed|multiple schemas)/,
          "no anonymous not/oneOf message",
        );
    });
  }
});

describe("editor schema: completion", () => {
  test("editor schema: skipIf completes the one word each step type accepts", async () => {
    for (const [block, word] of [
      ["helm:\n      chart: ./c", "installed"],
      ["apply:\n      manifests:\n        - file: ./m.yaml", "exists"],
      ["job:\n      image: busybox", "succeeded"],
    ] as const) {
      const items = await completionsAt(`${ENVELOPE}steps:\n  - name: a\n    ${block}\n      skipIf: |\n`);
      assert.deepEqual(items.map(inserted), [word], `${block.split(":")[0]}: ${JSON.stringify(items)}`);
    }
  });

  test("editor schema: wait.for completes the condition=, jsonpath= and delete forms", async () => {
    const items = await completionsAt(`${ENVELOPE}steps:\n  - name: a\n    wait:\n      on: pods\n      for: |\n`);
    const texts = items.map(inserted);
    for (const form of [/^condition=/, /^jsonpath=/, /^delete$/])
      assert.ok(
        texts.some((t) => form.test(t)),
        `${form.source} in ${JSON.stringify(texts)}`,
      );
  });

  test("editor schema: apply.waitFor completes the condition= and jsonpath= forms, not delete", async () => {
    const items = await completionsAt(
      `${ENVELOPE}steps:\n  - name: a\n    apply:\n      manifests:\n        - file: ./m.yaml\n      waitFor: |\n`,
    );
    const texts = items.map(inserted);
    for (const form of [/^condition=/, /^jsonpath=/])
      assert.ok(
        texts.some((t) => form.test(t)),
        `${form.source} in ${JSON.stringify(texts)}`,
      );
    assert.ok(!texts.includes("delete"), JSON.stringify(texts));
  });

  test("editor schema: completing an action key inserts the key with its colon and only required fields", async () => {
    const items = await completionsAt(`${ENVELOPE}steps:\n  - name: a\n    |\n`);
    const defs = (
      loadLoaderSchema() as { $defs: Record<string, { required?: string[]; properties?: Record<string, unknown> }> }
    ).$defs;
    for (const type of ["helm", "apply", "delete", "patch", "wait", "rollout", "job"]) {
      const item = items.find((i) => i.label === type);
      assert.ok(item !== undefined, `${type} is offered: ${JSON.stringify(items.map((i) => i.label))}`);
      const text = inserted(item);
      assert.match(
        text,
        new RegExp(`^${type}:`),
        `${type} inserts "${type}:", not a bare word: ${JSON.stringify(text)}`,
      );
      const def = defs[`${type}Action`]!;
      const optional = Object.keys(def.properties ?? {}).filter((k) => !(def.required ?? []).includes(k));
      for (const key of optional)
        assert.doesNotMatch(
          text,
          new RegExp(`\\n\\s*${key}:`),
          `${type} skeleton inserts optional ${key}: ${JSON.stringify(text)}`,
        );
    }
  });

  test("editor schema: a step that already has an action key is offered none of the others", async () => {
    const items = await completionsAt(`${ENVELOPE}steps:\n  - name: a\n    helm:\n      chart: ./c\n    |\n`);
    const labels = items.map((i) => i.label);
    assert.ok(
      labels.includes("needs") && labels.includes("timeout"),
      `the common fields are offered: ${JSON.stringify(labels)}`,
    );
    for (const other of ["helm", "apply", "delete", "patch", "wait", "rollout", "job"])
      assert.ok(!labels.includes(other), `${other} is offered: ${JSON.stringify(labels)}`);
  });
});

describe("the loader's schema is derived from the editor schema and stays strict", () => {
  function loadProblems(text: string, set: [string, string][]): string[] {
    const dir = tempSpecDir({ "spec.yaml": text });
    try {
      loadSpec({ file: path.join(dir, "spec.yaml"), env: {}, set });
      return [];
    } catch (e) {
      assert.ok(e instanceof KhookError && e.exitCode === 2, String(e));
      return e.diagnostics.map((d) => `${d.path}: ${d.message}`);
    }
  }

  test("loader schema: after substitution a value must still fit its field", () => {
    const text = specText(
      "  - name: a\n    timeout: ${WINDOW}\n    retries: ${RETRIES}\n    wait:\n      for: delete\n      on: pods\n      allNamespaces: ${ALL}\n",
    );
    assert.deepEqual(
      loadProblems(text, [
        ["WINDOW", "5m"],
        ["RETRIES", "2"],
        ["ALL", "true"],
      ]),
      [],
    );
    const problems = loadProblems(text, [
      ["WINDOW", "soon"],
      ["RETRIES", "many"],
      ["ALL", "maybe"],
    ]);
    assert.ok(
      problems.some((p) => p.startsWith("/steps/0/timeout: ") && /not a duration/.test(p)),
      JSON.stringify(problems),
    );
    assert.ok(
      problems.some((p) => p.startsWith("/steps/0/retries: ")),
      JSON.stringify(problems),
    );
    assert.ok(
      problems.some((p) => p.startsWith("/steps/0/wait/allNamespaces: ")),
      JSON.stringify(problems),
    );
  });

  test("loader schema: a literal ${...} left by the $${ escape is not a reference", () => {
    const problems = loadProblems(
      specText("  - name: a\n    wait:\n      for: delete\n      on: pods\n      namespace: $${NS}\n"),
      [],
    );
    assert.ok(
      problems.some((p) => p.startsWith("/steps/0/wait/namespace: ")),
      JSON.stringify(problems),
    );
  });

  test("loader schema: no reference alternative and no editor-only subschema survives the derivation", () => {
    const text = JSON.stringify(loadLoaderSchema());
    for (const marker of ["#/$defs/reference", "x-khook-editor", "x-khook-exactly-one"])
      assert.ok(!text.includes(marker), `${marker} is in the loader's schema`);
  });
});

function expectAt(
  diagnostics: readonly LspDiagnostic[],
  at: { line: number; character: number },
  message: RegExp,
  what = "",
): void {
  const hit = diagnostics.find((d) => message.test(d.message));
  assert.ok(hit !== undefined, `${what} expected ${message.source}, got ${show(diagnostics)}`);
  assert.deepEqual(hit.range.start, at, `${what} the message is on the offending key: ${show(diagnostics)}`);
}

/** A reference in every typed, patterned or enumerated scalar of the schema. */
const REFERENCES_EVERYWHERE = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: \${SPEC_NAME}
defaults:
  timeout: \${TIMEOUT:-5m}
  retries: \${RETRIES:-1}
  retryDelay: \${DELAY}
  onError: \${ON_ERROR:-fail}
state:
  enabled: \${USE_STATE:-false}
  namespace: \${STATE_NS}
  name: \${STATE_NAME}
hooks:
  - name: \${HOOK}
    on:
      - \${EVENT}
    match:
      steps:
        - \${FIRST}
      types:
        - \${TYPE}
    priority: \${PRIORITY}
    failurePolicy: \${POLICY}
    function:
      exec: \${FUNCTION}
      timeout: \${FUNCTION_TIMEOUT}
  - name: webhook
    on:
      - post-apply
    webhook:
      url: \${HOOK_URL}
      timeout: \${HOOK_TIMEOUT}
steps:
  - name: \${FIRST}
    timeout: \${WINDOW:-5|printf "%sm"}
    retries: \${R}
    retryDelay: \${RD}
    onError: \${OE}
    helm:
      chart: \${CHART}
      repo: \${REPO}
      version: \${VERSION}
      release: \${RELEASE}
      namespace: \${APP|lower|trunc 63}
      createNamespace: \${CREATE}
      skipIf: \${SKIP}
      atomic: \${ATOMIC}
      wait: \${WAIT}
      valuesFrom:
        - file: \${VALUES_FILE}
        - url: \${VALUES_URL}
  - name: apply-\${ENV}
    needs:
      - \${FIRST}
    apply:
      namespace: ns-\${ENV}
      createNamespace: \${CREATE}
      skipIf: \${SKIP_APPLY}
      serverSide: \${SSA}
      waitFor: \${WAIT_FOR}
      manifests:
        - file: \${MANIFEST}
        - url: \${MANIFEST_URL}
        - kustomize: \${OVERLAY}
  - name: delete-by-resource
    delete:
      resource: \${RESOURCE}
      namespace: \${NS}
      allNamespaces: \${ALL}
      ignoreNotFound: \${IGNORE}
  - name: delete-by-release
    delete:
      release: \${REL}
      namespace: \${NS}
      ignoreNotFound: \${IGNORE}
  - name: patch
    patch:
      target: \${TARGET}
      namespace: \${NS}
      type: \${PATCH_TYPE}
      patch:
        - op: \${OP}
          path: \${POINTER}
          from: \${FROM}
          value: \${VALUE}
  - name: wait
    wait:
      for: \${FOR}
      on: \${ON}
      namespace: \${NS}
      allNamespaces: \${ALL}
  - name: rollout
    rollout:
      restart: \${WORKLOAD}
      namespace: \${NS}
  - name: job
    job:
      image: \${IMAGE}
      namespace: \${NS}
      createNamespace: \${CREATE}
      serviceAccount: \${SA}
      skipIf: \${SKIP_JOB}
`;
