// Bundles the CLI (dist/provider/cli/main.js and every module it reaches) into one file that
// bin/khook runs (provider/cli/launch.ts says why). Runs after tsc and the validator codegen.
//
// Packages stay outside (required from node_modules on first use, under Node's compile cache),
// except those every start runs: their code then sits in the CLI's own code cache, which holds
// the functions a run compiled and not only those compiled eagerly.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

/**
 * js-yaml parses every spec and kubeconfig; the generated schema validator's runtime helpers (ajv's
 * runtime/ modules and fast-deep-equal, which they require) check every spec. Not ajv itself: its
 * compiler is required only when the generated validator is missing or stale.
 */
const BUNDLED_PACKAGES = [/^js-yaml(\/|$)/, /^ajv\/dist\/runtime\//, /^fast-deep-equal(\/|$)/];

const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "provider", "cli");
const result = await esbuild.build({
  entryPoints: [path.join(cli, "main.js")],
  outfile: path.join(cli, "khook.bundle.js"),
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
  ],
  // The licences of bundled packages travel with their code.
  legalComments: "eof",
  logLevel: "silent",
});
// A warning (a require esbuild cannot follow, say) means the bundle would differ from the modules: stop.
const problems = [...result.errors, ...result.warnings];
if (problems.length > 0) {
  const text = await esbuild.formatMessages(problems, { kind: "warning" });
  process.stderr.write(`bundle-cli: the CLI bundle is not faithful to its modules:\n${text.join("")}`);
  process.exit(1);
}
// launch.ts reads an ASCII bundle as a one-byte string; any other byte makes it decode UTF-8 into a
// string of twice the size on every start. esbuild escapes strings but keeps regular expression
// literals and comments in class bodies as written: escape the character in the source instead.
const bundle = fs.readFileSync(path.join(cli, "khook.bundle.js"), "utf8");
const nonAscii = bundle
  .split("\n")
  .flatMap((line, i) => (/[^\x00-\x7f]/.test(line) ? [`  line ${i + 1}: ${line.trim()}`] : []));
if (nonAscii.length > 0) {
  process.stderr.write(
    `bundle-cli: the CLI bundle must be ASCII; escape these characters in the source:\n${nonAscii.join("\n")}\n`,
  );
  process.exit(1);
}
