/**
 * Each kind's defaults (provider/steps/<kind>/defaults.ts) are applied once, by the loader: the
 * input hash and the executors read the same normalized action. The schema's `default`s are
 * written from the same tables (the definitions import them).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { loadSpec } from "../../provider/load-spec.js";
import { KINDS } from "../../provider/steps/index.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

describe("the defaults table", () => {
  test("the loader applies it once: a loaded action has every default set, and a helm release is named after its step", () => {
    const dir = tempSpecDir({
      "spec.yaml": specText(
        "  - name: h\n    helm: { chart: x, repo: 'https://charts.example.com' }\n  - name: d\n    delete: { release: old }\n  - name: p\n    patch: { target: ds/x, patch: { a: 1 } }\n  - name: w\n    wait: { for: delete, on: pods }\n",
      ),
    });
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
    const action = (name: string): unknown => spec.stepsByName.get(name)!.action;
    assert.deepEqual(action("h"), {
      chart: "x",
      repo: "https://charts.example.com",
      release: "h",
      namespace: "default",
      createNamespace: false,
      atomic: false,
      wait: false,
    });
    assert.deepEqual(action("d"), { release: "old", namespace: "default", ignoreNotFound: true });
    assert.deepEqual(action("p"), { target: "ds/x", patch: { a: 1 }, namespace: "default", type: "strategic" });
    assert.deepEqual(action("w"), { for: "delete", on: "pods", allNamespaces: false });
  });

  test("the loaded spec is immutable: its steps and their actions are frozen", () => {
    const dir = tempSpecDir({ "spec.yaml": specText("  - name: j\n    job: { image: busybox, env: { A: b } }\n") });
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
    const step = spec.steps[0]!;
    assert.ok(Object.isFrozen(spec) && Object.isFrozen(step) && Object.isFrozen(step.action));
    assert.throws(() => {
      (step.action as { env: Record<string, string> }).env["A"] = "changed";
    }, TypeError);
  });

  test("a value the author wrote wins over the table", () => {
    const action = KINDS.patch.normalize({ target: "ds/x", type: "merge", namespace: "kube-system", patch: {} }, "p");
    assert.deepEqual(action, { target: "ds/x", type: "merge", namespace: "kube-system", patch: {} });
  });
});

/**
 * Input hashes recorded before the defaults moved into one table (canonical form v1). A changed
 * hash re-runs every step of every user's resumed spec, so these must never change unless the
 * form is versioned anew (HASH_FORMAT).
 */
const PINNED: Record<string, string> = {
  "h-plain": "sha256:b8749657d1c8a518536437052590c68bc9ead9332494072fb02e028b850c9b4b",
  "h-explicit": "sha256:7d54209c3bc7e589f38be982a1efc2880e169714c81ddf607a5e46b1cde2552e",
  "h-set": "sha256:823120e9f9a99c473a8f27a3b4c9b4f2e33235f715687c38042a0635f97e3acd",
  "h-repo": "sha256:ed400ebda4c0a451ed7809680edcca43cdf9461ad5c5b8d380460cb023310071",
  "a-plain": "sha256:677867759c5e7495ca6fe570bc109bfef24d5c1a72131b032d9bfdb508b41b54",
  "a-set": "sha256:7f059cc13c875ded92a58f7ab08c2c63de68e5e4c88edda0ea6d8fe323e82d43",
  "a-explicit": "sha256:5d160ea766714c0bbdb760878727f4d5096f4fe6c5e7339d370e5d0725391adf",
  "d-manifests": "sha256:dba999302995ce7e928451f219ae1504ca9fc9d05a3a6d08335858ae8ec6e371",
  "d-resource": "sha256:70c115614fec8651dc5d7b764dbcb71667407d8526c9790d0d632cce28e88967",
  "d-selector": "sha256:953b7b0dc8c2b567c298a4c4bd187cf83bbdf28de157a1f595a27d767f0230e6",
  "d-release": "sha256:4865d68a7b110f5a92b0246cb7d8226b659410c44e49ef8dc52f139242ddc288",
  "d-release-ns": "sha256:aa197546b28f515dd9718b037a0749324c71f5d0bc9705568f79ffdd4e99a876",
  "p-plain": "sha256:9edffb54317e7ef61a471802ccc7b64cfba04dc5e68d0715bb88d49d1e3d3fe4",
  "p-merge": "sha256:22e05ccf8ec1cbc60fd6ddae9d38ba845bc8679c9527cfdc10bbfc3fce73c699",
  "w-plain": "sha256:67d74781da131a9b481c2db2df54df6c14c946c8ca0dd7963012d36bd072a659",
  "w-all": "sha256:319a6f2628ad5676381a7e7e88578c864a4173357b5b447ee7521c8aa9f964d7",
  "r-restart": "sha256:23e7b1a8df2578a182c01c961619162e0cae24226f67e022ce0447b6284c72e2",
  "j-plain": "sha256:69030d7499704d9c87725038dc5fcc2f26b115febff5cf86d24cfce847b0ffec",
  "j-set": "sha256:65073bb6319487905bb1c18ee559d40dc8a24e0e20d11ca0168ce7925d5599dd",
};

const PINNED_STEPS =
  "  - name: h-plain\n    helm: { chart: ./c }\n  - name: h-explicit\n    helm: { chart: ./c, release: h-explicit, namespace: default, createNamespace: false, atomic: false, wait: false }\n  - name: h-set\n    helm: { chart: ./c, release: other, namespace: apps, createNamespace: true, atomic: true, wait: true, skipIf: installed, values: { a: 1 } }\n  - name: h-repo\n    helm: { chart: 'cilium:1.18.4', repo: 'https://helm.cilium.io/' }\n  - name: a-plain\n    apply: { manifests: [ { inline: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x}\\n\" } ] }\n  - name: a-set\n    apply: { manifests: [ { file: ./cm.yaml } ], namespace: apps, createNamespace: true, serverSide: true, skipIf: exists, waitFor: condition=Ready }\n  - name: a-explicit\n    apply: { manifests: [ { url: 'https://example.com/x.yaml' } ], createNamespace: false, serverSide: false }\n  - name: d-manifests\n    delete: { manifests: [ { inline: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x}\\n\" } ], ignoreNotFound: true }\n  - name: d-resource\n    delete: { resource: daemonset/aws-node, namespace: kube-system, allNamespaces: false, ignoreNotFound: false }\n  - name: d-selector\n    delete: { resource: pods, allNamespaces: true, selector: app=x }\n  - name: d-release\n    delete: { release: old, namespace: default, ignoreNotFound: true }\n  - name: d-release-ns\n    delete: { release: old, namespace: apps }\n  - name: p-plain\n    patch: { target: ds/x, patch: { a: 1 } }\n  - name: p-merge\n    patch: { target: ds/x, namespace: kube-system, type: merge, patch: { a: 1 } }\n  - name: w-plain\n    wait: { for: condition=Ready, on: pods }\n  - name: w-all\n    wait: { for: delete, on: pods, allNamespaces: true, selector: app=x }\n  - name: r-restart\n    rollout: { restart: deployment/x, namespace: apps }\n  - name: j-plain\n    job: { image: busybox }\n  - name: j-set\n    job: { image: busybox, command: [sh, -c], args: [echo hi], env: { A: b }, namespace: jobs, createNamespace: true, serviceAccount: sa, skipIf: succeeded }\n";

test("input hashes of unchanged specs are stable: defaults written or left out hash as they always did (canonical form v1)", () => {
  const dir = tempSpecDir({
    "spec.yaml": specText(PINNED_STEPS),
    "c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n",
  });
  const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
  assert.deepEqual(Object.fromEntries(spec.steps.map((s) => [s.name, s.inputHash])), PINNED);
});
