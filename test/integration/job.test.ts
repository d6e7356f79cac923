/** The spec's job: section, rule by rule, through the CLI against the real cluster (kwok runs the pods). */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { TEST_FAIL_IMAGE, testCluster, withNamespace } from "../harness/index.js";
import { cliEnv, khookSpec, parseRun, runKhook, specDir, stepOf } from "./support/khook-cli.js";

async function setup(t: TestContext) {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "job");
  const run = async (steps: string) => {
    const r = await runKhook(["apply", "-f", specDir(khookSpec("jobs", steps)).file, "-o", "json"], {
      env: cliEnv(cluster.kubeconfig),
    });
    return { r, run: parseRun(r) };
  };
  const uid = async (name: string) =>
    (await cluster.kubectl(["get", "job", name, "-n", ns, "-o", "jsonpath={.metadata.uid}"])).stdout.trim();
  return { cluster, ns, run, uid };
}

describe("job:", () => {
  test("a same-named Job not carrying app.kubernetes.io/managed-by: khook is an error; khook never replaces it", async (t) => {
    const { cluster, ns, run, uid } = await setup(t);
    assert.equal((await cluster.kubectl(["create", "job", "migrate", "-n", ns, "--image=busybox"])).code, 0);
    const before = await uid("migrate");
    const { r, run: result } = await run(`  - name: migrate\n    job: { image: busybox, namespace: ${ns} }\n`);
    assert.equal(r.code, 1);
    assert.match(stepOf(result, "migrate").error ?? "", /not managed by khook.*never replaces a Job it does not own/);
    assert.equal(await uid("migrate"), before);
  });

  test("each run replaces the previous run's Job, unless skipIf: succeeded finds it completed", async (t) => {
    const { ns, run, uid } = await setup(t);
    const steps = (skip: string) => `  - name: migrate\n    job: { image: busybox, namespace: ${ns}${skip} }\n`;
    assert.equal((await run(steps(""))).r.code, 0);
    const first = await uid("migrate");
    const second = await run(steps(""));
    assert.equal(second.r.code, 0);
    const secondUid = await uid("migrate");
    assert.notEqual(secondUid, first, "a new Job for the new run");
    const third = await run(steps(", skipIf: succeeded"));
    assert.equal(stepOf(third.run, "migrate").status, "skipped");
    assert.match(stepOf(third.run, "migrate").reason, /skipIf: succeeded/);
    assert.equal(await uid("migrate"), secondUid, "the completed Job was left in place");
  });

  test("a failed Job fails the step with the pod's logs (or why there are none); every retry is a fresh Job", async (t) => {
    const { ns, run } = await setup(t);
    const { r, run: result } = await run(
      `  - name: broken\n    retries: 1\n    retryDelay: 1s\n    job: { image: "${TEST_FAIL_IMAGE}", namespace: ${ns} }\n`,
    );
    assert.equal(r.code, 1);
    const step = stepOf(result, "broken");
    assert.equal(step.status, "failed");
    assert.equal(step.attempts, 2);
    assert.match(step.error ?? "", /job broken failed/);
    assert.match(step.error ?? "", /log lines of pod broken-|wrote no logs|no logs could be read/);
  });
});

/**
 * A Job's deletion (destroy, and the replacement of the previous run's Job at apply) waits the way
 * every teardown does (steps/cluster/deletion-wait.ts): when it stalls it says what holds it, and
 * its timed-out error ends with the causes and what to do next.
 */
describe("job: deletions that say why they wait", () => {
  const HOLD = "khook.test/hold";
  const spec = (ns: string) => `  - name: migrate\n    timeout: 15s\n    job: { image: busybox, namespace: ${ns} }\n`;
  const hold = async (cluster: Awaited<ReturnType<typeof testCluster>>, ns: string) =>
    assert.equal(
      (
        await cluster.kubectl([
          "patch",
          "job",
          "migrate",
          "-n",
          ns,
          "--type=merge",
          "-p",
          JSON.stringify({ metadata: { finalizers: [HOLD] } }),
        ])
      ).code,
      0,
    );
  const release = async (cluster: Awaited<ReturnType<typeof testCluster>>, ns: string) => {
    await cluster.kubectl([
      "patch",
      "job",
      "migrate",
      "-n",
      ns,
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":null}}',
    ]);
  };
  const causeLine = (ns: string) =>
    new RegExp(
      `job/migrate -n ${ns}: being deleted since \\S+, but its finalizers have not cleared: ${HOLD.replace(/\./g, "\\.")}`,
    );

  test("destroy: a Job whose finalizer nobody clears is named while the destroy waits, and the timed-out error ends with the causes", async (t) => {
    const { cluster, ns } = await setup(t);
    const { file } = specDir(khookSpec("jobhold", spec(ns)));
    const env = cliEnv(cluster.kubeconfig);
    assert.equal((await runKhook(["apply", "-f", file, "-o", "json"], { env })).code, 0);
    await hold(cluster, ns);
    try {
      const r = await runKhook(["destroy", "-f", file, "-o", "json"], { env });
      assert.equal(r.code, 1, r.stderr);
      const step = stepOf(parseRun(r), "migrate");
      assert.equal(step.status, "failed");
      assert.match(
        step.error ?? "",
        new RegExp(`not deleted after \\S+: jobs\\.batch "migrate" in namespace "${ns}" still exists`),
      );
      assert.match(step.error ?? "", new RegExp(`what blocks it:\\n\\s+- ${causeLine(ns).source}`));
      assert.match(step.error ?? "", /run the destroy again/);
      assert.match(r.stderr, new RegExp(`\\[migrate\\] blocked: ${causeLine(ns).source}`), "said while it waited");
    } finally {
      await release(cluster, ns);
    }
  });

  test("apply: replacing the previous run's Job that a finalizer holds names the finalizer, and says to run the apply again", async (t) => {
    const { cluster, ns, run } = await setup(t);
    assert.equal((await run(spec(ns))).r.code, 0);
    await hold(cluster, ns);
    try {
      const { r, run: result } = await run(spec(ns));
      assert.equal(r.code, 1, r.stderr);
      const step = stepOf(result, "migrate");
      assert.equal(step.status, "failed");
      assert.match(step.error ?? "", new RegExp(`what blocks it:\\n\\s+- ${causeLine(ns).source}`));
      assert.match(step.error ?? "", /run the apply again/);
      assert.match(r.stderr, new RegExp(`\\[migrate\\] blocked: ${causeLine(ns).source}`));
    } finally {
      await release(cluster, ns);
    }
  });
});
