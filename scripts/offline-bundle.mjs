// The offline bundle's cut, shared by bin/khook's bundles (bundle-cli.mjs) and the single
// executable's (build-sea.mjs): the commands that never run a step (provider/cli/launch.ts,
// OFFLINE_COMMANDS) start from a bundle without what only a run against a cluster reaches. A start
// pays for every function of its bundle, run or not (V8's code cache describes each one).
import * as path from "node:path";

/**
 * What the offline bundle leaves out, each the entry to a part only a cluster run reaches: the
 * cluster commands, the executors, the hook runners, the drift check. A module that offline code
 * imports too stays in.
 */
export const OFFLINE_BUNDLE_LEAVES_OUT =
  /\/provider\/(cli\/commands\/cluster|steps\/[^/]+\/executor|hooks\/(function|webhook)|engine\/drift)\.js$/;

/**
 * An esbuild plugin that replaces each relative import matching `leaveOut` by a stub that throws
 * naming the module and the bundle `name`: requiring one from the offline bundle is a bug in
 * launch.ts's choice of bundle, and says so. `baseDir` is where the names are relative to.
 */
export function leftOutStubs(leaveOut, name, baseDir) {
  return {
    name: "left-out",
    setup(build) {
      build.onResolve({ filter: /^\./ }, (args) => {
        const file = path.resolve(args.resolveDir, args.path);
        return leaveOut.test(file) ? { path: path.relative(baseDir, file), namespace: "left-out" } : undefined;
      });
      build.onLoad({ filter: /.*/, namespace: "left-out" }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`khook: ${args.path} is not in ${name}, which serves only the commands that never run a step (provider/cli/launch.ts)`)});`,
        loader: "js",
      }));
    },
  };
}
