/**
 * Secrets: values from KHOOK_SECRET_* never appear in output, logs, errors,
 * plan, diff or the state record, raw or through pipelines. This test runs
 * apply, plan --diff, status and destroy, then greps everything produced.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import { cliEnv, khookSpec, runKhook, specDir, type CliResult } from "./support/khook-cli.js";
import { filesUnder, readProduced } from "./support/produced-files.js";

/** URL-special and base64-special characters, so every encoding differs from the raw value. */
const TOKEN = "s3cr3t/Tok+en=&x y";

function forms(value: string): string[] {
  const b64 = Buffer.from(value).toString("base64");
  const urlquery = encodeURIComponent(value).replace(/%20/g, "+");
  return [
    value,
    b64,
    b64.replace(/=+$/, ""),
    urlquery,
    encodeURIComponent(value),
    JSON.stringify(value).slice(1, -1),
    Buffer.from(b64).toString("base64"),
  ];
}

test("secret values, raw and through pipelines (b64enc, urlquery), never appear in any output, the record, or produced files", async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "leak");
  const spec = khookSpec(
    "leak",
    `  - name: config
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: with-secret
              annotations:
                callback: "https://hooks.example/?token=\${TOKEN|urlquery}"
            data:
              raw: "\${TOKEN}"
              other: "\${OTHER}"
        - inline: |
            apiVersion: v1
            kind: Secret
            metadata:
              name: encoded
            stringData:
              b64: "\${TOKEN|b64enc}"
  - name: failing-wait
    needs: [config]
    timeout: 2s
    onError: continue
    wait:
      for: jsonpath={.data.raw}=\${TOKEN}-not-this
      on: configmap/with-secret
      namespace: ${ns}
`,
    `state:\n  namespace: ${ns}\n`,
  );
  const { dir, file } = specDir(spec);
  const before = new Set(fs.readdirSync(os.tmpdir()));
  // The CLI writes a V8 code cache at exit (provider/cli/launch.ts): it is produced by the run, so it is grepped too.
  const codeCache = path.join(dir, "compile-cache");
  const env = (other: string) =>
    cliEnv(cluster.kubeconfig, { KHOOK_SECRET_TOKEN: TOKEN, KHOOK_VAR_OTHER: other, NODE_COMPILE_CACHE: codeCache });
  const results: CliResult[] = [];
  const khook = async (args: string[], other = "1") => {
    const r = await runKhook(args, { env: env(other) });
    results.push(r);
    return r;
  };

  const applied = await khook(["apply", "-f", file]);
  assert.equal(applied.code, 1, "the failing wait fails the run");
  assert.match(applied.stdout + applied.stderr, /\*\*\*/, "the failing wait's error is shown, masked");
  await khook(["apply", "-f", file, "-o", "json"]);
  const plan = await khook(["plan", "-f", file, "--diff"], "2");
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(plan.stdout, /other/, "the diff shows the changed field");
  await khook(["plan", "-f", file, "--diff", "-o", "json"], "2");
  await khook(["status", "-f", file]);
  await khook(["status", "-f", file, "-o", "json"]);
  await khook(["validate", "-f", file]);
  await khook(["plan", "--offline", "-f", file, "-o", "json"]);

  const recordB64 = (
    await cluster.kubectl(["get", "secret", "khook-state-leak", "-n", ns, "-o", "jsonpath={.data.record\\.json}"])
  ).stdout;
  const record = Buffer.from(recordB64, "base64").toString("utf8");
  assert.match(record, /failing-wait/, "the record holds the failed step");

  const destroyed = await khook(["destroy", "-f", file]);
  assert.equal(destroyed.code, 0, destroyed.stderr);

  assert.ok(
    filesUnder(codeCache).some((f) => f.endsWith(".v8cache")),
    "the runs wrote their code caches where this test greps",
  );
  const produced = [
    ...filesUnder(dir),
    ...[...fs.readdirSync(os.tmpdir())]
      .filter((n) => !before.has(n))
      .flatMap((n) => filesUnder(path.join(os.tmpdir(), n))),
  ];
  const haystacks: [string, string][] = [
    ...results.flatMap((r, i): [string, string][] => [
      [`run ${i} stdout`, r.stdout],
      [`run ${i} stderr`, r.stderr],
    ]),
    ["state record", record],
    ...readProduced(produced.filter((f) => f !== file)),
  ];
  for (const form of forms(TOKEN)) {
    for (const [where, text] of haystacks)
      assert.ok(!text.includes(form), `${JSON.stringify(form)} leaked into ${where}`);
  }
  // The spec file itself never held the secret: it came from the environment.
  assert.ok(!fs.readFileSync(file, "utf8").includes(TOKEN));
});
