/** `khook version` names the helm and kustomize it would run: found like steps find them, versions as the tools print them. */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { main } from "../../provider/cli/main.js";
import { parseToolVersion, toolVersions } from "../../provider/tools/versions.js";

/** A directory holding executables that print `output` (and exit `code`). */
function fakeTools(tools: Record<string, { output: string; code?: number }>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-tools-"));
  for (const [name, t] of Object.entries(tools)) {
    fs.writeFileSync(
      path.join(dir, name),
      `#!/bin/sh\nprintf '%s\\n' ${JSON.stringify(t.output)}\nexit ${t.code ?? 0}\n`,
      { mode: 0o755 },
    );
  }
  return dir;
}

async function version(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  const code = await main(["version", ...argv], { stdout, stderr: new PassThrough(), env });
  return { code, out };
}

describe("tool versions", () => {
  test("parseToolVersion reads helm's and kustomize's version lines, old and new", () => {
    assert.equal(parseToolVersion("v3.22.0+g144ca65\n"), "v3.22.0");
    assert.equal(parseToolVersion("v5.8.2\n"), "v5.8.2");
    assert.equal(parseToolVersion("{Version:kustomize/v4.5.7 GitCommit:abc BuildDate:2022}"), "v4.5.7");
    assert.equal(parseToolVersion("v3.16.0-rc.1"), "v3.16.0-rc.1");
    assert.equal(parseToolVersion("no version here"), undefined);
  });

  test("khook version names the helm and kustomize on PATH with their versions and paths", async () => {
    const dir = fakeTools({ helm: { output: "v3.22.0+g144ca65" }, kustomize: { output: "v5.8.2" } });
    const text = await version([], { PATH: `${dir}:/usr/bin:/bin` });
    assert.equal(text.code, 0);
    assert.match(text.out, /^khook \d+\.\d+\.\d+ /);
    assert.match(text.out, new RegExp(`^helm v3\\.22\\.0 \\(${dir}/helm\\)$`, "m"));
    assert.match(text.out, new RegExp(`^kustomize v5\\.8\\.2 \\(${dir}/kustomize\\)$`, "m"));
    const json = JSON.parse((await version(["-o", "json"], { PATH: dir })).out) as {
      tools: Record<string, { version?: string; path?: string }>;
    };
    assert.deepEqual(json.tools["helm"], { version: "v3.22.0", path: path.join(dir, "helm") });
    assert.deepEqual(json.tools["kustomize"], { version: "v5.8.2", path: path.join(dir, "kustomize") });
  });

  test("a missing tool, or one that fails, is reported and version still exits 0; KHOOK_HELM wins over PATH", async () => {
    const dir = fakeTools({ kustomize: { output: "boom", code: 3 } });
    const pinned = fakeTools({ helm: { output: "v3.15.0" } });
    const [helm, kustomize] = await toolVersions({ PATH: dir, KHOOK_HELM: path.join(pinned, "helm") });
    assert.deepEqual(helm, { tool: "helm", version: "v3.15.0", path: path.join(pinned, "helm") });
    assert.equal(kustomize!.version, undefined);
    assert.match(kustomize!.problem!, /kustomize version did not print a version/);
    const none = await version([], { PATH: fs.mkdtempSync(path.join(os.tmpdir(), "khook-empty-")) });
    assert.equal(none.code, 0);
    assert.match(none.out, /^helm: helm was not found on PATH$/m);
    assert.match(none.out, /^kustomize: kustomize was not found on PATH$/m);
  });
});
