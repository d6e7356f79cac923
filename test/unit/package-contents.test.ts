/**
 * What `npm pack` ships: what users need and nothing else. The list comes from
 * npm itself (`npm pack --dry-run --json`, without the prepack build: this runs
 * on the build the tests run from).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { test } from "node:test";

const ROOT = path.resolve(__dirname, "../../..");

interface PackageJson {
  main: string;
  types: string;
  private?: boolean;
  bin: Record<string, string>;
  exports: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function packed(): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path).sort();
}

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as PackageJson;

test("the package is publishable: not private, built in prepack, @pulumi/pulumi a peer with a range (and a dev dependency for our tests)", () => {
  assert.notEqual(pkg.private, true);
  assert.match(pkg.scripts.prepack ?? "", /\bnpm run build\b/);
  assert.match(
    pkg.peerDependencies?.["@pulumi/pulumi"] ?? "",
    /^\^3\.\d+\.\d+$/,
    "a 3.x range, so a program on another 3.x gets one copy",
  );
  assert.ok(pkg.devDependencies?.["@pulumi/pulumi"], "our own tests pin one");
  assert.equal(pkg.dependencies["@pulumi/pulumi"], undefined, "never a second copy next to the program's");
});

test("npm pack ships the SDK, the provider, the CLI and the schema, and nothing else", () => {
  const files = packed();
  const shipped = new Set(files);
  for (const must of [
    "package.json",
    "README.md",
    "bin/khook",
    "bin/pulumi-resource-khook",
    "pulumi-plugin/PulumiPlugin.yaml",
    "pulumi-plugin/index.js",
    "schema/v1/khook.json",
    "dist/sdk/index.js",
    "dist/sdk/index.d.ts",
    "dist/provider/pulumi/handlers.js",
    "dist/provider/cli/main.js",
    "dist/provider/cli/khook.bundle.js",
    "dist/provider/cli/khook-offline.bundle.js",
  ]) {
    assert.ok(shipped.has(must), `${must} is in the tarball`);
  }
  for (const target of [
    pkg.main,
    pkg.types,
    ...Object.values(pkg.bin),
    ...Object.values(pkg.exports).filter((t) => !t.includes("*")),
  ]) {
    assert.ok(shipped.has(path.posix.normalize(target)), `${target} (package.json) is in the tarball`);
  }
  const unexpected = files.filter(
    (f) =>
      !/^(package\.json|README\.md|bin\/(khook|pulumi-resource-khook)|pulumi-plugin\/(PulumiPlugin\.yaml|index\.js)|schema\/.+\.json|dist\/(sdk|provider)\/.+\.(js|d\.ts))$/.test(
        f,
      ),
  );
  assert.deepEqual(unexpected, [], "no tests, benchmarks, examples, sources, source maps or build info");
});

test("every module the tarball ships finds what it requires: shipped files, dependencies, the peer, or Node's own", () => {
  const shipped = new Set(packed());
  const allowed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies ?? {}), "khook"]);
  const problems: string[] = [];
  for (const file of shipped) {
    if (!file.endsWith(".js")) continue;
    const text = fs.readFileSync(path.join(ROOT, file), "utf8");
    for (const m of text.matchAll(/\brequire\("([^"]+)"\)/g)) {
      const id = m[1]!;
      if (id.startsWith(".")) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), id));
        if (!shipped.has(target) && !shipped.has(`${target}.js`))
          problems.push(`${file} requires ${id}, which is not shipped`);
      } else {
        const name = id.startsWith("@") ? id.split("/").slice(0, 2).join("/") : id.split("/")[0]!;
        if (!id.startsWith("node:") && !builtinModules.includes(name) && !allowed.has(name))
          problems.push(`${file} requires ${id}, which is no dependency`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
