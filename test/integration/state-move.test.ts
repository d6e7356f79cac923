/**
 * A spec whose `state:` names another record than its last run's, with the real khook CLI on the
 * real cluster: the run on the new record releases the old one, destroy removes both, and a record
 * left behind never lets a step resume whose objects are gone. Each test is named after its rule.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import { applyStep, cliEnv, cm, khookSpec, parseRun, runKhook, specDir, stepOf } from "./support/khook-cli.js";

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
  return { cluster, ns, khook, specOn, exists, record };
}

describe("state moves (the CLI)", { timeout: 300_000 }, () => {
  test("state-move: apply on a new state record leaves the old one, destroy removes both, and returning to the old name re-creates the objects instead of resuming", async (t) => {
    const { ns, khook, specOn, exists, record } = await setup(t);
    const { file, dir } = specDir(specOn("mover", "rec-a"));
    const fs = await import("node:fs");

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
});
