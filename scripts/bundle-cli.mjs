// Bundles the CLI (dist/provider/cli/main.js and every module it reaches) into one file that
// bin/khook runs (provider/cli/launch.ts says why). Runs after tsc and the validator codegen.
//
// Two bundles of the same modules: `khook.bundle.js` with all of them, for the commands that talk
// to a cluster, and `khook-offline.bundle.js` without what only a run against a cluster reaches
// (offline-bundle.mjs), for validate, graph, schema and version: the offline commands are the
// shortest, and a third fewer modules is about a tenth of a `validate` start.
//
// Packages stay outside (required from node_modules on first use, under Node's compile cache),
// except those every start runs: their code then sits in the CLI's own code cache, which holds
// the functions a run compiled and not only those compiled eagerly.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { COMMONJS_WRAPPER } from "../dist/provider/cli/commonjs-script.js";
import { leftOutStubs, OFFLINE_BUNDLE_LEAVES_OUT } from "./offline-bundle.mjs";

/**
 * js-yaml parses every spec and kubeconfig; the generated schema validator's runtime helpers (ajv's
 * runtime/ modules and fast-deep-equal, which they require) check every spec. Not ajv itself: its
 * compiler is required only when the generated validator is missing or stale.
 */
const BUNDLED_PACKAGES = [/^js-yaml(\/|$)/, /^ajv\/dist\/runtime\//, /^fast-deep-equal(\/|$)/];

const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "provider", "cli");

/** Builds one bundle of main.js into `name` (beside it); `leaveOut` names modules replaced by a throwing stub. */
async function bundle(name, leaveOut) {
  const outfile = path.join(cli, name);
  const result = await esbuild.build({
    entryPoints: [path.join(cli, "main.js")],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    plugins: [
      {
        name: "packages-outside",
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            BUNDLED_PACKAGES.some((p) => p.test(args.path)) ? undefined : { path: args.path, external: true },
          );
        },
      },
      ...(leaveOut === undefined ? [] : [leftOutStubs(leaveOut, name, cli)]),
    ],
    // The licences of bundled packages travel with their code.
    legalComments: "eof",
    // Written inside Node's CommonJS wrapper, the form launch.ts compiles (commonjs-script.ts says why).
    banner: { js: COMMONJS_WRAPPER.head },
    footer: { js: COMMONJS_WRAPPER.tail },
    // As the single executable's bundle: a third less to read and hold on every start.
    minifyWhitespace: true,
    logLevel: "silent",
  });
  // A warning (a require esbuild cannot follow, say) means the bundle would differ from the modules: stop.
  const problems = [...result.errors, ...result.warnings];
  if (problems.length > 0) {
    const text = await esbuild.formatMessages(problems, { kind: "warning" });
    process.stderr.write(`bundle-cli: ${name} is not faithful to its modules:\n${text.join("")}`);
    process.exit(1);
  }
  // launch.ts reads an ASCII bundle as a one-byte string; any other byte makes it decode UTF-8 into a
  // string of twice the size on every start. esbuild escapes strings but keeps regular expression
  // literals as written: escape the character in the source instead.
  const text = fs.readFileSync(outfile, "utf8");
  const nonAscii = [...text.matchAll(/.{0,40}[^\x00-\x7f].{0,40}/g)].map((m) => `  ...${m[0]}...`);
  if (nonAscii.length > 0) {
    process.stderr.write(
      `bundle-cli: ${name} must be ASCII; escape these characters in the source:\n${nonAscii.join("\n")}\n`,
    );
    process.exit(1);
  }
}

await bundle("khook.bundle.js", undefined);
await bundle("khook-offline.bundle.js", OFFLINE_BUNDLE_LEAVES_OUT);

// The launcher itself (launch.js and the modules it requires) in one file, which bin/khook requires:
// what it loads later (the CLI's modules when a bundle is stale, Node's compile cache) stays outside.
await esbuild.build({
  entryPoints: [path.join(cli, "launch.js")],
  outfile: path.join(cli, "launch.bundle.js"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node22",
  external: ["./main.js", "../compile-cache.js"],
  minifyWhitespace: true,
  logLevel: "error",
});
