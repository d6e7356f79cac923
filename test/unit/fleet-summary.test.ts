/**
 * What a fan-out over many clusters aggregates from `-o json`: the cluster's identity, each step's
 * attempts and transient retries, and the exit status. Here against a cluster that refuses
 * connections (the real one is checked in test/integration/sea.test.ts).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { main } from "../../provider/cli/main.js";

const REFUSED = "https://127.0.0.1:9";

function files(): { spec: string; kubeconfig: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-fleet-"));
  const spec = path.join(dir, "spec.yaml");
  fs.writeFileSync(
    spec,
    "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: fleet}\nstate: {}\nsteps:\n  - name: cm\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: cm, namespace: default}\n",
  );
  const kubeconfig = path.join(dir, "kubeconfig");
  fs.writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: '${REFUSED}'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
  );
  return { spec, kubeconfig };
}

async function khookJson(argv: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  const code = await main(argv, { stdout, stderr: new PassThrough(), env: {} });
  return { code, json: JSON.parse(out) as Record<string, unknown> };
}

describe("fleet summaries (-o json)", () => {
  test("apply and destroy against an unreachable cluster: the server is named, its kube-system UID is null, the exit status is in the JSON", async () => {
    const { spec, kubeconfig } = files();
    for (const command of ["apply", "destroy"]) {
      const r = await khookJson([command, "-f", spec, "--kubeconfig", kubeconfig, "-o", "json"]);
      assert.equal(r.code, 1);
      assert.equal(r.json["exitCode"], 1);
      assert.deepEqual(r.json["cluster"], { server: REFUSED, kubeSystemUid: null });
      const steps = r.json["steps"] as {
        name: string;
        attempts: number;
        transientRetries: number;
        durationMs: number;
        status: string;
      }[];
      assert.equal(steps.length, 1);
      assert.equal(typeof steps[0]!.durationMs, "number");
      assert.equal(steps[0]!.transientRetries, 0);
      assert.equal(typeof steps[0]!.attempts, "number");
    }
  });
});

describe("one summary for every outcome (-o json): one JSON document on stdout, its outcome, its exit code, and what is known of the cluster", () => {
  const khookRun = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = "";
    let err = "";
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await main(argv, { stdout, stderr, env });
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(out) as Record<string, unknown>;
    } catch {
      throw new Error(`stdout is not one JSON document (exit ${code}):\n${out}\nstderr:\n${err}`);
    }
    return { code, json, err };
  };

  test("nothing listens at the server: outcome unreachable, the server named, the record's error kept", async () => {
    const { spec, kubeconfig } = files();
    for (const command of ["apply", "destroy", "status"]) {
      const r = await khookRun([command, "-f", spec, "--kubeconfig", kubeconfig, "-o", "json"]);
      assert.equal(r.code, 1, r.err);
      assert.equal(r.json["outcome"], "unreachable", `${command}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json["exitCode"], 1);
      assert.deepEqual(r.json["cluster"], { server: REFUSED, kubeSystemUid: null });
      assert.match(JSON.stringify(r.json), /--wait-for-cluster 10m/, "the way to wait is in the summary");
    }
  });

  test("--wait-for-cluster that runs out: outcome cluster-not-ready, the error names the flag's setting and the context", async () => {
    const { spec, kubeconfig } = files();
    for (const command of ["apply", "destroy", "status"]) {
      const r = await khookRun([
        command,
        "-f",
        spec,
        "--kubeconfig",
        kubeconfig,
        "--wait-for-cluster",
        "300ms",
        "-o",
        "json",
      ]);
      assert.equal(r.code, 1, r.err);
      assert.equal(r.json["outcome"], "cluster-not-ready");
      assert.match(String(r.json["error"]), /was not ready within --wait-for-cluster 300ms \(ECONNREFUSED\)/);
      assert.match(String(r.json["error"]), /context "c" from kubeconfig /);
      assert.deepEqual(r.json["cluster"], { server: REFUSED, kubeSystemUid: null });
      assert.equal(r.json["exitCode"], 1);
    }
  });

  test("no usable kubeconfig (--kubeconfig names a file that does not exist): outcome no-kubeconfig, cluster all null", async () => {
    const { spec } = files();
    for (const command of ["apply", "destroy", "status"]) {
      const r = await khookRun([command, "-f", spec, "--kubeconfig", "/nonexistent/kubeconfig", "-o", "json"]);
      assert.equal(r.code, 1, r.err);
      assert.equal(r.json["outcome"], "no-kubeconfig");
      assert.match(String(r.json["error"]), /\/nonexistent\/kubeconfig/);
      assert.deepEqual(r.json["cluster"], { server: null, kubeSystemUid: null });
      assert.equal(r.json["exitCode"], 1);
    }
  });

  test("invalid input: outcome invalid-input, exit 2, every problem with its position; a bad flag too", async () => {
    const { spec, kubeconfig } = files();
    fs.writeFileSync(spec, fs.readFileSync(spec, "utf8").replace("name: fleet", "name: Bad_Name"));
    for (const command of ["apply", "destroy", "status"]) {
      const r = await khookRun([command, "-f", spec, "--kubeconfig", kubeconfig, "-o", "json"]);
      assert.equal(r.code, 2, r.err);
      assert.equal(r.json["outcome"], "invalid-input");
      assert.equal(r.json["exitCode"], 2);
      const problems = r.json["problems"] as { path: string; position?: { line: number } }[];
      assert.ok(
        problems.some((p) => p.path === "/metadata/name" && p.position !== undefined),
        JSON.stringify(problems),
      );
      assert.deepEqual(r.json["cluster"], { server: REFUSED, kubeSystemUid: null }, "the kubeconfig names the server");
      const flag = await khookRun([command, "-f", spec, "--no-such-flag", "-o", "json"]);
      assert.equal(flag.code, 2);
      assert.equal(flag.json["outcome"], "invalid-input");
      assert.match(String((flag.json["problems"] as { message: string }[])[0]!.message), /--no-such-flag/);
    }
  });
});
