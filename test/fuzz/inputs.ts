/**
 * What the loader fuzz feeds the CLI: random mutations of the examples, random YAML, and a spec
 * template whose slots hold random variable references, values (some of them secrets) and pipelines.
 */
import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { stringify } from "yaml";

/** One fuzz input: the spec text and the variable sources the CLI gets with it. */
export interface LoaderInput {
  /** Which generator made it; only for the figures. */
  kind: "mutated-example" | "random-yaml" | "template";
  spec: string;
  /** The process environment (KHOOK_VAR_*, KHOOK_SECRET_*). */
  env: Record<string, string>;
  /** `--set NAME=value` flags. */
  set: string[];
}

export const VAR_PREFIX = "KHOOK_VAR_";
export const SECRET_PREFIX = "KHOOK_SECRET_";

/** The secret values an input carries: every environment value under the secret prefix. */
export function secretValues(input: LoaderInput): string[] {
  return Object.entries(input.env)
    .filter(([k]) => k.startsWith(SECRET_PREFIX))
    .map(([, v]) => v);
}

// ---- values ----

/** Values people put in variables, and the characters that break YAML when substituted raw. */
const awkwardValue = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 24 }),
  fc.string({ unit: fc.constantFrom(..."ab-_.:/@ #'\"{}[]|>&*!%\\\n\t$"), maxLength: 16 }),
  fc.constantFrom(
    "",
    "true",
    "no",
    "~",
    "null",
    "0x1F",
    "1e3",
    "-",
    "- a",
    "a: b",
    "{a: 1}",
    "[1, 2]",
    "'",
    '"',
    "|",
    "${X}",
    "$${X}",
    "}",
    "\n",
    " lead",
    "trail ",
    "https://user:pass@example.com/x",
  ),
  fc.integer({ min: -5, max: 100_000 }).map(String),
);

/** Secrets are long enough to be masked (the redactor ignores values under three characters). */
const secretValue = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 6, maxLength: 32 }),
  fc.string({ unit: fc.constantFrom(..."aZ09-_.:/+=@#'\" {}|$\\\n"), minLength: 6, maxLength: 24 }),
  fc.constantFrom(
    "s3cr3t-token",
    "hunter2hunter2",
    "p@ss:word/with?chars",
    "line1\nline2",
    "quote'n\"quote",
    "${NOT_A_REF}",
  ),
);

// ---- pipelines ----

/** Pipeline stages: sprig functions with plausible arguments, and raw tokens. */
const stage = fc.oneof(
  fc.constantFrom(
    "upper",
    "lower",
    "trim",
    "quote",
    "squote",
    "b64enc",
    "b64dec",
    "sha256sum",
    "toJson",
    "title",
    "kebabcase",
    "urlquery",
    "len",
    "toString",
    "nospace",
    'default "d"',
    'required "need it"',
  ),
  fc.integer({ min: -3, max: 70 }).map((n) => `trunc ${n}`),
  fc.tuple(fc.constantFrom("indent", "nindent"), fc.integer({ min: 0, max: 8 })).map(([f, n]) => `${f} ${n}`),
  fc.constantFrom(
    'printf "%s-x"',
    'printf "%d"',
    'printf "%v %v"',
    'replace "a" "b"',
    'regexReplaceAll "[a-z]+" "X"',
    'regexFind "(("',
    'split ","',
    'join "-"',
    "list 1 2",
    'dict "a" 1',
    'semver "1.2.3"',
    'env "HOME"',
    "now",
    'fail "no"',
    'trimPrefix "a"',
    'contains "x"',
    'ternary "y" "n"',
  ),
  fc.constantFrom("(", ")", "|", ".", "$", "nil", '"', "`", "1.5", "0x1F", ":=", "$x"),
);
export const pipelineText = fc.array(stage, { minLength: 1, maxLength: 4 }).map((stages) => stages.join(" | "));

// ---- the template ----

const VAR_NAMES = ["APP", "ENV", "REPLICAS"];
const SECRET_NAMES = ["TOKEN", "PASSWORD"];

/** A slot: a variable reference (plain, defaulted, piped), a literal, or an escaped `$${`. */
const slot = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...VAR_NAMES, ...SECRET_NAMES, "UNSET"),
        fc.option(awkwardValue, { nil: undefined }),
        fc.option(pipelineText, { nil: undefined }),
      )
      .map(
        ([name, def, pipe]) =>
          `\${${name}${def === undefined ? "" : `:-${def}`}${pipe === undefined ? "" : ` | ${pipe}`}}`,
      ),
  },
  { weight: 1, arbitrary: awkwardValue },
  { weight: 1, arbitrary: fc.constantFrom("$${HOME}", "$${", "${", "${}", "${ A }", "${A|}", "${1A}") },
);

function templateSpec(s: string[]): string {
  return `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: ${s[0]}
defaults:
  timeout: ${s[1]}
state: {}
steps:
  - name: config
    apply:
      namespace: ${s[2]}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings-${s[3]}
            data:
              key: ${s[4]}
              quoted: "${s[5]}"
  - name: chart
    needs: [config]
    when: 'vars.get("ENV", "dev") != "${s[6]}"'
    helm:
      chart: hello
      repo: https://charts.example.com
      version: "${s[7]}"
      values:
        token: ${s[8]}
  - name: job
    needs: [chart]
    job:
      image: busybox:${s[9]}
      args: ["echo", "${s[10]}"]
      env:
        TOKEN: ${s[11]}
`;
}

const variableSources = fc.record({
  vars: fc.dictionary(fc.constantFrom(...VAR_NAMES), awkwardValue, { maxKeys: 3 }),
  secrets: fc.dictionary(fc.constantFrom(...SECRET_NAMES), secretValue, { maxKeys: 2 }),
  set: fc.dictionary(fc.constantFrom(...VAR_NAMES), awkwardValue, { maxKeys: 2 }),
});

function withVariables(
  kind: LoaderInput["kind"],
  spec: string,
  v: { vars: Record<string, string>; secrets: Record<string, string>; set: Record<string, string> },
): LoaderInput {
  const env: Record<string, string> = {};
  for (const [k, value] of Object.entries(v.vars)) env[`${VAR_PREFIX}${k}`] = value;
  for (const [k, value] of Object.entries(v.secrets)) env[`${SECRET_PREFIX}${k}`] = value;
  return { kind, spec, env, set: Object.entries(v.set).map(([k, value]) => `${k}=${value}`) };
}

const templateInput: fc.Arbitrary<LoaderInput> = fc
  .tuple(fc.array(slot, { minLength: 12, maxLength: 12 }), variableSources)
  .map(([slots, v]) => withVariables("template", templateSpec(slots), v));

// ---- mutations of the examples ----

/** Text a mutation may insert: YAML syntax, khook keys, variable syntax, control characters. */
const fragment = fc.oneof(
  fc.constantFrom(
    "${",
    "}",
    "${APP}",
    "${TOKEN}",
    "${X:-}",
    "${X:-a}b}",
    "$${",
    ":",
    ": ",
    "- ",
    "- name: x",
    "&a ",
    "*a",
    "<<: *a",
    "|",
    ">",
    "{",
    "[",
    "]",
    '"',
    "'",
    "#",
    "\t",
    "\n",
    "---\n",
    "needs: [",
    "needs: [x]",
    "when: 'x'",
    "when: 'vars.APP == 1'",
    "\u0000",
    "\uFEFF",
    "\u2028",
    "?",
    "!!binary ",
    "!!str ",
    "%YAML 1.1\n",
    "timeout: 0",
    "retries: -1",
    "wait: {}",
    "helm: {}",
  ),
  fc.string({ unit: "grapheme", maxLength: 12 }),
);

type Mutation =
  | { op: "delete-line" | "duplicate-line"; at: number }
  | { op: "swap-lines"; at: number; other: number }
  | { op: "indent"; at: number; delta: number }
  | { op: "insert"; at: number; text: string }
  | { op: "replace-value"; at: number; text: string }
  | { op: "truncate"; at: number }
  | { op: "delete-chars"; at: number; length: number };

const position = fc.nat({ max: 100_000 });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constantFrom("delete-line" as const, "duplicate-line" as const), at: position }),
  fc.record({ op: fc.constant("swap-lines" as const), at: position, other: position }),
  fc.record({ op: fc.constant("indent" as const), at: position, delta: fc.integer({ min: -4, max: 4 }) }),
  fc.record({ op: fc.constant("insert" as const), at: position, text: fragment }),
  fc.record({ op: fc.constant("replace-value" as const), at: position, text: fc.oneof(fragment, awkwardValue) }),
  fc.record({ op: fc.constant("truncate" as const), at: position }),
  fc.record({ op: fc.constant("delete-chars" as const), at: position, length: fc.integer({ min: 1, max: 20 }) }),
);

export function mutate(text: string, m: Mutation): string {
  const lines = text.split("\n");
  const line = (n: number): number => n % Math.max(1, lines.length);
  switch (m.op) {
    case "delete-line":
      lines.splice(line(m.at), 1);
      return lines.join("\n");
    case "duplicate-line":
      lines.splice(line(m.at), 0, lines[line(m.at)] ?? "");
      return lines.join("\n");
    case "swap-lines": {
      const a = line(m.at);
      const b = line(m.other);
      [lines[a], lines[b]] = [lines[b] ?? "", lines[a] ?? ""];
      return lines.join("\n");
    }
    case "indent": {
      const a = line(m.at);
      const l = lines[a] ?? "";
      lines[a] = m.delta >= 0 ? " ".repeat(m.delta) + l : l.replace(new RegExp(`^ {0,${-m.delta}}`), "");
      return lines.join("\n");
    }
    case "replace-value": {
      const a = line(m.at);
      const l = lines[a] ?? "";
      const colon = l.indexOf(": ");
      lines[a] = colon === -1 ? `${l} ${m.text}` : `${l.slice(0, colon + 2)}${m.text}`;
      return lines.join("\n");
    }
    case "insert": {
      const at = m.at % (text.length + 1);
      return text.slice(0, at) + m.text + text.slice(at);
    }
    case "truncate":
      return text.slice(0, m.at % (text.length + 1));
    case "delete-chars": {
      const at = m.at % (text.length + 1);
      return text.slice(0, at) + text.slice(at + m.length);
    }
  }
}

/** The examples' texts, and the variable names they reference (so mutated inputs get values and secrets for them). */
export function readExamples(examplesDir: string): { file: string; text: string; names: string[] }[] {
  return fs
    .readdirSync(examplesDir)
    .filter((f) => f.endsWith(".khook.yaml"))
    .sort()
    .map((f) => {
      const text = fs.readFileSync(path.join(examplesDir, f), "utf8");
      const names = [...new Set([...text.matchAll(/(?<!\$)\$\{\s*([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))];
      return { file: f, text, names };
    });
}

function mutatedExampleInput(examples: ReturnType<typeof readExamples>): fc.Arbitrary<LoaderInput> {
  return fc.constantFrom(...examples).chain((ex) => {
    const names = ex.names.length > 0 ? ex.names : ["UNUSED"];
    return fc
      .record({
        mutations: fc.array(mutation, { maxLength: 4 }),
        vars: fc.dictionary(fc.constantFrom(...names), awkwardValue, { maxKeys: names.length }),
        secrets: fc.dictionary(fc.constantFrom(...names), secretValue, { maxKeys: 2 }),
        set: fc.dictionary(fc.constantFrom(...names), awkwardValue, { maxKeys: 1 }),
      })
      .map((r) => withVariables("mutated-example", r.mutations.reduce(mutate, ex.text), r));
  });
}

// ---- random YAML ----

const KHOOK_KEYS = [
  "apiVersion",
  "kind",
  "metadata",
  "name",
  "steps",
  "needs",
  "when",
  "timeout",
  "retries",
  "retryDelay",
  "onError",
  "helm",
  "apply",
  "delete",
  "patch",
  "wait",
  "rollout",
  "job",
  "manifests",
  "inline",
  "file",
  "url",
  "chart",
  "repo",
  "version",
  "values",
  "namespace",
  "for",
  "on",
  "target",
  "image",
  "state",
  "defaults",
];

/** JSON-like trees over khook's own keys, so that some of them get past the first checks. */
const khookishTree: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: false })),
    fc.array(tie("tree"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...KHOOK_KEYS), fc.string({ maxLength: 6 })), tie("tree"), { maxKeys: 5 }),
  ),
})).tree;

const specShapedTree = fc.record({
  apiVersion: fc.oneof(fc.constant("khook.io/v1"), khookishTree),
  kind: fc.oneof(fc.constant("Khook"), khookishTree),
  metadata: fc.oneof(fc.record({ name: fc.oneof(fc.constant("fuzz"), fc.string({ maxLength: 8 })) }), khookishTree),
  steps: fc.array(fc.dictionary(fc.constantFrom(...KHOOK_KEYS), khookishTree, { maxKeys: 5 }), { maxLength: 4 }),
});

/** Raw YAML-ish token soup, for the parser's error paths. */
const yamlSoup = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "a",
        "b:",
        "- ",
        ": ",
        "\n",
        "\n  ",
        "  ",
        "{",
        "}",
        "[",
        "]",
        ",",
        "&x",
        "*x",
        "!tag",
        "? ",
        "|",
        ">-",
        "#c",
        "'",
        '"',
        "---",
        "...",
        "%TAG ! x",
        "\t",
        "${A}",
        "${S}",
      ),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 40 },
  )
  .map((tokens) => tokens.join(""));

const randomYamlInput: fc.Arbitrary<LoaderInput> = fc
  .tuple(
    fc.oneof(
      specShapedTree.map((t) => stringify(t)),
      khookishTree.map((t) => stringify(t)),
      yamlSoup,
    ),
    fc.option(secretValue, { nil: undefined }),
  )
  .map(([spec, secret]): LoaderInput => ({
    kind: "random-yaml",
    spec,
    env: secret === undefined ? {} : { [`${SECRET_PREFIX}S`]: secret },
    set: [],
  }));

/** Every generator, weighted towards inputs that get deep into the loader. */
export function loaderInputs(examplesDir: string): fc.Arbitrary<LoaderInput> {
  return fc.oneof(
    { weight: 3, arbitrary: mutatedExampleInput(readExamples(examplesDir)) },
    { weight: 3, arbitrary: templateInput },
    { weight: 2, arbitrary: randomYamlInput },
  );
}
