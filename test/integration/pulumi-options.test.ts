/**
 * What the guide (docs/pulumi.md) says resource options do to a bootstrap,
 * checked with the real pulumi CLI: `protect` blocks destroy and leaves the
 * cluster alone; `retainOnDelete` drops the resource and keeps every object
 * and the record.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pulumiFixture } from "./support/pulumi-env.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

/** KHOOK_PROGRAM's shape, plus resource options from args.json. */
const OPTIONS_PROGRAM = `"use strict";
const fs = require("fs");
const { Khook } = require("khook");
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const boot = new Khook("boot", { specFile: "./boot.khook.yaml", vars: { NS: a.ns }, kubeconfig: fs.readFileSync(a.kubeconfigFile, "utf8") }, a.opts);
exports.steps = boot.steps;
`;

test(
  "resource options: protect blocks destroy and touches nothing; retainOnDelete keeps every object and the record",
  { timeout: 600_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: OPTIONS_PROGRAM,
      files: { "boot.khook.yaml": spec("options", configMapStep("alpha", { a: "1" })) },
    });
    const args = (opts: Record<string, unknown>): void =>
      project.write("args.json", JSON.stringify({ ns, kubeconfigFile: kubeconfig, opts }));
    args({ protect: true });
    await project.init();
    await project.ok(["up", "--yes", "--skip-preview"]);
    const rv = (await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion;
    assert.ok(rv);

    const blocked = await project.run(["destroy", "--yes", "--skip-preview"]);
    assert.notEqual(blocked.code, 0, blocked.output);
    assert.match(blocked.output, /protected/i, blocked.output);
    assert.equal((await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion, rv);

    args({ retainOnDelete: true });
    await project.ok(["up", "--yes", "--skip-preview"]);
    await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.equal((await project.khookResources()).length, 0);
    assert.equal((await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion, rv, "the object stays, untouched");
    assert.ok(await cluster.record(ns, "khook-state-options"), "the record stays");
  },
);
