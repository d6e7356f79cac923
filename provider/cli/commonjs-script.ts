/**
 * A CommonJS file's source compiled and run the way Node's loader runs a module (its five-name
 * wrapper), but through vm.Script so the compile can start from a V8 code cache made after an
 * earlier run (launch.ts says why). Shared by bin/khook (launch.ts: bundle and caches on disk) and
 * the single executable (sea.ts: bundle and cache inside the executable).
 */
import path from "node:path";
import vm from "node:vm";

/** Compiles `source` as the module at `filename`; V8 sets `cachedDataRejected` when it cannot use `cachedData`. */
export function compileCommonJs(
  source: string,
  filename: string,
  cachedData: Buffer | undefined,
  options: Pick<vm.ScriptOptions, "importModuleDynamically"> = {},
): vm.Script {
  return new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
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
