/**
 * Failure and resume: a failing step makes `pulumi up` exit non-zero with the
 * step's error and leaves a partial state; once the cause is fixed, the next
 * `up` resumes from the journal without re-running the completed steps. On
 * both shells: the dynamic resource and the native provider.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RESUME_REASON } from "../../provider/state/record.js";
import type { StepOutput } from "../../provider/pulumi/wire.js";
import { onShell, pulumiFixture, SHELLS } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

const SPEC = spec(
  "resume",
  configMapStep("alpha", { a: "1" }) +
    configMapStep("beta", { b: "1" }) +
    // Fails until a ConfigMap named "trigger" exists: a patch target must exist.
    `  - name: flip
    needs: [alpha]
    patch:
      target: configmap/trigger
      namespace: \${NS}
      type: merge
      patch:
        data:
          flipped: "yes"
` +
    configMapStep("omega", { o: "1" }, "    needs: [flip, beta]\n"),
);

for (const shell of SHELLS)
  test(
    onShell(shell, "failure and resume: up fails with the step's error and a partial state; after the fix, up resumes"),
    { timeout: 900_000 },
    async (t) => {
      const {
        project,
        kubeconfig,
        namespace: ns,
        cluster,
      } = await pulumiFixture(t, { program: KHOOK_PROGRAM, files: { "boot.khook.yaml": SPEC }, shell });
      project.write(
        "args.json",
        programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
      );
      await project.init();

      const failed = await project.run(["up", "--yes", "--skip-preview"]);
      assert.notEqual(failed.code, 0, failed.output);
      assert.match(
        failed.output,
        /step "flip" failed: configmap\/trigger in namespace \S+ does not exist/,
        failed.output,
      );
      assert.match(failed.output, /\[boot\] flip: FAILED/, failed.output);

      // The stack holds a partial state: the resource, with its init errors and the per-step outcomes.
      const [res] = await project.khookResources();
      assert.ok(res, "the resource is in the stack");
      assert.ok(
        (res.initErrors ?? []).some((e) => /step "flip" failed/.test(e)),
        JSON.stringify(res.initErrors),
      );
      const partial = res.outputs.steps as StepOutput[];
      assert.deepEqual(
        partial.map((s) => [s.name, s.status]),
        [
          ["alpha", "ok"],
          ["beta", "ok"],
          ["flip", "failed"],
          ["omega", "skipped"],
        ],
      );
      assert.equal(res.outputs.runStatus, "failed");
      const before = await cluster.versions(ns, ["alpha", "beta", "omega"]);
      assert.ok(before.alpha && before.beta);
      assert.equal(before.omega, undefined);
      const rec1 = await cluster.record(ns, "khook-state-resume");

      // With nothing changed, preview still has work to do: the failed step.
      const preview = await project.run(["preview", "--expect-no-changes"]);
      assert.notEqual(preview.code, 0, "a partial state is never 'no changes'");

      // Fix the cause; up resumes.
      await cluster.createConfigMap(ns, "trigger", { created: "by the test" });
      const resumed = await project.ok(["up", "--yes", "--skip-preview"]);
      const out = await project.outputs();
      assert.equal(out.runStatus, "succeeded");
      assert.deepEqual(
        (out.steps as StepOutput[]).map((s) => [s.name, s.status, s.status === "skipped" ? s.reason : ""]),
        [
          ["alpha", "skipped", RESUME_REASON],
          ["beta", "skipped", RESUME_REASON],
          ["flip", "ok", ""],
          ["omega", "ok", ""],
        ],
        resumed.output,
      );
      const after = await cluster.versions(ns, ["alpha", "beta"]);
      assert.deepEqual(after, { alpha: before.alpha, beta: before.beta }, "completed steps were not re-run");
      const rec2 = await cluster.record(ns, "khook-state-resume");
      assert.equal(rec2!.steps.alpha!.finishedAt, rec1!.steps.alpha!.finishedAt);
      assert.equal(rec2!.steps.beta!.finishedAt, rec1!.steps.beta!.finishedAt);
      assert.equal((await cluster.configMap(ns, "trigger"))?.data?.flipped, "yes");
      const [healed] = await project.khookResources();
      assert.deepEqual(healed?.initErrors ?? [], []);
      assert.equal((await project.run(["preview", "--expect-no-changes"])).code, 0);

      await project.ok(["destroy", "--yes", "--skip-preview"]);
    },
  );
