/** Every example loads through the real loader (variables, pipelines, schema, rules, CEL, hashes) and plans offline. */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { planOffline } from "../../provider/engine/plan.js";
import { type LoadOptions } from "../../provider/dsl/loader.js";
import { loadSpec } from "../../provider/load-spec.js";
import { repoRoot } from "./support/spec-files.js";

const EXAMPLES = path.join(repoRoot(), "examples");

/** What each example needs from its environment; the variables example uses every source. */
const INPUTS: Record<string, Partial<LoadOptions>> = {
  "variables.khook.yaml": {
    env: { KHOOK_SECRET_TOKEN: "example-token-value", KHOOK_VAR_TEAM: "payments" },
    varFiles: [path.join(EXAMPLES, "vars", "variables.vars.yaml")],
    set: [["ENV", "staging"]],
  },
};

const files = fs.readdirSync(EXAMPLES).filter((f) => f.endsWith(".khook.yaml"));

test("there is one focused example per step type, a realistic bootstrap, and a variables example", () => {
  for (const f of ["helm", "apply", "delete", "patch", "wait", "rollout", "job", "bootstrap", "variables"])
    assert.ok(files.includes(`${f}.khook.yaml`), f);
});

for (const file of files) {
  test(`example ${file} starts with the yaml-language-server $schema line, loads, and plans offline`, () => {
    const full = path.join(EXAMPLES, file);
    assert.match(
      fs.readFileSync(full, "utf8").split("\n")[0]!,
      /^# yaml-language-server: \$schema=https:\/\/khook\.io\/schema\/v1\/khook\.json$/,
    );
    const spec = loadSpec({ file: full, env: {}, ...INPUTS[file] });
    const plan = planOffline(spec);
    assert.equal(plan.length, spec.steps.length);
    // A step whose inputs hold a secret is keyed; offline there is no key, so it shows the bare algorithm.
    for (const p of plan) assert.match(p.inputHash, /^(sha256:[0-9a-f]{64}|hmac-sha256)$/);
  });
}

test("the variables example: every source lands with the spec's precedence, and the secret is registered for redaction", () => {
  const spec = loadSpec({ file: path.join(EXAMPLES, "variables.khook.yaml"), ...INPUTS["variables.khook.yaml"] });
  assert.equal(spec.vars.get("ENV"), "staging");
  assert.equal(spec.vars.get("APP"), "Payments-API");
  assert.equal(spec.vars.get("TEAM"), "payments");
  assert.equal(spec.redactor.redact("x example-token-value y"), "x *** y");
});
