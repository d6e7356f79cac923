/**
 * The Khook resource with the real pulumi CLI, a file backend and the real
 * cluster: up -> preview -> edit -> up -> refresh -> destroy.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RESUME_REASON } from "../../provider/state/record.js";
import type { StepOutput } from "../../provider/pulumi/wire.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { changedPlanLines, configMapStep, khookStep, parsePreview, spec } from "./support/pulumi-specs.js";

const BETA = (value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beta\ndata:\n  value: "${value}"\n`;

function lifecycleSpec(alphaLevel: string): string {
  return spec(
    "lifecycle",
    configMapStep("alpha", { level: alphaLevel }) +
      `  - name: beta
    apply:
      namespace: \${NS}
      manifests:
        - file: ./manifests/beta.yaml
` +
      configMapStep("gamma", { fixed: "yes" }, "    needs: [alpha, beta]\n"),
  );
}

test(
  "lifecycle: up creates, preview is quiet, an edit re-runs exactly that step, refresh reads the journal, destroy removes everything",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: { "boot.khook.yaml": lifecycleSpec("1"), "manifests/beta.yaml": BETA("one") },
    });
    project.write(
      "args.json",
      programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
    );
    await project.init();
    const names = ["alpha", "beta", "gamma"];
    const recordName = "khook-state-lifecycle";

    // up: creates, and the objects exist.
    const up1 = await project.ok(["up", "--yes", "--skip-preview"]);
    assert.match(up1.output, /\[boot\] alpha: ok/, up1.output);
    let out = await project.outputs();
    assert.equal(out.runStatus, "succeeded");
    assert.deepEqual(
      (out.steps as StepOutput[]).map((s) => [s.name, s.status]),
      names.map((n) => [n, "ok"]),
    );
    assert.equal(out.recordNamespace, ns);
    assert.equal(out.recordName, recordName);
    const v1 = await cluster.versions(ns, names);
    for (const n of names) assert.ok(v1[n], `${n} exists`);
    const rec1 = await cluster.record(ns, recordName);
    assert.ok(rec1, "the journal exists");
    assert.deepEqual(Object.keys(rec1.steps).sort(), names);

    // A second preview: no changes.
    const quiet = await project.run(["preview", "--expect-no-changes", "--diff"]);
    assert.equal(quiet.code, 0, quiet.output);

    // Edit one step's values: preview shows exactly that step changing...
    project.write("boot.khook.yaml", lifecycleSpec("2"));
    const p1 = await project.ok(["preview", "--json", "--diff"]);
    const s1 = khookStep(parsePreview(p1.stdout));
    assert.equal(s1?.op, "update", p1.stdout);
    assert.deepEqual(changedPlanLines(s1!), [0], JSON.stringify(s1, null, 2));
    // ...and up re-runs only that step.
    const up2 = await project.ok(["up", "--yes", "--skip-preview"]);
    const v2 = await cluster.versions(ns, names);
    assert.notEqual(v2.alpha, v1.alpha, "alpha re-applied");
    assert.equal(v2.beta, v1.beta, "beta untouched");
    assert.equal(v2.gamma, v1.gamma, "gamma untouched");
    assert.equal((await cluster.configMap(ns, "alpha"))?.data?.level, "2");
    const rec2 = await cluster.record(ns, recordName);
    assert.notEqual(rec2!.steps.alpha!.finishedAt, rec1.steps.alpha!.finishedAt);
    assert.equal(rec2!.steps.beta!.finishedAt, rec1.steps.beta!.finishedAt, "beta resumed from the journal");
    assert.equal(rec2!.steps.gamma!.finishedAt, rec1.steps.gamma!.finishedAt, "gamma resumed from the journal");
    out = await project.outputs();
    assert.deepEqual(
      (out.steps as StepOutput[]).map((s) => [s.name, s.status, s.status === "skipped" ? s.reason : ""]),
      [
        ["alpha", "ok", ""],
        ["beta", "skipped", RESUME_REASON],
        ["gamma", "skipped", RESUME_REASON],
      ],
      up2.output,
    );

    // Edit a referenced local file: the same, for the step that uses it.
    project.write("manifests/beta.yaml", BETA("two"));
    const p2 = await project.ok(["preview", "--json", "--diff"]);
    const s2 = khookStep(parsePreview(p2.stdout));
    assert.equal(s2?.op, "update", p2.stdout);
    assert.deepEqual(changedPlanLines(s2!), [1]);
    await project.ok(["up", "--yes", "--skip-preview"]);
    const v3 = await cluster.versions(ns, names);
    assert.equal(v3.alpha, v2.alpha, "alpha untouched");
    assert.notEqual(v3.beta, v2.beta, "beta re-applied");
    assert.equal(v3.gamma, v2.gamma, "gamma untouched");
    assert.equal((await cluster.configMap(ns, "beta"))?.data?.value, "two");
    assert.equal((await project.run(["preview", "--expect-no-changes"])).code, 0);

    // refresh: the resource's outputs come from the journal (stack exports only change on up).
    const [before] = await project.khookResources();
    assert.equal(before!.outputs.recordUpdatedAt, undefined);
    await project.ok(["refresh", "--yes", "--skip-preview"]);
    out = (await project.khookResources())[0]!.outputs;
    const rec3 = await cluster.record(ns, recordName);
    assert.equal(out.recordUpdatedAt, rec3!.updatedAt);
    assert.equal(out.runStatus, rec3!.runStatus);
    assert.deepEqual(
      (out.steps as StepOutput[]).map((s) => [s.name, s.status]),
      names.map((n) => [n, "ok"]),
      "the journal says every step is ok",
    );
    assert.equal((await project.run(["preview", "--expect-no-changes"])).code, 0, "nothing to do after a refresh");

    // destroy: objects gone, record gone.
    const down = await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.match(down.output, /destroy succeeded/, down.output);
    for (const [n, v] of Object.entries(await cluster.versions(ns, names))) assert.equal(v, undefined, `${n} is gone`);
    assert.equal(await cluster.record(ns, recordName), undefined, "the record is gone");
    assert.deepEqual(await project.khookResources(), []);
  },
);
