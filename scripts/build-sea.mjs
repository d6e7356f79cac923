// Builds khook as one executable file (Node's single executable applications), `./dev sea`:
//   dist/sea/khook          the executable (a stripped copy of this Node with the SEA blob injected)
//   dist/sea/khook.sha256   its SHA-256, in sha256sum's format (the release workflow attaches both)
//
// The blob holds the loader (dist/provider/cli/sea.js, which uses only Node's built-in modules)
// and its assets (provider/sea-assets.ts names them): the CLI bundled with every package it
// reaches, nothing loaded from disk, and again without what only a cluster run reaches for the
// commands that never run a step (offline-bundle.mjs, as bin/khook's bundles); the Pulumi provider mode bundled likewise (its own asset, so
// the CLI's start-up does not carry @pulumi/pulumi); the JSON Schema; and per command the V8 code cache of the
// bundle, made by a first build of the executable after it ran that command (provider/cli/launch.ts
// says why a cache made after a run). V8 ties a cache to its version and flags: they are made by
// the very Node binary they ship in.
//
// Runs after `npm run build`. Skips all of it when dist/sea/khook was built from the same inputs.
// Flags: --force (rebuild), --quiet.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { COMMONJS_WRAPPER } from "../dist/provider/cli/commonjs-script.js";
import { leftOutStubs, OFFLINE_BUNDLE_LEAVES_OUT } from "./offline-bundle.mjs";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist", "sea");
const cli = path.join(root, "dist", "provider", "cli");
const SCHEMA = "schema/v1/khook.json";
const ASSETS = {
  bundle: "dist/sea/khook.bundle.js",
  offlineBundle: "dist/sea/khook-offline.bundle.js",
  providerBundle: "dist/sea/khook-provider.bundle.js",
  codeCache: (variant) => `dist/sea/khook.${variant}.v8cache`,
};
// Node's SEA fuse: the string postject flips so the binary looks for its blob.
const POSTJECT_CLI = path.join(root, "node_modules", "postject", "dist", "cli.js");
const SENTINEL_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const force = process.argv.includes("--force");
const log = process.argv.includes("--quiet") ? () => {} : (s) => process.stderr.write(`build-sea: ${s}\n`);

/** The runs each command's code cache is made from (`other`: anything that is not a command). */
function trainingRuns(dir) {
  const spec = path.join(dir, "spec.yaml");
  fs.writeFileSync(
    spec,
    [
      "apiVersion: khook.io/v1",
      "kind: Khook",
      "metadata:",
      "  name: train",
      "state: {}",
      "steps:",
      "  - name: config",
      "    apply:",
      "      namespace: ${ns:-train}",
      "      manifests:",
      "        - inline: |",
      "            apiVersion: v1",
      "            kind: ConfigMap",
      "            metadata: {name: settings}",
      "            data: {mode: bootstrap}",
      "  - name: chart",
      "    needs: [config]",
      "    helm:",
      "      chart: ./chart",
      "      namespace: ${ns:-train}",
      "  - name: ready",
      "    needs: [chart]",
      "    wait:",
      "      for: condition=Available",
      "      on: deployment/app",
      "      namespace: ${ns:-train}",
      "",
    ].join("\n"),
  );
  fs.mkdirSync(path.join(dir, "chart"));
  fs.writeFileSync(path.join(dir, "chart", "Chart.yaml"), "apiVersion: v2\nname: train\nversion: 0.1.0\n");
  // A cluster that refuses connections (port 9, discard): apply and plan run up to their first request.
  const kubeconfig = path.join(dir, "kubeconfig");
  fs.writeFileSync(
    kubeconfig,
    "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n",
  );
  const online = ["-f", spec, "--kubeconfig", kubeconfig];
  return {
    version: [["version"]],
    validate: [
      ["validate", "-f", spec],
      ["validate", "-f", spec, "-o", "json"],
    ],
    plan: [
      ["plan", "--offline", "-f", spec],
      ["plan", ...online],
    ],
    graph: [["graph", "-f", spec]],
    schema: [["schema"]],
    apply: [
      ["apply", ...online],
      ["apply", ...online, "-o", "json"],
    ],
    destroy: [["destroy", ...online]],
    status: [["status", ...online]],
    unlock: [["unlock", ...online]],
    other: [["--help"]],
    // The Pulumi provider mode's bundle: its warm-up (native-sea-entry.ts), not CLI runs.
    "pulumi-provider": "pulumi-provider",
  };
}

/**
 * khook takes only KubeConfig from @kubernetes/client-node (exec plugins and auth providers,
 * kube/kubeconfig.ts), and the package's index re-exports its whole generated API: 16 of 21 MB.
 * Its config module alone is what KubeConfig is; a name khook starts to import that it does not
 * export fails this build ("No matching export").
 */
const kubeClientConfigOnly = {
  name: "kube-client-config-only",
  setup(build) {
    build.onResolve({ filter: /^@kubernetes\/client-node$/ }, () => ({
      path: "client-node",
      namespace: "kube-client-config-only",
    }));
    build.onLoad({ filter: /.*/, namespace: "kube-client-config-only" }, () => ({
      contents: 'export { KubeConfig } from "@kubernetes/client-node/dist/config.js";',
      resolveDir: root,
      loader: "js",
    }));
  },
};

async function bundle() {
  fs.mkdirSync(out, { recursive: true });
  const common = {
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node24",
    logLevel: "silent",
    legalComments: "eof",
  };
  // The bundles sea.ts compiles are written inside Node's CommonJS wrapper (commonjs-script.ts says why).
  const wrapped = { banner: { js: COMMONJS_WRAPPER.head }, footer: { js: COMMONJS_WRAPPER.tail } };
  // The CLI with every package inside: nothing is required from node_modules at run time.
  const cliBundle = await esbuild.build({
    ...common,
    ...wrapped,
    entryPoints: [path.join(cli, "sea-entry.js")],
    outfile: path.join(root, ASSETS.bundle),
    plugins: [kubeClientConfigOnly],
    // No comments, no indentation: 3.6 MB instead of 5.2 to turn into a string on each start. Names stay (stack traces, error names).
    minifyWhitespace: true,
  });
  // The commands that never run a step (validate, graph, schema, version): the same less what only a cluster run reaches.
  const offlineBundle = await esbuild.build({
    ...common,
    ...wrapped,
    entryPoints: [path.join(cli, "sea-entry.js")],
    outfile: path.join(root, ASSETS.offlineBundle),
    plugins: [kubeClientConfigOnly, leftOutStubs(OFFLINE_BUNDLE_LEAVES_OUT, path.basename(ASSETS.offlineBundle), cli)],
    minifyWhitespace: true,
  });
  // The Pulumi provider mode: the native provider with @pulumi/pulumi and grpc-js, an asset of its own.
  const providerBundle = await esbuild.build({
    ...common,
    ...wrapped,
    entryPoints: [path.join(root, "dist", "provider", "pulumi", "native-sea-entry.js")],
    outfile: path.join(root, ASSETS.providerBundle),
    plugins: [kubeClientConfigOnly],
    minifyWhitespace: true,
  });
  const loader = await esbuild.build({
    ...common,
    entryPoints: [path.join(cli, "sea.js")],
    outfile: path.join(out, "main.js"),
    metafile: true,
  });
  const problems = [
    ...cliBundle.errors,
    ...cliBundle.warnings,
    ...offlineBundle.errors,
    ...offlineBundle.warnings,
    ...providerBundle.errors,
    ...providerBundle.warnings,
    ...loader.errors,
    ...loader.warnings,
  ];
  if (problems.length > 0) {
    const text = await esbuild.formatMessages(problems, { kind: "warning" });
    throw new Error(`the single executable's bundle is not faithful to its modules:\n${text.join("")}`);
  }
  asciiOnly(path.join(root, ASSETS.bundle));
  asciiOnly(path.join(root, ASSETS.offlineBundle));
  asciiOnly(path.join(root, ASSETS.providerBundle));
  // The loader must stay small: the bundle, not the loader, is what the code cache covers.
  const inLoader = Object.keys(loader.metafile.inputs).filter((f) => f.includes("node_modules"));
  if (inLoader.length > 0) throw new Error(`the SEA loader pulls in packages: ${inLoader.join(", ")}`);
}

/**
 * esbuild escapes non-ASCII in strings and template literals but leaves it in regular expressions
 * (µs in a duration pattern) and in the licence comments it keeps; the whitespace-minified bundle
 * has no other comments. One such character makes the loader decode megabytes of UTF-8 on every
 * start instead of taking the bytes as a one-byte string. A \uXXXX escape (a surrogate pair for
 * characters beyond the BMP) is the same character in a regular expression, with or without the
 * u flag, and inert in a comment.
 */
function asciiOnly(file) {
  const text = fs.readFileSync(file, "utf8");
  const escaped = text.replace(/[^\x00-\x7f]/gu, (c) =>
    [...c.split("")].map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
  );
  fs.writeFileSync(file, escaped);
}

function inputsHash() {
  const h = createHash("sha256");
  for (const f of [ASSETS.bundle, ASSETS.offlineBundle, ASSETS.providerBundle, "dist/sea/main.js", SCHEMA])
    h.update(f).update(fs.readFileSync(path.join(root, f)));
  h.update(process.version).update(fs.readFileSync(fileURLToPath(import.meta.url)));
  return h.digest("hex");
}

/** The blob: the loader, the bundles, the schema, and a code cache per command (paths of cache files). */
function seaBlob(work, codeCaches) {
  const config = path.join(work, "sea-config.json");
  const blob = path.join(work, "khook.blob");
  fs.writeFileSync(
    config,
    JSON.stringify({
      main: path.join(out, "main.js"),
      output: blob,
      disableExperimentalSEAWarning: true,
      // The loader's own cache (it is small); the bundle's is the asset, made after a run.
      useCodeCache: true,
      assets: {
        [SCHEMA]: path.join(root, SCHEMA),
        [ASSETS.bundle]: path.join(root, ASSETS.bundle),
        [ASSETS.offlineBundle]: path.join(root, ASSETS.offlineBundle),
        [ASSETS.providerBundle]: path.join(root, ASSETS.providerBundle),
        ...Object.fromEntries(Object.entries(codeCaches).map(([v, file]) => [ASSETS.codeCache(v), file])),
      },
    }),
  );
  execFileSync(process.execPath, ["--experimental-sea-config", config], { stdio: ["ignore", "ignore", "pipe"] });
  return fs.readFileSync(blob);
}

async function executable(base, blob, file) {
  fs.copyFileSync(base, file);
  fs.chmodSync(file, 0o755);
  const blobFile = `${file}.blob`;
  fs.writeFileSync(blobFile, blob);
  // postject's own CLI, in a child: its ELF library prints a warning per note section it cannot name.
  try {
    execFileSync(process.execPath, [POSTJECT_CLI, file, "NODE_SEA_BLOB", blobFile, "--sentinel-fuse", SENTINEL_FUSE], {
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    throw new Error(`postject could not inject the blob into ${file}:\n${e.stderr}`);
  } finally {
    fs.rmSync(blobFile, { force: true });
  }
}

/** This Node without its symbols and debug information (a fifth of its size); as is when strip is missing. */
function strippedNode(work) {
  const stripped = path.join(work, "node");
  try {
    execFileSync("strip", ["--strip-all", "-o", stripped, process.execPath], { stdio: ["ignore", "ignore", "pipe"] });
    return stripped;
  } catch (e) {
    log(`strip failed (${String(e.message).split("\n")[0]}); using Node unstripped`);
    return process.execPath;
  }
}

async function main() {
  const t0 = Date.now();
  await bundle();
  const target = path.join(out, "khook");
  const stampFile = path.join(out, ".inputs");
  const hash = inputsHash();
  if (!force && fs.existsSync(target) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === hash) {
    log(`${path.relative(root, target)} is current`);
    return;
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "khook-sea-"));
  try {
    const base = strippedNode(work);
    // Pass 1: an executable without code caches, run once per command to make each one.
    const first = path.join(work, "khook-first");
    await executable(base, seaBlob(work, {}), first);
    const caches = {};
    for (const [variant, runs] of Object.entries(trainingRuns(fs.mkdtempSync(path.join(work, "train-"))))) {
      const cacheFile = path.join(root, ASSETS.codeCache(variant));
      execFileSync(first, [], {
        env: {
          PATH: process.env.PATH,
          HOME: work,
          KHOOK_SEA_TRAIN: cacheFile,
          KHOOK_SEA_TRAIN_RUNS: JSON.stringify(runs),
        },
        stdio: ["ignore", "ignore", "inherit"],
      });
      caches[variant] = cacheFile;
    }
    const cacheBytes = Object.values(caches).reduce((n, f) => n + fs.statSync(f).size, 0);
    // Pass 2: the same executable with the caches inside.
    const partial = `${target}.partial`;
    await executable(base, seaBlob(work, caches), partial);
    fs.renameSync(partial, target);
    const sha = createHash("sha256").update(fs.readFileSync(target)).digest("hex");
    fs.writeFileSync(path.join(out, "khook.sha256"), `${sha}  khook\n`);
    fs.writeFileSync(stampFile, hash);
    const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
    log(
      `built ${path.relative(root, target)} (${mb(fs.statSync(target).size)}; bundle ${mb(fs.statSync(path.join(root, ASSETS.bundle)).size)}, code caches ${mb(cacheBytes)}) in ${((Date.now() - t0) / 1000).toFixed(1)}s; sha256 ${sha}`,
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`build-sea: ${e.message}\n`);
  process.exit(1);
});
