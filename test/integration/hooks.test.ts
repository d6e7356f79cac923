/**
 * Lifecycle hooks end to end, through the real CLI, against the real cluster and
 * the real helm: the committed exec functions (examples/functions) and a real HTTP
 * hook server on loopback implementing seed 003's contract (test/harness/hook-server.ts).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { testChartPath, testCluster, toolEnv, toolPath, withNamespace } from "../harness/index.js";
import { deadLoopbackUrl, HookServer } from "../harness/hook-server.js";
import { run } from "../harness/util.js";
import { cliEnv, khookSpec, parseRun, runKhook, specDir, stepOf, type CliResult } from "./support/khook-cli.js";

const FUNCTIONS = path.join(__dirname, "..", "..", "..", "examples", "functions");

/** A spec directory with the example functions in ./fn (executable). */
function hookedSpec(name: string, hooks: string, steps: string, extra = ""): { dir: string; file: string } {
  const s = specDir(khookSpec(name, steps, `${extra}hooks:\n${hooks}`));
  fs.mkdirSync(path.join(s.dir, "fn"));
  for (const f of fs.readdirSync(FUNCTIONS)) {
    fs.copyFileSync(path.join(FUNCTIONS, f), path.join(s.dir, "fn", f));
    fs.chmodSync(path.join(s.dir, "fn", f), 0o755);
  }
  return s;
}

async function khook(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const cluster = await testCluster();
  return runKhook(args, { env: cliEnv(cluster.kubeconfig, { ...extraEnv, PATH: toolEnv()["PATH"] }) });
}

async function kubectlJson(args: string[]): Promise<Record<string, unknown> | undefined> {
  const cluster = await testCluster();
  const r = await cluster.kubectl([...args, "-o", "json"]);
  if (r.code !== 0 && /NotFound|not found/.test(r.stderr)) return undefined;
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function labelsOf(o: Record<string, unknown> | undefined): Record<string, string> {
  return (o?.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
}

const configMapStep = (name: string, ns: string, extra = ""): string =>
  `  - name: ${name}\n${extra}    apply:\n      namespace: ${ns}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: ${name}}\n            data: {k: v}\n`;

const LABELS =
  "  - name: team-labels\n    on: [post-render]\n    function: {exec: ./fn/add-labels, config: {data: {team: platform}}}\n";

describe("post-render functions", () => {
  test("a transformer labels the objects of an apply step and of a helm release; the live objects carry the label", async (t) => {
    const ns = await withNamespace(t, "hook-labels");
    const steps =
      configMapStep("plain", ns) +
      `  - name: chart\n    helm:\n      chart: ${testChartPath("khook-test-app")}\n      namespace: ${ns}\n`;
    const { file } = hookedSpec("hook-labels", LABELS, steps);
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(
      parseRun(r).steps.map((s) => s.status),
      ["ok", "ok"],
    );
    assert.equal(labelsOf(await kubectlJson(["-n", ns, "get", "configmap", "plain"]))["team"], "platform");
    assert.equal(labelsOf(await kubectlJson(["-n", ns, "get", "configmap", "chart-app"]))["team"], "platform");
    assert.equal(labelsOf(await kubectlJson(["-n", ns, "get", "deployment", "chart-app"]))["team"], "platform");
    assert.match(r.stderr, /post-render hook team-labels \(.*spec\.yaml:\d+\): info: labelled/);

    // A changed function config re-renders the release even though its chart and values did not change.
    const { file: file2 } = hookedSpec("hook-labels", LABELS.replace("team: platform", "team: payments"), steps);
    const again = await khook(["apply", "-f", file2, "-o", "json"]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stderr, /upgrading release chart .*\(hooks changed\)/);
    assert.match(stepOf(parseRun(again), "chart").reason, /upgraded to revision 2/);
    assert.equal(labelsOf(await kubectlJson(["-n", ns, "get", "configmap", "chart-app"]))["team"], "payments");
  });

  test("a validator rejects Deployments without resource limits: the step fails before anything is created, listing each object and field", async (t) => {
    const cluster = await testCluster();
    const existing = await withNamespace(t, "hook-limits");
    // A namespace that does not exist yet: createNamespace would make it, if anything were sent.
    const fresh = `${existing}-new`;
    const hooks = "  - name: require-limits\n    on: [post-render]\n    function: {exec: ./fn/require-limits}\n";
    const steps = [
      `  - name: web\n    retries: 2\n    retryDelay: 0s\n    onError: continue\n    apply:\n      namespace: ${fresh}\n      createNamespace: true\n      manifests:\n        - inline: |\n            apiVersion: apps/v1\n            kind: Deployment\n            metadata: {name: web}\n            spec:\n              selector: {matchLabels: {app: web}}\n              template:\n                metadata: {labels: {app: web}}\n                spec:\n                  containers:\n                    - {name: app, image: nginx}\n                    - {name: sidecar, image: envoy, resources: {limits: {cpu: 100m}}}\n                    - {name: log, image: fluentbit}\n`,
      `  - name: chart\n    onError: continue\n    helm:\n      chart: ${testChartPath("khook-test-app")}\n      namespace: ${existing}\n`,
    ].join("");
    const { file } = hookedSpec("hook-limits", hooks, steps);
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const web = stepOf(parseRun(r), "web");
    assert.equal(web.status, "failed");
    assert.equal(web.attempts, 1, "a function's verdict is not retried");
    assert.match(web.error!, /rejected the step's objects \(2 errors\); nothing was sent to the cluster/);
    // Functions see the objects as written (the step's namespace is applied when they are sent).
    assert.match(
      web.error!,
      /error Deployment\/web spec\.template\.spec\.containers\[0\]\.resources\.limits: container app has no resource limits/,
    );
    assert.match(web.error!, /containers\[2\]\.resources\.limits: container log has no resource limits/);
    assert.doesNotMatch(web.error!, /containers\[1\]/);
    const chart = stepOf(parseRun(r), "chart");
    assert.equal(chart.status, "failed");
    assert.match(chart.error!, /error Deployment\/chart-app .*containers\[0\]\.resources\.limits/);
    // Nothing touched the cluster: no namespace, no Deployment, no release.
    assert.equal(await kubectlJson(["get", "namespace", fresh]), undefined);
    assert.equal(await kubectlJson(["-n", existing, "get", "deployment", "chart-app"]), undefined);
    const history = await run(
      toolPath("helm"),
      ["history", "chart", "-n", existing, "--kubeconfig", cluster.kubeconfig],
      { env: toolEnv() },
    );
    assert.notEqual(history.code, 0);
    assert.match(history.stderr, /not found/);
  });

  test("validator-sees-applied: a validator rejects an object built from a secret variable; nothing is created and the secret is never shown", async (t) => {
    const ns = await withNamespace(t, "hook-secret-cm");
    const pin = "pin-5521-very-secret";
    // A policy: no credentials in ConfigMaps. The offending object carries the secret, so before, it skipped validation.
    const hooks =
      "  - name: no-secrets-in-configmaps\n    on: [post-render]\n    function: {exec: ./fn/no-secret-data}\n";
    const step = `  - name: cm\n    apply:\n      namespace: ${ns}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: leaky}\n            data: {password: '\${PIN}'}\n`;
    const { dir, file } = hookedSpec("hook-secret-cm", hooks, step);
    fs.writeFileSync(
      path.join(dir, "fn", "no-secret-data"),
      "#!/usr/bin/env node\nlet s = '';\nprocess.stdin.on('data', (c) => (s += c)).on('end', () => {\n  const l = JSON.parse(s);\n  l.results = l.items.filter((o) => o.kind === 'ConfigMap' && o.data && o.data.password).map((o) => ({ severity: 'error', message: 'password ' + o.data.password + ' in a ConfigMap', resourceRef: { kind: o.kind, name: o.metadata.name } }));\n  process.stdout.write(JSON.stringify(l));\n});\n",
      { mode: 0o755 },
    );
    const r = await khook(["apply", "-f", file, "-o", "json"], { KHOOK_SECRET_PIN: pin });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(stepOf(parseRun(r), "cm").error!, /error ConfigMap\/leaky: password \*\*\* in a ConfigMap/);
    assert.ok(!(r.stdout + r.stderr).includes(pin));
    assert.equal(await kubectlJson(["-n", ns, "get", "configmap", "leaky"]), undefined, "nothing was applied");
  });

  test("kustomize sources go through post-render too", async (t) => {
    const ns = await withNamespace(t, "hook-kust");
    const steps = `  - name: kust\n    apply:\n      namespace: ${ns}\n      manifests:\n        - kustomize: ./k\n`;
    const { dir, file } = hookedSpec("hook-kust", LABELS, steps);
    fs.mkdirSync(path.join(dir, "k"));
    fs.writeFileSync(path.join(dir, "k", "kustomization.yaml"), "resources: [cm.yaml]\nnamePrefix: k-\n");
    fs.writeFileSync(
      path.join(dir, "k", "cm.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n",
    );
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(labelsOf(await kubectlJson(["-n", ns, "get", "configmap", "k-cm"]))["team"], "platform");
  });

  test("plan --diff shows the transformed objects", async (t) => {
    const ns = await withNamespace(t, "hook-diff");
    const { file } = hookedSpec("hook-diff", LABELS, configMapStep("cm", ns));
    const r = await khook(["plan", "--diff", "-f", file]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\+\s+team: platform/);
    assert.equal(await kubectlJson(["-n", ns, "get", "configmap", "cm"]), undefined, "plan changes nothing");
  });
});

describe("webhooks (a real hook server on loopback)", () => {
  let server: HookServer;
  before(async () => {
    server = await HookServer.start();
  });
  after(() => server.close());

  const audit = (events: string, extra = ""): string =>
    `  - name: audit\n    on: [${events}]\n${extra}    webhook: {url: '${server.url}', timeout: 5s}\n`;
  const retrying = "    retries: 2\n    retryDelay: 0s\n";

  test("pre-apply: success with changed children — what the hook returns is what is applied", async (t) => {
    const ns = await withNamespace(t, "hook-children");
    server.on("pre-apply", {
      kind: "ok",
      change: (c) =>
        Object.fromEntries(
          Object.entries(c).map(([k, v]) => [
            k,
            { ...v, metadata: { ...(v.metadata as object), labels: { audited: "yes" } } },
          ]),
        ),
    });
    const { file } = hookedSpec("hook-children", audit("pre-apply"), configMapStep("cm", ns));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(labelsOf(await kubectlJson(["-n", ns, "get", "configmap", "cm"]))["audited"], "yes");
  });

  test("webhook-no-additions: a pre-apply webhook that adds a ClusterRoleBinding fails the step naming it; nothing is created", async (t) => {
    const ns = await withNamespace(t, "hook-add");
    const binding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${ns}-pwned` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: "default", namespace: ns }],
    };
    server.on("pre-apply", { kind: "ok", change: (c) => ({ ...c, [`ClusterRoleBinding/${ns}-pwned`]: binding }) });
    const { file } = hookedSpec("hook-add", audit("pre-apply"), configMapStep("cm", ns));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      stepOf(parseRun(r), "cm").error!,
      new RegExp(`added ClusterRoleBinding/${ns}-pwned, which the step does not declare`),
    );
    assert.equal(await kubectlJson(["get", "clusterrolebinding", `${ns}-pwned`]), undefined);
    assert.equal(await kubectlJson(["-n", ns, "get", "configmap", "cm"]), undefined, "the step sent nothing");
  });

  test("webhook-allowed-additions: with allow: {add: true}, an added ConfigMap in the step's namespace is created owned by the step, recorded, and removed by destroy", async (t) => {
    const ns = await withNamespace(t, "hook-add-ok");
    server.on("pre-apply", {
      kind: "ok",
      change: (c) => ({
        ...c,
        [`ConfigMap/extra -n ${ns}`]: {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "extra", namespace: ns },
          data: { k: "v" },
        },
      }),
    });
    const { file } = hookedSpec(
      "hook-add-ok",
      audit("pre-apply", "    allow: {add: true}\n"),
      configMapStep("cm", ns),
      `state:\n  namespace: ${ns}\n`,
    );
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const extra = await kubectlJson(["-n", ns, "get", "configmap", "extra"]);
    assert.equal(
      (extra?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.["khook.io/owned-by"],
      "hook-add-ok/cm",
    );
    const d = await khook(["destroy", "-f", file]);
    assert.equal(d.code, 0, d.stdout + d.stderr);
    assert.equal(
      await kubectlJson(["-n", ns, "get", "configmap", "extra"]),
      undefined,
      "destroy removed the added object",
    );
    assert.equal(await kubectlJson(["-n", ns, "get", "configmap", "cm"]), undefined);
  });

  test("pre-apply: permanent: false is retried under the step's retries, then succeeds", async (t) => {
    const ns = await withNamespace(t, "hook-retry");
    server.on(
      "pre-apply",
      { kind: "error", message: "not ready" },
      { kind: "error", message: "not ready" },
      { kind: "ok" },
    );
    const before = server.count("pre-apply");
    const { file } = hookedSpec("hook-retry", audit("pre-apply"), configMapStep("cm", ns, retrying));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(stepOf(parseRun(r), "cm").attempts, 3);
    assert.equal(server.count("pre-apply") - before, 3);
    assert.ok(await kubectlJson(["-n", ns, "get", "configmap", "cm"]));
  });

  test("pre-apply: permanent: true fails the step at once", async (t) => {
    const ns = await withNamespace(t, "hook-permanent");
    server.on("pre-apply", { kind: "error", status: 403, message: "denied by policy", permanent: true });
    const { file } = hookedSpec("hook-permanent", audit("pre-apply"), configMapStep("cm", ns, retrying));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const cm = stepOf(parseRun(r), "cm");
    assert.equal(cm.attempts, 1);
    assert.match(cm.error!, /HTTP 403: denied by policy \(permanent/);
    assert.equal(await kubectlJson(["-n", ns, "get", "configmap", "cm"]), undefined);
  });

  test("pre-apply: continue: true proceeds with the objects unchanged", async (t) => {
    const ns = await withNamespace(t, "hook-continue");
    server.on("pre-apply", { kind: "error", message: "degraded", continue: true });
    const { file } = hookedSpec("hook-continue", audit("pre-apply"), configMapStep("cm", ns));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(labelsOf(await kubectlJson(["-n", ns, "get", "configmap", "cm"]))["audited"], undefined);
    assert.match(r.stderr, /degraded; continue: true/);
  });

  test("failurePolicy Ignore: with the hook server down, the step proceeds", async (t) => {
    const ns = await withNamespace(t, "hook-ignore");
    const dead = await deadLoopbackUrl();
    const hooks = `  - name: audit\n    on: [pre-apply, post-apply]\n    failurePolicy: Ignore\n    webhook: {url: '${dead}'}\n`;
    const { file } = hookedSpec("hook-ignore", hooks, configMapStep("cm", ns));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /cannot reach .*failurePolicy Ignore: skipped/);
    assert.ok(await kubectlJson(["-n", ns, "get", "configmap", "cm"]));
  });

  test("post-apply is told the outcome and the objects; finalize blocks destroy until it succeeds", async (t) => {
    const ns = await withNamespace(t, "hook-finalize");
    server.on("pre-apply", { kind: "ok" });
    server.on("post-apply", { kind: "ok" });
    const { file } = hookedSpec(
      "hook-finalize",
      audit("pre-apply, post-apply, finalize"),
      configMapStep("cm", ns, "    retries: 1\n    retryDelay: 0s\n"),
    );
    const applied = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    const post = server.requests.filter((x) => x.body.phase === "post-apply").at(-1)!;
    assert.equal((post.body.context.outcome as { status: string }).status, "ok");
    assert.deepEqual(Object.keys(post.body.children), ["ConfigMap/cm"]);

    // The hook refuses twice: both attempts fail, the object stays.
    server.on(
      "finalize",
      { kind: "error", message: "still in use" },
      { kind: "error", message: "still in use" },
      { kind: "ok" },
    );
    const blocked = await khook(["destroy", "-f", file, "-o", "json"]);
    assert.equal(blocked.code, 1, blocked.stdout + blocked.stderr);
    assert.match(stepOf(parseRun(blocked), "cm").error!, /finalize hook audit .*still in use/);
    assert.ok(await kubectlJson(["-n", ns, "get", "configmap", "cm"]), "the teardown waits for the hook");

    // Now it succeeds: the teardown proceeds.
    const done = await khook(["destroy", "-f", file, "-o", "json"]);
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.equal(await kubectlJson(["-n", ns, "get", "configmap", "cm"]), undefined);
  });

  test("helm: pre-apply children reach the release through the post-renderer; post-apply gets the chart, release revision, values and capabilities", async (t) => {
    const ns = await withNamespace(t, "hook-helm");
    server.on("pre-apply", {
      kind: "ok",
      change: (c) =>
        Object.fromEntries(
          Object.entries(c).map(([k, v]) => [
            k,
            {
              ...v,
              metadata: {
                ...(v.metadata as object),
                labels: { ...((v.metadata as { labels?: object }).labels ?? {}), audited: "yes" },
              },
            },
          ]),
        ),
    });
    server.on("post-apply", { kind: "ok" });
    const step = `  - name: chart\n    helm:\n      chart: ${testChartPath("khook-test-app")}\n      namespace: ${ns}\n      values: {message: hello}\n`;
    const { file } = hookedSpec("hook-helm", audit("pre-apply, post-apply"), step);
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(labelsOf(await kubectlJson(["-n", ns, "get", "configmap", "chart-app"]))["audited"], "yes");
    const pre = server.requests.filter((x) => x.body.phase === "pre-apply").at(-1)!;
    assert.deepEqual(Object.keys(pre.body.children).sort(), ["ConfigMap/chart-app", "Deployment/chart-app"]);
    const post = server.requests.filter((x) => x.body.phase === "post-apply").at(-1)!.body.context as Record<
      string,
      any
    >;
    assert.equal(post.chart.name, "khook-test-app");
    assert.equal(post.chart.version, "0.1.0");
    assert.equal(post.chart.appVersion, "1.0.0");
    assert.deepEqual(post.release, { name: "chart", namespace: ns, revision: 1 });
    assert.equal(post.values.message, "hello");
    assert.match(post.capabilities.kubernetesVersion, /^v1\./);
    assert.ok(post.capabilities.apiVersions.includes("apps/v1"));
  });

  test("plan calls no webhook, and says so; plan --diff neither", async (t) => {
    const ns = await withNamespace(t, "hook-plan");
    const { file } = hookedSpec("hook-plan", audit("pre-apply, post-apply, finalize"), configMapStep("cm", ns));
    const before = server.count();
    const plain = await khook(["plan", "-f", file]);
    const diff = await khook(["plan", "--diff", "-f", file]);
    const offline = await khook(["plan", "--offline", "-f", file]);
    for (const r of [plain, diff, offline]) assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(server.count(), before, "no request reached the hook server");
    assert.match(plain.stdout, /webhook hooks not called by plan: audit/);
    assert.match(offline.stdout, /pre-apply audit \(webhook http:\/\/127\.0\.0\.1:\d+\/hook\)/);
  });

  test("secrets: a secret header and a secret in a hook's error text never appear in any output or in the record", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "hook-secret");
    const token = "hk-7f3a9c0e-very-secret";
    server.on("pre-apply", { kind: "error", status: 401, message: `token ${token} is revoked`, permanent: true });
    const hooks = `  - name: audit\n    on: [pre-apply]\n    webhook:\n      url: '${server.url}'\n      headers: {Authorization: "Bearer \${HOOK_TOKEN}", X-Api-Key: "\${HOOK_TOKEN}"}\n`;
    const { file } = hookedSpec("hook-secret", hooks, configMapStep("cm", ns), `state:\n  namespace: ${ns}\n`);
    const env = { KHOOK_SECRET_HOOK_TOKEN: token };
    const outputs: CliResult[] = [];
    outputs.push(await khook(["apply", "-f", file], env));
    outputs.push(await khook(["apply", "-f", file, "-o", "json"], env));
    outputs.push(await khook(["status", "-f", file], env));
    outputs.push(await khook(["plan", "--offline", "-o", "json", "-f", file], env));
    assert.equal(outputs[0]!.code, 1);
    assert.match(outputs[0]!.stderr, /token \*\*\* is revoked/);
    assert.equal(server.requests.at(-1)!.headers.authorization, `Bearer ${token}`, "the hook got the real header");
    const recordB64 = (
      await cluster.kubectl([
        "get",
        "secret",
        "khook-state-hook-secret",
        "-n",
        ns,
        "-o",
        "jsonpath={.data.record\\.json}",
      ])
    ).stdout;
    const record = Buffer.from(recordB64, "base64").toString("utf8");
    assert.match(record, /revoked/, "the record holds the (redacted) error");
    for (const [where, text] of [
      ...outputs.map((o, i) => [`run ${i}`, o.stdout + o.stderr] as const),
      ["record", record] as const,
    ]) {
      assert.ok(!text.includes(token), `${where} leaks the token`);
      assert.ok(!text.includes(Buffer.from(token).toString("base64")), `${where} leaks the token (base64)`);
    }
  });
});
