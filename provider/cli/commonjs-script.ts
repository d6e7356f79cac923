/**
 * A CommonJS file's source compiled and run the way Node's loader runs a module (its five-name
 * wrapper), but through vm.Script so the compile can start from a V8 code cache made after an
 * earlier run (launch.ts says why). Shared by bin/khook (launch.ts: bundle and caches on disk) and
 * the single executable (sea.ts: bundle and cache inside the executable).
 *
 * The build writes each bundle already inside the wrapper (esbuild's banner and footer, in
 * scripts/bundle-cli.mjs and scripts/build-sea.mjs): wrapping the bundle's text at start made a
 * joined string that V8 had to flatten before it could use the code cache. For the offline bundle
 * (0.75 MB) that cost about a millisecond of every start.
 */
import path from "node:path";
import vm from "node:vm";

/** Node's CommonJS wrapper, before and after a module's source. */
export const COMMONJS_WRAPPER = {
  head: "(function (exports, require, module, __filename, __dirname) { ",
  tail: "\n})",
} as const;

/** A module's source inside COMMONJS_WRAPPER, the form compileCommonJs takes. */
export function wrapCommonJs(source: string): string {
  return `${COMMONJS_WRAPPER.head}${source}${COMMONJS_WRAPPER.tail}`;
}

/**
 * Compiles `wrapped` (a module's source inside COMMONJS_WRAPPER) as the module at `filename`; V8
 * sets `cachedDataRejected` when it cannot use `cachedData`.
 */
export function compileCommonJs(
  wrapped: string,
  filename: string,
  cachedData: Uint8Array | undefined,
  options: Pick<vm.ScriptOptions, "importModuleDynamically"> = {},
): vm.Script {
  if (!wrapped.startsWith(COMMONJS_WRAPPER.head))
    throw new Error(
      `${filename} is not a module inside Node's CommonJS wrapper, which khook's bundles are written in: rebuild it with npm run build`,
    );
  return new vm.Script(wrapped, {
    filename,
    ...(cachedData !== undefined ? { cachedData } : {}),
    ...options,
  });
}

/** Runs a compiled module with `require` as its require; returns its exports. */
export function runCommonJs(script: vm.Script, filename: string, require: NodeJS.Require): unknown {
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(module.exports, module.exports, require, module, filename, path.dirname(filename));
  return module.exports;
}
