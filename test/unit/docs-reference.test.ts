/**
 * The docs the spec promises stay true to the code: docs/cli.md names every command, flag,
 * exit code and environment variable the CLI and the provider read; ROADMAP.md exists with
 * the non-goals; the README holds the one "Differences from the spec" table.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { CLUSTER_OPTIONS, COMMON_OPTIONS } from "../../provider/cli/args.js";
import { COMMANDS, USAGE } from "../../provider/cli/main.js";
import { EXIT_CODES } from "../../provider/errors.js";
import { repoRoot } from "./support/spec-files.js";

const root = repoRoot();
const read = (rel: string): string => fs.readFileSync(path.join(root, rel), "utf8");

/** Every .ts file under a directory, recursively. */
function sources(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return sources(rel);
    return e.name.endsWith(".ts") ? [rel] : [];
  });
}

/** Environment variables the provider reads: `env.X`, `env["X"]` and `envVar: "X"`. */
function environmentVariablesRead(): Set<string> {
  const names = new Set<string>();
  for (const file of sources("provider")) {
    const text = read(file);
    for (const m of text.matchAll(/\benv(?:\.|\[")([A-Z][A-Z0-9_]*)/g)) names.add(m[1]!);
    for (const m of text.matchAll(/envVar: "([A-Z][A-Z0-9_]*)"/g)) names.add(m[1]!);
  }
  return names;
}

describe("docs/cli.md is the CLI reference", () => {
  const cli = read("docs/cli.md");

  test("cli reference documents every command", () => {
    const commands = Object.keys(COMMANDS);
    assert.ok(commands.length >= 8, "the command table was found");
    for (const name of commands)
      assert.match(cli, new RegExp(`^## \`khook ${name}\``, "m"), `no section for khook ${name}`);
  });

  test("cli reference documents every flag", () => {
    const flags = new Set([
      ...Object.keys(COMMON_OPTIONS),
      ...Object.keys(CLUSTER_OPTIONS),
      ...[...USAGE.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!),
    ]);
    for (const flag of flags) assert.ok(cli.includes(`--${flag}`), `--${flag} is not documented`);
    for (const [name, option] of Object.entries(COMMON_OPTIONS)) {
      if ("short" in option)
        assert.ok(
          cli.includes(`-${option.short}\`, \`--${name}`),
          `-${option.short} is not documented as the short form of --${name}`,
        );
    }
  });

  test("cli reference documents every exit code", () => {
    for (const code of [0, ...Object.values(EXIT_CODES)])
      assert.match(cli, new RegExp(`^\\| \`${code}\` \\|`, "m"), `exit code ${code} is not in the table`);
  });

  test("cli reference documents every environment variable khook reads", () => {
    const names = environmentVariablesRead();
    assert.ok(
      names.has("KUBECONFIG") && names.has("KHOOK_HELM"),
      `the scan found the known variables: ${[...names].join(", ")}`,
    );
    for (const name of names) assert.ok(cli.includes(`\`${name}\``), `${name} is not documented`);
    for (const prefix of ["KHOOK_VAR_", "KHOOK_SECRET_"])
      assert.ok(cli.includes(prefix), `${prefix} is not documented`);
  });
});

describe("ROADMAP.md and the README's differences table", () => {
  test("roadmap lists the spec's non-goals", () => {
    const roadmap = read("ROADMAP.md");
    for (const nonGoal of ["helm rollback", "--prune", "exec", "describe", "Drift"])
      assert.ok(roadmap.includes(nonGoal), `ROADMAP.md does not mention ${nonGoal}`);
    assert.match(roadmap, /^## Beyond v1/m);
    // khook has a lease on the state record (README's differences table): locking is neither a non-goal nor a plan.
    assert.doesNotMatch(roadmap, /locking/i, "ROADMAP.md still lists locking, which khook does (the lease)");
  });

  test("readme has exactly one differences-from-the-spec table with the chosen differences", () => {
    const readme = read("README.md");
    assert.equal(readme.match(/^## Differences from the spec$/gm)?.length, 1);
    const section = readme.split(/^## Differences from the spec$/m)[1]!.split(/^## /m)[0]!;
    const rows = section
      .split("\n")
      .filter((l) => l.startsWith("| ") && !l.startsWith("| ---") && !l.startsWith("| difference"));
    for (const topic of [
      "Ready-queue scheduler",
      "`$${` escape",
      "kustomize as a binary",
      "Waiting for absent targets",
      "Stricter `metadata.name`",
      "Pulumi journal",
    ]) {
      const row = rows.find((r) => r.startsWith(`| ${topic}`));
      assert.ok(row !== undefined, `no row for ${topic}`);
      assert.equal(
        row.split(" | ").length,
        4,
        `the row for ${topic} has a difference, the spec's text, khook's behaviour and a reason`,
      );
    }
    assert.ok(
      readme.includes("docs/cli.md") && readme.includes("ROADMAP.md"),
      "the README links the CLI reference and the roadmap",
    );
  });
});
