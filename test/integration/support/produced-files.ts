// Which files a test run produced, for the secret-leak greps. Other processes (parallel test
// files, other tools) create and remove entries in the shared temporary directory at any time,
// so a new entry may be a plain file, or may be gone by the time it is read.
import fs from "node:fs";
import path from "node:path";

/**
 * Every regular file at or under `entry`: `entry` itself when it is a file; nothing when it is gone.
 * Installed packages are not output: a parallel Pulumi test copies this repository (the leak
 * test's own source, which holds the secret) into a temporary project's node_modules.
 */
export function filesUnder(entry: string): string[] {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(entry);
  } catch {
    return [];
  }
  if (stat.isFile()) return [entry];
  if (!stat.isDirectory()) return [];
  try {
    return fs
      .readdirSync(entry, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name))
      .filter((f) => !path.relative(entry, f).split(path.sep).includes("node_modules"));
  } catch {
    return []; // removed while we listed it
  }
}

/** The files' contents, leaving out any that vanished between listing and reading. */
export function readProduced(files: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const f of files) {
    try {
      out.push([f, fs.readFileSync(f, "latin1")]);
    } catch {
      /* removed by its owner after we listed it */
    }
  }
  return out;
}
