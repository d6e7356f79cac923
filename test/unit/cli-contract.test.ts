/**
 * The CLI's contract for bad invocations (issue 10, items 5, 21 and 22): invalid input is
 * exit 2 with the reason, JSON output stays JSON, and nothing but khook writes to stderr.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { main } from "../../provider/cli/main.js";
import { repoRoot, specText, tempSpecDir } from "./support/spec-files.js";

async function khook(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  stdin.end("");
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await main(argv, { stdout, stderr, stdin, env });
  return { code, out, err };
}

const TWO_STEPS = specText(
  "  - name: ns\n    wait: { for: delete, on: pods, selector: app=x }\n  - name: job\n    needs: [ns]\n    job: { image: busybox }\n",
);

function specFile(text = TWO_STEPS): string {
  return path.join(tempSpecDir({ "spec.yaml": text }), "spec.yaml");
}

describe("khook CLI: invalid invocations exit 2", () => {
  test('prefix-not-empty: --var-prefix "" and --secret-prefix "" exit 2', async () => {
    for (const flag of ["--var-prefix", "--secret-prefix"]) {
      const r = await khook(["validate", "-f", specFile(), flag, ""], { PATH: "/bin", HOME: "/root" });
      assert.equal(r.code, 2, `${flag}: ${r.err}`);
      assert.match(r.err, /prefix.*empty|empty.*prefix/);
    }
  });

  test("plan-offline-no-diff: plan --offline --diff exits 2 and says why", async () => {
    const r = await khook(["plan", "--offline", "--diff", "-f", specFile()]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--diff.*--offline|--offline.*--diff/);
    assert.equal(r.out, "");
  });

  test("status-needs-state: status on a spec without state: exits 2", async () => {
    const r = await khook(["status", "-f", specFile()]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /state/);
  });

  test("no-positional-arguments: stray positional arguments exit 2, naming them", async () => {
    for (const argv of [
      ["validate", "-f", specFile(), "extra.yaml"],
      ["validate", "spec.yaml"],
      ["graph", "-f", specFile(), "x"],
      ["schema", "x"],
      ["version", "x"],
      ["plan", "--offline", "-f", specFile(), "x"],
    ]) {
      const r = await khook(argv);
      assert.equal(r.code, 2, `${argv.join(" ")}: ${r.err}`);
      assert.match(r.err, /unexpected argument/);
    }
  });

  test("graph-json: graph -o json prints the graph as JSON", async () => {
    const r = await khook(["graph", "-f", specFile(), "-o", "json"]);
    assert.equal(r.code, 0, r.err);
    const g = JSON.parse(r.out) as {
      name: string;
      steps: { name: string; type: string; level: number; included: boolean; needs: string[] }[];
      edges: { from: string; to: string }[];
    };
    assert.equal(g.name, "test");
    assert.deepEqual(
      g.steps.map((s) => [s.name, s.type, s.level, s.included]),
      [
        ["ns", "wait", 0, true],
        ["job", "job", 1, true],
      ],
    );
    assert.deepEqual(g.edges, [{ from: "ns", to: "job" }]);
  });

  test("graph: an unknown -o format exits 2", async () => {
    assert.equal((await khook(["graph", "-f", specFile(), "-o", "yaml"])).code, 2);
  });

  test("validate-json-problems: validate -o json on invalid input prints the problems as JSON, exit 2", async () => {
    const file = specFile(specText("  - name: a\n    needs: [missing]\n    wait: { for: nope, on: pods }\n"));
    const r = await khook(["validate", "-f", file, "-o", "json"]);
    assert.equal(r.code, 2);
    const v = JSON.parse(r.out) as {
      valid: boolean;
      problems: {
        path: string;
        position?: { line: number; column: number };
        message: string;
        rule?: string;
        severity: string;
      }[];
    };
    assert.equal(v.valid, false);
    assert.equal(v.problems.length, 2);
    for (const p of v.problems) {
      assert.ok(p.position !== undefined && p.position.line > 0 && p.position.column > 0, JSON.stringify(p));
      assert.equal(p.severity, "error");
    }
    assert.deepEqual(v.problems.map((p) => p.path).sort(), ["/steps/0/needs/0", "/steps/0/wait/for"]);
  });

  test("validate -o json on an unreadable spec still prints JSON", async () => {
    const r = await khook(["validate", "-f", "/no/such/spec.yaml", "-o", "json"]);
    assert.equal(r.code, 2);
    const v = JSON.parse(r.out) as { valid: boolean; problems: { message: string }[] };
    assert.equal(v.valid, false);
    assert.match(v.problems[0]!.message, /no such file/);
  });
});

describe("khook CLI: every flag is validated on every command that takes it", () => {
  test("flags-validated-everywhere: a non-numeric --parallelism is exit 2 on plan --offline as on apply, before any cluster is asked", async () => {
    for (const argv of [["plan", "--offline"], ["plan"], ["apply"], ["destroy"]]) {
      const r = await khook([
        ...argv,
        "-f",
        specFile(),
        "--parallelism",
        "many",
        "--kubeconfig",
        "/no/such/kubeconfig",
      ]);
      assert.equal(r.code, 2, `${argv.join(" ")}: ${r.err}`);
      assert.match(r.err, /--parallelism must be a whole number of at least 1, got "many"/);
    }
  });

  test("set-names: --set and --var-file names must be names a spec could reference; anything else is exit 2 naming it", async () => {
    const set = await khook(["validate", "-f", specFile(), "--set", "image.tag=1.2"]);
    assert.equal(set.code, 2, set.err);
    assert.match(set.err, /--set image\.tag=\.\.\.: "image\.tag" is not a variable name a spec can reference/);
    const dir = tempSpecDir({ "spec.yaml": TWO_STEPS, "vars.yaml": "GOOD: 1\nbad-name: 2\n" });
    const file = await khook([
      "validate",
      "-f",
      path.join(dir, "spec.yaml"),
      "--var-file",
      path.join(dir, "vars.yaml"),
    ]);
    assert.equal(file.code, 2, file.err);
    assert.match(file.err, /vars\.yaml:2:1: \/bad-name: "bad-name" is not a variable name a spec can reference/);
  });

  test("spec-utf8: a spec that is not valid UTF-8 is exit 2 naming the line", async () => {
    const dir = tempSpecDir({ "spec.yaml": "" });
    const file = path.join(dir, "spec.yaml");
    const text = Buffer.from(TWO_STEPS, "utf8");
    const third = text.indexOf(0x0a, text.indexOf(0x0a) + 1) + 1;
    fs.writeFileSync(
      file,
      Buffer.concat([text.subarray(0, third), Buffer.from([0x23, 0x20, 0xc3, 0x28, 0x0a]), text.subarray(third)]),
    );
    const r = await khook(["validate", "-f", file]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /spec\.yaml:3:\d+: .*not valid UTF-8/);
    const vars = path.join(dir, "vars.yaml");
    fs.writeFileSync(vars, Buffer.from([0x41, 0x3a, 0x20, 0x31, 0x0a, 0x42, 0x3a, 0x20, 0xff, 0x0a]));
    const v = await khook(["validate", "-f", specFile(), "--var-file", vars]);
    assert.equal(v.code, 2, v.err);
    assert.match(v.err, /vars\.yaml:2:\d+: .*not valid UTF-8/);
  });
});

describe("khook CLI: stderr carries only khook's own messages", () => {
  test("yaml-no-library-warnings: an inline manifest containing {{ .Values.x }} prints no YAML-library warning", () => {
    const file = specFile(
      specText(
        "  - name: a\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: x}\n            data:\n              a: {{ .Values.x }}\n",
      ),
    );
    const cli = path.join(repoRoot(), "dist", "provider", "cli", "main.js");
    const r = spawnSync(process.execPath, [cli, "validate", "-f", file], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "" },
    });
    assert.doesNotMatch(r.stderr, /Warning|stringified|mapAsMap/, r.stderr);
  });
});

describe("khook CLI: a reader that closes the pipe", () => {
  /** bin/khook with its stdout read by nobody: the read end is closed before the child has started. */
  function closedPipe(argv: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
    const child = spawn(process.execPath, [path.join(repoRoot(), "bin", "khook"), ...argv], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "" },
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stderr })));
  }

  test("epipe-quiet: khook plan --offline | head -1 (and graph, validate -o json, schema, version) exits quietly, as kubectl and helm do", async () => {
    const file = specFile();
    for (const argv of [
      ["plan", "--offline", "-f", file],
      ["graph", "-f", file],
      ["validate", "-f", file, "-o", "json"],
      ["schema"],
      ["version"],
    ]) {
      const r = await closedPipe(argv);
      assert.equal(r.stderr, "", `khook ${argv[0]}: nothing on stderr`);
      assert.deepEqual([r.code, r.signal], [0, null], `khook ${argv[0]}: the command's own exit code`);
    }
  });
});
