/**
 * The re-run of an unchanged spec with state: (issue 13's "re-run with state:" figure) is one read
 * and one write of the record (scale.test.ts counts those); what is left is process start-up, so it
 * loads only what resuming needs. The real CLI against the real API server, with a module probe
 * preloaded: counted, not timed (`./dev bench bootstrap` has the figures).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import { heavyLoaded, modulesLoadedByProcess } from "../unit/support/module-probe.js";
import { repoRoot } from "../unit/support/spec-files.js";
import { cliEnv, KHOOK_BIN, khookSpec, specDir } from "./support/khook-cli.js";

/**
 * The CLI from the modules tsc emitted, where the probe sees each one load. bin/khook runs the same
 * modules from one bundle (provider/cli/launch.ts), inside which the probe sees only packages.
 */
const CLI_FROM_MODULES = [
  "-e",
  `require(${JSON.stringify(path.join(repoRoot(), "dist", "provider", "cli", "main.js"))}).main(process.argv.slice(1)).then((code) => { process.exitCode = code; });`,
];

/** Not needed to resume: every step is skipped from the record, and the kubeconfig is a plain file. */
const NOT_FOR_RESUMING = [
  "the executors",
  "the hook runners",
  "the positioned YAML parser",
  "@kubernetes/client-node",
  "Pulumi",
  "ajv's schema compiler",
  "the CEL library",
  "the Go template functions",
];

describe("resumed re-run start-up", () => {
  test("state: a re-run with nothing changed loads no executor, no hook runner, no yaml library and no @kubernetes/client-node", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "resume-startup");
    const steps = `  - name: settings
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: settings}
            data: {mode: one}
  - name: tune
    needs: [settings]
    patch:
      target: configmap/settings
      namespace: ${ns}
      type: merge
      patch: {data: {mode: two}}
  - name: settled
    needs: [tune]
    wait:
      on: configmap/settings
      namespace: ${ns}
      for: jsonpath={.data.mode}=two
`;
    const { file } = specDir(khookSpec(`resume-startup-${ns}`, steps, `state:\n  namespace: ${ns}\n`));
    const env = cliEnv(cluster.kubeconfig);

    // The counter-check: the first run executes its steps, and the probe sees their executors load.
    const first = await modulesLoadedByProcess([...CLI_FROM_MODULES, "apply", "-f", file], env);
    assert.equal(first.code, 0, first.output);
    assert.ok(
      heavyLoaded(first.modules, NOT_FOR_RESUMING).includes("the executors"),
      "the first run loads the executors it runs",
    );

    const rerun = await modulesLoadedByProcess([...CLI_FROM_MODULES, "apply", "-f", file], env);
    assert.equal(rerun.code, 0, rerun.output);
    assert.match(rerun.output, /0 ok, 0 failed, 3 skipped/);
    assert.deepEqual(heavyLoaded(rerun.modules, NOT_FOR_RESUMING), []);

    // bin/khook runs the same modules from its bundle, which keeps packages outside: none is loaded.
    const bundled = await modulesLoadedByProcess([KHOOK_BIN, "apply", "-f", file], env);
    assert.equal(bundled.code, 0, bundled.output);
    assert.match(bundled.output, /0 ok, 0 failed, 3 skipped/);
    assert.deepEqual(heavyLoaded(bundled.modules, NOT_FOR_RESUMING), []);
  });
});
