/**
 * Issue 23 §3, proved by counting: a session per command, so one client and one
 * exec-plugin run per `pulumi up`, `preview` (online), `refresh` and `destroy`,
 * and per khook CLI command. The plugin is a real executable (EKS/GKE style)
 * that counts its runs; the cluster, pulumi and the CLI are the real ones.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import { execPluginKubeconfig } from "./support/exec-plugin.js";
import { cliEnv, cm, applyStep, khookSpec, parseRun, runKhook, specDir, stateIn } from "./support/khook-cli.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

test(
  "pulumi: one exec-plugin run (one client) per up, online preview, refresh and destroy",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: {
        "boot.khook.yaml": spec(
          "counted",
          configMapStep("alpha", { a: "1" }) + configMapStep("beta", { b: "2" }, "    needs: [alpha]\n"),
        ),
      },
    });
    const plugin = execPluginKubeconfig(kubeconfig, path.join(project.dir, "exec"));
    const args = (extra: Record<string, unknown> = {}): string =>
      programArgs({
        args: { specFile: "./boot.khook.yaml", vars: { NS: ns }, ...extra },
        kubeconfigFile: plugin.kubeconfig,
      });
    project.write("args.json", args());
    project.env.KUBECONFIG = path.join(project.dir, "no-such-kubeconfig");
    await project.init();

    // The preview before the update is offline: it runs no plugin. The create's owner check and apply share one session.
    await project.ok(["up", "--yes"]);
    assert.ok(await cluster.configMap(ns, "beta"));
    assert.equal(plugin.runs(), 1, "pulumi up");

    project.write("args.json", args({ previewMode: "online" }));
    const preview = await project.ok(["preview"]);
    assert.match(preview.output, /live: alpha: /, preview.output);
    assert.equal(plugin.runs(), 2, "pulumi preview (online)");

    await project.ok(["refresh", "--yes", "--skip-preview"]);
    assert.equal(plugin.runs(), 3, "pulumi refresh");

    // The reachability probe, the owner check and the teardown share one session.
    await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.equal(await cluster.configMap(ns, "alpha"), undefined);
    assert.equal(plugin.runs(), 4, "pulumi destroy");
  },
);

test(
  "CLI: one exec-plugin run (one client) per plan, apply, status, unlock and destroy",
  { timeout: 300_000 },
  async (t) => {
    const { kubeconfig } = await testCluster();
    const ns = await withNamespace(t, "session");
    const plugin = execPluginKubeconfig(kubeconfig, fs.mkdtempSync(path.join(os.tmpdir(), "khook-exec-plugin-")));
    const { file } = specDir(
      khookSpec(
        "counted",
        applyStep("alpha", cm("alpha", ns)) + applyStep("beta", cm("beta", ns), "    needs: [alpha]\n"),
        stateIn(ns),
      ),
    );
    const env = cliEnv(path.join(os.tmpdir(), "no-such-kubeconfig"));
    const khook = async (command: string, ...more: string[]): Promise<void> => {
      const before = plugin.runs();
      const r = await runKhook([command, "-f", file, "--kubeconfig", plugin.kubeconfig, ...more], { env });
      assert.equal(r.code, 0, `khook ${command}: ${r.stderr}`);
      if (command === "apply" || command === "destroy") assert.equal(parseRun(r).status, "succeeded");
      assert.equal(plugin.runs() - before, 1, `khook ${command} ran the exec plugin ${plugin.runs() - before} times`);
    };
    await khook("plan", "--diff");
    await khook("apply", "-o", "json");
    await khook("status");
    await khook("unlock");
    await khook("destroy", "-o", "json");
  },
);
