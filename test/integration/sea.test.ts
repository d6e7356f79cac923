/**
 * khook's single executable (dist/sea/khook, built once by global setup) as a user gets it: one
 * file copied into a directory of its own, started from an empty working directory with a
 * minimal environment whose PATH holds helm and kustomize and nothing else (no Node, no
 * node_modules anywhere it could look). Every CLI command runs, against the real cluster where it
 * needs one; the helm post-renderer is the executable itself (a pre-apply webhook changes what a
 * release installs), and under the Pulumi plugin name it is the native provider a Pulumi YAML
 * program runs with (the real pulumi CLI and YAML language host; no Node anywhere).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { COMMANDS } from "../../provider/cli/main.js";
import { findOnPath } from "../../provider/tools/locate.js";
import { HookServer } from "../harness/hook-server.js";
import { testChartPath, testCluster, toolPath, withNamespace } from "../harness/index.js";
import { builtSea, toolsOnlyDir } from "../harness/sea.js";
import { run, type RunResult } from "../harness/util.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { configMapStep, spec as pulumiSpec, yamlProgram } from "./support/pulumi-specs.js";

describe("the single executable, alone", () => {
  let root: string;
  let khook: string;
  let cwd: string;
  let pathDir: string;
  let home: string;
  let server: HookServer;
  const ran = new Set<string>();

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "khook-sea-"));
    khook = path.join(root, "bin", "khook");
    fs.mkdirSync(path.dirname(khook));
    fs.copyFileSync(builtSea(), khook);
    fs.chmodSync(khook, 0o755);
    cwd = path.join(root, "work");
    home = path.join(root, "home");
    fs.mkdirSync(cwd);
    fs.mkdirSync(home);
    pathDir = toolsOnlyDir(path.join(root, "path"), { helm: toolPath("helm"), kustomize: toolPath("kustomize") });
    server = await HookServer.start();
  });
  after(async () => {
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Runs the executable the way a user would: nothing but PATH, HOME and the kubeconfig. */
  async function sea(
    args: string[],
    opts: { input?: string; kubeconfig?: string; file?: string; env?: NodeJS.ProcessEnv } = {},
  ): Promise<RunResult> {
    if (args[0] !== undefined) ran.add(args[0]);
    const env: NodeJS.ProcessEnv = {
      PATH: pathDir,
      HOME: home,
      NO_COLOR: "1",
      ...(opts.kubeconfig !== undefined ? { KUBECONFIG: opts.kubeconfig } : {}),
      ...opts.env,
    };
    return run(opts.file ?? khook, args, { cwd, env, ...(opts.input !== undefined ? { input: opts.input } : {}) });
  }

  function spec(name: string, text: string): string {
    const file = path.join(root, "specs", name, "spec.yaml");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  }

  test("its PATH has no Node, and the executable carries everything: it is the only file in its directory", () => {
    assert.equal(findOnPath("node", pathDir), undefined);
    assert.ok(findOnPath("helm", pathDir));
    assert.deepEqual(fs.readdirSync(path.dirname(khook)), ["khook"]);
  });

  test("offline commands: version names helm and kustomize, schema is the committed file byte for byte, validate (a file and stdin), plan --offline, graph; bad input exits 2", async () => {
    const version = await sea(["version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^khook \d+\.\d+\.\d+ \(khook\.io\/v1, node v24\./);
    assert.match(version.stdout, new RegExp(`^helm v3\\.22\\.0 \\(${pathDir}/helm\\)$`, "m"));
    assert.match(version.stdout, new RegExp(`^kustomize v5\\.8\\.2 \\(${pathDir}/kustomize\\)$`, "m"));

    const schema = await sea(["schema"]);
    assert.equal(schema.code, 0, schema.stderr);
    assert.equal(
      schema.stdout,
      fs.readFileSync(path.join(__dirname, "..", "..", "..", "schema", "v1", "khook.json"), "utf8"),
    );

    const text = `apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: offline}\nsteps:\n  - name: cm\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: cm}\n  - name: chart\n    needs: [cm]\n    helm: {chart: ${testChartPath("khook-test-app")}, namespace: demo}\n`;
    const file = spec("offline", text);
    const valid = await sea(["validate", "-f", file]);
    assert.equal(valid.code, 0, valid.stderr);
    assert.match(valid.stdout, /is valid: Khook "offline" with 2 steps in 2 levels/);
    // V8 took the code cache the build put inside for this command (a rejected one would cost the start-up its speed-up),
    // made from the bundle that serves it: the offline one for the commands that never run a step, the whole one for the others.
    const reported = await sea(["validate", "-f", file], { env: { KHOOK_SEA_REPORT_CODE_CACHE: "1" } });
    assert.equal(reported.code, 0, reported.stderr);
    assert.match(reported.stderr, /^khook: code cache accepted for khook-offline\.bundle\.js$/m);
    const whole = await sea(["plan", "--offline", "-f", file], { env: { KHOOK_SEA_REPORT_CODE_CACHE: "1" } });
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(whole.stderr, /^khook: code cache accepted for khook\.bundle\.js$/m);
    const fromStdin = await sea(["validate", "-f", "-", "-o", "json"], { input: text });
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    assert.equal((JSON.parse(fromStdin.stdout) as { valid: boolean }).valid, true);
    const plan = await sea(["plan", "--offline", "-f", file]);
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /chart/);
    const graph = await sea(["graph", "-f", file, "-o", "json"]);
    assert.equal(graph.code, 0, graph.stderr);
    assert.ok(graph.stdout.includes('"cm"'));

    // The schema validator inside the executable reports every problem with its line.
    const bad = await sea([
      "validate",
      "-f",
      spec(
        "bad",
        "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: bad}\nsteps:\n  - name: a\n    needs: [missing]\n    wait: {for: nope, on: pods}\n",
      ),
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /spec\.yaml:6:\d+: \/steps\/0\/needs\/0: step "a" needs "missing"/);
    assert.match(bad.stderr, /spec\.yaml:7:\d+: \/steps\/0\/wait\/for/);
  });

  test("against the cluster: apply with a helm step whose pre-apply webhook reaches the release through the post-renderer (the executable itself); plan, status, unlock, destroy", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "sea");
    server.on("pre-apply", {
      kind: "ok",
      change: (c) =>
        Object.fromEntries(
          Object.entries(c).map(([k, v]) => [
            k,
            {
              ...v,
              metadata: {
                ...(v.metadata as object),
                labels: { ...((v.metadata as { labels?: object }).labels ?? {}), audited: "sea" },
              },
            },
          ]),
        ),
    });
    const file = spec(
      "cluster",
      `apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: sea}\nstate: {namespace: ${ns}}\nhooks:\n  - name: audit\n    on: [pre-apply]\n    webhook: {url: '${server.url}', timeout: 5s}\nsteps:\n  - name: config\n    apply:\n      namespace: ${ns}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: settings}\n            data: {mode: sea}\n  - name: chart\n    needs: [config]\n    helm:\n      chart: ${testChartPath("khook-test-app")}\n      namespace: ${ns}\n      values: {message: hello}\n`,
    );
    const kubeconfig = cluster.kubeconfig;
    const applied = await sea(["apply", "-f", file, "-o", "json"], { kubeconfig });
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    const summary = JSON.parse(applied.stdout) as {
      steps: { status: string }[];
      cluster: { server: string; kubeSystemUid: string };
      exitCode: number;
    };
    assert.deepEqual(
      summary.steps.map((s) => s.status),
      ["ok", "ok"],
    );
    // The fleet fields: which cluster this was, and the exit status.
    const kubeSystem = await cluster.kubectl(["get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}"]);
    const apiServer = await cluster.kubectl([
      "config",
      "view",
      "--minify",
      "-o",
      "jsonpath={.clusters[0].cluster.server}",
    ]);
    assert.deepEqual(summary.cluster, { server: apiServer.stdout, kubeSystemUid: kubeSystem.stdout });
    assert.equal(summary.exitCode, 0);
    // What the webhook changed is what helm installed: the manifest went through the post-renderer.
    const cm = await cluster.kubectl([
      "-n",
      ns,
      "get",
      "configmap",
      "chart-app",
      "-o",
      "jsonpath={.metadata.labels.audited}",
    ]);
    assert.equal(cm.stdout, "sea", cm.stderr);
    const pre = server.requests
      .filter((r) => r.body.phase === "pre-apply")
      .map((r) => Object.keys(r.body.children).sort());
    assert.ok(
      pre.some((children) => children.includes("Deployment/chart-app")),
      `the release's objects reached the hook: ${JSON.stringify(pre)}`,
    );

    const plan = await sea(["plan", "-f", file], { kubeconfig });
    assert.equal(plan.code, 0, plan.stdout + plan.stderr);
    const status = await sea(["status", "-f", file, "-o", "json"], { kubeconfig });
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, /"chart"/);
    const unlock = await sea(["unlock", "-f", file], { kubeconfig });
    assert.equal(unlock.code, 0, unlock.stdout + unlock.stderr);
    assert.match(unlock.stdout, /not locked; nothing to do/);
    const destroyed = await sea(["destroy", "-f", file], { kubeconfig });
    assert.equal(destroyed.code, 0, destroyed.stdout + destroyed.stderr);
    const gone = await cluster.kubectl(["-n", ns, "get", "deployment", "chart-app"]);
    assert.notEqual(gone.code, 0, "destroy uninstalled the release");
    assert.deepEqual(fs.readdirSync(cwd), [], "nothing was written into the working directory");
  });

  test(
    "as pulumi-resource-khook (a symlink on PATH, how the Pulumi engine finds a provider plugin) it is the native provider: a Pulumi YAML program previews, applies and destroys with no Node and no node_modules",
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
          "boot.khook.yaml": pulumiSpec(
            "sea-native",
            configMapStep("alpha", { a: "1" }) + configMapStep("beta", { b: "2" }),
          ),
        },
      });
      project.write("Pulumi.yaml", yamlProgram(ns, kubeconfig));
      // What the engine can run: YAML's language host and the executable under the plugin's name; nothing else.
      const pluginPath = toolsOnlyDir(path.join(root, "plugin-path"), {
        "pulumi-language-yaml": toolPath("pulumi-language-yaml"),
        "pulumi-resource-khook": khook,
      });
      assert.equal(findOnPath("node", pluginPath), undefined);
      for (const k of Object.keys(project.env)) if (!/^PULUMI_|^NO_COLOR$/.test(k)) delete project.env[k];
      Object.assign(project.env, { PATH: pluginPath, HOME: home });
      assert.ok(!fs.existsSync(path.join(project.dir, "node_modules")));
      await project.init();

      const preview = await project.ok(["preview"]);
      assert.match(preview.output, /\+ .*khook:index:Khook.*boot.*create/, preview.output);
      assert.match(
        preview.output,
        /\[boot\] plan: alpha: run apply/,
        "the plan lines reach the user through the engine's log",
      );
      await project.ok(["up", "--yes", "--skip-preview"]);
      assert.equal((await cluster.configMap(ns, "alpha"))?.data?.a, "1");
      assert.equal((await cluster.configMap(ns, "beta"))?.data?.b, "2");
      assert.deepEqual(
        ((await project.outputs()).steps as { name: string; status: string }[]).map((s) => `${s.name}=${s.status}`),
        ["alpha=ok", "beta=ok"],
      );
      await project.ok(["preview", "--expect-no-changes"]);
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      assert.deepEqual(await cluster.versions(ns, ["alpha", "beta"]), { alpha: undefined, beta: undefined });
    },
  );

  test("every command of the CLI ran from the executable", () => {
    assert.deepEqual([...ran].filter((c) => c in COMMANDS).sort(), Object.keys(COMMANDS).sort());
  });
});
