/**
 * Node's module compile cache for khook's own processes: the Pulumi provider (pulumi/handlers.ts)
 * loads this first, so every module after it is read from V8's cached code instead of being
 * compiled again on each start; the CLI (cli/launch.ts) loads it when its bundle first requires a
 * package (the bundle has its own code cache in the same directory, compile-cache-dir.ts).
 *
 * `NODE_COMPILE_CACHE` and `NODE_DISABLE_COMPILE_CACHE=1` keep their Node meaning; a cache that
 * cannot be written costs nothing but the speed-up.
 */
import { enableCompileCache } from "node:module";
import { compileCacheDir } from "./compile-cache-dir.js";

// Node < 22.1 has no compile cache; Node's own variables are honoured inside enableCompileCache.
enableCompileCache?.(compileCacheDir());
