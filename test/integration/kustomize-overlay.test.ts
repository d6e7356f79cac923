/**
 * kustomize: manifest sources against the real cluster with the real
 * kustomize (and kubectl kustomize): an overlay with a patch and generators is
 * applied and then deleted by the same overlay; remote bases are rejected
 * before anything runs.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { testCluster, toolPath, withNamespace } from "../harness/index.js";
import { Redactor } from "../../provider/redact.js";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec, LoadedStep } from "../../provider/dsl/loaded.js";
import { applyExecutor } from "../../provider/steps/apply/executor.js";
import { deleteExecutor } from "../../provider/steps/delete/executor.js";
import type { StepContext } from "../../provider/steps/contract.js";
import { renderKustomize } from "../../provider/tools/kustomize.js";
import { executorContext } from "./support/executors.js";

const SECRET = "kustomize-s3cret-value";

/** A base with a ConfigMap and a Deployment, and an overlay with a strategic patch, a configMapGenerator and a secretGenerator. */
function tree(root: string, extra: Record<string, string> = {}): void {
  const files: Record<string, string> = {
    "base/kustomization.yaml": "resources:\n  - configmap.yaml\n  - deployment.yaml\n",
    "base/configmap.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: base\n  keep: from-base\n",
    "base/deployment.yaml": [
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata: { name: web }",
      "spec:",
      "  replicas: 1",
      "  selector: { matchLabels: { app: web } }",
      "  template:",
      "    metadata: { labels: { app: web } }",
      "    spec:",
      "      containers:",
      "        - name: main",
      "          image: registry.k8s.io/pause:3.10",
      "          envFrom: [{ configMapRef: { name: generated } }]",
      "",
    ].join("\n"),
    "overlays/dev/kustomization.yaml": [
      "resources:",
      "  - ../../base",
      "labels:",
      "  - pairs: { env: dev }",
      "patches:",
      "  - path: settings-patch.yaml",
      "configMapGenerator:",
      "  - name: generated",
      "    literals: [GREETING=hello-from-generator]",
      "secretGenerator:",
      "  - name: creds",
      "    envs: [creds.env]",
      "",
    ].join("\n"),
    "overlays/dev/settings-patch.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: dev\n",
    "overlays/dev/creds.env": `PASSWORD=${SECRET}\n`,
    ...extra,
  };
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
}

function specIn(dir: string, steps: string, env: Record<string, string> = {}): LoadedSpec {
  fs.writeFileSync(
    path.join(dir, "spec.yaml"),
    `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: kustomize-it\nsteps:\n${steps}`,
  );
  return loadSpec({ file: path.join(dir, "spec.yaml"), env });
}

const context = (spec: LoadedSpec): Promise<StepContext> => executorContext({ spec, timeoutMs: 120_000 });

async function kubectl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return (await testCluster()).kubectl(args);
}

function names(yamlText: string): string[] {
  return parseAllDocuments(yamlText)
    .map((d) => d.toJS() as { kind: string; metadata: { name: string } })
    .map((o) => `${o.kind}/${o.metadata.name}`)
    .sort();
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "khook-kustomize-it-"));
}

describe("kustomize: manifest sources", () => {
  test("an overlay with a patch and generators is applied, then deleted by the same overlay", async (t) => {
    const ns = await withNamespace(t, "kustomize");
    const dir = tempDir();
    tree(dir);
    const spec = specIn(
      dir,
      `  - name: up\n    apply:\n      namespace: ${ns}\n      manifests:\n        - kustomize: ./overlays/dev\n` +
        `  - name: down\n    delete:\n      namespace: ${ns}\n      manifests:\n        - kustomize: ./overlays/dev\n`,
    );
    const up = spec.stepsByName.get("up") as Extract<LoadedStep, { type: "apply" }>;
    const down = spec.stepsByName.get("down") as Extract<LoadedStep, { type: "delete" }>;

    const out = await applyExecutor.apply(up, await context(spec));
    assert.equal(out.status, "ok");
    const settings = await kubectl([
      "-n",
      ns,
      "get",
      "configmap",
      "settings",
      "-o",
      "jsonpath={.data.mode} {.data.keep} {.metadata.labels.env}",
    ]);
    assert.equal(settings.stdout, "dev from-base dev", "the patch and the overlay's labels applied over the base");
    const cms = await kubectl([
      "-n",
      ns,
      "get",
      "configmaps",
      "-l",
      "env=dev",
      "-o",
      "jsonpath={.items[*].metadata.name}",
    ]);
    const generated = cms.stdout.split(" ").find((n) => n.startsWith("generated-"));
    assert.ok(generated, `a generated ConfigMap with a content-hash suffix exists: ${cms.stdout}`);
    const envFrom = await kubectl([
      "-n",
      ns,
      "get",
      "deployment",
      "web",
      "-o",
      "jsonpath={.spec.template.spec.containers[0].envFrom[0].configMapRef.name}",
    ]);
    assert.equal(
      envFrom.stdout,
      generated,
      "the reference to the generated ConfigMap was rewritten to its hashed name",
    );
    const creds = await kubectl([
      "-n",
      ns,
      "get",
      "secrets",
      "-l",
      "env=dev",
      "-o",
      "jsonpath={.items[*].data.PASSWORD}",
    ]);
    assert.equal(
      Buffer.from(creds.stdout, "base64").toString(),
      SECRET,
      "the rendered secret reached the cluster intact",
    );

    const gone = await deleteExecutor.apply(down, await context(spec));
    assert.equal(gone.status, "ok");
    const left = await kubectl(["-n", ns, "get", "configmaps,secrets,deployments", "-l", "env=dev", "-o", "name"]);
    assert.equal(left.stdout.trim(), "", "everything the overlay defines is gone");
  });

  test("relative kustomize: paths resolve against the spec file's directory, not the working directory", async () => {
    const dir = tempDir();
    tree(dir);
    const elsewhere = tempDir();
    const cwd = process.cwd();
    process.chdir(elsewhere);
    try {
      const spec = specIn(dir, `  - name: up\n    apply:\n      manifests:\n        - kustomize: ./overlays/dev\n`);
      assert.equal(spec.baseDir, dir);
      const text = await renderKustomize(path.resolve(spec.baseDir, "./overlays/dev"), {
        signal: new AbortController().signal,
        redactor: spec.redactor,
        kustomizePath: toolPath("kustomize"),
      });
      assert.deepEqual(
        names(text).filter((n) => !n.startsWith("ConfigMap/generated") && !n.startsWith("Secret/creds")),
        ["ConfigMap/settings", "Deployment/web"],
      );
    } finally {
      process.chdir(cwd);
    }
  });

  test("kubectl kustomize renders the same when no kustomize binary is available", async () => {
    const dir = tempDir();
    tree(dir);
    const redactor = new Redactor();
    const signal = new AbortController().signal;
    const viaKustomize = await renderKustomize(path.join(dir, "overlays/dev"), {
      signal,
      redactor,
      kustomizePath: toolPath("kustomize"),
    });
    const viaKubectl = await renderKustomize(path.join(dir, "overlays/dev"), {
      signal,
      redactor,
      // A PATH without kustomize: the kubectl fallback is what remains.
      env: { PATH: path.dirname(toolPath("kubectl")), HOME: os.tmpdir() },
    });
    assert.deepEqual(names(viaKubectl), names(viaKustomize));
  });

  test("a remote base is rejected with the spec's explanation, before anything runs (at load, and again at render time)", async () => {
    const dir = tempDir();
    tree(dir, {
      "overlays/remote/kustomization.yaml":
        "resources:\n  - ../../base\n  - https://github.com/example/config//base?ref=v1.0.0\n",
    });
    assert.throws(
      () => specIn(dir, `  - name: up\n    apply:\n      manifests:\n        - kustomize: ./overlays/remote\n`),
      /references a remote base .*kustomize: sources must be local, because remote bases need git/s,
    );

    // Valid at load; a remote base appears afterwards (deeper in the tree): rejected when rendering.
    const spec = specIn(dir, `  - name: up\n    apply:\n      manifests:\n        - kustomize: ./overlays/dev\n`);
    fs.writeFileSync(
      path.join(dir, "base/kustomization.yaml"),
      "resources:\n  - configmap.yaml\n  - git@github.com:example/config.git//base\n",
    );
    const marker = path.join(tempDir(), "ran");
    const spy = path.join(tempDir(), "kustomize");
    fs.writeFileSync(spy, `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 });
    await assert.rejects(
      renderKustomize(path.join(dir, "overlays/dev"), {
        signal: new AbortController().signal,
        redactor: spec.redactor,
        kustomizePath: spy,
        written: "./overlays/dev",
      }),
      (e: Error) => {
        assert.match(
          e.message,
          /kustomize: the kustomization references a remote base \(base: git@github\.com:example\/config\.git\/\/base\)/,
        );
        assert.match(
          e.message,
          /kustomize: sources must be local, because remote bases need git\. Vendor the base into the repository and reference it by a relative path/,
        );
        return true;
      },
    );
    assert.equal(fs.existsSync(marker), false, "no kustomize process was started");
    // And through the apply executor, which renders via the same function.
    const up = spec.stepsByName.get("up") as Extract<LoadedStep, { type: "apply" }>;
    await assert.rejects(applyExecutor.apply(up, await context(spec)), /references a remote base/);
  });

  test("a kustomize failure is reported with kustomize's own message", async () => {
    const dir = tempDir();
    tree(dir, { "overlays/broken/kustomization.yaml": "resources:\n  - missing.yaml\n" });
    await assert.rejects(
      renderKustomize(path.join(dir, "overlays/broken"), {
        signal: new AbortController().signal,
        redactor: new Redactor(),
        kustomizePath: toolPath("kustomize"),
        written: "./overlays/broken",
      }),
      /kustomize build \.\/overlays\/broken failed \(exit code 1\):\n.*missing\.yaml/s,
    );
  });
});
