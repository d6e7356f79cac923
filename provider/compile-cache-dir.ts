/**
 * Where khook keeps V8 code caches: Node's module compile cache (compile-cache.ts) and the CLI
 * bundle's own (cli/launch.ts). `~/.cache/khook/compile-cache`, next to the toolchain, not Node's
 * default under the temporary directory, which CI machines and tmp cleaners wipe;
 * `NODE_COMPILE_CACHE` (a directory) keeps its Node meaning.
 */
import type * as OsModule from "node:os";
import path from "node:path";

export function compileCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = homeDirectory()): string {
  const fromNode = env["NODE_COMPILE_CACHE"];
  return fromNode !== undefined && fromNode !== "" ? fromNode : path.join(home, ".cache", "khook", "compile-cache");
}

/**
 * os.homedir() without loading node:os where it would only read $HOME (libuv's uv_os_homedir does
 * that first on POSIX): every CLI start asks, and the module costs it about 0.15 ms.
 */
function homeDirectory(): string {
  const home = process.env["HOME"];
  if (process.platform !== "win32" && home !== undefined && home !== "") return home;
  return (require("node:os") as typeof OsModule).homedir();
}
