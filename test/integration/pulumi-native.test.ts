/**
 * The native provider (`khook:index:Khook`) with the real pulumi CLI, both
 * ways it ships: the executable `pulumi-resource-khook` (bin/, found on PATH)
 * under a Pulumi YAML program run by the real pulumi-language-yaml, and the
 * plugin run from source by the Node.js language host (PulumiPlugin.yaml,
 * RunPlugin); then the migration of a TypeScript stack from the dynamic
 * resource to the native one with `aliases`, which must not touch the cluster.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { pulumiFixture, withLauncher } from "./support/pulumi-env.js";
import { khookRoot } from "./support/pulumi-project.js";
import { configMapStep, KHOOK_TYPE, NATIVE_TYPE, spec, yamlProgram } from "./support/pulumi-specs.js";

test(
  "a Pulumi YAML program declaring khook:Khook: preview plans, up applies, preview --expect-no-changes, refresh, destroy tears down",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: "",
      bare: true,
      files: {
        "boot.khook.yaml": spec("native-yaml", configMapStep("alpha", { a: "1" }) + configMapStep("beta", { b: "2" })),
      },
    });
    project.write("Pulumi.yaml", yamlProgram(ns, kubeconfig));
    Object.assign(project.env, withLauncher(project.env));
    await project.init();

    const preview = await project.ok(["preview"]);
    assert.match(preview.output, /\+ .*khook:index:Khook.*boot.*create/, preview.output);
    assert.match(
      preview.output,
      /\[boot\] plan: alpha: run apply/,
      "the plan lines reach the user through the engine's log",
    );
    assert.match(preview.output, /\[boot\] plan: beta: run apply/);

    await project.ok(["up", "--yes"]);
    assert.equal((await cluster.configMap(ns, "alpha"))?.data?.a, "1");
    assert.equal((await cluster.configMap(ns, "beta"))?.data?.b, "2");
    const outs = await project.outputs();
    assert.equal(outs.runStatus, "succeeded");
    assert.deepEqual(
      (outs.steps as { name: string; status: string }[]).map((s) => `${s.name}=${s.status}`),
      ["alpha=ok", "beta=ok"],
    );
    const state = await project.exportText();
    assert.ok(!state.includes("client-key-data"), "the kubeconfig is a secret in the state");

    const versions = await cluster.versions(ns, ["alpha", "beta"]);
    await project.ok(["preview", "--expect-no-changes"]);
    await project.ok(["refresh", "--yes"]);
    await project.ok(["preview", "--expect-no-changes"]);
    assert.deepEqual(await cluster.versions(ns, ["alpha", "beta"]), versions, "preview and refresh write nothing");

    await project.ok(["destroy", "--yes"]);
    assert.deepEqual(await cluster.versions(ns, ["alpha", "beta"]), { alpha: undefined, beta: undefined });
    assert.equal(
      await cluster.record(ns, "khook-state-native-yaml"),
      undefined,
      "a successful destroy removes the record",
    );
  },
);

/** A TypeScript program that uses the native resource without a generated SDK, or the dynamic one (args.json `dynamic`). */
const TS_PROGRAM = `"use strict";
const fs = require("fs");
const pulumi = require("@pulumi/pulumi");
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const kubeconfig = pulumi.secret(fs.readFileSync(a.kubeconfigFile, "utf8"));
const args = { specFile: "./boot.khook.yaml", vars: { NS: a.ns }, kubeconfig };
let boot;
if (a.dynamic) {
  const { Khook } = require("khook");
  boot = new Khook("boot", args);
} else {
  boot = new pulumi.CustomResource("${NATIVE_TYPE}", "boot", { ...args, steps: undefined, runStatus: undefined }, a.opts || {});
}
exports.runStatus = boot.runStatus;
exports.steps = boot.steps;
`;

test(
  "the native provider run from source by the Node.js language host (PulumiPlugin.yaml): up and destroy",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: TS_PROGRAM,
      files: { "boot.khook.yaml": spec("native-src", configMapStep("alpha", { a: "1" })) },
    });
    project.write(
      "Pulumi.yaml",
      `name: khook-native-src\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nplugins:\n  providers:\n    - name: khook\n      path: ${path.join(khookRoot(), "pulumi-plugin")}\n`,
    );
    project.write("args.json", JSON.stringify({ ns, kubeconfigFile: kubeconfig }));
    assert.ok(
      !(project.env.PATH ?? "").split(path.delimiter).includes(path.join(khookRoot(), "bin")),
      "no launcher on PATH: the plugin runs from source",
    );
    await project.init();
    const up = await project.ok(["up", "--yes"]);
    assert.match(up.output, /\[boot\] (apply|run)/, up.output);
    assert.equal((await cluster.configMap(ns, "alpha"))?.data?.a, "1");
    assert.deepEqual(
      (await project.khookResources()).map((r) => r.type),
      [NATIVE_TYPE],
    );
    await project.ok(["destroy", "--yes"]);
    assert.equal(await cluster.configMap(ns, "alpha"), undefined);
  },
);

test(
  "migration from the dynamic Khook to the native one with aliases is a no-op in the cluster: same uids, nothing re-applied",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: TS_PROGRAM,
      files: {
        "boot.khook.yaml": spec("migrate", configMapStep("alpha", { a: "1" }) + configMapStep("beta", { b: "2" })),
      },
    });
    Object.assign(project.env, withLauncher(project.env));
    project.write("args.json", JSON.stringify({ ns, kubeconfigFile: kubeconfig, dynamic: true }));
    await project.init();
    await project.ok(["up", "--yes"]);
    const uid = async (name: string): Promise<string | undefined> =>
      (await cluster.get<{ metadata: { uid: string } }>(`/api/v1/namespaces/${ns}/configmaps/${name}`))?.metadata.uid;
    const before = {
      uids: [await uid("alpha"), await uid("beta")],
      versions: await cluster.versions(ns, ["alpha", "beta"]),
    };
    assert.deepEqual(
      (await project.khookResources()).map((r) => r.type),
      [KHOOK_TYPE],
    );

    project.write(
      "args.json",
      JSON.stringify({ ns, kubeconfigFile: kubeconfig, opts: { aliases: [{ type: KHOOK_TYPE }] } }),
    );
    const migrated = await project.ok(["up", "--yes"]);
    assert.deepEqual([await uid("alpha"), await uid("beta")], before.uids, "same objects");
    assert.deepEqual(
      await cluster.versions(ns, ["alpha", "beta"]),
      before.versions,
      `nothing re-applied:\n${migrated.output}`,
    );
    const resources = await project.khookResources();
    assert.deepEqual(
      resources.map((r) => r.type),
      [NATIVE_TYPE],
      migrated.output,
    );
    assert.deepEqual(
      (resources[0]!.outputs.steps as { name: string; status: string }[]).map((s) => `${s.name}=${s.status}`),
      ["alpha=ok", "beta=ok"],
    );
    assert.ok(await cluster.record(ns, "khook-state-migrate"), "the record stays");
    await project.ok(["preview", "--expect-no-changes"]);

    await project.ok(["destroy", "--yes"]);
    assert.deepEqual(
      await cluster.versions(ns, ["alpha", "beta"]),
      { alpha: undefined, beta: undefined },
      "the native resource owns the bootstrap now",
    );
  },
);
