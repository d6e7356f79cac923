/**
 * Hooks through Pulumi (real pulumi CLI, file backend, the real cluster): the
 * function file travels with the resource, with its executable bit, preview lists
 * the hooks in the plan lines, and `pulumi up` runs the function.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { pulumiFixture } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

const ADD_LABELS = fs.readFileSync(
  path.join(__dirname, "..", "..", "..", "examples", "functions", "add-labels"),
  "utf8",
);

test(
  "pulumi up with a function hook: the function travels with its executable bit, preview lists it, the live object carries its label",
  { timeout: 600_000 },
  async (t) => {
    const hooks =
      "hooks:\n  - name: team-labels\n    on: [post-render]\n    function: {exec: ./fn/add-labels, config: {data: {team: pulumi}}}\n";
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: {
        "boot.khook.yaml": spec("hooked", configMapStep("alpha", { level: "1" }), hooks),
        "fn/add-labels": ADD_LABELS,
      },
    });
    fs.chmodSync(path.join(project.dir, "fn", "add-labels"), 0o755);
    project.write(
      "args.json",
      programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
    );
    await project.init();

    const preview = await project.ok(["preview", "--diff"]);
    assert.match(preview.output, /post-render team-labels \(function \.\/fn\/add-labels\)/, preview.output);

    await project.ok(["up", "--yes", "--skip-preview"]);
    const cm = (await cluster.configMap(ns, "alpha")) as { metadata: { labels?: Record<string, string> } } | undefined;
    assert.equal(cm?.metadata.labels?.["team"], "pulumi");
    const [resource] = await project.khookResources();
    assert.deepEqual((resource!.inputs["__bundle"] as { executables?: string[] }).executables, ["fn/add-labels"]);

    await project.ok(["destroy", "--yes", "--skip-preview"]);
  },
);
