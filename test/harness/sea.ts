// khook's single executable for tests and benchmarks: built once per test run by global setup
// (scripts/build-sea.mjs skips the work when dist/sea/khook is current), then copied wherever a
// test needs it: an empty directory with no node_modules, no Node on PATH.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { repoRoot } from "./util";

/** Where `./dev sea` writes the executable. */
export function seaPath(): string {
  return path.join(repoRoot(), "dist", "sea", "khook");
}

/** The executable global setup built (KHOOK_TEST_SEA, else dist/sea/khook); throws its build failure, or says it is missing. */
export function builtSea(): string {
  const failed = process.env["KHOOK_TEST_SEA_ERROR"];
  if (failed !== undefined) throw new Error(failed);
  const file = process.env["KHOOK_TEST_SEA"] ?? seaPath();
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run the tests with the global setup, or ./dev sea`);
  return file;
}

/** Builds the executable unless it is current; rejects with the build's output. */
export function ensureSea(log: (line: string) => void): Promise<string> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(repoRoot(), "scripts", "build-sea.mjs")],
      { cwd: repoRoot(), maxBuffer: 16 << 20 },
      (error, _stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`building the single executable failed: ${error.message}\n${stderr}`));
          return;
        }
        if (!fs.existsSync(seaPath())) {
          reject(new Error(`scripts/build-sea.mjs succeeded but ${seaPath()} is missing`));
          return;
        }
        log(
          `khook test setup: single executable ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (${stderr.trim().split("\n").at(-1) ?? ""})`,
        );
        resolve(seaPath());
      },
    );
  });
}

/**
 * A directory holding only symlinks to the given tools, for a PATH without Node: what a machine
 * that got the executable and helm, and nothing else, has.
 */
export function toolsOnlyDir(dir: string, tools: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, target] of Object.entries(tools)) fs.symlinkSync(target, path.join(dir, name));
  return dir;
}
