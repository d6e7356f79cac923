/**
 * helm: install paths against the real cluster with the real helm: every chart
 * source form installs, upgrades on a changed value, and is a no-op (no new
 * revision) on an unchanged re-run. Revisions are checked with `helm history`.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, describe, test, type TestContext } from "node:test";
import {
  packagedTestCharts,
  startChartRepo,
  startOciRegistry,
  testChartPath,
  testCluster,
  toolEnv,
  toolPath,
  withNamespace,
  type ChartRepoFixture,
  type OciRegistryFixture,
} from "../harness/index.js";
import { run } from "../harness/util.js";
import type { LoadedSpec, LoadedStep } from "../../provider/dsl/loaded.js";
import { helmExecutor } from "../../provider/steps/helm/executor.js";
import { assessDiff, executorContext, releaseOwnedBy, specFromSteps } from "./support/executors.js";

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of closers) await c();
});

type HelmStep = Extract<LoadedStep, { type: "helm" }>;

function loadStep(
  stepYaml: string,
  files: Record<string, string> = {},
  env: Record<string, string> = {},
): { spec: LoadedSpec; step: HelmStep } {
  const spec = specFromSteps(stepYaml, { name: "helm-it", files, env });
  return { spec, step: spec.steps[0] as HelmStep };
}

const context = (spec: LoadedSpec) => executorContext({ spec });

interface Revision {
  revision: number;
  status: string;
  chart: string;
  description: string;
}

async function history(release: string, ns: string): Promise<Revision[]> {
  const cluster = await testCluster();
  const r = await run(
    toolPath("helm"),
    ["history", release, "-n", ns, "-o", "json", "--kubeconfig", cluster.kubeconfig],
    { env: toolEnv() },
  );
  if (r.code !== 0 && /not found/.test(r.stderr)) return [];
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Revision[];
}

async function configMessage(ns: string, name: string): Promise<string> {
  const cluster = await testCluster();
  const r = await cluster.kubectl(["-n", ns, "get", "configmap", name, "-o", "jsonpath={.data.message}"]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/** `chartYaml` is the helm block minus values; returns the step yaml with `message` set. */
function helmStepYaml(name: string, ns: string, chartYaml: string, message: string): string {
  const indented = chartYaml
    .trim()
    .split("\n")
    .map((l) => `      ${l}`)
    .join("\n");
  return `  - name: ${name}\n    helm:\n${indented}\n      namespace: ${ns}\n      values:\n        message: ${JSON.stringify(message)}\n        extraName: ${name}-extra\n`;
}

/**
 * The install path every source form must follow: install (revision 1),
 * upgrade on a changed value (revision 2), no-op on an unchanged re-run (still 2).
 */
async function installUpgradeNoop(
  t: TestContext,
  chartYaml: string,
  files: Record<string, string> = {},
  env: Record<string, string> = {},
): Promise<void> {
  const ns = await withNamespace(t, "helm-src");
  const release = "demo";

  const first = loadStep(helmStepYaml(release, ns, chartYaml, "one"), files, env);
  const plan1 = await helmExecutor.assess(first.step, await context(first.spec));
  assert.equal(plan1.action, "install", plan1.reason);
  assert.match(plan1.reason, /^not installed -> khook-demo@0\.1\.0$/);
  const out1 = await helmExecutor.apply(first.step, await context(first.spec));
  assert.equal(out1.status, "ok");
  assert.match(out1.reason, /^installed revision 1 \(khook-demo-0\.1\.0, deployed\)/);
  assert.equal(
    await releaseOwnedBy(release, ns, first.spec.name),
    true,
    "the release khook installed carries its ownership labels",
  );
  assert.deepEqual(
    (await history(release, ns)).map((h) => [h.revision, h.status]),
    [[1, "deployed"]],
  );
  assert.equal(await configMessage(ns, `${release}-config`), "one");

  const changed = loadStep(helmStepYaml(release, ns, chartYaml, "two"), files, env);
  const plan2 = await helmExecutor.assess(changed.step, await context(changed.spec));
  assert.deepEqual(plan2, {
    action: "upgrade",
    reason: "revision 1 (khook-demo-0.1.0, deployed) -> khook-demo@0.1.0 (values changed)",
  });
  const out2 = await helmExecutor.apply(changed.step, await context(changed.spec));
  assert.match(out2.reason, /^upgraded to revision 2 \(khook-demo-0\.1\.0, deployed\)/);
  assert.equal(await configMessage(ns, `${release}-config`), "two");

  const again = loadStep(helmStepYaml(release, ns, chartYaml, "two"), files, env);
  const plan3 = await helmExecutor.assess(again.step, await context(again.spec));
  assert.equal(plan3.action, "no-op", plan3.reason);
  const out3 = await helmExecutor.apply(again.step, await context(again.spec));
  assert.match(out3.reason, /^no-op: revision 2 \(khook-demo-0\.1\.0, deployed\) is up to date/);
  assert.deepEqual(
    (await history(release, ns)).map((h) => [h.revision, h.status]),
    [
      [1, "superseded"],
      [2, "deployed"],
    ],
    "an unchanged re-run creates no new revision",
  );
}

let repo: ChartRepoFixture | undefined;
let authRepo: ChartRepoFixture | undefined;
let oci: OciRegistryFixture | undefined;
const REPO_AUTH = { username: "reader", password: "repo-pass-4d1c" };
const OCI_AUTH = { username: "robot", password: "oci-pass-77ab" };

async function chartRepo(): Promise<ChartRepoFixture> {
  if (!repo) {
    repo = await startChartRepo();
    closers.push(() => repo!.close());
  }
  return repo;
}
async function privateChartRepo(): Promise<ChartRepoFixture> {
  if (!authRepo) {
    authRepo = await startChartRepo({ basicAuth: REPO_AUTH });
    closers.push(() => authRepo!.close());
  }
  return authRepo;
}
async function registry(): Promise<OciRegistryFixture> {
  if (!oci) {
    oci = await startOciRegistry(OCI_AUTH);
    closers.push(() => oci!.close());
  }
  return oci;
}

/** The manifest digest of an OCI chart, asked from the registry itself. */
function ociDigest(reg: OciRegistryFixture, repoPath: string, tag: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `http://${reg.host}/v2/${repoPath}/manifests/${tag}`,
      {
        method: "HEAD",
        headers: {
          authorization: `Basic ${Buffer.from(`${reg.username}:${reg.password}`).toString("base64")}`,
          accept: "application/vnd.oci.image.manifest.v1+json",
        },
      },
      (res) => {
        res.resume();
        const d = res.headers["docker-content-digest"];
        if (typeof d === "string") resolve(d);
        else reject(new Error(`no digest for ${repoPath}:${tag} (HTTP ${res.statusCode})`));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("helm: install, upgrade on a changed value, no-op on an unchanged re-run", () => {
  test("from a local chart directory (relative to the spec file)", async (t) => {
    const chart = testChartPath("khook-demo");
    await installUpgradeNoop(
      t,
      `chart: ./charts/khook-demo`,
      Object.fromEntries(
        walk(chart).map((f) => [`charts/khook-demo/${f}`, fs.readFileSync(path.join(chart, f), "utf8")]),
      ),
    );
  });

  test("from a local .tgz package", async (t) => {
    const dir = await packagedTestCharts();
    await installUpgradeNoop(t, `chart: ${path.join(dir, "khook-demo-0.1.0.tgz")}`);
  });

  test("from an HTTP repository by bare name, version pinned", async (t) => {
    const r = await chartRepo();
    await installUpgradeNoop(t, `chart: khook-demo\nrepo: ${r.url}\nversion: "0.1.0"`);
  });

  test("from an HTTP repository with the inline name:version sugar, and with no version (latest)", async (t) => {
    const r = await chartRepo();
    await installUpgradeNoop(t, `chart: khook-demo:0.1.0\nrepo: ${r.url}`);
    await installUpgradeNoop(t, `chart: khook-demo\nrepo: ${r.url}`);
  });

  test("from an HTTP repository with basic auth in an auth: block, from a secret variable", async (t) => {
    const r = await privateChartRepo();
    await installUpgradeNoop(
      t,
      `chart: khook-demo\nrepo: ${r.url}\nversion: "0.1.0"\nauth:\n  username: ${REPO_AUTH.username}\n  password: \${REPO_PASS}`,
      {},
      { KHOOK_SECRET_REPO_PASS: REPO_AUTH.password },
    );
    const authed = r.requests.filter((q) => q.headers.authorization !== undefined);
    assert.ok(
      authed.some((q) => q.path === "/index.yaml"),
      "the index was fetched with credentials",
    );
    assert.ok(
      authed.some((q) => q.path.endsWith(".tgz")),
      "the chart was fetched with credentials",
    );
  });

  test("from an HTTP repository with basic auth as URL userinfo", async (t) => {
    const r = await privateChartRepo();
    const url = r.url.replace("http://", `http://${REPO_AUTH.username}:${REPO_AUTH.password}@`);
    await installUpgradeNoop(t, `chart: khook-demo\nrepo: ${url}\nversion: "0.1.0"`);
  });

  test("from an OCI registry with basic auth: inline :tag", async (t) => {
    const reg = await registry();
    await installUpgradeNoop(
      t,
      `chart: ${reg.url}/khook-demo:0.1.0\nauth: { username: ${OCI_AUTH.username}, password: "\${OCI_PASS}" }`,
      {},
      { KHOOK_SECRET_OCI_PASS: OCI_AUTH.password },
    );
  });

  test("from an OCI registry with basic auth: version: field, and @digest", async (t) => {
    const reg = await registry();
    await installUpgradeNoop(
      t,
      `chart: ${reg.url}/khook-demo\nversion: "0.1.0"\nauth: { username: ${OCI_AUTH.username}, password: ${OCI_AUTH.password} }`,
    );
    const digest = await ociDigest(reg, "charts/khook-demo", "0.1.0");
    await installUpgradeNoop(
      t,
      `chart: ${reg.url}/khook-demo@${digest}\nauth: { username: ${OCI_AUTH.username}, password: ${OCI_AUTH.password} }`,
    );
  });

  test("an OCI registry rejects wrong credentials, and the error says so without the password", async (t) => {
    const reg = await registry();
    const ns = await withNamespace(t, "helm-src");
    const { spec, step } = loadStep(
      helmStepYaml(
        "demo",
        ns,
        `chart: ${reg.url}/khook-demo:0.1.0\nauth: { username: robot, password: wrong-pass-123 }`,
        "x",
      ),
    );
    await assert.rejects(helmExecutor.apply(step, await context(spec)), (e: Error) => {
      assert.match(e.message, /401|unauthorized|authentication/i);
      assert.ok(!e.message.includes("wrong-pass-123"), e.message);
      return true;
    });
  });
});

describe("helm: plan --diff shows the manifest diff from a server-side dry-run upgrade", () => {
  test("against the deployed release's manifest; empty side for a new release", async (t) => {
    const ns = await withNamespace(t, "helm-diff");
    const chart = `chart: ${testChartPath("khook-demo")}`;
    const first = loadStep(helmStepYaml("demo", ns, chart, "one"));
    const fresh = await assessDiff(helmExecutor, first.step, await context(first.spec));
    assert.match(
      fresh,
      new RegExp(`^--- ${ns}/demo \\(not installed\\)\n\\+\\+\\+ ${ns}/demo khook-demo@0\\.1\\.0 \\(server dry-run\\)`),
    );
    assert.match(fresh, /^\+ {2}message: "one"$/m);
    await helmExecutor.apply(first.step, await context(first.spec));

    const changed = loadStep(helmStepYaml("demo", ns, chart, "two"));
    const d = await assessDiff(helmExecutor, changed.step, await context(changed.spec));
    assert.match(d, new RegExp(`^--- ${ns}/demo revision 1 \\(khook-demo-0\\.1\\.0, deployed\\)$`, "m"));
    assert.match(d, /^- {2}message: "one"$/m);
    assert.match(d, /^\+ {2}message: "two"$/m);
    assert.equal((await history("demo", ns)).length, 1, "a diff changes nothing");

    const same = loadStep(helmStepYaml("demo", ns, chart, "one"));
    assert.equal(await assessDiff(helmExecutor, same.step, await context(same.spec)), "");
  });

  test("a local chart whose content changed without a version bump is an upgrade, not a no-op", async (t) => {
    const ns = await withNamespace(t, "helm-local");
    const src = testChartPath("khook-demo");
    const files = Object.fromEntries(walk(src).map((f) => [`chart/${f}`, fs.readFileSync(path.join(src, f), "utf8")]));
    const a = loadStep(helmStepYaml("demo", ns, "chart: ./chart", "one"), files);
    await helmExecutor.apply(a.step, await context(a.spec));
    const cm = "chart/templates/configmap.yaml";
    const b = loadStep(helmStepYaml("demo", ns, "chart: ./chart", "one"), {
      ...files,
      [cm]: files[cm]!.replace("chartVersion:", 'edited: "yes"\n  chartVersion:'),
    });
    const plan = await helmExecutor.assess(b.step, await context(b.spec));
    assert.deepEqual(plan, {
      action: "upgrade",
      reason: "revision 1 (khook-demo-0.1.0, deployed) -> khook-demo@0.1.0 (chart content changed)",
    });
  });
});

function walk(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = rel === "" ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...walk(root, r));
    else out.push(r);
  }
  return out;
}
