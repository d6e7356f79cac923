import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { HASH_FORMAT, canonicalJson } from "../../provider/dsl/hash.js";
import { keyedSpec, newHashKey, UNKEYED_HASH } from "../../provider/dsl/keyed-hash.js";
import { type LoadOptions } from "../../provider/dsl/loader.js";
import { loadSpec } from "../../provider/load-spec.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

function hashes(
  stepsYaml: string,
  files: Record<string, string> = {},
  opts: Partial<LoadOptions> = {},
): Record<string, string> {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml), ...files });
  return hashesIn(dir, opts);
}

function hashesIn(dir: string, opts: Partial<LoadOptions> = {}): Record<string, string> {
  const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {}, ...opts });
  return Object.fromEntries(spec.steps.map((s) => [s.name, s.inputHash]));
}

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "1"\n';

describe("input hash (state section)", () => {
  test("the canonical form is the documented one: sha256 over the format line and the sorted-key JSON of name, type and normalized action", () => {
    const h = hashes("  - name: w\n    wait: { for: condition=Ready, on: pods, namespace: kube-system }\n");
    const body = `${HASH_FORMAT}\n{"action":{"for":"condition=Ready","namespace":"kube-system","on":"pods"},"name":"w","type":"wait"}`;
    assert.equal(h.w, `sha256:${createHash("sha256").update(body).digest("hex")}`);
  });

  test("cosmetic YAML edits (comments, key order, quoting) do not change it", () => {
    const a = hashes("  - name: w\n    wait: { for: condition=Ready, on: pods, namespace: kube-system }\n");
    const b = hashes(
      "  # a comment\n  - name: 'w'\n    wait:\n      namespace: \"kube-system\"   # trailing\n      on: pods\n      for: condition=Ready\n",
    );
    assert.equal(a.w, b.w);
  });

  test("cosmetic edits inside an inline manifest do not change it either", () => {
    const a = hashes(
      `  - name: a\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: x}\n            data: {a: "1", b: "2"}\n`,
    );
    const b = hashes(
      `  - name: a\n    apply:\n      manifests:\n        - inline: |\n            # comment\n            kind: ConfigMap\n            apiVersion: 'v1'\n            metadata:\n              name: x\n            data:\n              b: "2"\n              a: "1"\n`,
    );
    assert.equal(a.a, b.a);
  });

  test("any effective change does", () => {
    const a = hashes("  - name: w\n    wait: { for: condition=Ready, on: pods }\n");
    const b = hashes("  - name: w\n    wait: { for: condition=Available, on: pods }\n");
    assert.notEqual(a.w, b.w);
  });

  test("writing a field's default value explicitly does not change it", () => {
    const chart = { "c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n" };
    const a = hashes(
      "  - name: h\n    helm: { chart: ./c }\n  - name: p\n    patch: { target: ds/x, patch: {a: 1} }\n  - name: j\n    job: { image: busybox }\n",
      chart,
    );
    const b = hashes(
      "  - name: h\n    helm: { chart: ./c, namespace: default, release: h, atomic: false, wait: false, createNamespace: false, values: {}, valuesFrom: [] }\n  - name: p\n    patch: { target: ds/x, type: strategic, namespace: default, patch: {a: 1} }\n  - name: j\n    job: { image: busybox, namespace: default, createNamespace: false, args: [], env: {} }\n",
      chart,
    );
    assert.deepEqual(a, b);
  });

  test("the inline version sugar hashes like version:", () => {
    const a = hashes("  - name: h\n    helm: { chart: 'cilium:1.18.4', repo: 'https://helm.cilium.io/' }\n");
    const b = hashes("  - name: h\n    helm: { chart: cilium, version: 1.18.4, repo: 'https://helm.cilium.io/' }\n");
    assert.equal(a.h, b.h);
  });

  test("scheduling is not an input: needs, when, timeout, retries, retryDelay and onError", () => {
    const a = hashes(
      "  - name: a\n    wait: { for: delete, on: pods }\n  - name: w\n    wait: { for: delete, on: pods }\n",
    );
    const b = hashes(
      '  - name: a\n    wait: { for: delete, on: pods }\n  - name: w\n    needs: [a]\n    when: \'vars.get("X", "") == ""\'\n    timeout: 1m\n    retries: 3\n    retryDelay: 1s\n    onError: continue\n    wait: { for: delete, on: pods }\n',
    );
    assert.equal(a.w, b.w);
  });

  test("renaming a step changes it: the name keys the record", () => {
    const a = hashes("  - name: a\n    wait: { for: delete, on: pods }\n");
    const b = hashes("  - name: b\n    wait: { for: delete, on: pods }\n");
    assert.notEqual(a.a, b.b);
  });

  test("a rotated secret value that is substituted into the step changes it (under the record's key)", () => {
    const steps =
      "  - name: h\n    helm: { chart: app, repo: 'https://charts.example', auth: { username: u, password: '${PASS}' } }\n";
    const key = newHashKey();
    const keyed = (secret: string): string =>
      keyedSpec(
        loadSpec({
          file: path.join(tempSpecDir({ "spec.yaml": specText(steps) }), "spec.yaml"),
          env: { KHOOK_SECRET_PASS: secret },
        }),
        key,
      ).stepsByName.get("h")!.inputHash;
    assert.notEqual(keyed("one-secret"), keyed("two-secret"));
    assert.equal(keyed("one-secret"), keyed("one-secret"), "same inputs, same key: the step resumes");
  });

  test("keyed-hash: a step whose inputs hold a secret has no unkeyed digest to brute-force; its hash is an HMAC under the record's key", () => {
    // A 4-digit PIN: with a plain sha256 of the rendered step, trying 10^4 values gives it back.
    const steps =
      "  - name: pin\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Secret\n            metadata: {name: pin}\n            stringData: {pin: '${PIN}'}\n  - name: plain\n    wait: { for: delete, on: pods }\n";
    const dir = tempSpecDir({ "spec.yaml": specText(steps) });
    const secret = loadSpec({ file: path.join(dir, "spec.yaml"), env: { KHOOK_SECRET_PIN: "4711" } });
    // What an attacker computes for the right guess: the same spec with the PIN as a plain value.
    const guess = loadSpec({ file: path.join(dir, "spec.yaml"), env: {}, set: [["PIN", "4711"]] });
    assert.equal(
      secret.stepsByName.get("pin")!.inputHash,
      UNKEYED_HASH,
      "without the key, the hash says it is keyed and holds no digest",
    );
    const keyed = keyedSpec(secret, newHashKey()).stepsByName.get("pin")!.inputHash;
    assert.match(keyed, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.notEqual(
      keyed.slice("hmac-sha256:".length),
      guess.stepsByName.get("pin")!.inputHash.slice("sha256:".length),
      "the right guess does not reproduce it",
    );
    assert.equal(
      keyedSpec(secret, newHashKey()).stepsByName.get("plain")!.inputHash,
      guess.stepsByName.get("plain")!.inputHash,
      "a step without secrets keeps its sha256 hash",
    );
    assert.ok(!JSON.stringify(secret.steps).includes(keyed.slice(12)) && !secret.specHash.includes(keyed.slice(12)));
  });

  test("a changed step never changes another step's hash (needs is ordering only)", () => {
    const a = hashes(
      "  - name: a\n    wait: { for: condition=A, on: pods }\n  - name: b\n    needs: [a]\n    wait: { for: delete, on: pods }\n",
    );
    const b = hashes(
      "  - name: a\n    wait: { for: condition=B, on: pods }\n  - name: b\n    needs: [a]\n    wait: { for: delete, on: pods }\n",
    );
    assert.notEqual(a.a, b.a);
    assert.equal(a.b, b.b);
  });

  test("remote content is identified by reference: an unchanged url: keeps the hash", () => {
    const steps = "  - name: a\n    apply:\n      manifests:\n        - url: https://example.com/m.yaml\n";
    assert.equal(hashes(steps).a, hashes(steps).a);
    assert.notEqual(hashes(steps).a, hashes(steps.replace("m.yaml", "n.yaml")).a);
  });

  for (const [what, steps, files, edit] of [
    [
      "a manifests file:",
      "  - name: s\n    apply:\n      manifests:\n        - file: ./m/cm.yaml\n",
      { "m/cm.yaml": CM },
      "m/cm.yaml",
    ],
    [
      "a valuesFrom file:",
      "  - name: s\n    helm: { chart: ./c, valuesFrom: [ { file: ./values.yaml } ] }\n",
      { "values.yaml": "a: 1\n", "c/Chart.yaml": "name: c\n" },
      "values.yaml",
    ],
    [
      "a local chart directory",
      "  - name: s\n    helm: { chart: ./c }\n",
      { "c/Chart.yaml": "name: c\n", "c/templates/cm.yaml": CM },
      "c/templates/cm.yaml",
    ],
    [
      "a local .tgz chart",
      "  - name: s\n    helm: { chart: ./c-0.1.0.tgz }\n",
      { "c-0.1.0.tgz": "binary-ish" },
      "c-0.1.0.tgz",
    ],
    [
      "a kustomize: directory",
      "  - name: s\n    apply:\n      manifests:\n        - kustomize: ./k/overlay\n",
      {
        "k/overlay/kustomization.yaml": "resources: [../base]\n",
        "k/base/kustomization.yaml": "resources: [cm.yaml]\n",
        "k/base/cm.yaml": CM,
      },
      "k/base/cm.yaml",
    ],
  ] as const) {
    test(`editing a referenced local file changes it: ${what}`, () => {
      const dir = tempSpecDir({ "spec.yaml": specText(steps), ...files });
      const before = hashesIn(dir);
      assert.equal(hashesIn(dir).s, before.s, "stable without edits");
      fs.appendFileSync(path.join(dir, edit), "\n# edited\n");
      assert.notEqual(hashesIn(dir).s, before.s);
    });
  }

  test("relative paths resolve against the spec file's directory, not the working directory", () => {
    const dir = tempSpecDir({
      "sub/spec.yaml": specText("  - name: s\n    apply:\n      manifests:\n        - file: ./cm.yaml\n"),
      "sub/cm.yaml": CM,
    });
    const cwd = process.cwd();
    try {
      process.chdir(tempSpecDir({}));
      const spec = loadSpec({ file: path.join(dir, "sub/spec.yaml"), env: {} });
      assert.equal(spec.baseDir, path.join(dir, "sub"));
      assert.match(spec.steps[0]!.inputHash, /^sha256:[0-9a-f]{64}$/);
    } finally {
      process.chdir(cwd);
    }
  });

  test("canonicalJson sorts keys and ignores undefined, so key order never matters", () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }] }), '{"a":[{"d":2}],"b":1}');
  });
});
