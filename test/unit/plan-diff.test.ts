/**
 * `khook plan --diff` (operations.planOperation): each step's diff comes from
 * the dry run its assess already did, in the same parallel pass, so every
 * object is dry-run once and every helm dry run happens once. The cluster is
 * the recording fake, helm a recording fake executable; test/integration/plan.test.ts,
 * helm-install.test.ts and secret-leak.test.ts run the same path for real.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, test } from "node:test";
import { planOnline } from "../../provider/engine/plan.js";
import type { KubeClient } from "../../provider/kube/index.js";
import { planOperation } from "../../provider/operations.js";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { applyExecutor } from "../../provider/steps/apply/executor.js";
import { patchExecutor } from "../../provider/steps/patch/executor.js";
import { noExtras, specFixture, StubExecutors } from "./support/engine-fixtures.js";
import { contextFor, stepOf } from "./support/executor-context.js";
import { fakeHelm } from "./support/fake-helm.js";
import { FakeKube } from "./support/fake-kube.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

/** The fake cluster as planOperation's client: it also answers the reachability probe (GET /version), and counts target lookups. */
class ReachableFakeKube extends FakeKube {
  targetsResolved = 0;

  async request(): Promise<unknown> {
    return { gitVersion: "v1.34.0" };
  }

  override resolveTarget(...args: Parameters<FakeKube["resolveTarget"]>): ReturnType<FakeKube["resolveTarget"]> {
    this.targetsResolved++;
    return super.resolveTarget(...args);
  }
}

function plan(spec: LoadedSpec, kube: FakeKube, opts: { diff: boolean; helm?: string }) {
  // planOperation takes the client it would have connected; the fake stands in for it (only its KubeApi side and the probe are used).
  return planOperation(spec, {
    target: {},
    client: kube as unknown as KubeClient,
    diff: opts.diff,
    ...(opts.helm !== undefined ? { tools: { helm: opts.helm } } : {}),
  });
}

const TOKEN = "tok3n-pl4n-d1ff";
const CMS =
  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: new, token: '${TOKEN}'}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n";

function load(stepsYaml: string, files: Record<string, string> = {}): LoadedSpec {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml), ...files });
  return loadSpec({ file: path.join(dir, "spec.yaml"), env: { KHOOK_SECRET_TOKEN: TOKEN } });
}

const spec = load(
  `  - name: cms\n    apply: { namespace: apps, manifests: [ { inline: ${JSON.stringify(CMS)} } ] }\n` +
    `  - name: scale\n    patch: { target: deployment/web, namespace: apps, patch: { spec: { replicas: 3 } } }\n`,
);

function seeded(): ReachableFakeKube {
  const kube = new ReachableFakeKube();
  kube.seed({ apiVersion: "v1", kind: "Namespace", metadata: { name: "apps" } });
  kube.seed({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "a", namespace: "apps" },
    data: { k: "old", token: "old-value" },
  });
  kube.seed({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "apps" },
    spec: { replicas: 1 },
  });
  return kube;
}

describe("plan-diff-one-dry-run: plan --diff dry-runs each object once, in assess", () => {
  test("apply and patch steps: one dry-run request per object, and each step's diff from it", async () => {
    const kube = seeded();
    const report = await plan(spec, kube, { diff: true });
    assert.deepEqual([...kube.dryRuns].sort(), [
      "apply configmap/a -n apps",
      "apply configmap/b -n apps",
      "patch(strategic) deployment/web -n apps",
    ]);
    assert.deepEqual(kube.writes, [], "a plan writes nothing");
    assert.deepEqual(
      report.steps.map((s) => [s.name, s.action]),
      [
        ["cms", "create"],
        ["scale", "configure"],
      ],
    );
    const cms = report.diffs.get("cms") ?? "";
    assert.match(cms, /^-\s+k: old$/m);
    assert.match(cms, /^\+\s+k: new$/m);
    assert.ok(!cms.includes(TOKEN), "the diff goes through the run's redactor");
    assert.match(report.diffs.get("scale") ?? "", /^-\s+replicas: 1\n\+\s+replicas: 3$/m);
  });

  test("without --diff the same dry runs decide the plan, and no diff text is computed", async () => {
    const kube = seeded();
    const report = await plan(spec, kube, { diff: false });
    assert.equal(kube.dryRuns.length, 3);
    assert.equal(report.diffs.size, 0);
    assert.ok(report.steps.every((s) => !("diff" in s)));
    const ctx = contextFor(spec, seeded());
    for (const a of [
      await applyExecutor.assess(stepOf(spec, "cms", "apply"), ctx),
      await patchExecutor.assess(stepOf(spec, "scale", "patch"), ctx),
    ]) {
      assert.equal("diff" in a, false, "assess not asked for a diff returns none");
    }
  });

  test("a step whose assess fails shows why in its diff, without a second attempt", async () => {
    const kube = seeded();
    const missing = load(
      `  - name: scale\n    patch: { target: deployment/gone, namespace: apps, patch: { spec: { replicas: 3 } } }\n`,
    );
    const report = await plan(missing, kube, { diff: true });
    const step = report.steps[0]!;
    assert.equal(step.decidedBy, "error");
    assert.match(step.error ?? "", /deployment\/gone in namespace apps does not exist/);
    assert.equal(report.diffs.get("scale"), `# cannot compute the diff: ${step.error}`);
    assert.equal(kube.targetsResolved, 1, "the failed assess is not repeated for the diff");
  });
});

describe("plan --diff: the diffs assess returns, as the plan shows them", () => {
  test("redacted after every assess: a secret a later step registers is masked in an earlier step's diff", async () => {
    const stubs = new StubExecutors()
      .on("a", () => ({ action: "configure", reason: "changed", diff: "-token: rotated-s3cret\n" }))
      .on("b", ({ ctx }) => {
        ctx.redactor.add("rotated-s3cret");
        return { action: "create", reason: "absent" };
      });
    const plan = await planOnline(
      specFixture([{ name: "a" }, { name: "b", needs: ["a"] }]),
      stubs.map,
      noExtras,
      undefined,
      { parallelism: 1, diff: true },
    );
    assert.deepEqual(
      stubs.calls.map((c) => c.step.name),
      ["a", "b"],
    );
    assert.equal(plan[0]?.diff, "-token: ***\n");
    assert.equal("diff" in plan[1]!, false, "an executor that returns no diff shows none");
  });

  test("a step that changes nothing, or whose action was decided without assess, shows no diff; without diff: true none at all", async () => {
    const steps = [
      { name: "same" },
      { name: "skipped" },
      { name: "excluded", when: "false", whenHolds: false },
      { name: "changes" },
    ];
    const stubs = new StubExecutors()
      .on("same", () => ({ action: "no-op", reason: "up to date", diff: "" }))
      .on("skipped", () => ({ action: "skip", reason: "skipIf", diff: "" }))
      .on("changes", () => ({ action: "create", reason: "absent", diff: "+a\n" }));
    const withDiff = await planOnline(specFixture(steps), stubs.map, noExtras, undefined, { diff: true });
    assert.deepEqual(
      withDiff.map((p) => p.diff),
      [undefined, undefined, undefined, "+a\n"],
    );
    const without = await planOnline(specFixture(steps), stubs.map, noExtras);
    assert.ok(without.every((p) => !("diff" in p)));
  });
});

/** helm's storage Secret for revision `version` of `release` (base64 of gzip of the release JSON, as helm writes it). */
function releaseSecret(release: string, namespace: string, version: number, chart: { name: string; version: string }) {
  const json = JSON.stringify({
    name: release,
    version,
    info: { status: "deployed" },
    chart: { metadata: chart },
    config: {},
  });
  const helmEncoded = gzipSync(Buffer.from(json)).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "helm.sh/release.v1",
    metadata: {
      name: `sh.helm.release.v1.${release}.v${version}`,
      namespace,
      labels: { owner: "helm", name: release },
    },
    data: { release: Buffer.from(helmEncoded).toString("base64") },
  };
}

describe("plan-diff-one-dry-run: a helm step runs each helm command once", () => {
  test("a local chart whose content changed: one `helm get manifest` and one dry-run upgrade decide the upgrade and give its diff", async () => {
    const deployed =
      "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old-content\n";
    const helm = fakeHelm({ manifest: deployed });
    const chartSpec = load(`  - name: app\n    helm: { chart: ./chart, namespace: apps }\n`, {
      "chart/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.2.3\n",
    });
    const kube = seeded();
    kube.seed(releaseSecret("app", "apps", 1, { name: "demo", version: "1.2.3" }));
    const report = await plan(chartSpec, kube, { diff: true, helm: helm.bin });
    assert.deepEqual(
      report.steps.map((s) => [s.action, s.reason]),
      [["upgrade", "revision 1 (demo-1.2.3, deployed) -> demo@1.2.3 (chart content changed)"]],
    );
    const commands = helm.calls().map((c) => c.argv.slice(0, 2).join(" "));
    assert.deepEqual(commands.filter((c) => c.startsWith("upgrade")).length, 1, commands.join("\n"));
    assert.ok(
      helm
        .calls()
        .find((c) => c.argv[0] === "upgrade")!
        .argv.some((a) => a.startsWith("--dry-run")),
      "the upgrade is a dry run",
    );
    assert.deepEqual(commands.filter((c) => c === "get manifest").length, 1, commands.join("\n"));
    assert.match(report.diffs.get("app") ?? "", /^-\s+name: old-content$/m);
  });
});
