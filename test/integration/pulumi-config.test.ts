/**
 * Credentials from stack config: without a kubeconfig input, the provider's
 * `configure` takes `khook:kubeconfig` (a secret) from the stack — and
 * neither the serialized provider nor the resource's state holds it.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import type { StepOutput } from "../../provider/pulumi/wire.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { kubeconfigSecrets } from "./support/pulumi-kube.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

test(
  "stack config: khook:kubeconfig and khook:context reach the provider through configure",
  { timeout: 600_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: { "boot.khook.yaml": spec("config", configMapStep("alpha", { a: "1" })) },
    });
    // No ambient kubeconfig to fall back on: only the stack config can make this work.
    project.env.KUBECONFIG = path.join(project.dir, "no-such-kubeconfig");
    delete project.env.KHOOK_TEST_KUBECONFIG;
    project.write("args.json", programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } } }));
    await project.init();
    const content = fs.readFileSync(kubeconfig, "utf8");
    const context = /current-context:\s*(\S+)/.exec(content)?.[1];
    assert.ok(context, "the test kubeconfig names its current context");
    await project.ok(["config", "set", "--secret", "khook:kubeconfig", content]);
    await project.ok(["config", "set", "khook:context", context]);

    await project.ok(["up", "--yes", "--skip-preview"]);
    assert.deepEqual(
      ((await project.outputs()).steps as StepOutput[]).map((s) => s.status),
      ["ok"],
    );
    assert.ok(await cluster.configMap(ns, "alpha"));

    // A context that does not exist proves the config is what the provider uses.
    await project.ok(["config", "set", "khook:context", "no-such-context"]);
    project.write("boot.khook.yaml", spec("config", configMapStep("alpha", { a: "2" })));
    const bad = await project.run(["up", "--yes", "--skip-preview"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.output, /context "no-such-context" does not exist/, bad.output);
    // Back to the right context: the next up applies the edit (and records the provider's config for destroy).
    await project.ok(["config", "set", "khook:context", context]);
    await project.ok(["up", "--yes", "--skip-preview"]);
    assert.equal((await cluster.configMap(ns, "alpha"))?.data?.a, "2");

    const [res] = await project.khookResources();
    const state = await project.exportText();
    for (const s of kubeconfigSecrets(kubeconfig))
      assert.ok(!state.includes(s), "no credential in the stack's state (the provider's config included)");
    for (const text of project.transcript)
      for (const s of kubeconfigSecrets(kubeconfig)) assert.ok(!text.includes(s), "no credential in any output");
    assert.equal(res?.inputs.kubeconfig, undefined, "the kubeconfig is not an input");

    await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.equal(await cluster.configMap(ns, "alpha"), undefined);
  },
);
