import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { filesUnder, readProduced } from "../integration/support/produced-files.js";

test("secret-leak grep: a plain file among the new temporary entries is grepped, not a crash", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-produced-"));
  try {
    const file = path.join(dir, "a.log");
    fs.writeFileSync(file, "x");
    fs.mkdirSync(path.join(dir, "sub"));
    fs.writeFileSync(path.join(dir, "sub", "b.txt"), "y");
    assert.deepEqual(filesUnder(file), [file]);
    assert.deepEqual(filesUnder(dir).sort(), [file, path.join(dir, "sub", "b.txt")].sort());
    assert.deepEqual(filesUnder(path.join(dir, "gone")), []);
    fs.mkdirSync(path.join(dir, "node_modules", "khook"), { recursive: true });
    fs.writeFileSync(path.join(dir, "node_modules", "khook", "copy.ts"), "a copy of a test's source");
    assert.deepEqual(
      filesUnder(dir).sort(),
      [file, path.join(dir, "sub", "b.txt")].sort(),
      "installed packages are not output",
    );
    assert.deepEqual(readProduced([file, path.join(dir, "gone")]), [[file, "x"]]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
