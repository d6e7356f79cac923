/**
 * What khook reads at run time when it runs as a single executable (Node's SEA, built by
 * scripts/build-sea.mjs): the files a source checkout or an npm install reads from disk travel
 * inside the executable as SEA assets instead, so it runs from an empty directory with nothing
 * beside it. Outside a single executable every function here says "not one" and callers read
 * their files as before.
 */
import type * as SeaModule from "node:sea";

/** The asset names (paths as in the repository, so each names the file it carries). */
export const SEA_ASSETS = {
  schema: "schema/v1/khook.json",
  bundle: "dist/sea/khook.bundle.js",
  /** The CLI for the commands that never run a step (cli/offline-commands.ts), as bin/khook's offline bundle. */
  offlineBundle: "dist/sea/khook-offline.bundle.js",
  /** The Pulumi provider mode (pulumi/native-sea-entry.ts), loaded only under the plugin's name. */
  providerBundle: "dist/sea/khook-provider.bundle.js",
} as const;

/**
 * The V8 code cache of the bundle for one CLI command (`validate`, `apply`, ...) or `other`, or
 * of the provider bundle (`pulumi-provider`):
 * one per command, like bin/khook's caches (launch.ts), since a cache holds what its run
 * compiled and V8 loads all of it on every start.
 */
export function codeCacheAsset(variant: string): string {
  return `dist/sea/khook.${variant}.v8cache`;
}

let seaMemo: typeof SeaModule | null | undefined;

function sea(): typeof SeaModule | undefined {
  if (seaMemo === undefined) {
    try {
      const m = require("node:sea") as typeof SeaModule;
      seaMemo = m.isSea() ? m : null;
    } catch {
      // Node without node:sea (none of the versions khook supports, but a loader should not throw).
      seaMemo = null;
    }
  }
  return seaMemo ?? undefined;
}

/** True when this process is khook's single executable. */
export function inSingleExecutable(): boolean {
  return sea() !== undefined;
}

/** An asset's text, or undefined outside a single executable. A missing asset in one is a build bug: it throws. */
export function singleExecutableText(name: string): string | undefined {
  return sea()?.getAsset(name, "utf8");
}
