/** An invalid spec: preview fails listing every problem at once, and nothing is created. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pulumiFixture } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, INVALID_STEPS, spec } from "./support/pulumi-specs.js";

const INVALID = spec(
  "invalid",
  configMapStep("alpha", { a: "1" }) +
    INVALID_STEPS +
    `  - name: delta
    when: vars.NS ==
    rollout:
      status: deployment/web
      namespace: \${NS}
  - name: epsilon
    patch:
      target: configmap/x
      namespace: \${UNSET_VARIABLE}
      patch: { data: { a: "1" } }
`,
);

test("an invalid spec: preview fails and lists every problem, up creates nothing", { timeout: 600_000 }, async (t) => {
  const {
    project,
    kubeconfig,
    namespace: ns,
    cluster,
  } = await pulumiFixture(t, { program: KHOOK_PROGRAM, files: { "boot.khook.yaml": INVALID } });
  project.write(
    "args.json",
    programArgs({
      args: { specFile: "./boot.khook.yaml", vars: { NS: ns }, parallelism: 0 },
      kubeconfigFile: kubeconfig,
    }),
  );
  await project.init();

  const preview = await project.run(["preview"]);
  assert.notEqual(preview.code, 0, preview.output);
  // A missing variable stops the loader before the document is parsed: that one comes alone first.
  assert.match(preview.output, /variable UNSET_VARIABLE is not set/, preview.output);
  assert.match(
    preview.output,
    /property parallelism value \{0\} has a problem: parallelism must be a whole number of at least 1/,
    preview.output,
  );

  // With the variable set, every remaining problem is listed, each with a property path and a spec location.
  project.write(
    "args.json",
    programArgs({
      args: { specFile: "./boot.khook.yaml", vars: { NS: ns, UNSET_VARIABLE: ns } },
      kubeconfigFile: kubeconfig,
    }),
  );
  const again = await project.run(["preview"]);
  assert.notEqual(again.code, 0, again.output);
  const expected: [RegExp, string][] = [
    [
      /property spec\.steps\[1\]\.name value .* has a problem: \.\/boot\.khook\.yaml:\d+:\d+: .*alpha/,
      "duplicate step name",
    ],
    [/property spec\.steps\[1\]\.wait\.for value .* has a problem: \.\/boot\.khook\.yaml:\d+:\d+: /, "bad wait.for"],
    [
      /property spec\.steps\[2\]\.needs(\[0\])? value .* has a problem: \.\/boot\.khook\.yaml:\d+:\d+: .*missing-step/,
      "unknown need",
    ],
    [
      /property spec\.steps\[2\]\.apply\.manifests\[0\]\.file value .* has a problem: \.\/boot\.khook\.yaml:\d+:\d+: .*not-there\.yaml/,
      "missing file",
    ],
    [/property spec\.steps\[3\]\.when value .* has a problem: \.\/boot\.khook\.yaml:\d+:\d+: /, "bad when:"],
  ];
  for (const [re, what] of expected) assert.match(again.output, re, `${what}:\n${again.output}`);

  const up = await project.run(["up", "--yes"]);
  assert.notEqual(up.code, 0, up.output);
  assert.deepEqual(await project.khookResources(), [], "nothing in the stack");
  assert.equal(await cluster.configMap(ns, "alpha"), undefined, "nothing in the cluster");
  assert.equal(await cluster.record(ns, "khook-state-invalid"), undefined, "no journal");
});
