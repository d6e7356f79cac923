/**
 * The helm executor against a fake helm that records how it was called:
 * argv, environment, stdin and the files it was pointed at. No cluster.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec, LoadedStep } from "../../provider/dsl/loaded.js";
import { deleteReleaseExecutor } from "../../provider/steps/delete/uninstall.js";
import { helmExecutor } from "../../provider/steps/helm/executor.js";
import type { StepContext } from "../../provider/steps/contract.js";
import type { StepRecord } from "../../provider/state/journal.js";
import type { InFlightHelm } from "../../provider/state/record.js";
import { releaseOwnershipLabels, specLabelValue } from "../../provider/ownership.js";
import { buildInstallArgs } from "../../provider/tools/helm.js";
import { fakeHelm } from "./support/fake-helm.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

function load(stepsYaml: string, env: Record<string, string> = {}, files: Record<string, string> = {}): LoadedSpec {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml), ...files });
  return loadSpec({ file: path.join(dir, "spec.yaml"), env });
}

function context(spec: LoadedSpec, helm: string, extra: Partial<StepContext> = {}): StepContext & { logs: string[] } {
  const logs: string[] = [];
  return {
    spec,
    signal: new AbortController().signal,
    redactor: spec.redactor,
    deadline: 120_000,
    log: (m: string) => logs.push(spec.redactor.redact(m)),
    tools: { helm },
    connection: { kubeconfigContent: "apiVersion: v1\nkind: Config\nclusters: []\n", context: "kind-test" },
    logs,
    ...extra,
  } as StepContext & { logs: string[] };
}

function helmStep(spec: LoadedSpec, name: string): Extract<LoadedStep, { type: "helm" }> {
  return spec.stepsByName.get(name) as Extract<LoadedStep, { type: "helm" }>;
}

const SECRET_PASS = "s3cr3t-Pa55:word/with@chars";
const SECRET_VALUE = "value-secret-9f8e7d";

describe("helm: no secret ever goes on helm's command line", () => {
  test("auth: passwords of an HTTP repository go into the run's private repositories config (0600), not argv", async () => {
    const fake = fakeHelm();
    const spec = load(
      `  - name: app\n    helm:\n      chart: demo\n      repo: http://127.0.0.1:1/charts\n      version: 1.2.3\n      auth: { username: bob, password: "\${PASS}" }\n      values:\n        token: "\${TOK}"\n`,
      { KHOOK_SECRET_PASS: SECRET_PASS, KHOOK_SECRET_TOK: SECRET_VALUE },
    );
    const out = await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    assert.equal(out.status, "ok");
    const calls = fake.calls();
    for (const c of calls) {
      const argv = c.argv.join(" ");
      assert.ok(!argv.includes(SECRET_PASS), `password on argv: ${argv}`);
      assert.ok(!argv.includes(SECRET_VALUE), `secret value on argv: ${argv}`);
      assert.ok(!argv.includes("bob"), `even the username stays off argv: ${argv}`);
      assert.equal(c.stdin, "");
    }
    const update = calls.find((c) => c.argv[0] === "repo" && c.argv[1] === "update");
    assert.ok(update, "the private repository's index is fetched");
    assert.equal(update.repos?.mode, "600");
    const repos = JSON.parse(update.repos!.content) as {
      repositories: { name: string; url: string; username: string; password: string }[];
    };
    assert.equal(repos.repositories[0]?.password, SECRET_PASS);
    assert.equal(repos.repositories[0]?.url, "http://127.0.0.1:1/charts");
    const install = calls.find((c) => c.argv[0] === "install")!;
    assert.equal(
      install.argv[2],
      `${repos.repositories[0]!.name}/demo`,
      "the chart is referenced through the private repository entry",
    );
    assert.ok(!install.argv.includes("--repo"));
    assert.equal(install.values?.mode, "600");
    assert.deepEqual(JSON.parse(install.values!.content), { token: SECRET_VALUE });
    assert.equal(install.sessionMode, "700");
  });

  test("inline URL userinfo credentials go the same way, and never appear in the outcome or logs", async () => {
    const fake = fakeHelm();
    const spec = load(
      `  - name: app\n    helm:\n      chart: demo:1.2.3\n      repo: "http://alice:\${PASS|urlquery}@127.0.0.1:1/charts"\n`,
      { KHOOK_SECRET_PASS: SECRET_PASS },
    );
    const ctx = context(spec, fake.bin);
    const out = await helmExecutor.apply(helmStep(spec, "app"), ctx);
    for (const c of fake.calls())
      assert.ok(!c.argv.join(" ").includes(SECRET_PASS) && !c.argv.join(" ").includes(encodeURIComponent(SECRET_PASS)));
    const update = fake.calls().find((c) => c.argv[0] === "repo")!;
    const repos = JSON.parse(update.repos!.content) as {
      repositories: { url: string; username: string; password: string }[];
    };
    assert.deepEqual(
      [repos.repositories[0]?.username, repos.repositories[0]?.password, repos.repositories[0]?.url],
      ["alice", SECRET_PASS, "http://127.0.0.1:1/charts"],
    );
    assert.ok(!JSON.stringify(out).includes(SECRET_PASS));
    assert.ok(!ctx.logs.join("\n").includes(SECRET_PASS));
    assert.ok(!ctx.logs.join("\n").includes("alice:"));
  });

  test("OCI credentials go into the run's private registry config (0600), not argv and not `registry login`", async () => {
    const fake = fakeHelm();
    const spec = load(
      `  - name: app\n    helm:\n      chart: oci://127.0.0.1:5000/charts/demo:1.2.3\n      auth: { username: robot, password: "\${PASS}" }\n`,
      { KHOOK_SECRET_PASS: SECRET_PASS },
    );
    await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    const install = fake.calls().find((c) => c.argv[0] === "install")!;
    assert.ok(!install.argv.join(" ").includes(SECRET_PASS));
    assert.equal(install.argv[2], "oci://127.0.0.1:5000/charts/demo");
    assert.deepEqual(install.argv.slice(install.argv.indexOf("--version"), install.argv.indexOf("--version") + 2), [
      "--version",
      "1.2.3",
    ]);
    assert.equal(install.registry?.mode, "600");
    const reg = JSON.parse(install.registry!.content) as { auths: Record<string, { auth: string }> };
    assert.equal(Buffer.from(reg.auths["127.0.0.1:5000"]!.auth, "base64").toString(), `robot:${SECRET_PASS}`);
    assert.ok(!fake.calls().some((c) => c.argv[0] === "registry"));
  });

  test("kubeconfig content goes to a 0600 file and the context is passed explicitly", async () => {
    const fake = fakeHelm();
    const spec = load(
      `  - name: app\n    helm: { chart: ./chart }\n`,
      {},
      { "chart/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.2.3\n" },
    );
    await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    const install = fake.calls().find((c) => c.argv[0] === "install")!;
    assert.equal(install.kubeconfig?.mode, "600");
    assert.equal(install.argv[install.argv.indexOf("--kube-context") + 1], "kind-test");
  });
});

describe("helm: each run gets its own helm directories, removed at the end", () => {
  test("HELM_CACHE_HOME, HELM_CONFIG_HOME, HELM_DATA_HOME, HELM_REGISTRY_CONFIG and HELM_REPOSITORY_CONFIG are private and gone afterwards", async () => {
    const fake = fakeHelm();
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/charts", version: 1.2.3 }\n`);
    await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    const install = fake.calls().find((c) => c.argv[0] === "install")!;
    const root = path.dirname(install.env.HELM_CONFIG_HOME!);
    for (const k of [
      "HELM_CACHE_HOME",
      "HELM_CONFIG_HOME",
      "HELM_DATA_HOME",
      "HELM_REGISTRY_CONFIG",
      "HELM_REPOSITORY_CONFIG",
      "HELM_REPOSITORY_CACHE",
    ]) {
      assert.ok(install.env[k]?.startsWith(root + path.sep), `${k} is inside the session directory`);
    }
    assert.ok(!fs.existsSync(root), "the session directory is removed");
    // a bare name without credentials uses --repo: no repository entry at all
    assert.deepEqual(install.argv.slice(2, 5), ["demo", "--repo", "http://127.0.0.1:1/charts"]);
  });

  test("the session directory is removed when the step fails too", async () => {
    const fake = fakeHelm({
      history: JSON.stringify([
        { revision: 1, updated: "", status: "pending-install", chart: "demo-1.2.3", app_version: "", description: "" },
      ]),
    });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/charts", version: 1.2.3 }\n`);
    await assert.rejects(helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin)));
    const root = path.dirname(fake.calls()[1]!.env.HELM_CONFIG_HOME!);
    assert.ok(!fs.existsSync(root));
  });
});

describe("helm: install and upgrade arguments", () => {
  test("install marks the release with khook's labels; upgrade resets values (the spec is the sole source) and adds no labels", () => {
    const chart = { chart: "demo", flags: ["--repo", "http://r"] };
    const install = buildInstallArgs({
      mode: "install",
      release: "r1",
      namespace: "ns",
      chart,
      valuesFile: "/tmp/v.json",
      createNamespace: true,
      atomic: true,
      wait: true,
      timeoutMs: 90_500,
      labels: releaseOwnershipLabels("bootstrap"),
    });
    assert.deepEqual(install, [
      "install",
      "r1",
      "demo",
      "--repo",
      "http://r",
      "--namespace",
      "ns",
      "--values",
      "/tmp/v.json",
      "--create-namespace",
      "--atomic",
      "--wait",
      "--timeout",
      "91s",
      "--labels",
      "khook.io/managed-by=khook,khook.io/spec=bootstrap",
      "--output",
      "json",
    ]);
    const upgrade = buildInstallArgs({
      mode: "upgrade",
      release: "r1",
      namespace: "ns",
      chart,
      valuesFile: undefined,
      timeoutMs: 1000,
    });
    assert.ok(upgrade.includes("--reset-values"));
    assert.ok(!upgrade.includes("--labels"));
    assert.ok(!upgrade.includes("--create-namespace"));
  });

  test("the spec label is a valid label value even for long or odd spec names", () => {
    assert.equal(specLabelValue("bootstrap"), "bootstrap");
    const long = specLabelValue("x".repeat(100));
    assert.ok(long.length <= 63 && /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(long));
    assert.notEqual(specLabelValue("a".repeat(70)), specLabelValue(`${"a".repeat(69)}b`));
  });

  test("a bare name installs with --repo and --version; a local chart by its absolute path, resolved against the spec's directory", async () => {
    const fake = fakeHelm();
    const spec = load(
      `  - name: app\n    helm: { chart: ./charts/demo-1.2.3.tgz, namespace: apps }\n`,
      {},
      { "charts/demo-1.2.3.tgz": "not really" },
    );
    await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    const install = fake.calls().find((c) => c.argv[0] === "install")!;
    assert.equal(install.argv[2], path.join(spec.baseDir, "charts/demo-1.2.3.tgz"));
    assert.equal(install.argv[install.argv.indexOf("--namespace") + 1], "apps");
    assert.equal(install.argv[1], "app", "release defaults to the step name");
  });
});

describe("helm: release history decides", () => {
  const rev = (revision: number, status: string, chart = "demo-1.2.3") => ({
    revision,
    updated: "",
    status,
    chart,
    app_version: "",
    description: "",
  });

  test("a pending release fails with an explanation and the recovery command", async () => {
    for (const [history, recovery] of [
      [[rev(1, "pending-install")], "helm uninstall app --namespace default"],
      [
        [rev(1, "superseded"), rev(2, "deployed"), rev(3, "pending-upgrade")],
        "helm rollback app 2 --namespace default",
      ],
      [[rev(1, "deployed"), rev(2, "pending-rollback")], "helm rollback app 1 --namespace default"],
    ] as const) {
      const fake = fakeHelm({ history: JSON.stringify(history) });
      const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
      await assert.rejects(helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin)), (e: Error) => {
        assert.match(e.message, new RegExp(`is ${history[history.length - 1]!.status}`));
        assert.ok(e.message.includes(recovery), e.message);
        return true;
      });
      assert.ok(!fake.calls().some((c) => c.argv[0] === "install" || c.argv[0] === "upgrade"));
    }
  });

  /** A StepRecord as a run that took the record over from dead run `dead` sees it, recording what this run's helm starts. */
  const takenOverRecord = (mark: InFlightHelm | undefined, runEnded: "lease-expired" | "process-gone" | undefined) => {
    const started: Omit<InFlightHelm, "run">[] = [];
    const record: StepRecord = {
      run: { id: "this-run", host: "here", pid: process.pid },
      previousHelm: () => (mark === undefined ? undefined : { mark, runEnded }),
      helmStarted: async (m) => void started.push(m),
    };
    return { record, started };
  };
  const deadMark = (operation: "install" | "upgrade", revision: number): InFlightHelm => ({
    run: { id: "dead-run", host: "here", pid: 2 ** 22 + 1 },
    pid: 2 ** 22 + 2, // above pid_max: certainly not running
    host: "here",
    startedAt: "2026-01-01T00:00:00Z",
    until: "2999-01-01T00:00:00Z",
    release: "app",
    namespace: "default",
    operation,
    revision,
  });

  test("helm-recovers-own-dead-run (executor): a pending upgrade khook's dead run left is rolled back, said in one line, and the step upgrades", async () => {
    const fake = fakeHelm({
      history: JSON.stringify([rev(1, "deployed", "demo-1.0.0"), rev(2, "pending-upgrade")]),
      historyAfterRecovery: JSON.stringify([
        rev(1, "superseded", "demo-1.0.0"),
        rev(2, "superseded"),
        rev(3, "deployed", "demo-1.0.0"),
      ]),
    });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
    const { record, started } = takenOverRecord(deadMark("upgrade", 2), "process-gone");
    const ctx = context(spec, fake.bin, { record });
    const out = await helmExecutor.apply(helmStep(spec, "app"), ctx);
    const argv = fake.calls().map((c) => c.argv.slice(0, 3).join(" "));
    assert.ok(
      argv.indexOf("rollback app 1") >= 0 && argv.indexOf("rollback app 1") < argv.indexOf("upgrade app demo"),
      argv.join("\n"),
    );
    assert.equal(ctx.logs.filter((l) => l.startsWith("recovering release app")).length, 1, ctx.logs.join("\n"));
    assert.match(out.reason, /^upgraded to revision/);
    assert.deepEqual(
      started.map((m) => [m.operation, m.revision, m.release, m.host]),
      [["upgrade", 4, "app", "here"]],
      "this run's helm is recorded, with the revision it writes",
    );
    assert.ok(started[0]!.pid > 0);
  });

  test("helm-recovers-own-dead-run (executor): a mark whose run is not known to be gone keeps the refusal, saying why khook did not recover it", async () => {
    const fake = fakeHelm({ history: JSON.stringify([rev(1, "pending-install")]) });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
    const { record } = takenOverRecord(deadMark("install", 1), undefined);
    await assert.rejects(helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin, { record })), (e: Error) => {
      assert.ok(
        e.message.includes("recover with: helm uninstall app --namespace default — then re-run khook"),
        e.message,
      );
      assert.match(
        e.message,
        /khook did not recover revision 1 \(demo-1\.2\.3, pending-install\) itself: the khook run that started it .* is not known to be gone/,
      );
      return true;
    });
    assert.ok(!fake.calls().some((c) => ["install", "upgrade", "rollback", "uninstall"].includes(c.argv[0]!)));
  });

  test("plan never recovers: assess of a release a dead run left pending still says it is pending", async () => {
    const fake = fakeHelm({ history: JSON.stringify([rev(1, "pending-install")]), historyAfterRecovery: "" });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
    const { record } = takenOverRecord(deadMark("install", 1), "process-gone");
    await assert.rejects(
      helmExecutor.assess(helmStep(spec, "app"), context(spec, fake.bin, { record })),
      /is pending-install/,
    );
    assert.ok(!fake.calls().some((c) => c.argv[0] === "uninstall"));
  });

  test("deployed with the same chart and the same values is a no-op: no install, no upgrade", async () => {
    const fake = fakeHelm({ history: JSON.stringify([rev(1, "superseded"), rev(2, "deployed")]) });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
    const out = await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    assert.match(out.reason, /^no-op: revision 2 \(demo-1\.2\.3, deployed\)/);
    assert.ok(!fake.calls().some((c) => c.argv[0] === "install" || c.argv[0] === "upgrade"));
    const a = await helmExecutor.assess(helmStep(spec, "app"), context(spec, fake.bin));
    assert.equal(a.action, "no-op");
  });

  test("a different chart version is an upgrade, reported as `revision N (chart, status) -> name@version`", async () => {
    const fake = fakeHelm({ history: JSON.stringify([rev(3, "deployed", "demo-1.0.0")]) });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
    const a = await helmExecutor.assess(helmStep(spec, "app"), context(spec, fake.bin));
    assert.deepEqual(a, { action: "upgrade", reason: "revision 3 (demo-1.0.0, deployed) -> demo@1.2.3" });
  });

  test("a failed release is upgraded", async () => {
    const fake = fakeHelm({ history: JSON.stringify([rev(1, "failed")]) });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
    await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    assert.ok(fake.calls().some((c) => c.argv[0] === "upgrade"));
  });

  test("skipIf: installed skips an existing release, with its revision in the reason, without reading values or charts", async () => {
    const fake = fakeHelm({ history: JSON.stringify([rev(4, "deployed", "other-9.9.9")]) });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", skipIf: installed }\n`);
    const out = await helmExecutor.apply(helmStep(spec, "app"), context(spec, fake.bin));
    assert.equal(out.status, "skipped");
    assert.match(out.reason, /revision 4 \(other-9\.9\.9, deployed\)/);
    assert.deepEqual(
      fake.calls().map((c) => c.argv[0]),
      ["version", "history"],
    );
  });

  test("destroy leaves a release alone unless it carries khook's labels for this spec", async () => {
    const fake = fakeHelm({ history: JSON.stringify([rev(1, "deployed")]), list: "[]" });
    const spec = load(`  - name: app\n    helm: { chart: demo, repo: "http://127.0.0.1:1/c", version: 1.2.3 }\n`);
    const d = await helmExecutor.destroy(helmStep(spec, "app"), context(spec, fake.bin));
    assert.equal(d.status, "skipped");
    assert.match(d.reason, /was not installed by khook/);
    assert.ok(!fake.calls().some((c) => c.argv[0] === "uninstall"));
    const list = fake.calls().find((c) => c.argv[0] === "list")!;
    assert.equal(list.argv[list.argv.indexOf("--selector") + 1], "khook.io/managed-by=khook,khook.io/spec=test");

    const owned = fakeHelm({ history: JSON.stringify([rev(1, "deployed")]), list: JSON.stringify([{ name: "app" }]) });
    const d2 = await helmExecutor.destroy(helmStep(spec, "app"), context(spec, owned.bin));
    assert.equal(d2.status, "ok");
    const un = owned.calls().find((c) => c.argv[0] === "uninstall")!;
    assert.ok(un.argv.includes("--wait"));
  });

  test("delete.release of an absent release succeeds (ignoreNotFound defaults to true) and fails with ignoreNotFound: false", async () => {
    const fake = fakeHelm();
    const spec = load(
      `  - name: rm\n    delete: { release: gone, namespace: x }\n  - name: rm-strict\n    delete: { release: gone, ignoreNotFound: false }\n`,
    );
    const step = spec.stepsByName.get("rm") as Extract<LoadedStep, { type: "delete" }>;
    const out = await deleteReleaseExecutor.apply(step, context(spec, fake.bin));
    assert.equal(out.status, "ok");
    assert.match(out.reason, /release gone not found in namespace x/);
    const strict = spec.stepsByName.get("rm-strict") as Extract<LoadedStep, { type: "delete" }>;
    await assert.rejects(
      deleteReleaseExecutor.apply(strict, context(spec, fake.bin)),
      /not found in namespace default/,
    );
  });
});
