/**
 * Every examples/*.khook.yaml validates against the JSON Schema after variable
 * substitution. The substitution here is a simple stand-in, just enough for
 * schema validation (the loader's own tests cover the real one): `$${` becomes
 * a literal `${`; `${NAME...}` takes its value from the example's companion
 * examples/vars/<name>.vars.yaml, else its `:-default`, else a plausible dummy,
 * and then runs the few sprig functions the examples use.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { LineCounter, parse as parseYaml, parseDocument } from "yaml";
import type { PositionLookup } from "../../provider/errors.js";
import { validateSchema } from "../../provider/dsl/schema.js";
import { repoRoot } from "../harness/util.js";

const examplesDir = path.join(repoRoot(), "examples");
const SCHEMA_COMMENT = "# yaml-language-server: $schema=https://khook.io/schema/v1/khook.json";

function dummyFor(name: string): string {
  if (/VERSION/.test(name)) return "1.0.0";
  if (/^(ENABLE|USE)_/.test(name)) return "true";
  if (/(REPLICAS|PORT|RETRIES|COUNT)$/.test(name)) return "1";
  if (/(URL|REPO)$/.test(name)) return "https://example.com/x";
  return "dummy-value";
}

/** The handful of sprig functions the examples use; anything else passes the value through. */
function pipe(value: string, pipeline: string): string {
  let v = value;
  for (const stage of pipeline
    .split("|")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [fn, ...args] = stage.match(/"[^"]*"|\S+/g) ?? [];
    const arg = (args[0] ?? "").replace(/^"|"$/g, "");
    switch (fn) {
      case "lower":
        v = v.toLowerCase();
        break;
      case "upper":
        v = v.toUpperCase();
        break;
      case "trunc":
        v = v.slice(0, Number(arg));
        break;
      case "b64enc":
        v = Buffer.from(v).toString("base64");
        break;
      case "urlquery":
        v = encodeURIComponent(v);
        break;
      case "quote":
        v = JSON.stringify(v);
        break;
      case "printf":
        v = arg.replace("%s", v);
        break;
      default:
        break;
    }
  }
  return v;
}

function standInSubstitute(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$\{|\$\{([^}]*)\}/g, (whole, inner: string | undefined) => {
    if (inner === undefined) return "${";
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::-([^|]*))?(?:\|(.*))?$/s.exec(inner);
    assert.ok(m, `stand-in cannot read ${whole}`);
    const name = m[1]!;
    const value = vars[name] ?? m[2] ?? dummyFor(name);
    return m[3] === undefined ? value : pipe(value, m[3]);
  });
}

function positionLookup(text: string): { doc: unknown; positionOf: PositionLookup } {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  assert.deepEqual(
    document.errors.map((e) => e.message),
    [],
  );
  const positionOf: PositionLookup = (pointer) => {
    const node = document.getIn(pointer === "" ? [] : pointer.slice(1).split("/"), true) as
      { range?: [number] } | undefined;
    if (node?.range === undefined) return undefined;
    const { line, col } = lineCounter.linePos(node.range[0]);
    return { line, column: col };
  };
  return { doc: document.toJS(), positionOf };
}

const specFiles = fs
  .readdirSync(examplesDir)
  .filter((f) => f.endsWith(".khook.yaml"))
  .sort();

test("examples: one focused spec per step type, plus bootstrap, variables and demo", () => {
  for (const f of ["helm", "apply", "delete", "patch", "wait", "rollout", "job", "bootstrap", "variables", "demo"]) {
    assert.ok(specFiles.includes(`${f}.khook.yaml`), `examples/${f}.khook.yaml exists`);
  }
});

for (const file of specFiles) {
  test(`examples: ${file} validates against the schema after substitution`, () => {
    const text = fs.readFileSync(path.join(examplesDir, file), "utf8");
    assert.equal(text.split("\n")[0], SCHEMA_COMMENT, "first line points yaml-language-server at the schema");
    const varsFile = path.join(examplesDir, "vars", file.replace(/\.khook\.yaml$/, ".vars.yaml"));
    const vars = fs.existsSync(varsFile)
      ? (parseYaml(fs.readFileSync(varsFile, "utf8")) as Record<string, string>)
      : {};
    const { doc, positionOf } = positionLookup(standInSubstitute(text, vars));
    const ds = validateSchema(doc, positionOf, { semanticRules: true });
    assert.deepEqual(
      ds.map((d) => `${file}:${d.position?.line ?? "?"}: ${d.path}: ${d.message}`),
      [],
    );
  });
}

test("examples: each step type is shown in its focused spec", () => {
  for (const type of ["helm", "apply", "delete", "patch", "wait", "rollout", "job"]) {
    const doc = parseYaml(
      standInSubstitute(fs.readFileSync(path.join(examplesDir, `${type}.khook.yaml`), "utf8"), {}),
    ) as { steps: Record<string, unknown>[] };
    assert.ok(
      doc.steps.some((s) => type in s),
      `${type}.khook.yaml has a ${type} step`,
    );
  }
});

test("examples: the stand-in substitution honours defaults, pipelines and the $${ escape", () => {
  assert.equal(standInSubstitute('a: ${X:-5|printf "%sm"}', {}), "a: 5m");
  assert.equal(standInSubstitute("a: ${APP|lower|trunc 3}", { APP: "ABCDEF" }), "a: abc");
  assert.equal(standInSubstitute("a: $${HOME} ${Y:-d}", {}), "a: ${HOME} d");
});
