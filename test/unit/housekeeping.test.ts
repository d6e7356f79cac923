/** Rules of the house for the test tree itself (issue 20 §6). */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { devClusterName } from "../harness/dev-cluster.js";
import { repoRoot } from "../harness/util.js";

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith(".ts") ? [p] : [];
  });
}

describe("housekeeping", () => {
  test("repoRoot() has one definition in test/ (the harness's)", () => {
    const defining = sources(path.join(repoRoot(), "test")).filter((f) =>
      /\bfunction repoRoot\(/.test(fs.readFileSync(f, "utf8")),
    );
    assert.deepEqual(
      defining.map((f) => path.relative(repoRoot(), f)),
      [path.join("test", "harness", "util.ts")],
    );
  });

  test("cluster-up is keyed by checkout: two checkouts get two clusters, --name picks one", () => {
    const a = devClusterName([], "/work/wt-lease");
    const b = devClusterName([], "/work/wt-session");
    assert.notEqual(a, b);
    assert.match(a, /^dev-wt-lease-[0-9a-f]{8}$/);
    assert.equal(devClusterName([], "/work/wt-lease"), a, "the same checkout finds its own cluster again");
    assert.equal(devClusterName([], "/elsewhere/wt-lease") === a, false, "same directory name, other path");
    assert.equal(devClusterName(["up", "--name", "shared"], "/work/wt-lease"), "shared");
    assert.throws(() => devClusterName(["down", "--name", "../x"]), /--name needs a name/);
  });
});
