/**
 * The state record's Secret store against the real API server: the engine
 * with stub executors (no step touches the cluster), the journal and the
 * Secret store with the real KubeClient. Checked with kubectl.
 * (The CLI-level state scenarios live in engine-scenarios.test.ts.)
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test, type TestContext } from "node:test";
import { runSpec, type RunResult } from "../../provider/engine/run.js";
import { KubeClient } from "../../provider/kube/index.js";
import { Journal } from "../../provider/state/journal.js";
import { RESUME_REASON } from "../../provider/state/record.js";
import { SecretRecordStore } from "../../provider/state/secret-store.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { testCluster, withNamespace } from "../harness/index.js";
import { specFixture, StubExecutors, type StepFixture } from "../unit/support/engine-fixtures.js";

const clients: KubeClient[] = [];
after(() => {
  for (const c of clients) c.close();
});

async function setup(t: TestContext) {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "state");
  const kube = await KubeClient.connect({ kubeconfigPath: cluster.kubeconfig });
  clients.push(kube);
  const kubectl = async (args: string[]): Promise<string> => {
    const r = await cluster.kubectl(args);
    assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const secret = async (name: string): Promise<SecretJson | undefined> => {
    const r = await cluster.kubectl(["get", "secret", name, "-n", ns, "-o", "json"]);
    if (r.code !== 0) {
      assert.match(r.stderr, /NotFound|not found/, r.stderr);
      return undefined;
    }
    return JSON.parse(r.stdout) as SecretJson;
  };
  const spec = (name: string, steps: StepFixture[], secrets: string[] = []): LoadedSpec =>
    specFixture(steps, { name, state: { namespace: ns, name: `khook-state-${name}` }, secrets });
  const run = (s: LoadedSpec, stubs: StubExecutors, mode: "apply" | "destroy" = "apply", client: KubeClient = kube) => {
    const store = new SecretRecordStore(client, s.state!, s.name);
    const p = runSpec(s, { mode, executors: stubs.map, context: { kube: client }, journal: Journal.forSpec(s, store) });
    return p.then((result) => ({ result, store }));
  };
  return { cluster, ns, kube, kubectl, secret, spec, run };
}

interface SecretJson {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
  type: string;
  data?: Record<string, string>;
}

function recordOf(s: SecretJson | undefined): {
  runStatus: string;
  specHash: string;
  khookVersion: string;
  steps: Record<string, { status: string; inputHash: string; error?: string }>;
} {
  assert.ok(s?.data?.["record.json"], "no record.json in the Secret");
  return JSON.parse(Buffer.from(s.data["record.json"], "base64").toString("utf8"));
}

function statuses(r: RunResult): string[] {
  return r.steps.map((s) => s.status);
}

describe("state record Secret", { timeout: 120_000 }, () => {
  test("the record is a Secret labelled app.kubernetes.io/managed-by=khook and khook.io/spec, one JSON blob in data[record.json]", async (t) => {
    const { spec, run, secret } = await setup(t);
    const password = "integration-S3cret-value";
    const s = spec(
      "labels",
      [
        { name: "a", action: { values: { password } } },
        { name: "b", needs: ["a"] },
      ],
      [password],
    );
    const { result } = await run(s, new StubExecutors());
    assert.equal(result.status, "succeeded");
    const obj = await secret("khook-state-labels");
    assert.ok(obj);
    assert.equal(obj.metadata.labels?.["app.kubernetes.io/managed-by"], "khook");
    assert.equal(obj.metadata.labels?.["khook.io/spec"], "labels");
    assert.deepEqual(Object.keys(obj.data ?? {}), ["record.json"]);
    const rec = recordOf(obj);
    assert.equal(rec.runStatus, "succeeded");
    assert.equal(rec.specHash, s.specHash);
    assert.deepEqual(Object.keys(rec.steps), ["a", "b"]);
    assert.equal(rec.steps["a"]?.inputHash, s.stepsByName.get("a")?.inputHash);
    const decoded = Buffer.from(obj.data!["record.json"]!, "base64").toString("utf8");
    assert.ok(!decoded.includes(password), "the rendered spec is never stored");
  });

  test("khook refuses a Secret of the record's name without its label — nothing is written and nothing runs", async (t) => {
    const { spec, run, secret, kubectl, ns } = await setup(t);
    await kubectl([
      "create",
      "secret",
      "generic",
      "khook-state-foreign",
      "-n",
      ns,
      "--from-literal=record.json=theirs",
    ]);
    const before = await secret("khook-state-foreign");
    const stubs = new StubExecutors();
    const { result } = await run(spec("foreign", [{ name: "a" }]), stubs);
    assert.equal(result.status, "failed");
    assert.equal(stubs.calls.length, 0, "nothing ran");
    assert.match(
      result.journalError ?? "",
      new RegExp(`refusing to use Secret "khook-state-foreign" in namespace "${ns}"`),
    );
    assert.match(result.journalError ?? "", /app\.kubernetes\.io\/managed-by=khook/);
    const afterwards = await secret("khook-state-foreign");
    assert.equal(
      afterwards?.metadata.resourceVersion,
      before?.metadata.resourceVersion,
      "the foreign Secret was not touched",
    );
  });

  test("the journal is written incrementally after every step, with runStatus running while in progress", async (t) => {
    const { spec, run, secret } = await setup(t);
    const seen: { runStatus: string; steps: string[] }[] = [];
    // Each step waits until the record in the cluster shows its dependency: the write after every step.
    const waitFor = async (step: string) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const obj = await secret("khook-state-incremental");
        const rec = obj?.data?.["record.json"] ? recordOf(obj) : undefined;
        if (rec?.steps[step]?.status === "ok") {
          seen.push({ runStatus: rec.runStatus, steps: Object.keys(rec.steps) });
          return;
        }
        assert.ok(Date.now() < deadline, `the record never showed ${step} ok`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const stubs = new StubExecutors().on("b", () => waitFor("a")).on("c", () => waitFor("b"));
    const { result } = await run(
      spec("incremental", [{ name: "a" }, { name: "b", needs: ["a"] }, { name: "c", needs: ["b"] }]),
      stubs,
    );
    assert.equal(result.status, "succeeded");
    assert.deepEqual(seen, [
      { runStatus: "running", steps: ["a"] },
      { runStatus: "running", steps: ["a", "b"] },
    ]);
    assert.equal(recordOf(await secret("khook-state-incremental")).runStatus, "succeeded");
  });

  test("a resumed re-run of an unchanged spec reads the record once and only writes it", async (t) => {
    const { spec, run } = await setup(t);
    const steps = Array.from({ length: 50 }, (_, i) => ({ name: `s${i}`, ...(i > 0 ? { needs: [`s${i - 1}`] } : {}) }));
    await run(spec("resume", steps), new StubExecutors());
    const stubs = new StubExecutors();
    const { result, store } = await run(spec("resume", steps), stubs);
    assert.equal(result.status, "succeeded");
    assert.ok(result.steps.every((s) => s.reason === RESUME_REASON));
    assert.equal(stubs.calls.length, 0);
    assert.equal(store.calls.get, 1);
    assert.equal(store.calls.create + store.calls.delete, 0);
    assert.ok(store.calls.update <= 2, JSON.stringify(store.calls));
  });

  test("two writers: a write that lost the resourceVersion race re-reads; the lease is still this run's, so it writes again and keeps the other writer's metadata", async (t) => {
    const { spec, run, secret, kubectl, ns } = await setup(t);
    const s = spec("conflict", [{ name: "a" }, { name: "b", needs: ["a"] }]);
    const stubs = new StubExecutors().on("b", async () => {
      // Someone else updates the record Secret between our writes.
      await kubectl(["annotate", "secret", "khook-state-conflict", "-n", ns, "other-writer=yes", "--overwrite"]);
    });
    const { result, store } = await run(s, stubs);
    assert.equal(result.status, "succeeded");
    assert.equal(result.journalError, undefined);
    assert.ok(store.calls.get >= 2, `the conflict was not re-read: ${JSON.stringify(store.calls)}`);
    const obj = await secret("khook-state-conflict");
    assert.equal(
      (obj?.metadata as { annotations?: Record<string, string> }).annotations?.["other-writer"],
      "yes",
      "the other writer's metadata is kept",
    );
    const rec = recordOf(obj);
    assert.equal(rec.runStatus, "succeeded");
    assert.deepEqual(Object.keys(rec.steps), ["a", "b"]);
  });

  test("no lease, no run: a record RBAC forbids writing fails the run (exit 1) before the first step, naming the verb, the Secret and the namespace", async (t) => {
    const { spec, kubectl, ns } = await setup(t);
    await kubectl(["create", "serviceaccount", "reader", "-n", ns]);
    await kubectl(["create", "role", "secret-getter", "-n", ns, "--verb=get", "--resource=secrets"]);
    await kubectl([
      "create",
      "rolebinding",
      "secret-getter",
      "-n",
      ns,
      "--role=secret-getter",
      `--serviceaccount=${ns}:reader`,
    ]);
    const token = await kubectl(["create", "token", "reader", "-n", ns, "--duration=10m"]);
    const admin = JSON.parse(await kubectl(["config", "view", "--raw", "--minify", "-o", "json"])) as {
      clusters: { cluster: Record<string, unknown> }[];
    };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-state-rbac-"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = path.join(dir, "reader.kubeconfig");
    fs.writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: admin.clusters[0]!.cluster }],
        users: [{ name: "reader", user: { token } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "reader", namespace: ns } }],
        "current-context": "c",
      }),
      { mode: 0o600 },
    );
    const limited = await KubeClient.connect({ kubeconfigPath: kubeconfig });
    clients.push(limited);
    const s = spec("rbac", [{ name: "a" }, { name: "b" }]);
    const store = new SecretRecordStore(limited, s.state!, s.name);
    const stubs = new StubExecutors();
    const result = await runSpec(s, {
      mode: "apply",
      executors: stubs.map,
      context: { kube: limited },
      journal: Journal.forSpec(s, store),
    });
    // No lease, no run: the claim is the first write, so nothing runs unguarded.
    assert.deepEqual(statuses(result), ["skipped", "skipped"], "no step runs when the record cannot be claimed");
    assert.equal(stubs.calls.length, 0);
    assert.equal(result.status, "failed", "the journal is part of the contract");
    assert.match(
      result.journalError ?? "",
      new RegExp(`^forbidden to create Secret "khook-state-rbac" in namespace "${ns}".*Nothing was changed`),
    );
    assert.equal(store.calls.create, 1, "no further attempts after a forbidden write");
  });

  test("a fully successful destroy deletes the record Secret; a failed one leaves a record that resumes nothing it tore down", async (t) => {
    const { spec, run, secret } = await setup(t);
    const steps: StepFixture[] = [{ name: "a" }, { name: "b", needs: ["a"] }, { name: "c", needs: ["b"] }];
    await run(spec("teardown", steps), new StubExecutors());
    assert.ok(await secret("khook-state-teardown"));

    const failing = new StubExecutors().on("b", () => Promise.reject(new Error("finalizer stuck")));
    const partial = await run(spec("teardown", steps), failing, "destroy");
    assert.equal(partial.result.status, "failed");
    const rec = recordOf(await secret("khook-state-teardown"));
    assert.deepEqual(
      [rec.steps["a"]?.status, rec.steps["b"]?.status, rec.steps["c"]?.status],
      ["destroying", "destroy-failed", "destroyed"],
    );

    const { result } = await run(spec("teardown", steps), new StubExecutors(), "destroy");
    assert.equal(result.status, "succeeded");
    assert.equal(await secret("khook-state-teardown"), undefined, "the record Secret is gone");
  });
});
