/**
 * A destroy that waits for a Namespace says what holds it, on the shared cluster (a Namespace held
 * by its own content stalls no other namespace): khook created the Namespace, someone else put
 * an object with a finalizer nobody clears in it, and the real namespace controller keeps the
 * Namespace Terminating with its conditions. The destroy names the Namespace's condition while it
 * waits and ends its timed-out error with it.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { testCluster } from "../harness/index.js";
import { applyStep, cliEnv, khookSpec, parseRun, runKhook, specDir, stepOf } from "./support/khook-cli.js";

const HOLD = "khook.test/hold";

describe("destroys that say why they wait: a Terminating Namespace", { timeout: 300_000 }, () => {
  test("a Namespace whose content keeps a finalizer nobody clears: the destroy names the Namespace's condition and the finalizer while it waits, and its timed-out error ends with them", async () => {
    const cluster = await testCluster();
    const ns = `held-${randomBytes(4).toString("hex")}`;
    const namespace = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`;
    const { file } = specDir(khookSpec("nsheld", applyStep("namespace", namespace, "    timeout: 15s\n")));
    const env = cliEnv(cluster.kubeconfig);
    assert.equal((await runKhook(["apply", "-f", file, "-o", "json"], { env })).code, 0);
    const held = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "held", namespace: ns, finalizers: [HOLD] } };
    assert.equal((await cluster.kubectl(["apply", "-f", "-"], { input: JSON.stringify(held) })).code, 0);
    try {
      const r = await runKhook(["destroy", "-f", file, "-o", "json"], { env });
      assert.equal(r.code, 1, r.stderr);
      const step = stepOf(parseRun(r), "namespace");
      assert.equal(step.status, "failed");
      const condition = `namespace/${ns}: Terminating: NamespaceFinalizersRemaining: Some content in the namespace has finalizers remaining: ${HOLD.replace(/\./g, "\\.")} in 1 resource instances`;
      assert.match(
        step.error ?? "",
        new RegExp(`not deleted after \\S+: namespaces "${ns}" still exists \\(Terminating\\)`),
      );
      assert.match(step.error ?? "", new RegExp(`what blocks it:(\\n\\s+- [^\\n]+)*\\n\\s+- ${condition}`));
      assert.match(step.error ?? "", /run the destroy again/);
      assert.match(r.stderr, new RegExp(`\\[namespace\\] blocked: [^\\n]*${condition}`), "said while it waited");
    } finally {
      await cluster.kubectl([
        "patch",
        "configmap",
        "held",
        "-n",
        ns,
        "--type=merge",
        "-p",
        '{"metadata":{"finalizers":null}}',
      ]);
    }
  });
});
