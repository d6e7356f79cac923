/**
 * A cluster that is late (issue 19 §4) and a webhook that is late, met from the CLI and from
 * Pulumi, on a private control plane this file starts (and stops): its kube-apiserver is killed
 * before khook starts and started again, with the flags it first had, while khook waits. Nothing
 * here is faked: the port khook dials is the real API server's, closed, then served again.
 *
 * - `khook apply --wait-for-cluster`: khook says it waits, the API server comes back, and the
 *   spec converges in one run; without the flag the run fails at once, naming the server and the
 *   flag, and touches nothing; a wait that runs out says so and touches nothing.
 * - The Pulumi input `waitForCluster`: the same from `pulumi up` (real pulumi CLI, file backend);
 *   without it, the update fails naming the server and the input.
 * - The transient-retry counts reach the resource's outputs: a step behind an admission webhook
 *   that is down (the loopback server of test/harness/webhook-server.ts) until the provider says
 *   it waits for it.
 *
 * The test acts when khook prints that it waits, never after a sleep.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import type { StepOutput } from "../../provider/pulumi/wire.js";
import { killComponent, restartComponent } from "../harness/index.js";
import { privateCluster } from "../harness/private-cluster.js";
import { isAlive } from "../harness/util.js";
import { HostileWebhook, validatingWebhookConfiguration } from "../harness/webhook-server.js";
import {
  applyStep,
  cliEnv,
  cm,
  khookSpec,
  outputMatches,
  parseRun,
  runKhook,
  specDir,
  startKhook,
  stateIn,
  stepOf,
} from "./support/khook-cli.js";
import { pulumiTools, withLauncher } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs, PulumiProject, type PulumiRun } from "./support/pulumi-project.js";
import { configMapStep, spec as pulumiSpec, yamlProgram } from "./support/pulumi-specs.js";

const { state, cluster, kubectl } = privateCluster("late");

let counter = 0;
async function namespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${++counter}`;
  await kubectl(["create", "namespace", ns]);
  return ns;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const WAITING_FOR_SERVER = () =>
  new RegExp(
    `waiting for the API server at ${escape(state().server)} to be ready \\(ECONNREFUSED\\); up to \\d\\d:\\d\\d:\\d\\d`,
  );

/** The API server is down for `fn`, and up again after it whatever happens (the next test needs it). */
async function withApiServerDown<T>(fn: () => Promise<T>): Promise<T> {
  await killComponent(state(), "kube-apiserver");
  try {
    return await fn();
  } finally {
    const pid = state().pids["kube-apiserver"];
    if (pid === undefined || !isAlive(pid)) await restartComponent(state(), "kube-apiserver");
  }
}

const upAgain = () => restartComponent(state(), "kube-apiserver");

/** The objects of `kind` in `ns`, less the CA ConfigMap the controller-manager puts into every namespace (in its own time). */
async function objectNames(ns: string, kind: string): Promise<string[]> {
  const out = await kubectl(["get", kind, "-n", ns, "-o", "name"]);
  return (out === "" ? [] : out.split("\n")).filter((n) => n !== "configmap/kube-root-ca.crt");
}

describe("khook apply --wait-for-cluster against an API server that is not up yet", { timeout: 600_000 }, () => {
  test("with the flag: khook says it waits, the API server starts, and the spec converges in one run", async () => {
    const ns = await namespace("late-cli");
    const { file } = specDir(khookSpec("late", applyStep("first", cm("first", ns)), stateIn(ns)));
    const r = await withApiServerDown(async () => {
      const run = startKhook(["apply", "-f", file, "-o", "json", "--wait-for-cluster", "10m"], {
        env: cliEnv(state().kubeconfig),
      });
      await outputMatches(run, WAITING_FOR_SERVER());
      await upAgain();
      return run.done;
    });
    assert.equal(r.code, 0, r.stderr);
    const run = parseRun(r);
    assert.equal(run.status, "succeeded");
    assert.deepEqual([stepOf(run, "first").status, stepOf(run, "first").attempts], ["ok", 1]);
    assert.equal((r.stderr.match(/waiting for the API server/g) ?? []).length, 1, `one waiting line:\n${r.stderr}`);
    assert.match(r.stderr, new RegExp(`the API server at ${escape(state().server)} is ready after \\d+\\.\\ds`));
    assert.deepEqual(await objectNames(ns, "configmaps"), ["configmap/first"]);
    assert.equal(
      await kubectl(["get", "secret", "khook-state-late", "-n", ns, "-o", "name"]),
      "secret/khook-state-late",
    );
  });

  test("without the flag: the run fails at once naming the server and suggesting --wait-for-cluster, and touches nothing", async () => {
    const ns = await namespace("late-noflag");
    const { file } = specDir(khookSpec("late", applyStep("first", cm("first", ns)), stateIn(ns)));
    const r = await withApiServerDown(() => runKhook(["apply", "-f", file], { env: cliEnv(state().kubeconfig) }));
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`cannot reach the Kubernetes API server at ${escape(state().server)}`), r.stderr);
    assert.match(r.stderr, /ECONNREFUSED/);
    assert.match(r.stderr, /--wait-for-cluster 10m/, `the error suggests the flag:\n${r.stderr}`);
    assert.doesNotMatch(r.stderr, /waiting for the API server/);
    assert.deepEqual(await objectNames(ns, "configmaps"), []);
    assert.deepEqual(await objectNames(ns, "secrets"), []);
  });

  test("a wait that runs out fails naming the server and the cause, and touches nothing", async () => {
    const ns = await namespace("late-short");
    const { file } = specDir(khookSpec("late", applyStep("first", cm("first", ns)), stateIn(ns)));
    // The server stays down for the whole (short) wait: its end is certain, not a race.
    const r = await withApiServerDown(() =>
      runKhook(["apply", "-f", file, "--wait-for-cluster", "2s"], { env: cliEnv(state().kubeconfig) }),
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `the Kubernetes API server at ${escape(state().server)} \\(context "[^"]+" from kubeconfig [^)]+\\) was not ready within --wait-for-cluster 2s \\(ECONNREFUSED\\)`,
      ),
      r.stderr,
    );
    assert.deepEqual(await objectNames(ns, "configmaps"), []);
    assert.deepEqual(await objectNames(ns, "secrets"), []);
  });
});

/** A Pulumi project with the generic Khook program, on the private cluster. */
async function pulumiProject(t: TestContext, specText: string, args: Record<string, unknown>): Promise<PulumiProject> {
  const project = new PulumiProject(pulumiTools(), { program: KHOOK_PROGRAM, files: { "boot.khook.yaml": specText } });
  t.after(async () => {
    if (process.env.KHOOK_KEEP_PULUMI_PROJECTS) t.diagnostic(`kept ${project.dir}`);
    else await project.cleanup();
  });
  project.write(
    "args.json",
    programArgs({ args: { specFile: "./boot.khook.yaml", ...args }, kubeconfigFile: state().kubeconfig }),
  );
  await project.init();
  return project;
}

/** `pulumi up` that calls `act` once its output matches `pattern`. */
function upWhen(project: PulumiProject, pattern: RegExp, act: () => Promise<void>): Promise<PulumiRun> {
  let acted: Promise<void> | undefined;
  const done = project.run(["up", "--yes", "--skip-preview"], {
    onOutput: (sofar) => {
      if (acted === undefined && pattern.test(sofar)) acted = act();
    },
  });
  return done.then(async (r) => {
    if (acted === undefined) assert.fail(`pulumi up ended before printing ${String(pattern)}:\n${r.output}`);
    await acted;
    return r;
  });
}

describe("Pulumi: waitForCluster and the transient retries in the outputs", { timeout: 900_000 }, () => {
  test("waitForCluster: pulumi up waits for an API server that is not up yet and converges in one update", async (t) => {
    const ns = await namespace("late-pulumi");
    const project = await pulumiProject(t, pulumiSpec("latepulumi", configMapStep("alpha", { a: "1" })), {
      vars: { NS: ns },
      waitForCluster: "10m",
    });
    const up = await withApiServerDown(() => upWhen(project, WAITING_FOR_SERVER(), upAgain));
    assert.equal(up.code, 0, up.output);
    assert.match(up.output, new RegExp(`the API server at ${escape(state().server)} is ready after`), up.output);
    const out = await project.outputs();
    assert.equal(out.runStatus, "succeeded");
    assert.deepEqual(
      (out.steps as StepOutput[]).map((s) => [s.name, s.status, s.attempts]),
      [["alpha", "ok", 1]],
    );
    assert.deepEqual(await objectNames(ns, "configmaps"), ["configmap/alpha"]);
  });

  test("without waitForCluster: pulumi up fails naming the server and suggesting the input, and touches nothing", async (t) => {
    const ns = await namespace("late-pulumi-no");
    const project = await pulumiProject(t, pulumiSpec("latepulumino", configMapStep("alpha", { a: "1" })), {
      vars: { NS: ns },
    });
    const up = await withApiServerDown(() => project.run(["up", "--yes", "--skip-preview"]));
    assert.notEqual(up.code, 0, up.output);
    assert.match(
      up.output,
      new RegExp(`cannot reach the Kubernetes API server at ${escape(state().server)}`),
      up.output,
    );
    assert.match(up.output, /waitForCluster/, `the error suggests the input:\n${up.output}`);
    assert.deepEqual(await objectNames(ns, "configmaps"), []);
    assert.deepEqual(await objectNames(ns, "secrets"), []);
  });

  test('waitForCluster: "0s" does not wait, as when it is not given and as --wait-for-cluster 0s: the update fails at once naming the server and the input', async (t) => {
    const ns = await namespace("late-pulumi-0s");
    const project = await pulumiProject(t, pulumiSpec("latepulumizero", configMapStep("alpha", { a: "1" })), {
      vars: { NS: ns },
      waitForCluster: "0s",
    });
    const up = await withApiServerDown(() => project.run(["up", "--yes"]));
    assert.notEqual(up.code, 0, up.output);
    assert.doesNotMatch(up.output, /waitForCluster expects|must be a positive duration/, "0s is a valid value");
    assert.doesNotMatch(up.output, /waiting for the API server/);
    assert.match(up.output, new RegExp(`cannot reach the Kubernetes API server at ${escape(state().server)}`));
    assert.match(up.output, /set the Khook input waitForCluster/);
    assert.deepEqual(await objectNames(ns, "configmaps"), []);
  });

  test("native provider, from a Pulumi YAML program: waitForCluster waits for an API server that is not up yet, and the update converges", async (t) => {
    const ns = await namespace("late-yaml");
    const project = new PulumiProject(pulumiTools(), {
      program: "",
      bare: true,
      files: { "boot.khook.yaml": pulumiSpec("lateyaml", configMapStep("alpha", { a: "1" })) },
    });
    t.after(async () => {
      if (process.env.KHOOK_KEEP_PULUMI_PROJECTS) t.diagnostic(`kept ${project.dir}`);
      else await project.cleanup();
    });
    project.write(
      "Pulumi.yaml",
      yamlProgram(ns, state().kubeconfig).replace("      vars:\n", '      waitForCluster: "10m"\n      vars:\n'),
    );
    Object.assign(project.env, withLauncher(project.env));
    await project.init();
    const preview = await project.run(["preview"]);
    assert.equal(preview.code, 0, preview.output);
    assert.doesNotMatch(preview.output, /Property waitForCluster does not exist/);
    const up = await withApiServerDown(() => upWhen(project, WAITING_FOR_SERVER(), upAgain));
    assert.equal(up.code, 0, up.output);
    assert.match(up.output, new RegExp(`the API server at ${escape(state().server)} is ready after`), up.output);
    assert.equal((await project.outputs()).runStatus, "succeeded");
    assert.deepEqual(await objectNames(ns, "configmaps"), ["configmap/alpha"]);
  });

  test("a webhook down, then up: one update converges, and the step's transient retries are in the resource's outputs", async (t) => {
    const ns = await namespace("late-webhook");
    const hook = await HostileWebhook.start("down");
    t.after(() => hook.close());
    const name = `pulumi-${ns}`;
    await kubectl(["apply", "-f", "-"], JSON.stringify(validatingWebhookConfiguration(hook, { name, namespace: ns })));
    t.after(async () => {
      await cluster().kubectl(["delete", "validatingwebhookconfiguration", name, "--ignore-not-found"]);
    });
    const project = await pulumiProject(
      t,
      pulumiSpec("latewebhook", configMapStep("guarded", { a: "1" }, "    timeout: 5m\n")),
      { vars: { NS: ns } },
    );
    const waiting = new RegExp(
      `waiting for admission webhook ${escape(name)}\\.khook\\.test \\(connection refused\\); retrying until`,
    );
    const up = await upWhen(project, waiting, () => hook.set("allow"));
    assert.equal(up.code, 0, up.output);
    // pulumi prints each line as it comes, then again under "Diagnostics:": count the first.
    const progress = up.output.split("\nDiagnostics:")[0]!;
    assert.equal((progress.match(/waiting for admission webhook/g) ?? []).length, 1, `one waiting line:\n${up.output}`);
    const out = await project.outputs();
    const guarded = (out.steps as StepOutput[]).find((s) => s.name === "guarded");
    assert.ok(guarded, JSON.stringify(out.steps));
    assert.deepEqual([guarded.status, guarded.attempts], ["ok", 1]);
    assert.ok(guarded.transientRetries >= 1, `the outputs count the transient retries: ${JSON.stringify(guarded)}`);
    assert.ok(hook.count("/validate") >= 1, "the API server called the webhook once it served");
    assert.deepEqual(await objectNames(ns, "configmaps"), ["configmap/guarded"]);
  });
});
