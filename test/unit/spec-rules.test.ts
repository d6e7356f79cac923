import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { KhookError, type Diagnostic } from "../../provider/errors.js";
import { loadSpec } from "../../provider/load-spec.js";
import { repoRoot, specText, tempSpecDir } from "./support/spec-files.js";

function problems(
  stepsYaml: string,
  opts: { extra?: string; files?: Record<string, string>; set?: [string, string][] } = {},
): Diagnostic[] {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml, opts.extra), ...(opts.files ?? {}) });
  try {
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {}, set: opts.set ?? [] });
    return [...spec.warnings];
  } catch (e) {
    assert.ok(e instanceof KhookError, String(e));
    assert.equal(e.exitCode, 2);
    return [...e.diagnostics];
  }
}

function rules(ds: Diagnostic[]): string[] {
  return ds.map((d) => d.rule ?? "?");
}

function expectRule(ds: Diagnostic[], rule: string, message?: RegExp): Diagnostic {
  const d = ds.find((x) => x.rule === rule);
  assert.ok(d, `expected a ${rule} problem, got: ${JSON.stringify(ds.map((x) => [x.rule, x.message]))}`);
  if (message) assert.match(d.message, message);
  assert.ok(d.position && d.position.line > 0, "every problem carries a line");
  return d;
}

const WAIT = "    wait: { for: delete, on: pods }\n";

describe("step rules", () => {
  test("step-name-unique: step names are unique", () => {
    const d = expectRule(problems(`  - name: a\n${WAIT}  - name: a\n${WAIT}`), "step-name-unique");
    assert.equal(d.path, "/steps/1/name");
    assert.equal(d.position?.line, 8);
  });

  test("step-name: step names are RFC 1123 labels of at most 63 characters, as the spec says", () => {
    const ds = problems(`  - name: ${"a".repeat(64)}\n${WAIT}  - name: Bad_Name\n${WAIT}`);
    assert.equal(ds.filter((d) => d.path.endsWith("/name")).length, 2, JSON.stringify(ds));
    assert.deepEqual(
      problems(`  - name: ${"a".repeat(63)}\n${WAIT}  - name: ${"j".repeat(63)}\n    job: { image: busybox }\n`),
      [],
    );
  });

  test("helm-release-name-length: 53 characters only where the step name becomes a helm release name (a helm: step without release:)", () => {
    const name = "h".repeat(54);
    const d = expectRule(
      problems(`  - name: ${name}\n    helm: { chart: app, repo: https://charts.example }\n`),
      "helm-release-name",
      /is also this helm step's release name .*at most 53: shorten the step name or set release:/,
    );
    assert.equal(d.path, "/steps/0/name");
    assert.deepEqual(
      problems(`  - name: ${name}\n    helm: { chart: app, repo: https://charts.example, release: app }\n`),
      [],
    );
    assert.deepEqual(
      problems(`  - name: ${"h".repeat(53)}\n    helm: { chart: app, repo: https://charts.example }\n`),
      [],
    );
  });

  test("schema path: the committed schema is at docs/schema/v1/khook.json, as the spec says (the package's schema/v1/khook.json, byte for byte)", () => {
    const root = repoRoot();
    assert.equal(
      fs.readFileSync(path.join(root, "docs", "schema", "v1", "khook.json"), "utf8"),
      fs.readFileSync(path.join(root, "schema", "v1", "khook.json"), "utf8"),
    );
  });

  test("needs-exist: needs refer to existing steps, with a suggestion", () => {
    expectRule(
      problems(`  - name: cert-manager\n${WAIT}  - name: b\n    needs: [cert-manger]\n${WAIT}`),
      "needs-exist",
      /did you mean "cert-manager"/,
    );
  });

  test("needs-not-self: a step cannot need itself", () => {
    expectRule(problems(`  - name: a\n    needs: [a]\n${WAIT}`), "needs-not-self");
  });

  test("needs-acyclic: a cycle is reported with its path", () => {
    const d = expectRule(
      problems(
        `  - name: a\n    needs: [c]\n${WAIT}  - name: b\n    needs: [a]\n${WAIT}  - name: c\n    needs: [b]\n${WAIT}`,
      ),
      "needs-acyclic",
    );
    assert.match(d.message, /a -> b -> c -> a|c -> a -> b -> c|b -> c -> a -> b/);
  });

  test("all problems are reported together, each with its path and line", () => {
    const ds = problems(
      `  - name: a\n    needs: [zzz]\n    wait: { for: bogus, on: pods }\n  - name: a\n    patch: { target: pods, patch: {} }\n`,
    );
    const r = rules(ds);
    for (const rule of ["step-name-unique", "needs-exist", "wait-for-grammar", "resource-reference"])
      assert.ok(r.includes(rule), `${rule} missing from ${r.join(",")}`);
    for (const d of ds) assert.ok(d.path.startsWith("/steps/") && d.position);
  });
});

describe("one step, every problem", () => {
  test("step-problems-all-reported: one step with several problems reports all of them; an invalid step name hides nothing", () => {
    const ds = problems(`  - name: Bad_Name\n    timeout: banana\n    wait: { for: ready, on: pods }\n`);
    expectRule(ds, "wait-for-grammar", /not a wait condition/);
    for (const p of ["/steps/0/name", "/steps/0/timeout", "/steps/0/wait/for"])
      assert.ok(
        ds.some((d) => d.path === p),
        `${p} in ${JSON.stringify(ds.map((d) => d.path))}`,
      );
  });
});

describe("chart-source rules", () => {
  const helm = (body: string) => `  - name: h\n    helm:\n${body}`;
  test("a bare name requires repo:", () => {
    expectRule(problems(helm("      chart: cilium\n")), "chart-source", /needs repo:/);
  });
  test("oci and local charts forbid repo:", () => {
    expectRule(
      problems(helm("      chart: oci://r.example/c/app:1.0.0\n      repo: https://x.example\n")),
      "chart-source",
      /forbids repo/,
    );
    expectRule(
      problems(helm("      chart: ./chart\n      repo: https://x.example\n"), {
        files: { "chart/Chart.yaml": "name: c\n" },
      }),
      "chart-source",
      /forbids repo/,
    );
  });
  test("the inline name:version sugar and version: are mutually exclusive", () => {
    expectRule(
      problems(helm("      chart: cilium:1.18.4\n      version: 1.18.4\n      repo: https://helm.cilium.io/\n")),
      "chart-source",
      /given twice/,
    );
  });
  test("an oci:// reference versions itself with :tag or @digest, or version:, not both", () => {
    expectRule(
      problems(helm("      chart: oci://r.example/c/app:1.2.3\n      version: 1.2.3\n")),
      "chart-source",
      /already pins tag/,
    );
    expectRule(
      problems(helm(`      chart: oci://r.example/c/app@sha256:${"a".repeat(64)}\n      version: 1.2.3\n`)),
      "chart-source",
      /digest/,
    );
    assert.deepEqual(problems(helm("      chart: oci://r.example/c/app\n      version: 1.2.3\n")), []);
  });
  test("a local path forbids version: and auth:", () => {
    const ds = problems(
      helm("      chart: ./chart\n      version: 1.0.0\n      auth: { username: u, password: p }\n"),
      { files: { "chart/Chart.yaml": "name: c\n" } },
    );
    expectRule(ds, "chart-source", /forbids version/);
    expectRule(ds, "chart-auth", /forbids auth/);
  });
  test("a local chart path must exist, resolved against the spec file's directory", () => {
    expectRule(
      problems(helm("      chart: ./missing\n")),
      "local-file-exists",
      /relative paths resolve against the spec file's directory/,
    );
  });
  test("auth: and URL userinfo are mutually exclusive", () => {
    expectRule(
      problems(
        helm("      chart: app\n      repo: https://u:p@charts.example\n      auth: { username: u, password: p }\n"),
      ),
      "chart-auth",
      /given twice/,
    );
  });
  test("chart-source: a chart reference with two version separators is refused", () => {
    expectRule(
      problems(helm("      chart: cilium:1.18:4\n      repo: https://helm.cilium.io/\n")),
      "chart-source",
      /two version separators/,
    );
    expectRule(problems(helm("      chart: oci://r.example:5000/c/app:1.0:2.0\n")), "chart-source", /two tags/);
    assert.deepEqual(
      problems(helm("      chart: oci://r.example:5000/c/app:1.0\n")),
      [],
      "a registry port is no version separator",
    );
  });
  test("URL userinfo must be a full user:pass pair", () => {
    expectRule(
      problems(helm("      chart: app\n      repo: https://onlyuser@charts.example\n")),
      "chart-auth",
      /full <username>:<password>@ pair/,
    );
  });
});

describe("wait and waitFor grammars", () => {
  test("wait-for-grammar: condition=, jsonpath= (braced with filters) and delete are accepted", () => {
    for (const f of [
      "condition=Ready",
      "condition=Available=False",
      "jsonpath={.status.phase}=Running",
      "jsonpath=.status.phase",
      "jsonpath=status.phase=Running",
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}=True',
      "delete",
    ]) {
      assert.deepEqual(
        problems(`  - name: a\n    wait: { for: '${f}', on: pods }\n`).filter((d) => d.severity === "error"),
        [],
        f,
      );
    }
  });
  test("wait-for-grammar: anything else is rejected", () => {
    expectRule(problems(`  - name: a\n    wait: { for: 'ready', on: pods }\n`), "wait-for-grammar");
  });
  test("apply-wait-for-grammar: apply.waitFor is wait.for's grammar minus delete", () => {
    expectRule(
      problems(
        `  - name: a\n    apply:\n      waitFor: delete\n      manifests:\n        - inline: "apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x}\\n"\n`,
      ),
      "apply-wait-for-grammar",
    );
  });
});

describe("action rules", () => {
  test("rollout targets a deployment, daemonset or statefulset", () => {
    expectRule(problems(`  - name: r\n    rollout: { restart: configmap/x, namespace: default }\n`), "rollout-kind");
  });
  test("namespace-or-all: namespace excludes allNamespaces (delete and wait)", () => {
    expectRule(
      problems(`  - name: d\n    delete: { resource: pods, namespace: a, allNamespaces: true }\n`),
      "namespace-or-all",
    );
    expectRule(
      problems(`  - name: w\n    wait: { for: delete, on: pods, namespace: a, allNamespaces: true }\n`),
      "namespace-or-all",
    );
  });
  test("resource-reference: patch.target is kind/name", () => {
    expectRule(
      problems(`  - name: p\n    patch: { target: daemonset, patch: {a: 1} }\n`),
      "resource-reference",
      /kind\/name/,
    );
  });
  test("patch-body-shape: a mapping for strategic/merge, a list for json", () => {
    expectRule(
      problems(`  - name: p\n    patch: { target: ds/x, type: json, patch: {a: 1} }\n`),
      "patch-body-shape",
      /list of operations/,
    );
    expectRule(
      problems(`  - name: p\n    patch: { target: ds/x, type: merge, patch: [{op: add, path: /a, value: 1}] }\n`),
      "patch-body-shape",
    );
  });
  test("patch-json-idempotency: a json remove is a warning, not an error", () => {
    const ds = problems(`  - name: p\n    patch: { target: ds/x, type: json, patch: [{op: remove, path: /spec/x}] }\n`);
    const d = expectRule(ds, "patch-json-idempotency", /re-running/);
    assert.equal(d.severity, "warning");
  });
  test("manifest-shape: every manifest document has apiVersion, kind and metadata.name", () => {
    expectRule(
      problems(`  - name: a\n    apply:\n      manifests:\n        - inline: "kind: ConfigMap\\n"\n`),
      "manifest-shape",
      /apiVersion/,
    );
    expectRule(
      problems(`  - name: a\n    apply:\n      manifests:\n        - file: ./m.yaml\n`, {
        files: { "m.yaml": "apiVersion: v1\nkind: ConfigMap\n" },
      }),
      "manifest-shape",
      /metadata.name/,
    );
  });
  test("local-file-exists: a manifest file that does not exist", () => {
    expectRule(
      problems(`  - name: a\n    apply:\n      manifests:\n        - file: ./nope.yaml\n`),
      "local-file-exists",
    );
  });
  test("kustomize-local-only: a kustomization that references a remote base is rejected", () => {
    expectRule(
      problems(`  - name: a\n    apply:\n      manifests:\n        - kustomize: ./k\n`, {
        files: { "k/kustomization.yaml": "resources:\n  - https://github.com/org/repo//base?ref=v1\n" },
      }),
      "kustomize-local-only",
      /remote base/,
    );
  });
  test("source-url: url sources are http(s)", () => {
    expectRule(
      problems(`  - name: a\n    apply:\n      manifests:\n        - url: ftp://x.example/m.yaml\n`),
      "source-url",
    );
  });
  test("create-namespace-needs-namespace", () => {
    expectRule(
      problems(
        `  - name: a\n    apply:\n      createNamespace: true\n      manifests:\n        - inline: "apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x}\\n"\n`,
      ),
      "create-namespace-needs-namespace",
    );
  });
  test("duration-positive: timeout must be greater than zero", () => {
    expectRule(problems(`  - name: a\n    timeout: "0"\n${WAIT}`), "duration-positive");
  });
  test("state-name: a derived record name that is not a valid Secret name needs state.name", () => {
    const ds = problems(`  - name: a\n${WAIT}`, { extra: "state: {}\n" });
    assert.deepEqual(ds, []);
  });
});

describe("when: conditions", () => {
  const when = (expr: string, set: [string, string][] = []) =>
    problems(`  - name: a\n    when: '${expr}'\n${WAIT}`, { set });
  test("when-cel: the expression must type-check to bool", () => {
    expectRule(when('"true"'), "when-cel", /bool/);
    expectRule(when("1"), "when-cel", /bool/);
  });
  test("when-cel: vars.NAME is an error when unset", () => {
    expectRule(when('vars.ENV == "prod"'), "when-cel", /vars.ENV, which is not set/);
  });
  test("when-cel: vars.get and has() work", () => {
    const dir = tempSpecDir({
      "s.yaml": specText(
        `  - name: a\n    when: 'vars.get("ENV", "dev") == "prod"'\n${WAIT}  - name: b\n    when: 'has(vars.ENV) && vars.ENV.startsWith("pr")'\n${WAIT}`,
      ),
    });
    const off = loadSpec({ file: path.join(dir, "s.yaml"), env: {} });
    assert.deepEqual(
      off.steps.map((s) => s.whenHolds),
      [false, false],
    );
    const on = loadSpec({ file: path.join(dir, "s.yaml"), env: { KHOOK_VAR_ENV: "prod" } });
    assert.deepEqual(
      on.steps.map((s) => s.whenHolds),
      [true, true],
    );
  });
  test("when-cel: functions outside CEL's standard library are rejected", () => {
    expectRule(when('vars.get("A", "x").lowerAscii() == "x"'), "when-cel", /lowerAscii/);
  });
});
