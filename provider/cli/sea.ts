/**
 * The main script of khook's single executable (scripts/build-sea.mjs builds it): it carries
 * only Node's built-in modules and this loader; the CLI is the asset `dist/sea/khook.bundle.js`
 * (every module and every package, nothing left outside), or for the commands that never run a
 * step `dist/sea/khook-offline.bundle.js` (as bin/khook chooses, launch.ts), compiled from the V8 code cache the
 * build made after running the command once (one asset per command, sea-assets.ts; launch.ts says
 * why a cache made after a run beats the one Node makes at compile time).
 *
 * One file, three roles, chosen by the name it is started under:
 * - `khook-post-renderer` (a symlink helm runs as its --post-renderer, post-renderer.ts): the
 *   post-renderer client, which needs no bundle and no shell;
 * - `pulumi-resource-khook*` (a Pulumi engine starting the provider plugin): the provider mode,
 *   the native provider (khook:index:Khook) from its own asset `dist/sea/khook-provider.bundle.js`
 *   (pulumi/native-sea-entry.ts), so the CLI's bundle stays without @pulumi/pulumi and gRPC;
 * - anything else: the CLI.
 */
import { isAscii } from "node:buffer";
import fs from "node:fs";
import path from "node:path";
import type * as SeaModule from "node:sea";
import { Writable } from "node:stream";
import { forwardToKhook, POST_RENDERER_NAME, POST_RENDERER_SOCKET } from "../hooks/post-renderer-client.js";
import { codeCacheAsset, SEA_ASSETS } from "../sea-assets.js";
import { compileCommonJs, runCommonJs } from "./commonjs-script.js";
import { isOfflineCommand } from "./offline-commands.js";
import type * as ProviderEntry from "../pulumi/native-sea-entry.js";
import type * as SeaEntry from "./sea-entry.js";

/** The plugin name a Pulumi engine starts a provider for package `khook` under. */
export const PROVIDER_PLUGIN_NAME = "pulumi-resource-khook";

/**
 * Build time only (scripts/build-sea.mjs): run each argv of KHOOK_SEA_TRAIN_RUNS (a JSON array,
 * the runs of one command; or "pulumi-provider", the provider bundle's warm-up), output discarded, in
 * this one process, then write the V8 code cache of every function they compiled to the file
 * KHOOK_SEA_TRAIN names.
 */
const TRAIN_CACHE_ENV = "KHOOK_SEA_TRAIN";
const TRAIN_RUNS_ENV = "KHOOK_SEA_TRAIN_RUNS";
/** `1`: say on stderr which bundle ran and whether V8 took the code cache inside (tests and benchmarks check it). */
const REPORT_CACHE_ENV = "KHOOK_SEA_REPORT_CODE_CACHE";

function rawAsset(sea: typeof SeaModule, name: string): Buffer {
  return Buffer.from(sea.getRawAsset(name));
}

/** The provider bundle's code cache: a name no CLI command can have. */
const PROVIDER_CACHE = "pulumi-provider";

/** The CLI command's code cache, or `other`'s for anything that is not a command. */
function commandCaches(command: string | undefined): string[] {
  return command !== undefined && /^[a-z]{1,20}$/.test(command) ? [command, "other"] : ["other"];
}

/** The CLI bundle that serves `command`: the offline one for the commands that never run a step. */
function cliBundleFor(command: string | undefined): string {
  return isOfflineCommand(command) ? SEA_ASSETS.offlineBundle : SEA_ASSETS.bundle;
}

/** The first of these code caches the build made; empty when it made none. */
function codeCache(sea: typeof SeaModule, variants: string[]): Buffer {
  for (const variant of variants) {
    try {
      return rawAsset(sea, codeCacheAsset(variant));
    } catch {
      // No cache for this name (not a command): the next one.
    }
  }
  return Buffer.alloc(0);
}

function loadBundle<Entry = typeof SeaEntry>(
  caches: string[],
  asset: string = SEA_ASSETS.bundle,
): { entry: Entry; script: import("node:vm").Script } {
  const sea = require("node:sea") as typeof SeaModule;
  const bytes = rawAsset(sea, asset);
  // esbuild writes ASCII: a one-byte string without decoding megabytes of UTF-8.
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  const cache = codeCache(sea, caches);
  const filename = path.join(path.dirname(process.execPath), path.basename(asset));
  const script = compileCommonJs(source, filename, cache.length > 0 ? cache : undefined);
  if (process.env[REPORT_CACHE_ENV] === "1")
    process.stderr.write(
      `khook: code cache ${cache.length === 0 ? "missing" : script.cachedDataRejected === true ? "rejected" : "accepted"} for ${path.basename(asset)}\n`,
    );
  // The bundle requires nothing but Node's built-in modules, which this script's require serves.
  return { entry: runCommonJs(script, filename, require) as Entry, script };
}

async function train(cacheFile: string): Promise<void> {
  const runs = JSON.parse(process.env[TRAIN_RUNS_ENV] ?? "[]") as string[][] | typeof PROVIDER_CACHE;
  if (runs === PROVIDER_CACHE) {
    const { entry, script } = loadBundle<typeof ProviderEntry>([], SEA_ASSETS.providerBundle);
    await entry.warmUp();
    fs.writeFileSync(cacheFile, script.createCachedData());
    return;
  }
  // A command's cache is made from the bundle that serves it: V8 takes a cache only for its own source.
  const { entry, script } = loadBundle([], cliBundleFor(runs[0]?.[0]));
  const sink = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() });
  for (const argv of runs) {
    await entry.main(argv, { stdout: sink(), stderr: sink(), env: process.env });
  }
  fs.writeFileSync(cacheFile, script.createCachedData());
}

async function run(argv: string[]): Promise<number> {
  if (path.basename(process.argv0).startsWith(PROVIDER_PLUGIN_NAME)) {
    return loadBundle<typeof ProviderEntry>([PROVIDER_CACHE], SEA_ASSETS.providerBundle).entry.providerMain(argv);
  }
  return loadBundle(commandCaches(argv[0]), cliBundleFor(argv[0])).entry.main(argv);
}

function start(): void {
  const invokedAs = process.argv0;
  if (path.basename(invokedAs) === POST_RENDERER_NAME && path.isAbsolute(invokedAs)) {
    forwardToKhook(path.join(path.dirname(invokedAs), POST_RENDERER_SOCKET));
    return;
  }
  const trainCache = process.env[TRAIN_CACHE_ENV];
  // In a single executable, argv[1] repeats the executable's path; the arguments follow it.
  const work =
    trainCache !== undefined && trainCache !== "" ? train(trainCache).then(() => 0) : run(process.argv.slice(2));
  work.then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`khook: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}

start();
