/**
 * How bin/khook starts the CLI. Every command pays its start-up, and a resumed `apply` with state:
 * is almost nothing else, so the CLI runs from one file, `khook.bundle.js` (every module of
 * dist/provider/cli/main.js's graph, made by `npm run build`; packages stay outside it), compiled
 * from a V8 code cache written at the end of a run. The commands that never run a step (validate,
 * graph, schema, version) run from `khook-offline.bundle.js`, the same modules less those only a
 * cluster run reaches (scripts/bundle-cli.mjs): a start pays for every function its bundle holds.
 *
 * Why our own cache and not only Node's: Node's compile cache is made when a module is compiled,
 * before it runs, so it holds the few functions V8 compiles eagerly; every other function is parsed
 * and compiled again on each start. A cache made after a run holds every function that run
 * compiled. One cache per command, because `validate` and `apply` run different code.
 *
 * The cache sits with Node's (`NODE_COMPILE_CACHE`, default `~/.cache/khook/compile-cache`), and
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off too. A cache V8 rejects (another Node, other V8 flags,
 * a damaged file) costs only the speed-up: V8 compiles from source, and the run writes a new one.
 *
 * Nothing here loads node:crypto or node:zlib: either costs more to load than a `validate` spends
 * on its spec (the names and the checksum are fingerprint.ts's, pure and in this process only).
 * Node's compile cache, for the packages outside the bundle, is turned on when the bundle first
 * requires one: turning it on costs about as much as loading a module, and `validate` needs none.
 */
import { isAscii } from "node:buffer";
import fs from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import path from "node:path";
import vm from "node:vm";
import { compileCacheDir } from "../compile-cache-dir.js";
import { compileCommonJs, runCommonJs } from "./commonjs-script.js";
import { checksumScratch, fnv1a32Hex, wordChecksum } from "../fingerprint.js";
import { isOfflineCommand } from "./offline-commands.js";
import type * as MainModule from "./main.js";

type CliModule = typeof MainModule;

/** The bundled CLI, beside this file (scripts/bundle-cli.mjs writes it). */
export const CLI_BUNDLE = path.join(__dirname, "khook.bundle.js");

/** The bundle for OFFLINE_COMMANDS: without the cluster commands, the executors, the hook runners. */
export const OFFLINE_CLI_BUNDLE = path.join(__dirname, "khook-offline.bundle.js");

/** Which bundle serves `command`. */
export function bundleFor(command: string | undefined): string {
  return isOfflineCommand(command) ? OFFLINE_CLI_BUNDLE : CLI_BUNDLE;
}

/** tsc's record of its last build: newer than the bundle means the bundle predates the code. */
const TSC_BUILD_INFO = path.join(__dirname, "..", "..", ".tsbuildinfo");

/**
 * This launcher in one file, beside this module (scripts/bundle-cli.mjs writes it): what bin/khook
 * requires. Its modules (this one, fingerprint, commonjs-script, compile-cache-dir,
 * offline-commands) one by one through Node's loader cost a start about half a millisecond more.
 */
export const LAUNCHER_BUNDLE = path.join(__dirname, "launch.bundle.js");

/**
 * Whether the running launcher is the current code: as launch.bundle.js, when tsc has not built
 * since the bundle was made (bin/khook requires this module instead when it has); as this module,
 * always.
 */
export function launcherIsCurrent(): boolean {
  return __filename !== LAUNCHER_BUNDLE || bundleIsCurrent(__filename, TSC_BUILD_INFO);
}

/** The CLI module: the bundle when it is current, else the modules tsc emitted. */
export function loadCli(command: string | undefined, env: NodeJS.ProcessEnv = process.env): CliModule {
  const bundle = bundleFor(command);
  if (!bundleIsCurrent(bundle, TSC_BUILD_INFO)) return require("./main.js") as CliModule;
  const cacheDir = env["NODE_DISABLE_COMPILE_CACHE"] === "1" ? undefined : compileCacheDir(env);
  return runCachedScript(bundle, {
    cacheDir,
    require: requireTurningOnCompileCache(bundle),
    variant: command !== undefined && /^[a-z]{1,20}$/.test(command) ? command : "other",
  }).exports as CliModule;
}

/**
 * A bundle is current when tsc has not built since it was made. A `tsc` run alone (a watch, an
 * editor) leaves the bundle behind, and running old code would be worse than starting slower.
 * Without build info (an installed package ships none) the bundle is what was packed.
 */
export function bundleIsCurrent(bundle: string, buildInfo: string): boolean {
  const built = mtimeMs(bundle);
  if (built === undefined) return false;
  const compiled = mtimeMs(buildInfo);
  return compiled === undefined || compiled <= built;
}

function mtimeMs(file: string): number | undefined {
  return fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs;
}

/** What happened to the code cache: used as is, missing or rejected (then written at exit), or turned off. */
export type CodeCacheUse = "accepted" | "missing" | "rejected" | "off";

export interface CachedScriptOptions {
  /** Where cache files live; undefined: no cache. */
  cacheDir: string | undefined;
  /** Separates caches of runs that execute different code (a CLI command's name). */
  variant: string;
  /** The file's `require` (default: Node's, relative to the file). */
  require?: NodeJS.Require;
}

/** `file`'s require, which turns on Node's compile cache (compile-cache.ts) before the first package it loads. */
export function requireTurningOnCompileCache(file: string): NodeJS.Require {
  const plain = createRequire(file);
  let on = false;
  const wrapped = (id: string): unknown => {
    if (!on && !isBuiltin(id)) {
      on = true;
      require("../compile-cache.js");
    }
    return plain(id);
  };
  return Object.assign(wrapped, {
    resolve: plain.resolve,
    cache: plain.cache,
    main: plain.main,
    extensions: plain.extensions,
  }) as NodeJS.Require;
}

/**
 * Runs a bundle, a CommonJS module inside Node's wrapper as the build writes it (commonjs-script.ts),
 * from a V8 code cache made after an earlier run; returns its exports.
 */
export function runCachedScript(file: string, options: CachedScriptOptions): { exports: unknown; cache: CodeCacheUse } {
  const bytes = fs.readFileSync(file);
  // The bundle is ASCII (bundle-cli.mjs checks), and a one-byte string is made without decoding a megabyte of UTF-8.
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  const prefix = cachePrefix(file, options.variant);
  const cacheFile =
    options.cacheDir === undefined ? undefined : path.join(options.cacheDir, cacheFileName(prefix, file, bytes));
  const stored = cacheFile === undefined ? undefined : readCache(cacheFile);
  const cachedData = stored === "damaged" ? undefined : stored;
  const script = compileCommonJs(source, file, cachedData, {
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const cache: CodeCacheUse =
    cacheFile === undefined
      ? "off"
      : stored === undefined
        ? "missing"
        : stored === "damaged" || script.cachedDataRejected === true
          ? "rejected"
          : "accepted";
  if (cacheFile !== undefined && cache !== "accepted")
    process.once("exit", () => writeCache(cacheFile, prefix, script));
  return { exports: runCommonJs(script, file, options.require ?? createRequire(file)), cache };
}

/**
 * Named by what makes a cache valid: after the install and variant (the prefix), the V8 version and
 * the file's content (V8 itself checks only the length). The content is known by the file's length,
 * inode and change times (nanoseconds), rather than a digest of its megabyte on every start: a build
 * or an install writes a new file, and the kernel sets its change time (the numbers themselves name
 * it: nothing to digest). V8 checks its flags when it loads the cache; readCache, the data's integrity.
 */
function cacheFileName(prefix: string, file: string, content: Buffer): string {
  const st = fs.statSync(file, { bigint: true });
  const version = [st.ino, st.mtimeNs, st.ctimeNs].map((n) => n.toString(36)).join(".");
  return `${prefix}${process.versions.v8}-${content.length}-${version}.v8cache`;
}

/** Per install (the file's path) and variant: a new build replaces its own older caches, never another install's. */
function cachePrefix(file: string, variant: string): string {
  return `${path.basename(file, ".js")}-${fnv1a32Hex(file)}-${variant}-`;
}

/** The checksum that heads a cache file (8 hex digits), then V8's data. */
const HEADER_BYTES = 8;

/**
 * A cache file is a checksum of V8's data (fingerprint.ts's wordChecksum, as 8 hex digits), then
 * the data. V8 checks that data fits this V8 and these flags, but release builds do not checksum
 * it: a truncated or damaged file must not reach it. The file is read into the checksum's own
 * memory (checksumScratch), so its 0.4 MB are not copied there on every start; the data returned
 * lives there until the next checksum, which is after V8 has compiled from it.
 */
function readCache(file: string): Uint8Array | "damaged" | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    return undefined;
  }
  let bytes: Uint8Array;
  try {
    const size = fs.fstatSync(fd).size;
    bytes = checksumScratch(size);
    for (let read = 0; read < size;) {
      const n = fs.readSync(fd, bytes, read, size - read, read);
      if (n === 0) return "damaged"; // shorter than it was a moment ago
      read += n;
    }
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
  const data = bytes.subarray(HEADER_BYTES);
  const header = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(HEADER_BYTES, bytes.length)).toString("latin1");
  return bytes.length > HEADER_BYTES && header === wordChecksum(data) ? data : "damaged";
}

function cacheFileContent(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(wordChecksum(data), "latin1"), data]);
}

/** At exit, after the run compiled what it needed. Atomic, so a concurrent start never reads half a file; older caches of the same variant go. */
function writeCache(cacheFile: string, prefix: string, script: vm.Script): void {
  try {
    const dir = path.dirname(cacheFile);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const partial = `${cacheFile}.${process.pid}.partial`;
    fs.writeFileSync(partial, cacheFileContent(script.createCachedData()), { mode: 0o600 });
    fs.renameSync(partial, cacheFile);
    const name = path.basename(cacheFile);
    for (const other of fs.readdirSync(dir))
      if (other.startsWith(prefix) && other !== name && other.endsWith(".v8cache"))
        fs.rmSync(path.join(dir, other), { force: true });
  } catch {
    // A cache that cannot be written costs the next start its speed-up, nothing else.
  }
}
