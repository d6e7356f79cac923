/**
 * What a fan-out over many clusters aggregates from `-o json`: the cluster's identity, each step's
 * attempts and transient retries, and the exit status. Here against a cluster that refuses
 * connections (the real one is checked in test/integration/sea.test.ts).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
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
