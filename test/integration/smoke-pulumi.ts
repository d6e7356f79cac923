// The pulumi smoke test: a minimal program with a dynamic resource, run with the toolchain's
// pulumi CLI, its Node.js language host and the dynamic-provider shim; file backend; every
// outbound HTTP(S) request is sent to a dead proxy so that any network access fails the test.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { pulumiEnv, toolPath } from "../harness/index.js";
import { repoRoot, run } from "../harness/util.js";

const PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");

const provider = {
  async create(inputs) {
    return { id: "smoke-" + inputs.name, outs: { name: inputs.name, greeting: "hello " + inputs.name } };
  },
  async diff(id, olds, news) {
    return { changes: olds.name !== news.name, replaces: olds.name !== news.name ? ["name"] : [] };
  },
  async delete() {},
};

class Greeting extends pulumi.dynamic.Resource {
  constructor(name, args, opts) {
    super(provider, name, { greeting: undefined, ...args }, opts);
  }
}

const g = new Greeting("greeting", { name: "khook" });
exports.greeting = g.greeting;
exports.id = g.id;
`;

export async function runPulumiSmoke(t: TestContext): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-pulumi-smoke-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const project = path.join(dir, "project");
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, "Pulumi.yaml"),
    "name: khook-smoke\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n",
  );
  fs.writeFileSync(
    path.join(project, "package.json"),
    `${JSON.stringify({ name: "khook-smoke", private: true, main: "index.js" })}\n`,
  );
  fs.writeFileSync(path.join(project, "index.js"), PROGRAM);
  // The program (and the dynamic-provider shim) resolve @pulumi/pulumi from the repository's deps.
  fs.symlinkSync(path.join(repoRoot(), "node_modules"), path.join(project, "node_modules"), "dir");

  const env: NodeJS.ProcessEnv = {
    ...pulumiEnv(dir),
    // Offline proof: any HTTP(S) request that is not to loopback goes to a dead proxy and fails.
    HTTP_PROXY: "http://127.0.0.1:9",
    HTTPS_PROXY: "http://127.0.0.1:9",
    http_proxy: "http://127.0.0.1:9",
    https_proxy: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
  const pulumi = async (args: string[]) => {
    const r = await run(toolPath("pulumi"), [...args, "--non-interactive"], { cwd: project, env, timeoutMs: 180_000 });
    assert.equal(r.code, 0, `pulumi ${args.join(" ")} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };

  await pulumi(["stack", "init", "smoke"]);
  const up = await pulumi(["up", "--yes", "--skip-preview"]);
  // The stack and the dynamic resource.
  assert.match(up, /\+ 2 created/, up);
  const outputs = JSON.parse(await pulumi(["stack", "output", "--json"])) as Record<string, string>;
  assert.equal(outputs["greeting"], "hello khook");
  assert.equal(outputs["id"], "smoke-khook");

  await pulumi(["preview", "--expect-no-changes"]);

  const destroy = await pulumi(["destroy", "--yes", "--skip-preview"]);
  assert.match(destroy, /- 2 deleted/, destroy);
  const left = JSON.parse(await pulumi(["stack", "export"])) as { deployment?: { resources?: unknown[] } };
  assert.equal(left.deployment?.resources?.length ?? 0, 0);
  await pulumi(["stack", "rm", "--yes"]);
}
