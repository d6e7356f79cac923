/**
 * Resume at scale, against the real API server: a re-run of an unchanged many-step spec with
 * state: costs one read and one write of the record, and no other request, whatever the number of
 * steps. Counted with the kube client's request counter, not timed. (`./dev bench scale` has the
 * 1,000-step figures: time, peak memory, API requests per step.)
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { KubeClient } from "../../provider/kube/index.js";
import { applyOperation } from "../../provider/operations.js";
import { loadSpec } from "../../provider/load-spec.js";
import { RESUME_REASON } from "../../provider/state/record.js";
import { testCluster, withNamespace } from "../harness/index.js";

const STEPS = 200;

/** STEPS apply steps, one ConfigMap each, in ten dependent levels. */
function manyStepSpec(ns: string): string {
  const steps = Array.from({ length: STEPS }, (_, i) => {
    const needs = i >= 20 ? `    needs: [cm-${i - 20}]\n` : "";
    return `  - name: cm-${i}\n${needs}    apply:\n      namespace: ${ns}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: cm-${i}}\n            data: {index: "${i}"}\n`;
  });
  return `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: scale-${ns}\nstate:\n  namespace: ${ns}\nsteps:\n${steps.join("")}`;
}

const clients: KubeClient[] = [];
after(() => {
  for (const c of clients) c.close();
});

describe("resume at scale", () => {
  test(`state: a re-run of an unchanged ${STEPS}-step spec reads the record once, writes it once, and sends no other request`, async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "scale");
    const spec = loadSpec({ text: manyStepSpec(ns), baseDir: process.cwd(), env: {} });
    const connect = async (): Promise<KubeClient> => {
      const c = await KubeClient.connect({ kubeconfigPath: cluster.kubeconfig });
      clients.push(c);
      return c;
    };

    const first = await applyOperation(spec, { target: {}, client: await connect(), journal: "spec" });
    assert.equal(first.status, "succeeded", JSON.stringify(first.steps.filter((s) => s.status !== "ok")));

    const client = await connect();
    const rerun = await applyOperation(spec, { target: {}, client, journal: "spec" });
    assert.equal(rerun.status, "succeeded");
    assert.equal(rerun.steps.filter((s) => s.reason === RESUME_REASON).length, STEPS, "every step resumed");

    const record = `/api/v1/namespaces/${ns}/secrets/${spec.state!.name}`;
    assert.deepEqual(Object.fromEntries(client.requestCounts), { [`GET ${record}`]: 1, [`PUT ${record}`]: 1 });
  });
});
