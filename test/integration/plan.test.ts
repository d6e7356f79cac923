/** `khook plan`: an action and a reason per step from live state, a server-side dry-run diff, and no change to the cluster. */
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import { cliEnv, khookSpec, runKhook, specDir } from "./support/khook-cli.js";

interface PlanJson {
  steps: { name: string; action: string; reason: string; diff?: string }[];
}

test("plan: each step gets an action and a reason from live state; --diff shows a server-side dry-run diff; nothing changes", async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "plan");
  const env = cliEnv(cluster.kubeconfig);
  const spec = (value: string) =>
    khookSpec(
      "plan",
      `  - name: config
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: planned }
            data: { key: "${value}" }
  - name: label
    needs: [config]
    patch:
      target: configmap/planned
      namespace: ${ns}
      type: merge
      patch: { metadata: { labels: { planned: "yes" } } }
  - name: wait
    needs: [config]
    wait: { for: "jsonpath={.data.key}", on: configmap/planned, namespace: ${ns} }
  - name: job
    job: { image: busybox, namespace: ${ns} }
  - name: cleanup
    delete: { resource: configmap/absent, namespace: ${ns} }
`,
    );
  const dir = specDir(spec("one"));
  const plan = async (extra: string[] = []) => {
    const r = await runKhook(["plan", "-f", dir.file, "-o", "json", ...extra], { env });
    assert.equal(r.code, 0, r.stderr);
    return Object.fromEntries((JSON.parse(r.stdout) as PlanJson).steps.map((s) => [s.name, s]));
  };

  const before = await plan();
  assert.equal(before.config!.action, "create");
  assert.match(before.config!.reason, /configmap\/planned/);
  assert.equal(before.job!.action, "run");
  assert.equal(before.cleanup!.action, "no-op");
  assert.notEqual((await cluster.kubectl(["get", "configmap", "planned", "-n", ns])).code, 0, "plan created nothing");

  const applied = await runKhook(["apply", "-f", dir.file], { env });
  assert.equal(applied.code, 0, applied.stderr);
  const rv = (
    await cluster.kubectl(["get", "configmap", "planned", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"])
  ).stdout;

  const after = await plan();
  assert.equal(after.config!.action, "no-op");
  assert.equal(after.label!.action, "no-op");
  assert.equal(after.wait!.action, "no-op");

  fs.writeFileSync(dir.file, spec("two"));
  const changed = await plan(["--diff"]);
  assert.equal(changed.config!.action, "configure");
  assert.match(changed.config!.diff ?? "", /-\s+key: one\n\+\s+key: two/);
  const text = await runKhook(["plan", "-f", dir.file, "--diff"], { env });
  assert.match(text.stdout, /# config\n--- configmap\/planned -n .* \(live\)/);
  assert.equal(
    (await cluster.kubectl(["get", "configmap", "planned", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"]))
      .stdout,
    rv,
    "plan --diff changed nothing",
  );
});
