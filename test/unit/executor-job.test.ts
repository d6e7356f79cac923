/** The job: executor's decisions, against a recording fake of the cluster (test/integration/job.test.ts runs it for real). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { jobExecutor } from "../../provider/steps/job/executor.js";
import { contextFor, loadSteps, stepOf } from "./support/executor-context.js";
import { FakeKube } from "./support/fake-kube.js";

const spec = loadSteps(
  "  - name: migrate\n    job: { image: busybox, args: [echo, hi], namespace: jobs, createNamespace: true, skipIf: succeeded }\n  - name: plain\n    job: { image: busybox }\n",
);
const migrate = stepOf(spec, "migrate", "job");
const plain = stepOf(spec, "plain", "job");

function job(
  name: string,
  labels: Record<string, string>,
  conditions: { type: string; status: string }[] = [],
  namespace = "jobs",
) {
  return { apiVersion: "batch/v1", kind: "Job", metadata: { name, namespace, labels }, status: { conditions } };
}
const OURS = { "app.kubernetes.io/managed-by": "khook", "khook.io/spec": "demo" };
const completeWhenWaited = (
  kube: FakeKube,
  type: "Complete" | "Failed",
  name = "migrate",
  namespace = "jobs",
): void => {
  kube.beforeWait = () => {
    const j = kube.object("Job", name, namespace)!;
    j["status"] = {
      conditions: [{ type, status: "True", reason: type === "Failed" ? "BackoffLimitExceeded" : "Done" }],
    };
  };
};

describe("job executor", () => {
  test("a Job of the same name that khook does not own is refused, by assess and by apply, and nothing is written", async () => {
    const kube = new FakeKube();
    kube.seed(job("migrate", { app: "theirs" }));
    await assert.rejects(
      jobExecutor.assess(migrate, contextFor(spec, kube)),
      /job migrate in namespace jobs exists but is not managed by khook .*khook never replaces a Job it does not own/,
    );
    await assert.rejects(jobExecutor.apply(migrate, contextFor(spec, kube)), /not managed by khook/);
    assert.deepEqual(
      kube.writes.filter((w) => !w.includes("namespace/")),
      [],
    );
  });

  test("a Job of another khook spec is refused and named", async () => {
    const kube = new FakeKube();
    kube.seed(job("migrate", { "app.kubernetes.io/managed-by": "khook", "khook.io/spec": "other" }));
    await assert.rejects(jobExecutor.apply(migrate, contextFor(spec, kube)), /belongs to another khook spec, "other"/);
    assert.deepEqual(kube.written("delete"), []);
  });

  test("skipIf: succeeded skips a completed Job of this spec", async () => {
    const kube = new FakeKube();
    kube.seed(job("migrate", OURS, [{ type: "Complete", status: "True" }]));
    assert.equal((await jobExecutor.assess(migrate, contextFor(spec, kube))).action, "skip");
    const out = await jobExecutor.apply(migrate, contextFor(spec, kube));
    assert.equal(out.status, "skipped");
    assert.match(out.reason, /skipIf: succeeded/);
    assert.deepEqual(
      kube.written("create").filter((w) => w.startsWith("create job")),
      [],
    );
  });

  test("a previous run's Job is replaced: deleted, waited for, then created anew", async () => {
    const kube = new FakeKube();
    kube.seed({ apiVersion: "v1", kind: "Namespace", metadata: { name: "jobs" } });
    kube.seed(job("migrate", OURS, [{ type: "Failed", status: "True" }]));
    completeWhenWaited(kube, "Complete");
    const out = await jobExecutor.apply(migrate, contextFor(spec, kube));
    assert.equal(out.status, "ok");
    assert.deepEqual(kube.writes, [
      "delete job/migrate -n jobs",
      "wait-deleted job/migrate -n jobs",
      "create job/migrate -n jobs",
    ]);
  });

  test("the Job khook creates is labelled as this spec's, never retries itself, and is bounded by the step timeout", async () => {
    const kube = new FakeKube();
    completeWhenWaited(kube, "Complete");
    await jobExecutor.apply(migrate, contextFor(spec, kube));
    const created = kube.object("Job", "migrate", "jobs")!;
    assert.deepEqual(created.metadata?.labels, { ...OURS, "khook.io/step": "migrate" });
    const jobSpec = created["spec"] as {
      backoffLimit: number;
      activeDeadlineSeconds: number;
      template: { spec: { restartPolicy: string; containers: { args: string[] }[] } };
    };
    assert.equal(jobSpec.backoffLimit, 0);
    assert.equal(jobSpec.template.spec.restartPolicy, "Never");
    assert.equal(jobSpec.activeDeadlineSeconds, migrate.timeoutMs / 1000);
    assert.deepEqual(jobSpec.template.spec.containers[0]!.args, ["echo", "hi"]);
    assert.ok(kube.writes.includes("create namespace/jobs"), "createNamespace: true creates the namespace first");
  });

  test("the defaults table decides where a Job without namespace: runs", async () => {
    const kube = new FakeKube();
    completeWhenWaited(kube, "Complete", "plain", "default");
    await jobExecutor.apply(plain, contextFor(spec, kube));
    assert.deepEqual(kube.writes, ["create job/plain -n default"]);
  });

  test("a failed Job fails the step with its condition and the pod's last log lines, redacted", async () => {
    const secretSpec = loadSteps("  - name: migrate\n    job: { image: busybox }\n");
    const step = stepOf(secretSpec, "migrate", "job");
    const kube = new FakeKube();
    completeWhenWaited(kube, "Failed", "migrate", "default");
    kube.seed({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "migrate-x1", namespace: "default", labels: { "job-name": "migrate" } },
    });
    kube.logs.set("default/migrate-x1", "connecting to db\npassword=hunter2-secret rejected\n");
    const ctx = contextFor(secretSpec, kube);
    ctx.redactor.add("hunter2-secret");
    await assert.rejects(jobExecutor.apply(step, ctx), (e: Error) => {
      assert.match(
        e.message,
        /^job migrate failed \(BackoffLimitExceeded\); last 20 log lines of pod migrate-x1:\nconnecting to db\npassword=\*\*\* rejected$/,
      );
      return true;
    });
  });

  test("destroy deletes only this spec's Job, and leaves a foreign one alone", async () => {
    const kube = new FakeKube();
    kube.seed(job("migrate", OURS));
    kube.seed(job("plain", { app: "theirs" }, [], "default"));
    assert.equal((await jobExecutor.destroy(migrate, contextFor(spec, kube))).status, "ok");
    const left = await jobExecutor.destroy(plain, contextFor(spec, kube));
    assert.equal(left.status, "skipped");
    assert.deepEqual(kube.written("delete"), ["delete job/migrate -n jobs"]);
    assert.ok(kube.object("Job", "plain", "default"), "the foreign Job is still there");
  });
});
