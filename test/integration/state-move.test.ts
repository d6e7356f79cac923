/**
 * A spec whose `state:` names another record than its last run's, with the real khook CLI on the
 * real cluster: the run on the new record releases the old one, destroy removes both, and a record
 * left behind never lets a step resume whose objects are gone. Each test is named after its rule.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { describe, test, type TestContext } from "node:test";
import { KubeClient } from "../../provider/kube/index.js";
import { Journal } from "../../provider/state/journal.js";
import { SecretRecordStore } from "../../provider/state/secret-store.js";
import { testCluster, withNamespace } from "../harness/index.js";
import { specFixture } from "../unit/support/engine-fixtures.js";
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
  stepOf,
} from "./support/khook-cli.js";

const RESUME = "unchanged since it succeeded in a previous run (state record)";

async function setup(t: TestContext) {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "move");
  const env = cliEnv(cluster.kubeconfig);
  const khook = (args: string[]) => runKhook(args, { env });
  /** The spec `name` with one ConfigMap step, journaling on record `record` in the test's namespace. */
  const specOn = (name: string, record: string, data = 'a: "1"') =>
    khookSpec(name, applyStep("cm", cm(`${name}-cm`, ns, data)), `state:\n  namespace: ${ns}\n  name: ${record}\n`);
  const exists = async (kind: string, name: string) =>
    (await cluster.kubectl(["get", kind, name, "-n", ns])).code === 0;
  const record = async (name: string): Promise<Record<string, unknown> | undefined> => {
    const r = await cluster.kubectl(["get", "secret", name, "-n", ns, "-o", "jsonpath={.data.record\\.json}"]);
    if (r.code !== 0) return undefined;
    return JSON.parse(Buffer.from(r.stdout.trim(), "base64").toString("utf8")) as Record<string, unknown>;
  };
  return { cluster, ns, env, khook, specOn, exists, record };
}

describe("state moves (the CLI)", { timeout: 300_000 }, () => {
  test("state-move: apply on a new state record leaves the old one, destroy removes both, and returning to the old name re-creates the objects instead of resuming", async (t) => {
    const { ns, khook, specOn, exists, record } = await setup(t);
    const { file, dir } = specDir(specOn("mover", "rec-a"));

    const first = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal((await record("rec-a"))?.["runStatus"], "succeeded");

    // The spec now journals on rec-b.
    fs.writeFileSync(file, specOn("mover", "rec-b"));
    const moved = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(
      moved.stderr,
      new RegExp(`left the state record ${ns}/rec-a for ${ns}/rec-b`),
      "the move is said in one line",
    );
    assert.ok(await record("rec-b"), "the run journals on the new record");

    const destroyed = await khook(["destroy", "-f", file, "-o", "json"]);
    assert.equal(destroyed.code, 0, destroyed.stderr);
    assert.equal(await exists("configmap", "mover-cm"), false, "destroy removed the object");
    assert.equal(await record("rec-b"), undefined, "destroy removed the current record");
    assert.equal(await record("rec-a"), undefined, `destroy removed the record the spec left:\n${destroyed.stderr}`);
    assert.match(destroyed.stderr, new RegExp(`removed the state record ${ns}/rec-a`));

    // Back to the first name: nothing may resume, the ConfigMap is created again.
    fs.writeFileSync(file, specOn("mover", "rec-a"));
    const back = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(back.code, 0, back.stderr);
    assert.notEqual(stepOf(parseRun(back), "cm").reason, RESUME);
    assert.equal(stepOf(parseRun(back), "cm").status, "ok");
    assert.equal(await exists("configmap", "mover-cm"), true, "the ConfigMap exists again");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("state-move: back on the record it left, the spec re-runs its steps there (none resumes) and leaves the other record; destroy then removes both", async (t) => {
    const { ns, khook, specOn, exists, record } = await setup(t);
    const { file, dir } = specDir(specOn("back", "rec-a"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    assert.equal((await khook(["apply", "-f", file, "-o", "json"])).code, 0);
    fs.writeFileSync(file, specOn("back", "rec-b"));
    assert.equal((await khook(["apply", "-f", file, "-o", "json"])).code, 0);
    const marked = await record("rec-a");
    assert.match(JSON.stringify(marked?.["owner"] ?? {}), /"movedTo":"[^,}]*rec-b/, "rec-a is marked as left");

    fs.writeFileSync(file, specOn("back", "rec-a"));
    const left = await khook(["status", "-f", file]);
    assert.match(
      left.stdout,
      new RegExp(`^Left: +for the state record \\(Secret "rec-b" in namespace "${ns}"\\)`, "m"),
    );
    assert.match(left.stdout, /^cm +ok .* re-run /m, "status says the next apply re-runs the step");
    const back = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(back.code, 0, back.stderr);
    assert.equal(stepOf(parseRun(back), "cm").status, "ok", "a record the spec left resumes nothing");
    assert.notEqual(stepOf(parseRun(back), "cm").reason, RESUME);
    assert.match(back.stderr, new RegExp(`left the state record ${ns}/rec-b for ${ns}/rec-a`));
    const status = await khook(["status", "-f", file]);
    assert.doesNotMatch(status.stdout, /^Left:/m, "rec-a is the spec's current record again");

    const again = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(stepOf(parseRun(again), "cm").reason, RESUME, "the record it took up resumes from now on");

    const destroyed = await khook(["destroy", "-f", file, "-o", "json"]);
    assert.equal(destroyed.code, 0, destroyed.stderr);
    assert.equal(await exists("configmap", "back-cm"), false);
    assert.equal(await record("rec-a"), undefined);
    assert.equal(await record("rec-b"), undefined, destroyed.stderr);
  });

  test("state-move: a destroy from a record that was never written removes the spec's record that still says succeeded", async (t) => {
    const { khook, specOn, exists, record } = await setup(t);
    const { file, dir } = specDir(specOn("never", "rec-a"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    assert.equal((await khook(["apply", "-f", file, "-o", "json"])).code, 0);
    fs.writeFileSync(file, specOn("never", "rec-b"));
    const destroyed = await khook(["destroy", "-f", file, "-o", "json"]);
    assert.equal(destroyed.code, 0, destroyed.stderr);
    assert.equal(await exists("configmap", "never-cm"), false);
    assert.equal(await record("rec-a"), undefined, `the stale record is removed:\n${destroyed.stderr}`);
    fs.writeFileSync(file, specOn("never", "rec-a"));
    const back = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(stepOf(parseRun(back), "cm").status, "ok");
    assert.equal(await exists("configmap", "never-cm"), true);
  });

  test("state-move: a record the spec left that a Pulumi Khook resource holds stops the move, naming both records and the way out; nothing changes", async (t) => {
    const { cluster, ns, khook, specOn, exists, record } = await setup(t);
    // The record as the Pulumi resource writes it: the journal with its owner.
    const kube = await KubeClient.connect({ kubeconfigPath: cluster.kubeconfig });
    t.after(() => kube.close());
    const owned = specFixture([], { name: "held", state: { namespace: ns, name: "rec-a" } });
    const journal = Journal.forSpec(owned, new SecretRecordStore(kube, owned.state!, "held"), {
      owner: { project: "infra", stack: "dev", token: "t-1" },
    });
    await journal.open();
    await journal.beginRun();
    assert.equal(await journal.finish("succeeded"), undefined);

    const { file, dir } = specDir(specOn("held", "rec-b"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const r = await khook(["apply", "-f", file, "-o", "json"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`${ns}/rec-a is held by a Pulumi Khook resource`));
    assert.match(r.stderr, new RegExp(`on the state record ${ns}/rec-b refused`));
    assert.match(r.stderr, /Nothing was changed/);
    assert.equal(stepOf(parseRun(r), "cm").status, "skipped");
    assert.equal(await exists("configmap", "held-cm"), false, "nothing was applied");
    assert.equal(await record("rec-b"), undefined, "no record was written");
    assert.equal((await record("rec-a"))?.["runStatus"], "succeeded", "the Pulumi resource's record is untouched");
  });

  test("state-move: a record of the spec that a running khook holds the lease on stops a destroy elsewhere, naming the holder", async (t) => {
    const { ns, env, khook, specOn, exists, cluster } = await setup(t);
    const gated = (record: string) =>
      khookSpec(
        "locked",
        `${applyStep("cm", cm("locked-cm", ns))}  - name: hold\n    needs: [cm]\n    wait:\n      for: jsonpath={.data.ready}=yes\n      on: configmap/gate\n      namespace: ${ns}\n`,
        `state:\n  namespace: ${ns}\n  name: ${record}\n`,
      );
    const kubectl = async (args: string[]) => assert.equal((await cluster.kubectl(args)).code, 0, args.join(" "));
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const { file, dir } = specDir(gated("rec-a"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const running = startKhook(["apply", "-f", file], { env });
    await outputMatches(running, /\[hold\] started/);

    const other = specDir(specOn("locked", "rec-b"));
    t.after(() => fs.rmSync(other.dir, { recursive: true, force: true }));
    const d = await khook(["destroy", "-f", other.file, "-o", "json"]);
    assert.equal(d.code, 1, d.stderr);
    assert.match(d.stderr, new RegExp(`${ns}/rec-a is locked by another khook run`));
    assert.match(d.stderr, /Nothing was changed/);
    assert.equal(await exists("configmap", "locked-cm"), true, "nothing was torn down");

    await kubectl(["patch", "configmap", "gate", "-n", ns, "--type", "merge", "-p", '{"data":{"ready":"yes"}}']);
    assert.equal((await running.done).code, 0);
  });
});
