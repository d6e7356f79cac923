/**
 * What would fail at run time for a reason visible in the input is caught at load: each of
 * these used to validate with exit 0 and fail only when its step ran, after earlier steps had
 * changed the cluster. Every problem comes back at once, with its path and source line.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { KhookError, type Diagnostic } from "../../provider/errors.js";
import { loadSpec } from "../../provider/load-spec.js";
import { validateSchema } from "../../provider/dsl/schema.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

function problems(
  stepsYaml: string,
  opts: { extra?: string; files?: Record<string, string>; set?: [string, string][] } = {},
): Diagnostic[] {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml, opts.extra), ...(opts.files ?? {}) });
  try {
    loadSpec({ file: path.join(dir, "spec.yaml"), env: {}, set: opts.set ?? [] });
    return [];
  } catch (e) {
    assert.ok(e instanceof KhookError, String(e));
    assert.equal(e.exitCode, 2);
    return [...e.diagnostics];
  }
}

function expectProblem(
  ds: Diagnostic[],
  where: { rule: string; path?: string; line?: number },
  message: RegExp,
): Diagnostic {
  const d = ds.find((x) => x.rule === where.rule && (where.path === undefined || x.path === where.path));
  assert.ok(
    d,
    `expected a ${where.rule} problem${where.path ? ` at ${where.path}` : ""}, got: ${JSON.stringify(ds.map((x) => [x.rule, x.path, x.message]))}`,
  );
  assert.match(d.message, message);
  assert.ok(d.position && d.position.line > 0, "the problem carries its source line");
  if (where.line !== undefined) assert.equal(d.position.line, where.line);
  return d;
}

const WAIT = "    wait: { for: delete, on: pods }\n";
const helmWithValues = (file: string): string =>
  `  - name: h\n    helm:\n      chart: ./chart\n      valuesFrom:\n        - file: ${file}\n`;
const CHART = { "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n" };

describe("values-file-shape: a local valuesFrom file is one YAML mapping", () => {
  test("values-file-shape: a malformed valuesFrom file is rejected at load", () => {
    const ds = problems(helmWithValues("./bad.yaml"), {
      files: { ...CHART, "bad.yaml": "replicas: [1, 2\nimage: x\n" },
    });
    expectProblem(
      ds,
      { rule: "values-file-shape", path: "/steps/0/helm/valuesFrom/0/file", line: 10 },
      /values from \.\/bad\.yaml are not valid YAML/,
    );
  });

  test("values-file-shape: a valuesFrom file that is a list, not a mapping, is rejected at load", () => {
    const ds = problems(helmWithValues("./list.yaml"), { files: { ...CHART, "list.yaml": "- a\n- b\n" } });
    expectProblem(
      ds,
      { rule: "values-file-shape", path: "/steps/0/helm/valuesFrom/0/file" },
      /values from \.\/list\.yaml must be a mapping \(key: value\), not a list/,
    );
  });

  test("values-file-shape: an empty valuesFrom file and a mapping are accepted", () => {
    assert.deepEqual(
      problems(helmWithValues("./empty.yaml"), { files: { ...CHART, "empty.yaml": "# nothing yet\n" } }),
      [],
    );
    assert.deepEqual(problems(helmWithValues("./ok.yaml"), { files: { ...CHART, "ok.yaml": "replicas: 2\n" } }), []);
  });
});

describe("wait-name-excludes-selector: wait.on kind/name names one object", () => {
  test("wait-name-excludes-selector: wait.on kind/name with selector is rejected, as kubectl does", () => {
    const ds = problems(
      "  - name: w\n    wait:\n      for: condition=Available\n      on: deployment/coredns\n      selector: app=dns\n",
    );
    expectProblem(
      ds,
      { rule: "wait-name-excludes-selector", path: "/steps/0/wait/selector", line: 10 },
      /deployment\/coredns names one object; selector: cannot be combined with a name/,
    );
  });

  test("wait-name-excludes-selector: wait.on kind/name with fieldSelector is rejected", () => {
    const ds = problems(
      "  - name: w\n    wait:\n      for: condition=Ready\n      on: pod/p\n      fieldSelector: status.phase=Running\n",
    );
    expectProblem(
      ds,
      { rule: "wait-name-excludes-selector", path: "/steps/0/wait/fieldSelector" },
      /fieldSelector: cannot be combined with a name/,
    );
  });

  test("wait-name-excludes-selector: wait.on kind/name with allNamespaces is rejected", () => {
    const ds = problems(
      "  - name: w\n    wait:\n      for: condition=Ready\n      on: pod/p\n      allNamespaces: true\n",
    );
    expectProblem(
      ds,
      { rule: "wait-name-excludes-selector", path: "/steps/0/wait/allNamespaces" },
      /a name is looked up in one namespace; set namespace: instead/,
    );
  });

  test("wait-name-excludes-selector: a type with a selector across all namespaces is fine", () => {
    assert.deepEqual(
      problems(
        "  - name: w\n    wait:\n      for: condition=Ready\n      on: pods\n      selector: app=x\n      allNamespaces: true\n",
      ),
      [],
    );
  });
});

describe("patch-json-pointer: a JSON patch path is a JSON pointer", () => {
  test("patch-json-pointer: a json patch operation path must start with /", () => {
    const ds = problems(
      "  - name: p\n    patch:\n      target: deployment/x\n      type: json\n      patch:\n        - op: replace\n          path: spec/replicas\n          value: 2\n        - op: move\n          from: metadata/labels/a\n          path: /metadata/labels/b\n",
    );
    expectProblem(
      ds,
      { rule: "patch-json-pointer", path: "/steps/0/patch/patch/0/path", line: 12 },
      /"spec\/replicas" is not a JSON pointer; write \/spec\/replicas/,
    );
    expectProblem(
      ds,
      { rule: "patch-json-pointer", path: "/steps/0/patch/patch/1/from" },
      /"metadata\/labels\/a" is not a JSON pointer/,
    );
  });
});

describe("durations the run can honour", () => {
  test("duration-positive: defaults.timeout must be greater than zero", () => {
    const ds = problems(`  - name: a\n${WAIT}`, { extra: "defaults:\n  timeout: 0s\n" });
    expectProblem(
      ds,
      { rule: "duration-positive", path: "/defaults/timeout", line: 6 },
      /timeout must be greater than 0/,
    );
  });

  test("duration-timer-range: a retryDelay or timeout of 2^31 ms or more is rejected", () => {
    // 596h31m23.648s is 2^31 ms; a Node timer fires after 1 ms for anything from there on.
    const ds = problems(`  - name: a\n    retryDelay: 600h\n    timeout: 596h31m23.648s\n${WAIT}`, {
      extra: "defaults:\n  retryDelay: 1000h\n",
    });
    expectProblem(
      ds,
      { rule: "duration-timer-range", path: "/defaults/retryDelay" },
      /retryDelay 1000h is longer than khook can wait; the limit is 596h31m23\.647s/,
    );
    expectProblem(
      ds,
      { rule: "duration-timer-range", path: "/steps/0/retryDelay" },
      /retryDelay 600h is longer than khook can wait/,
    );
    expectProblem(
      ds,
      { rule: "duration-timer-range", path: "/steps/0/timeout" },
      /timeout 596h31m23\.648s is longer than khook can wait/,
    );
  });

  test("duration-timer-range: the longest duration a timer holds is accepted", () => {
    assert.deepEqual(problems(`  - name: a\n    timeout: 596h31m23.647s\n    retryDelay: 596h\n${WAIT}`), []);
  });
});

describe("chart-source: an oci:// reference's tag", () => {
  test("chart-source: an oci:// reference ending in ':' (an empty tag) is rejected", () => {
    const ds = problems('  - name: h\n    helm:\n      chart: "oci://registry.example/charts/app:"\n');
    expectProblem(ds, { rule: "chart-source", path: "/steps/0/helm/chart" }, /ends with ':' but has no tag/);
  });
});

describe("variable-default-braces: a default cannot contain } or a nested reference", () => {
  const rule = /a default cannot contain `}`; set the value with a variable/;

  test("variable-default-braces: a nested reference in a default is rejected", () => {
    const ds = problems(`  - name: a\n    wait: { for: delete, on: "\${KIND:-\${FALLBACK}}" }\n`, {
      set: [["FALLBACK", "pods"]],
    });
    expectProblem(ds, { rule: "variable-default-braces", line: 7 }, rule);
  });

  test("variable-default-braces: a } inside a default is rejected even when the variable is set", () => {
    const ds = problems(
      `  - name: a\n    job:\n      image: busybox\n      env:\n        CONFIG: '\${CONFIG:-{"debug":true}}'\n`,
      { set: [["CONFIG", "{}"]] },
    );
    expectProblem(ds, { rule: "variable-default-braces", line: 10 }, rule);
  });

  test("variable-default-braces: $${ still writes a literal ${ and plain defaults still work", () => {
    assert.deepEqual(
      problems(`  - name: a\n    job:\n      image: "busybox:\${TAG:-1.36}"\n      args: ["echo $\${HOME}"]\n`),
      [],
    );
  });
});

test("every problem at once: the validation gaps are reported together, each with its path and line", () => {
  // (Substitution problems, like variable-default-braces, stop the load before YAML parsing.)
  const ds = problems(
    [
      "  - name: h",
      "    helm:",
      '      chart: "oci://registry.example/app:"',
      "      valuesFrom:",
      "        - file: ./list.yaml",
      "  - name: w",
      "    wait: { for: delete, on: pod/p, allNamespaces: true }",
      "  - name: p",
      "    patch: { target: deployment/x, type: json, patch: [{ op: remove, path: spec/x }] }",
      "",
    ].join("\n"),
    { extra: "defaults:\n  timeout: 0s\n", files: { "list.yaml": "- a\n" } },
  );
  const rules = new Set(ds.map((d) => d.rule));
  for (const r of [
    "chart-source",
    "values-file-shape",
    "wait-name-excludes-selector",
    "patch-json-pointer",
    "duration-positive",
  ])
    assert.ok(rules.has(r), `${r} missing from ${[...rules].join(", ")}`);
  for (const d of ds) assert.ok(d.position !== undefined, `${d.rule} at ${d.path} has a line`);
});

describe("wait-for-grammar: the loader and the schema agree on wait.for", () => {
  test("wait-for-grammar: delete is lower-case only, in the loader and in the schema alike", () => {
    const loaderAccepts = (word: string): boolean =>
      !problems(`  - name: w\n    wait: { for: ${JSON.stringify(word)}, on: pods }\n`).some(
        (d) => d.path === "/steps/0/wait/for",
      );
    const schemaAccepts = (word: string): boolean => {
      const doc = {
        apiVersion: "khook.io/v1",
        kind: "Khook",
        metadata: { name: "t" },
        steps: [{ name: "w", wait: { for: word, on: "pods" } }],
      };
      return !validateSchema(doc, () => undefined, { semanticRules: true }).some((d) => d.path === "/steps/0/wait/for");
    };
    for (const word of [
      "delete",
      "Delete",
      "DELETE",
      "condition=Ready",
      "Condition=Ready",
      "jsonpath={.status.phase}=Running",
      "JSONPath=.x",
      "deleted",
    ]) {
      assert.equal(loaderAccepts(word), schemaAccepts(word), `loader and schema disagree on for: ${word}`);
    }
    assert.equal(loaderAccepts("Delete"), false);
    const d = problems(`  - name: w\n    wait: { for: Delete, on: pods }\n`).find(
      (x) => x.path === "/steps/0/wait/for",
    );
    assert.match(d?.message ?? "", /"Delete" must be lower-case: write delete/);
  });
});
