/**
 * The hostile cluster (issue 19): the races that make bootstrap scripts fail, each met by a spec
 * with no `retries:` that converges in one run of the real khook CLI. The webhook is a real
 * HTTPS server on loopback the API server calls (test/harness/webhook-server.ts); the test moves
 * it from one state to the next when khook says it is waiting, never after a sleep.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { TEST_READY_AFTER_ANNOTATION, testCluster, testChartPath, withNamespace } from "../harness/index.js";
import {
  conversionCrd,
  DENY_MESSAGE,
  HostileWebhook,
  unavailableApiService,
  validatingWebhookConfiguration,
  mutatingWebhookConfiguration,
} from "../harness/webhook-server.js";
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

const WAITING = (what: string) => new RegExp(`waiting for ${what}; retrying until \\d\\d:\\d\\d:\\d\\d`);

async function setup(t: TestContext, prefix: string) {
  const cluster = await testCluster();
  const ns = await withNamespace(t, prefix);
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const r = await cluster.kubectl(args, input !== undefined ? { input } : {});
    assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const env = cliEnv(cluster.kubeconfig);
  const hook = await HostileWebhook.start("down");
  t.after(() => hook.close());
  /** Cluster-scoped objects the test registers: deleted when it ends, so no other test meets them. */
  const clusterScoped = async (obj: Record<string, unknown>): Promise<void> => {
    const kind = String(obj["kind"]).toLowerCase();
    const name = String((obj["metadata"] as { name: string }).name);
    t.after(async () => {
      await cluster.kubectl(["delete", kind, name, "--ignore-not-found", "--wait=false"]);
    });
    await kubectl(["apply", "-f", "-"], JSON.stringify(obj));
  };
  const status = async (file: string) =>
    JSON.parse((await runKhook(["status", "-f", file, "-o", "json"], { env })).stdout) as {
      steps: { name: string; transientRetries: number; attempts: number; status: string }[];
    };
  return { cluster, ns, kubectl, env, hook, clusterScoped, status, name: ns.replace(/[^a-z0-9-]/g, "") };
}

const guardedCm = (ns: string) => applyStep("guarded", cm("guarded", ns), "    timeout: 3m\n");

/** Runs `khook apply` on `spec`; when `onWaiting` is given, calls it once khook prints the line matching it. */
async function applyWhile(env: NodeJS.ProcessEnv, file: string, waitingLine: RegExp, act: () => Promise<void>) {
  const proc = startKhook(["apply", "-f", file, "-o", "json"], { env });
  await outputMatches(proc, waitingLine);
  await act();
  const r = await proc.done;
  return { r, run: parseRun(r), output: proc.output() };
}

describe("races: admission webhooks", () => {
  test("webhook down then up: the step waits for it within its deadline, without retries:, and converges in one run", async (t) => {
    const s = await setup(t, "races-down");
    await s.clusterScoped(validatingWebhookConfiguration(s.hook, { name: s.name, namespace: s.ns }));
    const { file } = specDir(khookSpec(s.name, guardedCm(s.ns), stateIn(s.ns)));
    const { r, run, output } = await applyWhile(
      s.env,
      file,
      WAITING(`admission webhook ${s.name}\\.khook\\.test \\(connection refused\\)`),
      () => s.hook.set("allow"),
    );
    assert.equal(r.code, 0, output);
    const step = stepOf(run, "guarded");
    assert.deepEqual([step.status, step.attempts], ["ok", 1]);
    assert.equal((output.match(/waiting for admission webhook/g) ?? []).length, 1, `one waiting line:\n${output}`);
    assert.match(
      output,
      new RegExp(
        `admission webhook ${s.name}\\.khook\\.test cleared after .* \\(\\d+ transient retr(y|ies)\\); going on`,
      ),
    );
    assert.ok(s.hook.count("/validate") >= 1, "the API server called the webhook once it served");
    assert.equal(await s.kubectl(["get", "configmap", "guarded", "-n", s.ns, "-o", "name"]), "configmap/guarded");
    const recorded = (await s.status(file)).steps.find((x) => x.name === "guarded")!;
    assert.ok(recorded.transientRetries >= 1, `the record counts the transient retries: ${JSON.stringify(recorded)}`);
    assert.equal(recorded.attempts, 1);
  });

  test("a webhook that hangs past its timeoutSeconds, then answers 500, then serves: one run, one line per cause", async (t) => {
    const s = await setup(t, "races-hang");
    await s.hook.set("hang");
    await s.clusterScoped(mutatingWebhookConfiguration(s.hook, { name: s.name, namespace: s.ns, timeoutSeconds: 1 }));
    const { file } = specDir(khookSpec(s.name, guardedCm(s.ns)));
    const proc = startKhook(["apply", "-f", file, "-o", "json"], { env: s.env });
    await outputMatches(proc, WAITING(`admission webhook ${s.name}\\.khook\\.test \\(timeout\\)`));
    await s.hook.set("error");
    await outputMatches(
      proc,
      new RegExp(`waiting for admission webhook ${s.name}\\.khook\\.test \\((?!timeout)[^)]+\\)`),
    );
    await s.hook.set("allow");
    const r = await proc.done;
    assert.equal(r.code, 0, proc.output());
    assert.deepEqual([stepOf(parseRun(r), "guarded").status, stepOf(parseRun(r), "guarded").attempts], ["ok", 1]);
    assert.equal((proc.output().match(/waiting for admission webhook/g) ?? []).length, 2, proc.output());
  });

  test("CA injected late: the webhook serves, its configuration's caBundle is patched in later (cainjector), the step converges in one run", async (t) => {
    const s = await setup(t, "races-ca");
    await s.hook.set("allow");
    // Registered with a CA that did not sign the webhook's certificate, as a chart installs it before cert-manager injects the right one.
    const config = validatingWebhookConfiguration(s.hook, {
      name: s.name,
      namespace: s.ns,
      caBundle: s.hook.wrongCaBundle,
    });
    await s.clusterScoped(config);
    const { file } = specDir(khookSpec(s.name, guardedCm(s.ns)));
    const { r, run, output } = await applyWhile(
      s.env,
      file,
      WAITING(`admission webhook ${s.name}\\.khook\\.test \\(x509: certificate signed by unknown authority\\)`),
      async () => {
        await s.kubectl([
          "patch",
          "validatingwebhookconfiguration",
          s.name,
          "--type",
          "json",
          "-p",
          JSON.stringify([{ op: "replace", path: "/webhooks/0/clientConfig/caBundle", value: s.hook.caBundle }]),
        ]);
      },
    );
    assert.equal(r.code, 0, output);
    assert.deepEqual([stepOf(run, "guarded").status, stepOf(run, "guarded").attempts], ["ok", 1]);
  });

  test("a deliberate denial fails at once: no retry line, the webhook's message, well before the step's long deadline", async (t) => {
    const s = await setup(t, "races-deny");
    await s.hook.set("deny");
    await s.clusterScoped(validatingWebhookConfiguration(s.hook, { name: s.name, namespace: s.ns }));
    // The deadline is an hour: had khook retried the denial, the test would time out long before it.
    const { file } = specDir(khookSpec(s.name, applyStep("guarded", cm("guarded", s.ns), "    timeout: 1h\n")));
    const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: s.env });
    assert.equal(r.code, 1, r.stderr);
    const step = stepOf(parseRun(r), "guarded");
    assert.deepEqual([step.status, step.attempts], ["failed", 1]);
    assert.match(
      step.error ?? "",
      new RegExp(`admission webhook "${s.name}\\.khook\\.test" denied the request: ${DENY_MESSAGE}`),
    );
    assert.doesNotMatch(r.stderr, /waiting for|transient/, "no retry lines");
    assert.equal(s.hook.count("/validate"), 1, "the API server called the webhook once: khook did not retry");
  });
});

describe("races: an operator that becomes ready late", () => {
  test("the operator's pods are Ready only after a delay (kwok), its webhook serves once they are; the next step converges in one run", async (t) => {
    const s = await setup(t, "races-late");
    const operator = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: operator
  namespace: ${s.ns}
spec:
  replicas: 1
  selector: {matchLabels: {app: operator}}
  template:
    metadata:
      labels: {app: operator}
      annotations: {${TEST_READY_AFTER_ANNOTATION}: "3s"}
    spec: {containers: [{name: c, image: "khook.test/operator:1"}]}
---
${JSON.stringify(validatingWebhookConfiguration(s.hook, { name: s.name, namespace: s.ns }))}
`;
    t.after(async () => {
      await s.cluster.kubectl([
        "delete",
        "validatingwebhookconfiguration",
        s.name,
        "--ignore-not-found",
        "--wait=false",
      ]);
    });
    const steps = `${applyStep("operator", operator)}${applyStep("guarded", cm("guarded", s.ns), "    needs: [operator]\n    timeout: 3m\n")}`;
    const { file } = specDir(khookSpec(s.name, steps));
    const { r, run, output } = await applyWhile(
      s.env,
      file,
      WAITING(`admission webhook ${s.name}\\.khook\\.test \\(connection refused\\)`),
      async () => {
        // The webhook's pod serves once it is Ready: as a real operator's does.
        await s.kubectl(["rollout", "status", "deployment/operator", "-n", s.ns, "--timeout=120s"]);
        await s.hook.set("allow");
      },
    );
    assert.equal(r.code, 0, output);
    assert.deepEqual([stepOf(run, "guarded").status, stepOf(run, "guarded").attempts], ["ok", 1]);
  });
});

describe("races: conversion webhooks, CRDs and aggregated APIs", () => {
  test("conversion webhook late: creating a v2 object waits for the CRD's conversion webhook and converges in one run", async (t) => {
    const s = await setup(t, "races-conv");
    const group = `${s.name}.khook.test`;
    await s.clusterScoped(conversionCrd(s.hook, group));
    await s.kubectl(["wait", "--for=condition=Established", `crd/widgets.${group}`, "--timeout=60s"]);
    const widget = `apiVersion: ${group}/v2\nkind: Widget\nmetadata:\n  name: w\n  namespace: ${s.ns}\nspec:\n  size: 3\n`;
    const { file } = specDir(khookSpec(s.name, applyStep("widget", widget, "    timeout: 3m\n")));
    const { r, run, output } = await applyWhile(
      s.env,
      file,
      WAITING(`conversion webhook for ${group.replace(/\./g, "\\.")}/v\\d, Kind=Widget \\(connection refused\\)`),
      () => s.hook.set("allow"),
    );
    assert.equal(r.code, 0, output);
    assert.deepEqual([stepOf(run, "widget").status, stepOf(run, "widget").attempts], ["ok", 1]);
    assert.ok(s.hook.count("/convert") >= 1);
    assert.equal(await s.kubectl(["get", `widgets.v2.${group}`, "w", "-n", s.ns, "-o", "jsonpath={.spec.size}"]), "3");
  });

  test("an unavailable APIService beside unrelated steps: discovery warns once, the steps that do not use its group converge", async (t) => {
    const s = await setup(t, "races-apisvc");
    const group = `${s.name}.khook.test`;
    await s.clusterScoped(unavailableApiService(group, s.ns));
    await s.kubectl(["wait", "--for=condition=Available=False", `apiservice/v1beta1.${group}`, "--timeout=60s"]);
    const crd = `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.${group.replace(/^/, "g")}\nspec:\n  group: ${"g" + group}\n  scope: Namespaced\n  names: {plural: gadgets, singular: gadget, kind: Gadget}\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n`;
    t.after(async () => {
      await s.cluster.kubectl(["delete", "crd", `gadgets.g${group}`, "--ignore-not-found", "--wait=false"]);
    });
    const gadget = `apiVersion: g${group}/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: ${s.ns}\n`;
    const steps = `${applyStep("config", cm("plain", s.ns))}${applyStep("crd", crd)}${applyStep("gadget", gadget, "    needs: [crd]\n")}  - name: rollout-free-wait\n    needs: [config]\n    wait:\n      for: jsonpath={.data.a}=1\n      on: configmap/plain\n      namespace: ${s.ns}\n`;
    const { file } = specDir(khookSpec(s.name, steps));
    const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: s.env });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    for (const step of ["config", "crd", "gadget", "rollout-free-wait"])
      assert.equal(stepOf(parseRun(r), step).status, "ok", step);
    const warnings = r.stderr.split("\n").filter((l) => l.includes(`couldn't get resource list for ${group}/v1beta1`));
    assert.equal(warnings.length, 1, `warned once, as kubectl does:\n${r.stderr}`);
    assert.match(
      warnings[0]!,
      /^warning: couldn't get resource list for .*: stale discovery: its APIService is not available; steps that use this API wait for it, the others go on$/,
    );
  });
});

describe("races: helm", () => {
  test("two charts: the first installs a webhook configuration, the second's objects wait for that webhook to serve; one run", async (t) => {
    const s = await setup(t, "races-helm");
    t.after(async () => {
      await s.cluster.kubectl([
        "delete",
        "validatingwebhookconfiguration",
        s.name,
        "--ignore-not-found",
        "--wait=false",
      ]);
    });
    const values = JSON.stringify({
      webhook: validatingWebhookConfiguration(s.hook, { name: s.name, namespace: s.ns }),
    });
    const steps = `  - name: operator
    helm:
      release: operator
      chart: ${testChartPath("khook-test-webhook")}
      namespace: ${s.ns}
      values: ${values}
  - name: config
    needs: [operator]
    timeout: 3m
    helm:
      release: config
      chart: ${testChartPath("khook-test-config")}
      namespace: ${s.ns}
      values:
        data: {guarded: "yes"}
`;
    const { file } = specDir(khookSpec(s.name, steps));
    const { r, run, output } = await applyWhile(
      s.env,
      file,
      WAITING(`admission webhook ${s.name}\\.khook\\.test \\(connection refused\\)`),
      () => s.hook.set("allow"),
    );
    assert.equal(r.code, 0, output);
    assert.deepEqual([stepOf(run, "config").status, stepOf(run, "config").attempts], ["ok", 1]);
    assert.equal(
      await s.kubectl(["get", "configmap", "config-config", "-n", s.ns, "-o", "jsonpath={.data.guarded}"]),
      "yes",
    );
  });
});
