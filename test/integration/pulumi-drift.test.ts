/**
 * `refresh: live` with the real pulumi CLI, on both shells (the dynamic resource and the native
 * provider): the default refresh reads the record and sees nothing of what changed by hand; a
 * live refresh writes the drifted steps into `drift` (a `helm rollback`, a ConfigMap edited and
 * one deleted, a release uninstalled, a Secret edited: its key named, never its value; what
 * controllers set is not drift); the next preview shows them as changes, and `up` re-runs exactly
 * them, as the record and helm's revision counts show.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { helmEnv, testChartPath, testCluster } from "../harness/index.js";
import type { DriftOutput } from "../../provider/pulumi/wire.js";
import { onShell, pulumiFixture, SHELLS } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { spec } from "./support/pulumi-specs.js";
import { editByHand, releaseRevisions, type HandTools } from "./support/drift-edits.js";

const SPEC_PASSWORD = "pulumi-spec-pw-Ja93";
const HAND_PASSWORD = "pulumi-hand-pw-Qe61";
const FORBIDDEN = [SPEC_PASSWORD, HAND_PASSWORD].flatMap((v) => [v, Buffer.from(v).toString("base64")]);

const STEPS = `  - name: settings
    apply:
      namespace: \${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: settings }
            data: { color: blue }
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: extra }
            data: { note: keep }
  - name: creds
    apply:
      namespace: \${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: Secret
            metadata: { name: creds }
            stringData: { password: "\${PASSWORD}" }
  - name: web
    apply:
      namespace: \${NS}
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
  - name: cfg
    helm:
      chart: ./charts/cfg
      release: cfg
      namespace: \${NS}
      values: { data: { greeting: "\${GREETING}" } }
  - name: other
    helm: { chart: ./charts/cfg, release: other, namespace: \${NS} }
  - name: steady
    helm: { chart: ./charts/cfg, release: steady, namespace: \${NS} }
`;

/** The test chart's files, to lay out in the project (the bundle carries them). */
function chartFiles(): Record<string, string> {
  const root = testChartPath("khook-test-config");
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.join("charts/cfg", path.relative(root, p))] = fs.readFileSync(p, "utf8");
    }
  };
  walk(root);
  return out;
}

for (const shell of SHELLS)
  test(
    onShell(
      shell,
      "refresh: live: the default refresh sees no drift; a live refresh writes the drifted steps into drift, preview shows them, up re-runs exactly them",
    ),
    { timeout: 900_000 },
    async (t) => {
      const {
        project,
        kubeconfig,
        namespace: ns,
        cluster,
      } = await pulumiFixture(t, {
        program: KHOOK_PROGRAM,
        files: { "boot.khook.yaml": spec("pdrift", STEPS), ...chartFiles() },
        shell,
      });
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "khook-pdrift-helm-"));
      t.after(() => fs.rmSync(home, { recursive: true, force: true }));
      const helmIn = { ...helmEnv(home), KUBECONFIG: kubeconfig };
      const args = (greeting: string, refresh?: "live") =>
        programArgs({
          args: {
            specFile: "./boot.khook.yaml",
            vars: { NS: ns, GREETING: greeting },
            ...(refresh ? { refresh } : {}),
          },
          kubeconfigFile: kubeconfig,
          secretVars: { PASSWORD: SPEC_PASSWORD },
        });
      const kube = await testCluster();
      const hand: HandTools = { kubectl: (a) => kube.kubectl(a), helmEnv: helmIn, namespace: ns };
      const revisions = (release: string): Promise<number[]> => releaseRevisions(hand, release);
      const drift = async (): Promise<DriftOutput[] | undefined> =>
        (await project.khookResources())[0]!.outputs.drift as DriftOutput[] | undefined;

      project.write("args.json", args("one"));
      await project.init();
      await project.ok(["up", "--yes", "--skip-preview"]);
      project.write("args.json", args("two"));
      await project.ok(["up", "--yes", "--skip-preview"]);
      assert.deepEqual(await revisions("cfg"), [1, 2]);

      // The hand edits (and another manager's label on the Deployment).
      await editByHand(hand, HAND_PASSWORD);

      // refresh-journal-default: the record says all is well, and so does the default refresh.
      await project.ok(["refresh", "--yes"]);
      assert.equal(await drift(), undefined);
      await project.ok(["preview", "--expect-no-changes"]);

      // Switching to refresh: live is an update that runs nothing (the record resumes every step).
      project.write("args.json", args("two", "live"));
      const switched = await project.ok(["up", "--yes", "--skip-preview"]);
      assert.match(switched.output, /refresh: journal -> live/, switched.output);
      assert.deepEqual(await revisions("cfg"), [1, 2, 3], "the journal-trusting update left the rollback alone");

      // refresh-live: the drifted steps, and nothing else.
      const refreshed = await project.ok(["refresh", "--yes"]);
      const found = await drift();
      assert.deepEqual(
        found?.map((d) => d.name),
        ["settings", "creds", "cfg", "other"],
        JSON.stringify(found),
      );
      const reason = new Map(found!.map((d) => [d.name, d.reason]));
      assert.match(
        reason.get("settings")!,
        /configmap\/settings -n \S+ changed \(data\.color\); configmap\/extra -n \S+ is gone/,
      );
      assert.match(reason.get("creds")!, /secret\/creds -n \S+ changed \(data\.password\)/);
      assert.match(reason.get("cfg")!, /revision 3 .*"Rollback to 1".* values differ at data\.greeting/);
      assert.match(reason.get("other")!, /not installed: it was uninstalled/);
      assert.match(refreshed.output, /live refresh: 4 steps drifted/, refreshed.output);

      // The next preview shows them as changes.
      const preview = await project.run(["preview", "--expect-no-changes"]);
      assert.notEqual(preview.code, 0, "drift is a change");
      assert.match(preview.output, /change: step settings: drifted in the cluster/, preview.output);
      assert.match(preview.output, /change: step cfg: drifted in the cluster/);

      // up re-runs exactly the drifted steps.
      const record = await cluster.record(ns, "khook-state-pdrift");
      const repaired = await project.ok(["up", "--yes", "--skip-preview"]);
      assert.match(repaired.output, /repairing the steps a live refresh found drifted: settings, creds, cfg, other/);
      const after = await cluster.record(ns, "khook-state-pdrift");
      assert.deepEqual(after?.repair?.steps, ["settings", "creds", "cfg", "other"]);
      for (const untouched of ["web", "steady"])
        assert.deepEqual(after?.steps[untouched], record?.steps[untouched], `${untouched} did not run`);
      assert.deepEqual(await revisions("cfg"), [1, 2, 3, 4]);
      assert.deepEqual(await revisions("other"), [1]);
      assert.deepEqual(await revisions("steady"), [1]);
      assert.equal((await cluster.configMap(ns, "settings"))?.data?.color, "blue");
      assert.equal((await cluster.configMap(ns, "extra"))?.data?.note, "keep");
      assert.equal(await drift(), undefined, "the repaired drift is gone from the outputs");

      await project.ok(["refresh", "--yes"]);
      assert.deepEqual(await drift(), [], "a live refresh after the repair finds nothing");
      await project.ok(["preview", "--expect-no-changes"]);

      // Secret values never reach what pulumi printed or the stack's state in the clear.
      const everything = `${project.transcript.join("\n")}\n${await project.exportText()}`;
      for (const v of FORBIDDEN) assert.ok(!everything.includes(v), `${v} leaked`);
    },
  );
