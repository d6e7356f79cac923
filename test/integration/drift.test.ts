/**
 * Drift on the real cluster, through the real CLI: `khook plan --live` names what changed by hand
 * since the last apply (a `helm rollback`, a ConfigMap edited and one deleted, a release
 * uninstalled, a Secret edited: its key named, never its value), and what controllers set is not
 * drift; `khook apply --repair` re-runs exactly the drifted steps, as the record and helm's
 * revision counts show. The Pulumi shells: pulumi-drift.test.ts.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { helmEnv, testChartPath, testCluster, toolPath, withNamespace } from "../harness/index.js";
import { parseRecord, type StateRecord } from "../../provider/state/record.js";
import { cliEnv, khookSpec, runKhook, specDir, type CliResult } from "./support/khook-cli.js";
import { editByHand, releaseRevisions, type HandTools } from "./support/drift-edits.js";

interface DriftJson {
  steps: {
    name: string;
    drift: "in-sync" | "drifted" | "not-checkable";
    reason: string;
    decidedBy: string;
    drifted?: { ref: string; change: string; fields?: string[] }[];
  }[];
  counts: Record<string, number>;
  lists: number;
  exitCode: number;
}

/** The spec's secret, the value set by hand, and their base64: none may appear in anything khook prints. */
const SPEC_PASSWORD = "spec-pw-Zq81xLm";
const HAND_PASSWORD = "hand-pw-Kv27nWd";
const FORBIDDEN = [SPEC_PASSWORD, HAND_PASSWORD].flatMap((v) => [v, Buffer.from(v).toString("base64")]);

function stepsYaml(ns: string, greeting: string): string {
  const chart = testChartPath("khook-test-config");
  return `  - name: settings
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: settings }
            data: { color: blue, size: large }
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: extra }
            data: { note: keep }
  - name: ssa
    apply:
      namespace: ${ns}
      serverSide: true
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: ssa }
            data: { mode: applied, keep: "yes" }
  - name: creds
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
            apiVersion: v1
            kind: Secret
            metadata: { name: creds }
            stringData: { password: "\${PASSWORD}", user: admin }
  - name: web
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
            apiVersion: apps/v1
            kind: Deployment
            metadata: { name: web }
            spec:
              replicas: 1
              selector: { matchLabels: { app: web } }
              template:
                metadata: { labels: { app: web } }
                spec: { containers: [ { name: web, image: "registry.k8s.io/pause:3.10" } ] }
            ---
            apiVersion: v1
            kind: Service
            metadata: { name: web }
            spec: { selector: { app: web }, ports: [ { port: 80 } ] }
  - name: cfg
    helm:
      chart: ${chart}
      release: cfg
      namespace: ${ns}
      values: { data: { greeting: ${greeting} } }
  - name: other
    helm:
      chart: ${chart}
      release: other
      namespace: ${ns}
  - name: steady
    helm:
      chart: ${chart}
      release: steady
      namespace: ${ns}
  - name: ran
    job: { image: busybox, namespace: ${ns}, command: [ "true" ] }
`;
}

async function record(kubectl: (a: string[]) => Promise<CliResult>, ns: string, name: string): Promise<StateRecord> {
  const r = await kubectl(["get", "secret", `khook-state-${name}`, "-n", ns, "-o", "jsonpath={.data.record\\.json}"]);
  assert.equal(r.code, 0, r.stderr);
  const parsed = parseRecord(Buffer.from(r.stdout, "base64").toString("utf8"));
  assert.ok(parsed.ok, "the record parses");
  return parsed.record;
}

test(
  "drift: plan --live names what changed by hand (helm rollback, ConfigMap edited and deleted, release uninstalled, Secret key), not what controllers set; apply --repair re-runs exactly those steps",
  { timeout: 600_000 },
  async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "drift");
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "khook-drift-helm-"));
    t.after(() => fs.rmSync(home, { recursive: true, force: true }));
    const helmIn = { ...helmEnv(home), KUBECONFIG: cluster.kubeconfig };
    const env = cliEnv(cluster.kubeconfig, { KHOOK_HELM: toolPath("helm"), KHOOK_SECRET_PASSWORD: SPEC_PASSWORD });
    const name = "drift";
    const spec = (greeting: string): string => khookSpec(name, stepsYaml(ns, greeting), `state:\n  namespace: ${ns}\n`);
    const dir = specDir(spec("one"));
    const outputs: string[] = [];
    const khook = async (args: string[]): Promise<CliResult> => {
      const r = await runKhook(args, { env });
      outputs.push(r.stdout, r.stderr);
      return r;
    };
    const kubectl = (args: string[]) => cluster.kubectl(args);
    const hand: HandTools = { kubectl, helmEnv: helmIn, namespace: ns };
    const revisions = (release: string): Promise<number[]> => releaseRevisions(hand, release);
    const live = async (extra: string[] = []): Promise<{ r: CliResult; json: DriftJson }> => {
      const r = await khook(["plan", "--live", "-f", dir.file, "-o", "json", ...extra]);
      return { r, json: JSON.parse(r.stdout) as DriftJson };
    };

    // cfg at revision 1 (greeting one), then khook upgrades it to revision 2 (greeting two).
    let applied = await khook(["apply", "-f", dir.file]);
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    fs.writeFileSync(dir.file, spec("two"));
    applied = await khook(["apply", "-f", dir.file]);
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    assert.deepEqual(await revisions("cfg"), [1, 2]);
    assert.equal(
      (await record(kubectl, ns, name)).steps["cfg"]!.baseline?.revision,
      2,
      "the record keeps the revision",
    );

    // Nothing changed by hand yet: everything that can be checked is in sync, controllers notwithstanding.
    const clean = await live(["--exit-code"]);
    assert.equal(clean.r.code, 0, clean.r.stdout + clean.r.stderr);
    const cleanBy = new Map(clean.json.steps.map((s) => [s.name, s]));
    for (const step of ["settings", "ssa", "creds", "web", "cfg", "other", "steady", "ran"])
      assert.equal(cleanBy.get(step)!.drift, "in-sync", `${step}: ${cleanBy.get(step)!.reason}`);

    // controller-fields-not-drift: the Deployment controller's revision annotation, the Service's cluster IP,
    // defaulted fields, and a label and an annotation another manager sets are not drift.
    const annotated = await kubectl([
      "get",
      "deployment",
      "web",
      "-n",
      ns,
      "-o",
      "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}",
    ]);
    assert.equal(annotated.stdout, "1", "the deployment controller has set its annotation");
    assert.match((await kubectl(["get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.clusterIP}"])).stdout, /\d/);
    await kubectl(["annotate", "service", "web", "-n", ns, "example.com/owner=ops"]);
    // A server-side applied object: another manager's label is not drift, a field khook sent changed by hand is.
    await kubectl(["label", "configmap", "ssa", "-n", ns, "team=payments"]);
    await kubectl(["patch", "configmap", "ssa", "-n", ns, "--type", "merge", "-p", '{"data":{"mode":"hand"}}']);

    // The hand edits (and another manager's label on the Deployment).
    await editByHand(hand, HAND_PASSWORD);
    await kubectl(["delete", "job", "ran", "-n", ns, "--wait=true"]);
    const before = await record(kubectl, ns, name);
    const secretRv = (
      await kubectl(["get", "secret", `khook-state-${name}`, "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"])
    ).stdout;

    const drifted = await live(["--exit-code"]);
    assert.equal(drifted.r.code, 3, `--exit-code exits 3 when a step drifted: ${drifted.r.stderr}`);
    assert.equal(drifted.json.exitCode, 3);
    const by = new Map(drifted.json.steps.map((s) => [s.name, s]));
    assert.deepEqual(by.get("settings")!.drifted, [
      { ref: `configmap/settings -n ${ns}`, change: "changed", fields: ["data.color"] },
      { ref: `configmap/extra -n ${ns}`, change: "gone" },
    ]);
    assert.deepEqual(by.get("ssa")!.drifted, [
      { ref: `configmap/ssa -n ${ns}`, change: "changed", fields: ["data.mode"] },
    ]);
    assert.deepEqual(by.get("creds")!.drifted, [
      { ref: `secret/creds -n ${ns}`, change: "changed", fields: ["data.password"] },
    ]);
    assert.equal(
      by.get("web")!.drift,
      "in-sync",
      `controller and other managers' fields are not drift: ${by.get("web")!.reason}`,
    );
    assert.equal(by.get("cfg")!.drift, "drifted");
    assert.deepEqual(by.get("cfg")!.drifted, [
      { ref: `release cfg -n ${ns}`, change: "revision", fields: ["values.data.greeting"] },
    ]);
    assert.match(
      by.get("cfg")!.reason,
      /is at revision 3 .*\("Rollback to 1"\), not at revision 2 that khook left: values differ at data\.greeting/,
    );
    assert.deepEqual(by.get("other")!.drifted, [{ ref: `release other -n ${ns}`, change: "uninstalled" }]);
    assert.equal(by.get("steady")!.drift, "in-sync");
    assert.equal(by.get("ran")!.drift, "in-sync", "a Job gone is not drift");
    assert.match(by.get("ran")!.reason, /gone since/);
    assert.ok(
      drifted.json.lists <= 8,
      `a list per kind and namespace, not a GET per object: ${drifted.json.lists} lists`,
    );

    const text = await khook(["plan", "--live", "-f", dir.file]);
    assert.equal(text.code, 0, "without --exit-code, drift is not a failure");
    assert.match(
      text.stdout,
      /settings\s+apply\s+drifted\s+configmap\/settings -n \S+ changed \(data\.color\); configmap\/extra -n \S+ is gone/,
    );
    assert.match(text.stdout, /creds\s+apply\s+drifted\s+secret\/creds -n \S+ changed \(data\.password\)/);
    assert.match(text.stdout, /Live check: 5 drifted, \d+ in sync, \d+ not checkable .* Nothing was changed\./);
    assert.match(text.stdout, /Run khook apply --repair -f /);
    assert.equal(
      (await kubectl(["get", "secret", `khook-state-${name}`, "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"]))
        .stdout,
      secretRv,
      "plan --live writes nothing, not even the record",
    );

    // repair-only-drifted: exactly settings, creds, cfg and other re-run.
    const repair = await khook(["apply", "--repair", "-f", dir.file, "-o", "json"]);
    assert.equal(repair.code, 0, repair.stdout + repair.stderr);
    const repaired = JSON.parse(repair.stdout) as {
      repair: { repaired: string[] };
      steps: { name: string; status: string }[];
    };
    assert.deepEqual(repaired.repair.repaired, ["settings", "ssa", "creds", "cfg", "other"]);
    assert.deepEqual(
      repaired.steps.map((s) => `${s.name}=${s.status}`),
      ["settings=ok", "ssa=ok", "creds=ok", "cfg=ok", "other=ok"],
    );
    const after = await record(kubectl, ns, name);
    assert.deepEqual(after.repair?.steps, ["settings", "ssa", "creds", "cfg", "other"], "the record notes the repair");
    for (const untouched of ["web", "steady", "ran"])
      assert.deepEqual(after.steps[untouched], before.steps[untouched], `${untouched}'s entry is untouched`);
    for (const again of ["settings", "ssa", "creds", "cfg", "other"])
      assert.notEqual(after.steps[again]!.finishedAt, before.steps[again]!.finishedAt, `${again} re-ran`);
    assert.deepEqual(await revisions("cfg"), [1, 2, 3, 4], "cfg: one upgrade by the repair");
    assert.deepEqual(await revisions("other"), [1], "other: installed again");
    assert.deepEqual(await revisions("steady"), [1], "steady: not touched");
    assert.equal((await kubectl(["get", "job", "ran", "-n", ns])).code === 0, false, "the Job is not run again");
    assert.equal(
      (await kubectl(["get", "configmap", "settings", "-n", ns, "-o", "jsonpath={.data.color}"])).stdout,
      "blue",
    );
    assert.equal(
      (await kubectl(["get", "configmap", "ssa", "-n", ns, "-o", "jsonpath={.data.mode}"])).stdout,
      "applied",
    );
    assert.equal(
      (await kubectl(["get", "configmap", "extra", "-n", ns, "-o", "jsonpath={.data.note}"])).stdout,
      "keep",
    );
    const pw = (await kubectl(["get", "secret", "creds", "-n", ns, "-o", "jsonpath={.data.password}"])).stdout;
    assert.equal(Buffer.from(pw, "base64").toString("utf8"), SPEC_PASSWORD, "the Secret holds the spec's value again");

    const status = await khook(["status", "-f", dir.file]);
    assert.match(status.stdout, /Repaired: settings, ssa, creds, cfg, other \(apply --repair started /);

    // Everything holds again; a repair with nothing to do runs nothing and writes nothing.
    const healed = await live(["--exit-code"]);
    assert.equal(healed.r.code, 0, healed.r.stdout);
    assert.equal(healed.json.counts["drifted"], 0);
    const rv = (
      await kubectl(["get", "secret", `khook-state-${name}`, "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"])
    ).stdout;
    const noop = await khook(["apply", "--repair", "-f", dir.file]);
    assert.equal(noop.code, 0, noop.stderr);
    assert.match(noop.stdout, /Nothing drifted: nothing to repair\./);
    assert.equal(
      (await kubectl(["get", "secret", `khook-state-${name}`, "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"]))
        .stdout,
      rv,
    );

    // secret-drift-names-keys: no value of the Secret, the spec's or the one set by hand, in anything khook printed.
    const all = outputs.join("\n");
    for (const v of FORBIDDEN) assert.ok(!all.includes(v), `${v} leaked into khook's output`);
  },
);

test("plan --live: invalid combinations and a spec without a record are invalid input (exit 2), touching nothing", async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, "drift-flags");
  const env = cliEnv(cluster.kubeconfig);
  const steps = `  - name: a\n    wait: { for: delete, on: configmap/nothing, namespace: ${ns} }\n`;
  const stateless = specDir(khookSpec("drift-flags", steps));
  for (const [args, message] of [
    [["plan", "--live", "-f", stateless.file], /has no enabled state: block/],
    [["apply", "--repair", "-f", stateless.file], /has no enabled state: block/],
    [["plan", "--live", "--offline", "-f", stateless.file], /cannot be combined with --offline/],
    [["plan", "--live", "--diff", "-f", stateless.file], /cannot be combined with --diff/],
    [["plan", "--exit-code", "-f", stateless.file], /--exit-code goes with --live/],
    [["destroy", "--repair", "-f", stateless.file], /Unknown option '--repair'/],
  ] as const) {
    const r = await runKhook([...args], { env });
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message);
  }
});
