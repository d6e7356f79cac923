// The README's spec is a file `./dev test` applies for real (test/integration/lab-operators.test.ts):
// the two must not drift apart.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "./support/spec-files.js";

test("the README's spec is examples/readme.khook.yaml, byte for byte", () => {
  const readme = fs.readFileSync(path.join(repoRoot(), "README.md"), "utf8");
  const block = /## A spec\n\n```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, "README.md has a yaml block under '## A spec'");
  assert.equal(block, fs.readFileSync(path.join(repoRoot(), "examples", "readme.khook.yaml"), "utf8"));
  assert.ok(fs.existsSync(path.join(repoRoot(), "examples", "manifests", "cluster-issuer.yaml")));
});
