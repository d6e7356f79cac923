/** Writes specs and the files they reference into a fresh temp directory. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function tempSpecDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-spec-"));
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
  return dir;
}

/** A minimal valid document around the given steps YAML (indented under `steps:`). */
export function specText(stepsYaml: string, extra = ""): string {
  return `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: test\n${extra}steps:\n${stepsYaml}`;
}

/** The repository root (one definition, in the harness). */
export { repoRoot } from "../../harness/util.js";
