/**
 * Process start-up: a CLI command loads only the modules it needs. Every `khook` start and every
 * Pulumi provider start pays for what it loads, so the heavy parts (ajv's compiler, the CEL library,
 * the Go template functions, the positioned YAML parser, the kube client, Pulumi) are required on
 * first use. These tests count modules, not milliseconds: `./dev bench startup` has the figures.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, test } from "node:test";
import { heavyLoaded, RECORD_LOADED_MODULES } from "./support/module-probe.js";
import { repoRoot, specText, tempSpecDir } from "./support/spec-files.js";

/** What a fresh Node process loaded (every resolved `require`, CommonJS or ESM) while running the CLI. */
function modulesLoadedBy(argv: string[]): { code: number; modules: string[] } {
  const script = `${RECORD_LOADED_MODULES}
    const { PassThrough } = require("node:stream");
    const sink = () => new PassThrough().resume();
    require(${JSON.stringify(path.join(repoRoot(), "dist/provider/cli/main.js"))})
      .main(${JSON.stringify(argv)}, { stdout: sink(), stderr: sink(), env: {} })
      .then((code) => process.stdout.write(JSON.stringify({ code, modules: [...loaded] })));
  `;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as {
    code: number;
    modules: string[];
  };
}

/** Node's digest modules among `modules`, named the one way whichever way they were required. */
function digestModules(modules: readonly string[]): string[] {
  const names = modules.map((m) => m.replace(/^node:/, "")).filter((m) => m === "crypto" || m === "zlib");
  return [...new Set(names)].sort().map((m) => `node:${m}`);
}

const CONFIG_MAP = `  - name: cm\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: x}\n`;

describe("CLI start-up loads only what the command needs", () => {
  test("validate of a plain spec loads none of the heavy modules", () => {
    const file = path.join(tempSpecDir({ "spec.yaml": specText(CONFIG_MAP) }), "spec.yaml");
    const r = modulesLoadedBy(["validate", "-f", file]);
    assert.equal(r.code, 0);
    assert.deepEqual(heavyLoaded(r.modules), []);
  });

  test("plan --offline and graph of a plain spec load none of the heavy modules", () => {
    const file = path.join(tempSpecDir({ "spec.yaml": specText(CONFIG_MAP) }), "spec.yaml");
    for (const argv of [
      ["plan", "--offline", "-f", file],
      ["graph", "-f", file],
    ]) {
      const r = modulesLoadedBy(argv);
      assert.equal(r.code, 0, argv.join(" "));
      assert.deepEqual(heavyLoaded(r.modules), [], argv.join(" "));
    }
  });

  test("validate and graph of a plain spec load neither node:crypto nor node:zlib: no digest is taken until a command shows or records one", () => {
    const file = path.join(tempSpecDir({ "spec.yaml": specText(CONFIG_MAP) }), "spec.yaml");
    for (const argv of [
      ["validate", "-f", file],
      ["graph", "-f", file],
    ]) {
      const r = modulesLoadedBy(argv);
      assert.equal(r.code, 0, argv.join(" "));
      assert.deepEqual(digestModules(r.modules), [], argv.join(" "));
    }
    // The counter-check: plan --offline prints the step hashes, and the probe sees node:crypto load for them.
    const plan = modulesLoadedBy(["plan", "--offline", "-f", file]);
    assert.equal(plan.code, 0);
    assert.deepEqual(digestModules(plan.modules), ["node:crypto"]);
  });

  // The counter-checks: the same probe sees each lazy module once the spec needs it.
  test("a when: condition loads the CEL library and a pipeline loads the template functions", () => {
    const steps = `  - name: cm\n    when: 'vars.get("ON", "yes") == "yes"'\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: "\${NAME:-x | lower}"}\n`;
    const file = path.join(tempSpecDir({ "spec.yaml": specText(steps) }), "spec.yaml");
    const r = modulesLoadedBy(["validate", "-f", file]);
    assert.equal(r.code, 0);
    assert.deepEqual(heavyLoaded(r.modules), ["the CEL library", "the Go template functions"]);
  });

  test("an invalid spec loads the positioned YAML parser for its source lines, and still not ajv's compiler", () => {
    const file = path.join(
      tempSpecDir({ "spec.yaml": specText("  - name: Bad_Name\n    wait: { for: delete, on: pods }\n") }),
      "spec.yaml",
    );
    const r = modulesLoadedBy(["validate", "-f", file]);
    assert.equal(r.code, 2);
    assert.deepEqual(heavyLoaded(r.modules), ["the positioned YAML parser"]);
  });
});
