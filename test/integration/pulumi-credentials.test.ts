/**
 * Credentials that survive, with the real pulumi CLI and cluster: the stack
 * config's kubeconfig wins over the stored one at destroy, an unreachable
 * cluster fails destroy with the way out, `khook:deleteUnreachable` drops the
 * resource without touching the cluster, and an exec-plugin kubeconfig works
 * for up and destroy.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { onShell, pulumiFixture, SHELLS } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

/** The same kubeconfig, pointing at a port where nothing listens: a cluster that is gone, or an endpoint that moved. */
function deadCopy(kubeconfig: string): string {
  return fs.readFileSync(kubeconfig, "utf8").replace(/server: \S+/g, "server: https://127.0.0.1:1");
}

for (const shell of SHELLS)
  test(
    onShell(
      shell,
      "destroy: stale stored credentials fail with the ways out; khook:kubeconfig wins; khook:deleteUnreachable drops the resource and touches nothing",
    ),
    { timeout: 900_000 },
    async (t) => {
      const {
        project,
        kubeconfig,
        namespace: ns,
        cluster,
      } = await pulumiFixture(t, {
        program: KHOOK_PROGRAM,
        files: { "boot.khook.yaml": spec("creds", configMapStep("alpha", { a: "1" })) },
        shell,
      });
      const live = fs.readFileSync(kubeconfig, "utf8");
      // The kubeconfig input is a path: what it points at changes under the stack, like an expired token would.
      project.write("kc.yaml", live);
      project.write(
        "args.json",
        programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns }, kubeconfig: "./kc.yaml" } }),
      );
      project.env.KUBECONFIG = path.join(project.dir, "no-such-kubeconfig");
      await project.init();
      await project.ok(["up", "--yes", "--skip-preview"]);
      assert.ok(await cluster.configMap(ns, "alpha"));

      project.write("kc.yaml", deadCopy(kubeconfig));
      const blocked = await project.run(["destroy", "--yes", "--skip-preview"]);
      assert.notEqual(blocked.code, 0, blocked.output);
      assert.match(blocked.output, /cannot tear down: the cluster cannot be reached/, blocked.output);
      assert.match(blocked.output, /pulumi config set --secret khook:kubeconfig/, blocked.output);
      assert.match(blocked.output, /KHOOK_DELETE_UNREACHABLE=true pulumi destroy/, blocked.output);
      assert.ok(await cluster.configMap(ns, "alpha"), "a failed destroy touches nothing");
      assert.equal((await project.khookResources()).length, 1, "and keeps the resource");

      // Fresh credentials in the stack config win over the stored (stale) ones. A plain destroy uses the
      // provider configuration recorded at the last up; --run-program reads the stack config now.
      await project.ok(["config", "set", "--secret", "khook:kubeconfig", live]);
      await project.ok(["destroy", "--yes", "--skip-preview", "--run-program"]);
      assert.equal(await cluster.configMap(ns, "alpha"), undefined);
      assert.equal(await cluster.record(ns, "khook-state-creds"), undefined);

      // Again, with the cluster gone for good: the escape hatch.
      await project.ok(["config", "rm", "khook:kubeconfig"]);
      project.write("kc.yaml", live);
      await project.ok(["up", "--yes", "--skip-preview"]);
      const rvBefore = (await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion;
      assert.ok(rvBefore);
      project.write("kc.yaml", deadCopy(kubeconfig));
      project.env.KHOOK_DELETE_UNREACHABLE = "true";
      const dropped = await project.ok(["destroy", "--yes", "--skip-preview"]);
      delete project.env.KHOOK_DELETE_UNREACHABLE;
      assert.match(
        dropped.output,
        /\[boot\] warning: the cluster cannot be reached .*KHOOK_DELETE_UNREACHABLE is true, so this resource is dropped from the stack's state and nothing in the cluster was touched/,
        dropped.output,
      );
      assert.equal((await project.khookResources()).length, 0);
      assert.equal(
        (await cluster.configMap(ns, "alpha"))?.metadata.resourceVersion,
        rvBefore,
        "nothing in the cluster was touched",
      );
      assert.ok(await cluster.record(ns, "khook-state-creds"), "the record stays too");

      // The stack config flag, read through the program (--run-program).
      project.write("kc.yaml", live);
      await project.ok(["up", "--yes", "--skip-preview"]);
      project.write("kc.yaml", deadCopy(kubeconfig));
      await project.ok(["config", "set", "khook:deleteUnreachable", "true"]);
      const viaConfig = await project.ok(["destroy", "--yes", "--skip-preview", "--run-program"]);
      assert.match(
        viaConfig.output,
        /khook:deleteUnreachable is true, so this resource is dropped from the stack's state and nothing in the cluster was touched/,
        viaConfig.output,
      );
      assert.equal((await project.khookResources()).length, 0);
      assert.ok(await cluster.configMap(ns, "alpha"));
    },
  );

test(
  "an exec-plugin kubeconfig (aws eks get-token style) works for up and for destroy from state",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: { "boot.khook.yaml": spec("exec", configMapStep("alpha", { a: "1" })) },
    });
    // The credential plugin prints an ExecCredential with the test user's credentials; the kubeconfig holds none.
    const doc = parseYaml(fs.readFileSync(kubeconfig, "utf8")) as {
      "current-context": string;
      contexts: { name: string; context: { user: string } }[];
      users: { name: string; user: Record<string, string> }[];
    };
    const userName = doc.contexts.find((c) => c.name === doc["current-context"])!.context.user;
    const user = doc.users.find((u) => u.name === userName)!.user;
    const fileOrData = (data: string | undefined, file: string | undefined): string | undefined =>
      data !== undefined
        ? Buffer.from(data, "base64").toString("utf8")
        : file !== undefined
          ? fs.readFileSync(path.resolve(path.dirname(kubeconfig), file), "utf8")
          : undefined;
    const status: Record<string, string> = {};
    const cert = fileOrData(user["client-certificate-data"], user["client-certificate"]);
    const key = fileOrData(user["client-key-data"], user["client-key"]);
    if (cert !== undefined && key !== undefined) {
      status.clientCertificateData = cert;
      status.clientKeyData = key;
    }
    if (user.token !== undefined) status.token = user.token;
    assert.ok(Object.keys(status).length > 0, "the test user has a certificate or a token to hand out");
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status,
    });
    const credFile = path.join(project.dir, "credential.json");
    fs.writeFileSync(credFile, credential, { mode: 0o600 });
    const plugin = path.join(project.dir, "get-token");
    fs.writeFileSync(plugin, `#!/bin/sh\ncat ${JSON.stringify(credFile)}\n`, { mode: 0o755 });
    doc.users = doc.users.map((u) =>
      u.name === userName
        ? {
            name: u.name,
            user: {
              exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
            } as never,
          }
        : u,
    );
    // Relative certificate paths of the cluster entry stay valid from the new location.
    const execKubeconfig = path.join(project.dir, "exec-kubeconfig.yaml");
    fs.writeFileSync(
      execKubeconfig,
      toYaml(doc).replace(
        /certificate-authority: (?!\/)(\S+)/g,
        (_m, p: string) => `certificate-authority: ${path.resolve(path.dirname(kubeconfig), p)}`,
      ),
    );

    project.write(
      "args.json",
      programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: execKubeconfig }),
    );
    project.env.KUBECONFIG = path.join(project.dir, "no-such-kubeconfig");
    await project.init();
    await project.ok(["up", "--yes", "--skip-preview"]);
    assert.ok(await cluster.configMap(ns, "alpha"));
    const state = await project.exportText();
    assert.ok(!state.includes(JSON.stringify(status).slice(2, 40)), "the plugin's credentials never reach the state");
    await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.equal(await cluster.configMap(ns, "alpha"), undefined);
  },
);
