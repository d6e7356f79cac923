import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { Redactor } from "../../provider/redact.js";
import { helmVersionProblem, locateHelm, parseHelmVersion } from "../../provider/tools/helm.js";

function scriptHelm(versionLine: string, exitCode = 0): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-helmver-"));
  const bin = path.join(dir, "helm");
  fs.writeFileSync(bin, `#!/bin/sh\necho '${versionLine}'\nexit ${exitCode}\n`, { mode: 0o755 });
  return bin;
}

const redactor = new Redactor();

describe("helm: missing or too old fails with a clear message saying what to install", () => {
  test("helm not on PATH and no KHOOK_HELM: says helm is needed, the minimum version and how to point khook at it", async () => {
    await assert.rejects(locateHelm({ redactor, env: { PATH: "/nonexistent" } }), (e: Error) => {
      assert.match(e.message, /helm: steps need the helm CLI: helm was not found on PATH/);
      assert.match(e.message, /v3\.15\.0 or newer/);
      assert.match(e.message, /KHOOK_HELM/);
      assert.match(e.message, /https:\/\/helm\.sh\/docs\/intro\/install\//);
      return true;
    });
  });

  test("KHOOK_HELM pointing at nothing is an error, not a silent fallback to PATH", async () => {
    await assert.rejects(
      locateHelm({ redactor, env: { PATH: process.env.PATH ?? "", KHOOK_HELM: "/nope/helm" } }),
      /set to "\/nope\/helm" by KHOOK_HELM, but that is not an executable file/,
    );
  });

  test("the provider configuration's path wins over KHOOK_HELM and PATH", async () => {
    const good = scriptHelm("v3.22.0+gabcdef");
    const h = await locateHelm({ explicit: good, redactor, env: { PATH: "/nonexistent", KHOOK_HELM: "/nope/helm" } });
    assert.equal(h.path, good);
    assert.equal(h.version, "v3.22.0");
    assert.equal(h.from, "the provider configuration");
  });

  test("too old: names the version found, the minimum and the reason", async () => {
    await assert.rejects(
      locateHelm({ redactor, env: { PATH: "/nonexistent", KHOOK_HELM: scriptHelm("v3.12.3+g3a31588") } }),
      (e: Error) => {
        assert.match(e.message, /helm v3\.12\.3 \(.*from KHOOK_HELM\) is too old: khook needs v3\.15\.0 or newer/);
        return true;
      },
    );
  });

  test("helm v2 and v4 are not the CLI khook drives", () => {
    assert.match(
      helmVersionProblem(parseHelmVersion("v4.0.1+gabc"), "x") ?? "",
      /helm v4\.0\.1 \(x\) is not supported: khook drives helm v3/,
    );
    assert.match(
      helmVersionProblem(parseHelmVersion('Client: &version.Version{SemVer:"v2.17.0"}'), "x") ?? "",
      /v2\.17\.0.*not supported/,
    );
  });

  test("an unreadable version or a failing `helm version` is reported", async () => {
    assert.match(helmVersionProblem(parseHelmVersion("garbage"), "x") ?? "", /cannot tell which helm version/);
    await assert.rejects(
      locateHelm({ redactor, env: { PATH: "/nonexistent", KHOOK_HELM: scriptHelm("boom", 2) } }),
      /helm version .* failed \(exit code 2\)/,
    );
  });

  test("supported versions pass", () => {
    for (const v of ["v3.15.0", "v3.22.0+g1234", "3.16.4"])
      assert.equal(helmVersionProblem(parseHelmVersion(v), "x"), undefined, v);
  });
});
