/**
 * The engine and the state record end to end: the real khook CLI, the real
 * cluster, checked with the real kubectl. Each test is named after the rule it checks.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import {
  applyStep,
  cliEnv,
  cm,
  gatedChain,
  gateStep,
  khookSpec,
  outputMatches,
  parseRun,
  runKhook,
  specDir,
  startKhook,
  stateIn,
  stepOf,
} from "./support/khook-cli.js";

const RESUME = "unchanged since it succeeded in a previous run (state record)";

async function setup(t: TestContext) {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "engine");
  const kubectl = async (args: string[]): Promise<string> => {
    const r = await cluster.kubectl(args);
    assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const env = cliEnv(cluster.kubeconfig);
  const khook = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => runKhook(args, { env: { ...env, ...extraEnv } });
  const apply = async (file: string) => {
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    return { r, run: parseRun(r) };
  };
  const openGate = () =>
    kubectl(["patch", "configmap", "gate", "-n", ns, "--type", "merge", "-p", '{"data":{"ready":"yes"}}']);
  const record = async (name: string) => {
    const b64 = await kubectl([
      "get",
      "secret",
      `khook-state-${name}`,
      "-n",
      ns,
      "-o",
      "jsonpath={.data.record\\.json}",
    ]);
    return JSON.parse(Buffer.from(b64, "base64").toString("utf8")) as {
      runStatus: string;
      steps: Record<string, { status: string; inputHash: string }>;
    };
  };
  return { cluster, ns, kubectl, khook, apply, openGate, record, env };
}

describe("engine: onError", () => {
  // --parallelism 1 makes the order deterministic: after gate-cm, "gate" (first in document order) runs before "independent".
  test("onError: fail — running steps finish, nothing new starts, and every not-yet-run step is reported skipped", async (t) => {
    const { ns, khook, cluster } = await setup(t);
    const steps = `${applyStep("gate-cm", cm("gate", ns, 'ready: "no"'))}${gateStep("gate", ns, "    needs: [gate-cm]\n")}${applyStep("independent", cm("independent", ns), "    needs: [gate-cm]\n")}`;
    const r = await khook([
      "apply",
      "-f",
      specDir(khookSpec("onerror-fail", steps)).file,
      "-o",
      "json",
      "--parallelism",
      "1",
    ]);
    const run = parseRun(r);
    assert.equal(r.code, 1);
    assert.equal(stepOf(run, "gate").status, "failed");
    assert.equal(stepOf(run, "independent").status, "skipped");
    assert.match(stepOf(run, "independent").reason, /gate/);
    assert.notEqual(
      (await cluster.kubectl(["get", "configmap", "independent", "-n", ns])).code,
      0,
      "nothing new started",
    );
  });

  test("onError: continue — the step is marked failed and independent branches go on", async (t) => {
    const { ns, khook, kubectl } = await setup(t);
    const steps = `${applyStep("gate-cm", cm("gate", ns, 'ready: "no"'))}${gateStep("gate", ns, "    needs: [gate-cm]\n    onError: continue\n")}${applyStep("blocked", cm("blocked", ns), "    needs: [gate]\n")}${applyStep("independent", cm("independent", ns), "    needs: [gate-cm]\n")}`;
    const r = await khook([
      "apply",
      "-f",
      specDir(khookSpec("onerror-continue", steps)).file,
      "-o",
      "json",
      "--parallelism",
      "1",
    ]);
    const run = parseRun(r);
    assert.equal(r.code, 1, "a failed step still fails the run");
    assert.equal(stepOf(run, "gate").status, "failed");
    assert.equal(stepOf(run, "blocked").status, "skipped", "a failed step blocks its dependents");
    assert.equal(stepOf(run, "independent").status, "ok");
    assert.equal(await kubectl(["get", "configmap", "independent", "-n", ns, "-o", "name"]), "configmap/independent");
  });
});

describe("engine: retries, timeouts and when:", () => {
  test("retries: a step that fails twice succeeds on its last attempt", async (t) => {
    const { ns, env, openGate, kubectl } = await setup(t);
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const { file } = specDir(khookSpec("retries", gateStep("gate", ns, "    retries: 2\n    retryDelay: 5s\n")));
    const proc = startKhook(["apply", "-f", file, "-o", "json"], { env });
    // Open the gate only after the second attempt failed, so the third is the one that passes.
    await outputMatches(proc, /attempt 2\/3 failed/);
    await openGate();
    const r = await proc.done;
    const run = parseRun(r);
    assert.equal(stepOf(run, "gate").status, "ok", r.stderr);
    assert.equal(stepOf(run, "gate").attempts, 3);
  });

  test("timeout: each attempt is bounded by the step timeout", async (t) => {
    const { ns, apply } = await setup(t);
    const { r, run } = await apply(
      specDir(
        khookSpec(
          "timeout",
          `  - name: never\n    timeout: 2s\n    wait:\n      for: condition=Ready\n      on: pod/does-not-exist\n      namespace: ${ns}\n`,
        ),
      ).file,
    );
    assert.equal(r.code, 1);
    assert.equal(stepOf(run, "never").status, "failed");
    assert.match(stepOf(run, "never").error ?? "", /timed out after 2s/);
  });

  test("when: a step excluded by when: is reported skipped but still satisfies needs", async (t) => {
    const { ns, apply } = await setup(t);
    const steps = `${applyStep("optional", cm("optional", ns), '    when: vars.get("ENABLE", "false") == "true"\n')}${applyStep("dependent", cm("dependent", ns), "    needs: [optional]\n")}`;
    const { r, run } = await apply(specDir(khookSpec("when", steps)).file);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(stepOf(run, "optional").status, "skipped");
    assert.match(stepOf(run, "optional").reason, /when/);
    assert.equal(stepOf(run, "dependent").status, "ok");
  });

  test("skipIf: a skipIf short-circuit is reported skipped with its reason, not ok, and satisfies needs", async (t) => {
    const { ns, apply, kubectl } = await setup(t);
    await kubectl(["create", "configmap", "exists", "-n", ns, "--from-literal=a=1"]);
    const steps = `${applyStep("found", cm("exists", ns, 'a: "2"')).replace("    apply:\n", "    apply:\n      skipIf: exists\n")}${applyStep("next", cm("next", ns), "    needs: [found]\n")}`;
    const { r, run } = await apply(specDir(khookSpec("skipif", steps)).file);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(stepOf(run, "found").status, "skipped");
    assert.match(stepOf(run, "found").reason, /skipIf: exists/);
    assert.equal(stepOf(run, "next").status, "ok");
    assert.equal(
      await kubectl(["get", "configmap", "exists", "-n", ns, "-o", "jsonpath={.data.a}"]),
      "1",
      "skipIf: exists does not touch the object",
    );
  });
});

describe("apply and patch details", () => {
  test("skipIf: exists still runs waitFor: the condition must hold whether this run created the objects or found them", async (t) => {
    const { ns, kubectl, env } = await setup(t);
    await kubectl(["create", "configmap", "found", "-n", ns, "--from-literal=ready=no"]);
    const steps = applyStep("found", cm("found", ns, 'ready: "yes"')).replace(
      "    apply:\n",
      "    apply:\n      skipIf: exists\n      waitFor: jsonpath={.data.ready}=yes\n",
    );
    const proc = startKhook(["apply", "-f", specDir(khookSpec("skipwait", steps)).file, "-o", "json"], { env });
    // The step found the object and is now waiting on it: make the condition true.
    await outputMatches(proc, /waiting for jsonpath/);
    await kubectl(["patch", "configmap", "found", "-n", ns, "--type", "merge", "-p", '{"data":{"ready":"yes"}}']);
    const r = await proc.done;
    assert.equal(r.code, 0, r.stderr);
    const step = stepOf(parseRun(r), "found");
    assert.equal(step.status, "skipped");
    assert.match(step.reason, /skipIf: exists.*meet jsonpath=\{\.data\.ready\}=yes/);
  });

  test("patch: a strategic patch of a custom resource fails with the hint to use type: merge", async (t) => {
    const { ns, kubectl, apply } = await setup(t);
    const crd = specDir("", {
      "crd.yaml":
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.hint.khook.io}\nspec:\n  group: hint.khook.io\n  scope: Namespaced\n  names: {plural: widgets, singular: widget, kind: Widget}\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n",
    });
    await kubectl(["apply", "-f", path.join(crd.dir, "crd.yaml")]);
    t.after(() => kubectl(["delete", "crd", "widgets.hint.khook.io", "--wait=false"]));
    await kubectl(["wait", "--for=condition=Established", "crd/widgets.hint.khook.io"]);
    const widget =
      "apiVersion: hint.khook.io/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: " + ns + "\nspec: {size: 1}\n";
    const steps = `${applyStep("widget", widget)}  - name: grow\n    needs: [widget]\n    patch:\n      target: widget/w\n      namespace: ${ns}\n      patch: {spec: {size: 2}}\n`;
    const { r, run } = await apply(specDir(khookSpec("hint", steps)).file);
    assert.equal(r.code, 1);
    assert.match(stepOf(run, "grow").error ?? "", /use type: merge/);
  });
});

describe("state record", () => {
  test("resume: after a failure is fixed, the completed steps resume and only the rest run", async (t) => {
    const { ns, apply, openGate, record } = await setup(t);
    const steps = `${applyStep("gate-cm", cm("gate", ns, 'ready: "no"'))}${gateStep("gate", ns, "    needs: [gate-cm]\n")}${applyStep("after", cm("after", ns), "    needs: [gate]\n")}`;
    const { file } = specDir(khookSpec("resume", steps, stateIn(ns)));
    const first = await apply(file);
    assert.equal(first.r.code, 1);
    assert.equal((await record("resume")).steps["gate-cm"]?.status, "ok");
    assert.equal((await record("resume")).runStatus, "failed");
    await openGate();
    const second = await apply(file);
    assert.equal(second.r.code, 0, second.r.stderr);
    assert.equal(stepOf(second.run, "gate-cm").status, "skipped");
    assert.equal(stepOf(second.run, "gate-cm").reason, RESUME);
    assert.equal(stepOf(second.run, "gate").status, "ok");
    assert.equal(stepOf(second.run, "after").status, "ok");
    assert.equal((await record("resume")).runStatus, "succeeded");
  });

  test("resume trusts the journal, not the cluster: a deleted object is not recreated", async (t) => {
    const { ns, apply, kubectl, cluster } = await setup(t);
    const { file } = specDir(khookSpec("trust", applyStep("cm", cm("trusted", ns)), stateIn(ns)));
    assert.equal((await apply(file)).r.code, 0);
    await kubectl(["delete", "configmap", "trusted", "-n", ns]);
    const again = await apply(file);
    assert.equal(stepOf(again.run, "cm").reason, RESUME);
    const k = await cluster.kubectl(["get", "configmap", "trusted", "-n", ns]);
    assert.notEqual(k.code, 0, "the object stays deleted");
  });

  test("change detection is per step: changing one step re-runs only that step", async (t) => {
    const { ns, apply, kubectl } = await setup(t);
    const spec = (value: string) =>
      khookSpec(
        "perstep",
        `${applyStep("one", cm("one", ns))}${applyStep("two", cm("two", ns, `a: "${value}"`), "    needs: [one]\n")}`,
        stateIn(ns),
      );
    const dir = specDir(spec("1"));
    assert.equal((await apply(dir.file)).r.code, 0);
    const rvOne = await kubectl(["get", "configmap", "one", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"]);
    fs.writeFileSync(dir.file, spec("2"));
    const again = await apply(dir.file);
    assert.equal(stepOf(again.run, "one").reason, RESUME);
    assert.equal(stepOf(again.run, "two").status, "ok");
    assert.equal(await kubectl(["get", "configmap", "two", "-n", ns, "-o", "jsonpath={.data.a}"]), "2");
    assert.equal(
      await kubectl(["get", "configmap", "one", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"]),
      rvOne,
    );
  });

  test("khook refuses to touch a Secret of the record's name that it does not own", async (t) => {
    const { ns, apply, kubectl } = await setup(t);
    await kubectl([
      "create",
      "secret",
      "generic",
      "khook-state-foreign",
      "-n",
      ns,
      "--from-literal=record.json=theirs",
    ]);
    const { r } = await apply(specDir(khookSpec("foreign", applyStep("cm", cm("x", ns)), stateIn(ns))).file);
    assert.equal(r.code, 1);
    assert.match(r.stdout + r.stderr, /khook-state-foreign/);
    assert.match(r.stdout + r.stderr, /app\.kubernetes\.io\/managed-by/);
    assert.equal(
      Buffer.from(
        await kubectl(["get", "secret", "khook-state-foreign", "-n", ns, "-o", "jsonpath={.data.record\\.json}"]),
        "base64",
      ).toString(),
      "theirs",
    );
  });

  test("no lease, no run: a record khook may read but not write fails the run (exit 1) before its step runs", async (t) => {
    const { ns, kubectl } = await setup(t);
    await kubectl(["create", "serviceaccount", "limited", "-n", ns]);
    // Full access to ConfigMaps, but Secrets are read-only: the record can be read, never written.
    const role = specDir("", {
      "role.yaml": `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: limited, namespace: ${ns}}\nrules:\n  - {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, create, update, patch]}\n  - {apiGroups: [""], resources: [secrets], verbs: [get, list, watch]}\n`,
    });
    await kubectl(["apply", "-f", path.join(role.dir, "role.yaml")]);
    await kubectl(["create", "rolebinding", "limited", "-n", ns, "--role=limited", `--serviceaccount=${ns}:limited`]);
    const token = await kubectl(["create", "token", "limited", "-n", ns]);
    const admin = JSON.parse(await kubectl(["config", "view", "--raw", "-o", "json"])) as {
      clusters: { name: string; cluster: Record<string, unknown> }[];
    };
    const kubeconfig = path.join(specDir("").dir, "limited.kubeconfig");
    fs.writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: admin.clusters[0]!.cluster }],
        users: [{ name: "u", user: { token } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "u", namespace: ns } }],
        "current-context": "c",
      }),
    );
    const { file } = specDir(khookSpec("rbac", applyStep("cm", cm("rbac-cm", ns)), stateIn(ns)));
    const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(kubeconfig) });
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    const run = parseRun(r);
    assert.deepEqual(
      [stepOf(run, "cm").status, stepOf(run, "cm").reason],
      ["skipped", "not started: the state record could not be claimed"],
    );
    assert.match(r.stderr, /forbidden to create Secret "khook-state-rbac" .*Nothing was changed/);
    assert.equal(
      await kubectl(["get", "configmap", "rbac-cm", "-n", ns, "--ignore-not-found", "-o", "name"]),
      "",
      "the step did not run unguarded",
    );
  });

  test("status shows what the last run did", async (t) => {
    const { ns, apply, khook } = await setup(t);
    const { file } = specDir(khookSpec("status", applyStep("cm", cm("st", ns)), stateIn(ns)));
    assert.equal((await apply(file)).r.code, 0);
    const r = await khook(["status", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout) as {
      runStatus: string;
      steps: { name: string; status: string; resumable: boolean }[];
    };
    assert.equal(s.runStatus, "succeeded");
    assert.deepEqual(
      s.steps.map((x) => [x.name, x.status, x.resumable]),
      [["cm", "ok", true]],
    );
  });

  test("kill -9 mid-run, then a re-run resumes from the last completed step", async (t) => {
    const { ns, env, openGate, record, apply, kubectl } = await setup(t);
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const steps = gatedChain(ns, "last");
    const { file } = specDir(khookSpec("killed", steps, stateIn(ns)));
    const proc = startKhook(["apply", "-f", file], { env });
    await outputMatches(proc, /\[blocked\] started/);
    // The record is written after every step; give the write of "first" a moment to land before the kill.
    await waitUntil(async () => (await record("killed").catch(() => undefined))?.steps.first?.status === "ok");
    proc.child.kill("SIGKILL");
    await proc.done;
    const journal = await record("killed");
    assert.equal(journal.runStatus, "running", "a crash leaves runStatus: running behind");
    assert.equal(journal.steps.first?.status, "ok");
    await openGate();
    const again = await apply(file);
    assert.equal(again.r.code, 0, again.r.stderr);
    assert.match(
      again.r.stderr,
      /took over the lease .*its process is no longer running \(same host, pid namespace and boot as this run\)/,
      "the killed run's lease is taken over at once",
    );
    assert.equal(stepOf(again.run, "first").reason, RESUME);
    assert.equal(stepOf(again.run, "blocked").status, "ok");
    assert.equal(stepOf(again.run, "last").status, "ok");
  });
});

describe("interrupts", () => {
  test("Ctrl-C: no new steps start, the running attempt is cancelled, the journal is written, and khook exits non-zero saying so", async (t) => {
    const { ns, env, record, kubectl } = await setup(t);
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const steps = gatedChain(ns, "never");
    const { file } = specDir(khookSpec("interrupted", steps, stateIn(ns)));
    const proc = startKhook(["apply", "-f", file], { env });
    await outputMatches(proc, /\[blocked\] started/);
    proc.child.kill("SIGINT");
    const r = await proc.done;
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stderr, /SIGINT: stopping/);
    assert.match(r.stderr, /interrupted/i);
    const journal = await record("interrupted");
    assert.equal(journal.runStatus, "cancelled");
    assert.equal(journal.steps.first?.status, "ok");
    assert.notEqual(journal.steps.never?.status, "ok");
  });
});

describe("destroy", () => {
  test("destroy deletes only what khook created: adopted and foreign objects are left alone; a second destroy is a no-op", async (t) => {
    const { ns, apply, khook, kubectl, cluster, record } = await setup(t);
    await kubectl(["create", "configmap", "preexisting", "-n", ns, "--from-literal=owner=someone-else"]);
    await kubectl(["create", "configmap", "unrelated", "-n", ns, "--from-literal=a=1"]);
    const steps = `${applyStep("mine", cm("mine", ns))}${applyStep("adopted", cm("preexisting", ns, 'owner: "khook"'))}${applyStep("found", cm("unrelated", ns)).replace("    apply:\n", "    apply:\n      skipIf: exists\n")}  - name: job\n    job:\n      image: busybox\n      namespace: ${ns}\n`;
    const { file } = specDir(khookSpec("destroy", steps, stateIn(ns)));
    assert.equal((await apply(file)).r.code, 0);
    assert.ok((await record("destroy")).steps.mine);
    const d = await khook(["destroy", "-f", file, "-o", "json"]);
    assert.equal(d.code, 0, d.stderr);
    const exists = async (kind: string, name: string) =>
      (await cluster.kubectl(["get", kind, name, "-n", ns])).code === 0;
    assert.equal(await exists("configmap", "mine"), false);
    assert.equal(await exists("job", "job"), false);
    assert.equal(await exists("configmap", "preexisting"), true, "an adopted object is not deleted");
    assert.equal(await exists("configmap", "unrelated"), true, "an object skipIf: exists found is not deleted");
    assert.equal(await exists("secret", "khook-state-destroy"), false, "a successful destroy deletes the record");
    const again = await khook(["destroy", "-f", file, "-o", "json"]);
    assert.equal(again.code, 0, again.stderr);
  });
});

async function waitUntil(cond: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition never became true");
}
