/**
 * Node's module compile cache for khook's own processes: the Pulumi provider (pulumi/handlers.ts)
 * and the CLI (cli/launch.ts, for the packages outside its bundle; the bundle has its own code
 * cache in the same directory) load this first, so every module after it is read from V8's cached
 * code instead of being compiled again on each start.
 *
 * The cache lives in `~/.cache/khook/compile-cache` (next to the toolchain), not in Node's
 * default under the temporary directory, which CI machines and tmp cleaners wipe.
 * `NODE_COMPILE_CACHE` (a directory) and `NODE_DISABLE_COMPILE_CACHE=1` keep their Node meaning;
 * a cache that cannot be written costs nothing but the speed-up.
 */
import { enableCompileCache } from "node:module";
import * as os from "node:os";
import * as path from "node:path";

export function compileCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const fromNode = env["NODE_COMPILE_CACHE"];
  return fromNode !== undefined && fromNode !== "" ? fromNode : path.join(home, ".cache", "khook", "compile-cache");
}

// Node < 22.1 has no compile cache; Node's own variables are honoured inside enableCompileCache.
enableCompileCache?.(compileCacheDir());
