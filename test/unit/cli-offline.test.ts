/** The CLI's offline commands, in-process with captured streams: output, exit codes and redaction. */
import assert from "node:assert/strict";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { main } from "../../provider/cli/main.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

async function khook(argv: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  stdin.end(opts.stdin ?? "");
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await main(argv, { stdout, stderr, stdin, env: opts.env ?? {} });
  return { code, out, err };
}

const GOOD = specText(
  `  - name: ns\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Namespace\n            metadata: {name: demo}\n  - name: wait\n    needs: [ns]\n    wait: { for: delete, on: pods, namespace: demo }\n  - name: optional\n    needs: [ns]\n    when: 'vars.get("EXTRA", "no") == "yes"'\n    job: { image: "busybox:\${TAG:-1.36}" }\n`,
);

function specFile(text = GOOD): string {
  return path.join(tempSpecDir({ "spec.yaml": text }), "spec.yaml");
}

describe("khook CLI (offline)", () => {
  test("validate: exit 0 and a one-line summary", async () => {
    const r = await khook(["validate", "-f", specFile()]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /is valid: Khook "test" with 3 steps in 2 levels/);
  });

  test("validate: bad input exits 2 with every problem, each with file:line:column and path", async () => {
    const file = specFile(
      specText(
        "  - name: a\n    needs: [missing]\n    wait: { for: nope, on: pods }\n  - name: a\n    wait: { for: delete, on: pods }\n",
      ),
    );
    const r = await khook(["validate", "-f", file]);
    assert.equal(r.code, 2);
    assert.match(r.err, /3 problems/);
    assert.match(
      r.err,
      new RegExp(`${file.replace(/[/.]/g, "\\$&")}:7:\\d+: /steps/0/needs/0: step "a" needs "missing"`),
    );
    assert.match(r.err, /:8:\d+: \/steps\/0\/wait\/for:/);
    assert.match(r.err, /:9:\d+: \/steps\/1\/name: step name "a" is already used/);
  });

  test("bad flags and unknown commands exit 2", async () => {
    assert.equal((await khook(["validate", "--no-such-flag", "-f", specFile()])).code, 2);
    assert.equal((await khook(["frobnicate"])).code, 2);
    assert.equal((await khook(["validate"])).code, 2, "no -f");
    assert.equal((await khook(["validate", "-f", specFile(), "-o", "yaml"])).code, 2);
    assert.equal((await khook(["validate", "-f", specFile(), "--set", "NOEQUALS"])).code, 2);
    assert.equal((await khook(["validate", "-f", "/no/such/file.yaml"])).code, 2);
  });

  test("-f - reads the spec from stdin, and relative paths resolve against the working directory", async () => {
    const r = await khook(["validate", "-f", "-"], { stdin: GOOD });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /<stdin>|spec is valid/);
  });

  test("plan --offline: levels, types, when: outcomes and hashes, as a table and as JSON", async () => {
    const file = specFile();
    const text = await khook(["plan", "--offline", "-f", file]);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /LEVEL\s+STEP\s+TYPE/);
    assert.match(text.out, /excluded by when/);
    const json = await khook(["plan", "--offline", "-f", file, "-o", "json", "--set", "EXTRA=yes"]);
    const plan = JSON.parse(json.out) as {
      steps: { name: string; level: number; action: string; inputHash: string }[];
    };
    assert.deepEqual(
      plan.steps.map((s) => [s.name, s.level, s.action]),
      [
        ["ns", 0, "run"],
        ["wait", 1, "run"],
        ["optional", 1, "run"],
      ],
    );
  });

  test("--set beats --var-file beats KHOOK_SECRET_ beats KHOOK_VAR_ beats the default, through the CLI", async () => {
    const dir = tempSpecDir({
      "spec.yaml": specText("  - name: j\n    job: { image: 'busybox:${TAG:-default}' }\n"),
      "vars.yaml": "TAG: from-file\n",
    });
    const tag = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const r = await khook(["plan", "--offline", "-f", path.join(dir, "spec.yaml"), "-o", "json", ...args], { env });
      return (JSON.parse(r.out) as { steps: { summary: string }[] }).steps[0]!.summary;
    };
    assert.match(await tag([]), /busybox:default/);
    assert.match(await tag([], { KHOOK_VAR_TAG: "from-env" }), /busybox:from-env/);
    assert.match(
      await tag(["--var-file", path.join(dir, "vars.yaml")], { KHOOK_VAR_TAG: "from-env" }),
      /busybox:from-file/,
    );
    assert.match(await tag(["--var-file", path.join(dir, "vars.yaml"), "--set", "TAG=from-set"]), /busybox:from-set/);
    assert.match(await tag(["--var-prefix", "MY_"], { MY_TAG: "custom-prefix" }), /busybox:custom-prefix/);
  });

  test("output goes through the redactor: a secret used in a summary is masked", async () => {
    const file = specFile(specText("  - name: j\n    job: { image: 'registry.example/app:${TAG}' }\n"));
    const r = await khook(["plan", "--offline", "-f", file], { env: { KHOOK_SECRET_TAG: "secret-tag-value" } });
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.out + r.err, /secret-tag-value/);
    assert.match(r.out, /registry\.example\/app:\*\*\*/);
  });

  test("graph prints Mermaid and DOT with every edge", async () => {
    const file = specFile();
    const mermaid = await khook(["graph", "-f", file]);
    assert.match(mermaid.out, /^flowchart TD/);
    assert.match(mermaid.out, /s_ns --> s_wait/);
    const dot = await khook(["graph", "-f", file, "--format", "dot"]);
    assert.match(dot.out, /"ns" -> "optional";/);
    assert.equal((await khook(["graph", "-f", file, "--format", "svg"])).code, 2);
  });

  test("schema prints the JSON Schema with its $id; version prints the version", async () => {
    const s = await khook(["schema"]);
    assert.equal((JSON.parse(s.out) as { $id: string }).$id, "https://khook.io/schema/v1/khook.json");
    assert.match((await khook(["version"])).out, /^khook \d+\.\d+\.\d+/);
  });
});
