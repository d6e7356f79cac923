/**
 * Where khook keeps V8 code caches: Node's module compile cache (compile-cache.ts) and the CLI
 * bundle's own (cli/launch.ts). `~/.cache/khook/compile-cache`, next to the toolchain, not Node's
 * default under the temporary directory, which CI machines and tmp cleaners wipe;
 * `NODE_COMPILE_CACHE` (a directory) keeps its Node meaning.
 */
import os from "node:os";
import path from "node:path";

export function compileCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const fromNode = env["NODE_COMPILE_CACHE"];
  return fromNode !== undefined && fromNode !== "" ? fromNode : path.join(home, ".cache", "khook", "compile-cache");
}
