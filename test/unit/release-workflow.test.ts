/** The release workflow ships what `./dev sea` builds: the executable and its SHA-256, at the paths the build writes. */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { parse } from "yaml";

const root = path.join(__dirname, "..", "..", "..");

describe("release workflow", () => {
  const workflow = parse(fs.readFileSync(path.join(root, ".github", "workflows", "release.yml"), "utf8")) as {
    on: { push: { tags: string[] } };
    jobs: { release: { steps: { run?: string }[] } };
  };
  const runs = workflow.jobs.release.steps.map((s) => s.run ?? "").join("\n");
  const build = fs.readFileSync(path.join(root, "scripts", "build-sea.mjs"), "utf8");

  test("runs on version tags, runs the tests, builds the executable with ./dev sea and publishes the npm package", () => {
    assert.deepEqual(workflow.on.push.tags, ["v*"]);
    assert.match(runs, /bash \.ci\/run/);
    assert.match(runs, /^\.\/dev sea$/m);
    assert.match(runs, /npm publish/);
  });

  test("attaches the executable and its SHA-256 from where build-sea.mjs writes them, checked before upload", () => {
    assert.match(build, /path\.join\(out, "khook\.sha256"\)/);
    assert.match(build, /const out = path\.join\(root, "dist", "sea"\)/);
    assert.match(runs, /cp dist\/sea\/khook "khook-\$\{GITHUB_REF_NAME\}-linux-x64"/);
    assert.match(runs, /dist\/sea\/khook\.sha256/);
    assert.match(runs, /sha256sum -c "khook-\$\{GITHUB_REF_NAME\}-linux-x64\.sha256"/);
    assert.match(
      runs,
      /gh release create .*\n.*"khook-\$\{GITHUB_REF_NAME\}-linux-x64" "khook-\$\{GITHUB_REF_NAME\}-linux-x64\.sha256"/,
    );
  });
});
