/**
 * bin/khook runs the CLI from its bundle, compiled from a V8 code cache written after an earlier
 * run (provider/cli/launch.ts). The cache may only ever cost or save time: these tests pin that a
 * run writes it, the next run uses it, a changed or damaged cache is never used, and the switch
 * that turns Node's compile cache off turns this one off too. Real processes, real files.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { COMMONJS_WRAPPER, wrapCommonJs } from "../../provider/cli/commonjs-script.js";
import {
  bundleFor,
  bundleIsCurrent,
  CLI_BUNDLE,
  LAUNCHER_BUNDLE,
  OFFLINE_CLI_BUNDLE,
  runCachedScript,
} from "../../provider/cli/launch.js";
import { modulesLoadedByProcess, RECORD_LOADED_MODULES } from "./support/module-probe.js";
import { repoRoot } from "./support/spec-files.js";

const LAUNCH = path.join(repoRoot(), "dist", "provider", "cli", "launch.js");

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "khook-launch-"));
}

/** Runs `file` through runCachedScript in a fresh process; its exports and the cache's fate, as JSON. */
function runInChild(file: string, cacheDir: string | undefined): { exports: unknown; cache: string } {
  const script = `
    const { runCachedScript } = require(${JSON.stringify(LAUNCH)});
    const r = runCachedScript(${JSON.stringify(file)}, { cacheDir: ${JSON.stringify(cacheDir)}, variant: "test" });
    process.stdout.write(JSON.stringify({ exports: r.exports, cache: r.cache }));
  `;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as {
    exports: unknown;
    cache: string;
  };
}

function caches(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith(".v8cache"))
        .sort()
    : [];
}

/**
 * A bundle as the build writes one (a CommonJS module inside Node's wrapper) whose exports show
 * what it was given, and that does enough to be worth caching.
 */
function writeModule(dir: string, answer: number): string {
  fs.writeFileSync(path.join(dir, "helper.js"), "module.exports = { helped: true };\n");
  const file = path.join(dir, "bundle.js");
  fs.writeFileSync(
    file,
    wrapCommonJs(`"use strict";
function square(n) { return n * n; }
module.exports = { answer: ${answer}, squared: square(${answer}), helper: require("./helper.js").helped, filename: __filename, dirname: __dirname, sameExports: exports === module.exports, self: this === module.exports };
`),
  );
  return file;
}

describe("the CLI's code cache", () => {
  test("a run without a cache writes one at exit, and the next run uses it with the same result", () => {
    const dir = tempDir();
    const cacheDir = path.join(dir, "cache");
    const file = writeModule(dir, 7);
    const first = runInChild(file, cacheDir);
    assert.equal(first.cache, "missing");
    assert.equal(caches(cacheDir).length, 1, "written when the first process exited");
    const second = runInChild(file, cacheDir);
    assert.equal(second.cache, "accepted");
    assert.deepEqual(second.exports, first.exports);
  });

  test("the file sees Node's CommonJS names: exports, module, require relative to it, __filename, __dirname, this", () => {
    const dir = tempDir();
    const file = writeModule(dir, 3);
    assert.deepEqual(runInChild(file, undefined).exports, {
      answer: 3,
      squared: 9,
      helper: true,
      filename: file,
      dirname: dir,
      sameExports: true,
      self: true,
    });
  });

  test("a file outside Node's CommonJS wrapper (not written by the build) is refused, naming it and the rebuild", () => {
    const file = path.join(tempDir(), "plain.js");
    fs.writeFileSync(file, "module.exports = 1;\n");
    assert.throws(
      () => runCachedScript(file, { cacheDir: undefined, variant: "test" }),
      (e: Error) => e.message.includes(file) && /rebuild it with npm run build/.test(e.message),
    );
  });

  test("the build writes the bundles inside Node's CommonJS wrapper", () => {
    for (const bundle of [CLI_BUNDLE, OFFLINE_CLI_BUNDLE]) {
      const text = fs.readFileSync(bundle, "latin1");
      assert.ok(text.startsWith(COMMONJS_WRAPPER.head), path.basename(bundle));
      assert.ok(text.trimEnd().endsWith(COMMONJS_WRAPPER.tail.trim()), path.basename(bundle));
    }
  });

  test("a changed file never runs from the old cache: it gets its own, and the old one is removed", () => {
    const dir = tempDir();
    const cacheDir = path.join(dir, "cache");
    const file = writeModule(dir, 7);
    runInChild(file, cacheDir);
    const before = caches(cacheDir);
    writeModule(dir, 8); // same length, so V8's own check alone would accept the old cache
    const changed = runInChild(file, cacheDir);
    assert.equal(changed.cache, "missing");
    assert.deepEqual(changed.exports, {
      answer: 8,
      squared: 64,
      helper: true,
      filename: file,
      dirname: dir,
      sameExports: true,
      self: true,
    });
    const after = caches(cacheDir);
    assert.equal(after.length, 1);
    assert.notDeepEqual(after, before);
  });

  test("two installs of the same file keep one cache each: neither removes the other's", () => {
    const cacheDir = path.join(tempDir(), "cache");
    const [one, two] = [writeModule(tempDir(), 4), writeModule(tempDir(), 4)];
    runInChild(one, cacheDir);
    runInChild(two, cacheDir);
    assert.equal(caches(cacheDir).length, 2);
    assert.equal(runInChild(one, cacheDir).cache, "accepted");
    assert.equal(runInChild(two, cacheDir).cache, "accepted");
  });

  test("a damaged cache is rejected, the file still runs from source, and a good cache replaces it", () => {
    const dir = tempDir();
    const cacheDir = path.join(dir, "cache");
    const file = writeModule(dir, 5);
    runInChild(file, cacheDir);
    const [name] = caches(cacheDir);
    const cacheFile = path.join(cacheDir, name!);
    const bytes = fs.readFileSync(cacheFile);
    bytes.fill(0x5a, bytes.length >> 1, (bytes.length >> 1) + 64);
    fs.writeFileSync(cacheFile, bytes);
    const damaged = runInChild(file, cacheDir);
    assert.equal(damaged.cache, "rejected");
    assert.equal((damaged.exports as { squared: number }).squared, 25);
    assert.equal(runInChild(file, cacheDir).cache, "accepted", "the damaged file was replaced at exit");
  });

  test("no cache directory: nothing is read or written", () => {
    const dir = tempDir();
    const file = writeModule(dir, 2);
    assert.equal(runInChild(file, undefined).cache, "off");
    assert.deepEqual(fs.readdirSync(dir).sort(), ["bundle.js", "helper.js"]);
  });
});

/** A one-step spec that touches nothing until applied. */
const SPEC =
  "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: launch}\nsteps:\n  - name: cm\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: x}\n";

describe("bin/khook and its bundles", () => {
  const bin = path.join(repoRoot(), "bin", "khook");

  test("bin/khook runs the bundle, caches it per command under NODE_COMPILE_CACHE, and writes nothing with NODE_DISABLE_COMPILE_CACHE=1", () => {
    const cacheDir = path.join(tempDir(), "cache");
    const probe = `${RECORD_LOADED_MODULES}\nprocess.on("exit", () => require("node:fs").writeFileSync(process.env.PROBE_OUT, JSON.stringify([...loaded])));`;
    const probeFile = path.join(tempDir(), "probe.js");
    fs.writeFileSync(probeFile, probe);
    const out = path.join(path.dirname(probeFile), "modules.json");
    const version = execFileSync(process.execPath, ["--require", probeFile, bin, "version"], {
      encoding: "utf8",
      env: { ...process.env, NODE_COMPILE_CACHE: cacheDir, PROBE_OUT: out },
    });
    assert.match(version, /^khook \d+\.\d+\.\d+/);
    const modules = JSON.parse(fs.readFileSync(out, "utf8")) as string[];
    assert.ok(modules.includes(path.join(repoRoot(), "dist", "provider", "cli", "launch.bundle.js")));
    assert.ok(!modules.includes(LAUNCH), "the launcher's modules are in its bundle");
    assert.ok(
      !modules.some((m) => m.startsWith(path.join(repoRoot(), "dist", "provider", "cli", "commands"))),
      "no module of the CLI is required one by one: they are in the bundle",
    );
    const written = caches(cacheDir);
    assert.equal(written.length, 1);
    assert.match(written[0]!, /^khook-offline\.bundle-[0-9a-f]+-version-/, "version runs from the offline bundle");

    const offDir = path.join(tempDir(), "cache");
    execFileSync(process.execPath, [bin, "version"], {
      encoding: "utf8",
      env: { ...process.env, NODE_COMPILE_CACHE: offDir, NODE_DISABLE_COMPILE_CACHE: "1" },
    });
    assert.deepEqual(caches(offDir), []);
  });

  test("bin/khook validate loads neither node:crypto nor node:zlib, with or without a code cache to check", async () => {
    const file = path.join(tempDir(), "spec.yaml");
    fs.writeFileSync(file, SPEC);
    const cacheDir = path.join(tempDir(), "cache");
    for (const expected of ["written", "read"]) {
      const run = await modulesLoadedByProcess([bin, "validate", "-f", file], {
        ...process.env,
        NODE_COMPILE_CACHE: cacheDir,
      });
      assert.equal(run.code, 0, run.output);
      assert.equal(caches(cacheDir).length, 1, `the cache was ${expected}`);
      const digests = run.modules.filter((m) => /^(node:)?(crypto|zlib)$/.test(m));
      assert.deepEqual(digests, [], `cache ${expected}`);
    }
  });

  test("bin/khook turns on Node's compile cache when the bundle first requires a package: a plain spec's validate needs none, a when: condition needs the CEL library", async () => {
    const dir = tempDir();
    const plain = path.join(dir, "plain.yaml");
    fs.writeFileSync(plain, SPEC);
    const conditional = path.join(dir, "when.yaml");
    fs.writeFileSync(conditional, SPEC.replace("  - name: cm\n", "  - name: cm\n    when: 'true'\n"));
    const env = { ...process.env, NODE_COMPILE_CACHE: path.join(tempDir(), "cache") };
    const compileCache = path.join(repoRoot(), "dist", "provider", "compile-cache.js");
    const cel = (m: string): boolean => m.includes(path.join("node_modules", "@marcbachmann", "cel-js"));
    const withoutPackage = await modulesLoadedByProcess([bin, "validate", "-f", plain], env);
    assert.equal(withoutPackage.code, 0, withoutPackage.output);
    assert.ok(!withoutPackage.modules.includes(compileCache));
    const withPackage = await modulesLoadedByProcess([bin, "validate", "-f", conditional], env);
    assert.equal(withPackage.code, 0, withPackage.output);
    assert.ok(withPackage.modules.some(cel), "the CEL library came from node_modules");
    assert.ok(withPackage.modules.includes(compileCache));
    assert.ok(withPackage.modules.indexOf(compileCache) < withPackage.modules.findIndex(cel), "turned on before it");
  });

  test("the build made the bundles, and they are current", () => {
    for (const bundle of [CLI_BUNDLE, OFFLINE_CLI_BUNDLE, LAUNCHER_BUNDLE])
      assert.ok(
        bundleIsCurrent(bundle, path.join(repoRoot(), "dist", ".tsbuildinfo")),
        `npm run build writes ${path.basename(bundle)} after tsc`,
      );
  });

  test("the commands that never run a step use the offline bundle; every other command, known or not, the whole one", () => {
    for (const command of ["validate", "graph", "schema", "version"])
      assert.equal(bundleFor(command), OFFLINE_CLI_BUNDLE, command);
    for (const command of ["plan", "apply", "destroy", "status", "unlock", "a-future-command", undefined])
      assert.equal(bundleFor(command), CLI_BUNDLE, String(command));
  });

  test("the offline bundle leaves out the cluster commands, the executors and the hook runners, and requiring one throws naming it", () => {
    const offline = fs.readFileSync(OFFLINE_CLI_BUNDLE, "utf8");
    const whole = fs.readFileSync(CLI_BUNDLE, "utf8");
    assert.ok(offline.length < whole.length * 0.8, `${offline.length} bytes against ${whole.length}`);
    // Through the bundle's own main: apply imports the cluster commands, which are not in it.
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "spec.yaml"), SPEC);
    const script = `
      const { runCachedScript } = require(${JSON.stringify(LAUNCH)});
      const { main } = runCachedScript(${JSON.stringify(OFFLINE_CLI_BUNDLE)}, { cacheDir: undefined, variant: "apply" }).exports;
      main(["apply", "-f", ${JSON.stringify(path.join(dir, "spec.yaml"))}]).then((code) => { process.exitCode = code; });
    `;
    const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    assert.equal(run.status, 1, run.stderr);
    assert.match(
      run.stderr,
      /commands\/cluster\.js is not in khook-offline\.bundle\.js, which serves only the commands that never run a step/,
    );
  });

  test("every example validates and graphs through bin/khook (the offline bundle) as through the modules", () => {
    const examples = path.join(repoRoot(), "examples");
    const specs = fs.readdirSync(examples).filter((f) => f.endsWith(".khook.yaml"));
    assert.ok(specs.length >= 10, "the examples are there");
    const env = { ...process.env, NODE_COMPILE_CACHE: path.join(tempDir(), "cache") };
    const main = path.join(repoRoot(), "dist", "provider", "cli", "main.js");
    for (const spec of specs)
      for (const command of ["validate", "graph"]) {
        const args = [command, "-f", path.join(examples, spec)];
        const bundled = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", env });
        const modules = spawnSync(process.execPath, [main, ...args], { encoding: "utf8", env });
        assert.equal(bundled.status, modules.status, `${command} ${spec}: ${bundled.stderr}`);
        assert.equal(bundled.stdout, modules.stdout, `${command} ${spec}`);
        assert.equal(bundled.stderr, modules.stderr, `${command} ${spec}`);
      }
  });

  test("bin/khook requires the launcher's bundle, and the launcher's module when tsc has built since or there is no bundle", () => {
    // A copy of bin/khook over a dist/ whose main.js and launch.js say which ran; launch.bundle.js is the built one.
    const root = tempDir();
    const cli = path.join(root, "dist", "provider", "cli");
    fs.mkdirSync(path.join(root, "bin"));
    fs.mkdirSync(cli, { recursive: true });
    fs.copyFileSync(bin, path.join(root, "bin", "khook"));
    const said = (who: string): string =>
      `exports.main = async () => { process.stdout.write(${JSON.stringify(who)}); return 0; };\n`;
    fs.writeFileSync(path.join(cli, "main.js"), said("the bundled launcher, then main.js (no CLI bundle here)"));
    fs.writeFileSync(
      path.join(cli, "launch.js"),
      `exports.loadCli = () => ({ ${said("launch.js").replace("exports.main =", "main:").replace(";\n", "")} });\n`,
    );
    const ran = (): string =>
      execFileSync(process.execPath, [path.join(root, "bin", "khook"), "version"], { encoding: "utf8" });

    assert.equal(ran(), "launch.js", "no launcher bundle");
    const bundled = path.join(cli, "launch.bundle.js");
    fs.copyFileSync(path.join(repoRoot(), "dist", "provider", "cli", "launch.bundle.js"), bundled);
    assert.equal(
      ran(),
      "the bundled launcher, then main.js (no CLI bundle here)",
      "no build info: an installed package",
    );
    fs.writeFileSync(path.join(root, "dist", ".tsbuildinfo"), "");
    fs.utimesSync(bundled, new Date(1_000_000), new Date(1_000_000));
    assert.equal(ran(), "launch.js", "tsc built after the launcher's bundle");
  });

  test("a bundle older than tsc's last build is not used (a tsc run alone must not leave bin/khook on old code)", () => {
    const dir = tempDir();
    const bundle = path.join(dir, "khook.bundle.js");
    const buildInfo = path.join(dir, ".tsbuildinfo");
    assert.equal(bundleIsCurrent(bundle, buildInfo), false, "no bundle");
    fs.writeFileSync(bundle, "");
    assert.equal(bundleIsCurrent(bundle, buildInfo), true, "no build info: an installed package");
    fs.writeFileSync(buildInfo, "");
    fs.utimesSync(bundle, new Date(1_000_000), new Date(1_000_000));
    assert.equal(bundleIsCurrent(bundle, buildInfo), false, "tsc built after the bundle");
    fs.utimesSync(bundle, new Date(), new Date(Date.now() + 1000));
    assert.equal(bundleIsCurrent(bundle, buildInfo), true);
  });
});
