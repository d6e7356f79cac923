/**
 * khook as people install and use it, with the real pulumi CLI and the real
 * cluster:
 *  - the consumer: `npm pack`'s tarball installed with npm into a fresh
 *    directory outside the repository, a TypeScript program (`import { Khook }
 *    from "khook"`) run directly by Pulumi: up, preview --expect-no-changes,
 *    refresh, destroy;
 *  - an Automation API inline program (`LocalWorkspace.createOrSelectStack({
 *    program })`) whose working directory holds no khook (the program imports
 *    it by a relative path): up, preview, destroy.
 * Both check the objects in the cluster, not only exit codes.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { pulumiFixture, pulumiTools } from "./support/pulumi-env.js";
import { khookRoot } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

const run = promisify(execFile);
const NAMES = ["alpha", "beta"];
const SPEC = (name: string): string =>
  spec(name, configMapStep("alpha", { a: "1" }) + configMapStep("beta", { b: "1" }, "    needs: [alpha]\n"));

const CONSUMER_PROGRAM = `import * as fs from "fs";
import * as pulumi from "@pulumi/pulumi";
import { Khook, type KhookStep } from "khook";

const config = new pulumi.Config();
const boot = new Khook("bootstrap", {
  specFile: "./boot.khook.yaml",
  vars: { NS: config.require("namespace") },
  kubeconfig: fs.readFileSync(config.require("kubeconfigPath"), "utf8"),
});
export const runStatus = boot.runStatus;
export const steps = boot.steps.apply((s: KhookStep[]) => s.map((x) => \`\${x.name}:\${x.status}\`));
`;

/** npm from PATH, as `./dev` uses it (scripts/node-env.sh puts its Node first). */
function npm(): string {
  return "npm";
}

test(
  "consumer: npm pack's tarball, npm install in a fresh directory, a TypeScript program: up, preview --expect-no-changes, refresh, destroy",
  { timeout: 900_000 },
  async (t) => {
    const root = khookRoot();
    const repoPkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "khook-consumer-"));
    t.after(() => fs.rmSync(work, { recursive: true, force: true }));
    // The tests run from a fresh build, so pack it as is (prepack would rebuild the tree the other tests run from).
    const packed = await run(npm(), ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
      cwd: root,
      maxBuffer: 64 << 20,
    });
    const tarball = path.join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);

    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      bare: true,
      dir: path.join(work, "infra"),
      program: "",
      files: {
        "Pulumi.yaml":
          "name: khook-consumer\nruntime: nodejs\ndescription: a program that installed khook from its tarball\n",
        "package.json": `${JSON.stringify(
          {
            name: "khook-consumer",
            private: true,
            main: "index.ts",
            dependencies: { khook: `file:${tarball}`, "@pulumi/pulumi": repoPkg.devDependencies["@pulumi/pulumi"] },
            devDependencies: {
              typescript: repoPkg.devDependencies.typescript,
              "@types/node": repoPkg.devDependencies["@types/node"],
            },
          },
          null,
          2,
        )}\n`,
        "tsconfig.json": `${JSON.stringify({ compilerOptions: { strict: true, outDir: "bin", target: "es2020", module: "commonjs", moduleResolution: "node", esModuleInterop: true, forceConsistentCasingInFileNames: true }, files: ["index.ts"] }, null, 2)}\n`,
        "index.ts": CONSUMER_PROGRAM,
        "boot.khook.yaml": SPEC("consumer"),
      },
    });
    await run(npm(), ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: project.dir,
      maxBuffer: 64 << 20,
    });
    assert.ok(
      fs.existsSync(path.join(project.dir, "node_modules", "khook", "dist", "sdk", "index.js")),
      "khook is installed, not linked",
    );
    assert.equal(fs.lstatSync(path.join(project.dir, "node_modules", "khook")).isSymbolicLink(), false);
    assert.equal(
      fs.existsSync(path.join(project.dir, "node_modules", "khook", "node_modules", "@pulumi", "pulumi")),
      false,
      "one @pulumi/pulumi: the program's (a peer)",
    );

    await project.init({ namespace: ns, kubeconfigPath: kubeconfig });
    const up = await project.ok(["up", "--yes", "--skip-preview"]);
    const out = await project.outputs();
    assert.equal(out.runStatus, "succeeded", up.output);
    assert.deepEqual(out.steps, ["alpha:ok", "beta:ok"]);
    const v1 = await cluster.versions(ns, NAMES);
    for (const n of NAMES) assert.ok(v1[n], `${n} exists`);
    const [resource] = await project.khookResources();
    assert.ok(
      !String(resource?.inputs.__provider).includes(khookRoot()),
      "the provider found the installed khook, nothing in this checkout",
    );

    assert.equal((await project.run(["preview", "--expect-no-changes"])).code, 0);
    await project.ok(["refresh", "--yes", "--skip-preview"]);
    assert.equal((await project.outputs()).runStatus, "succeeded");
    assert.deepEqual(await cluster.versions(ns, NAMES), v1, "refresh reads, never writes");

    await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.deepEqual(
      Object.values(await cluster.versions(ns, NAMES)),
      NAMES.map(() => undefined),
    );
    assert.equal(await cluster.record(ns, "khook-state-consumer"), undefined);
  },
);

test(
  "Automation API: an inline program whose working directory holds no khook: up, preview, destroy",
  { timeout: 900_000 },
  async (t) => {
    const { LocalWorkspace, PulumiCommand } = await import("@pulumi/pulumi/automation/index.js");
    const { project, kubeconfig, namespace: ns, cluster } = await pulumiFixture(t, { bare: true, program: "" });
    // The dynamic provider plugin starts in the working directory and needs @pulumi/pulumi there (as for any dynamic
    // resource); khook is deliberately absent, so the provider finds it where the program loaded it.
    const workDir = project.dir;
    fs.mkdirSync(path.join(workDir, "node_modules"), { recursive: true });
    fs.symlinkSync(
      path.join(khookRoot(), "node_modules", "@pulumi"),
      path.join(workDir, "node_modules", "@pulumi"),
      "dir",
    );
    const envVars = Object.fromEntries(
      Object.entries({ ...pulumiTools().env, ...project.env }).filter((e): e is [string, string] => e[1] !== undefined),
    );
    const pulumiCommand = await PulumiCommand.get({
      root: path.dirname(path.dirname(pulumiTools().pulumi)),
      skipVersionCheck: true,
    });
    const kubeconfigText = fs.readFileSync(kubeconfig, "utf8");
    const program = async (): Promise<Record<string, unknown>> => {
      const { Khook } = await import("../../sdk/index.js");
      const boot = new Khook("auto", { spec: SPEC("automation"), vars: { NS: ns }, kubeconfig: kubeconfigText });
      return { runStatus: boot.runStatus };
    };
    const stack = await LocalWorkspace.createOrSelectStack(
      { projectName: "khook-automation", stackName: "auto", program },
      {
        workDir,
        pulumiCommand,
        envVars,
        projectSettings: {
          name: "khook-automation",
          runtime: "nodejs",
          backend: { url: `file://${project.stateDir}` },
        },
      },
    );
    t.after(() => stack.workspace.removeStack("auto", { force: true }).catch(() => undefined));

    const up = await stack.up();
    assert.equal(up.outputs.runStatus?.value, "succeeded", up.stdout);
    const v1 = await cluster.versions(ns, NAMES);
    for (const n of NAMES) assert.ok(v1[n], `${n} exists`);
    const preview = await stack.preview();
    assert.deepEqual(
      Object.keys(preview.changeSummary).filter((k) => k !== "same"),
      [],
      JSON.stringify(preview.changeSummary),
    );
    await stack.destroy();
    assert.deepEqual(
      Object.values(await cluster.versions(ns, NAMES)),
      NAMES.map(() => undefined),
    );
  },
);
