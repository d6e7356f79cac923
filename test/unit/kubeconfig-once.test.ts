/** Issue 11, "pass each once": one operation reads its kubeconfig once and hands the loaded target to every consumer. */
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { KubeClient, loadClusterTarget, type ClusterTarget } from "../../provider/kube/index.js";
import { loadKubeconfig } from "../../provider/kube/kubeconfig.js";
import { applyOperation } from "../../provider/operations.js";
import { specFixture, StubExecutors } from "./support/engine-fixtures.js";

// The module object itself (not an import namespace copy), so that the mock sees the loader's reads.
const nodeFs = require("node:fs") as typeof import("node:fs");

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: { server: "http://127.0.0.1:1" }
users:
- name: u
  user: { token: "once-token-value" }
contexts:
- name: ctx
  context: { cluster: c, user: u }
current-context: ctx
`;

describe("the kubeconfig is read once per operation", () => {
  let file = "";
  let reads = 0;
  beforeEach(() => {
    const dir = nodeFs.mkdtempSync(path.join(os.tmpdir(), "khook-kubeconfig-once-"));
    file = path.join(dir, "config");
    nodeFs.writeFileSync(file, KUBECONFIG);
    reads = 0;
    const original = nodeFs.readFileSync;
    mock.method(nodeFs, "readFileSync", (...args: Parameters<typeof original>) => {
      if (typeof args[0] === "string" && path.resolve(args[0]) === file) reads++;
      return original(...args);
    });
  });
  afterEach(() => {
    mock.restoreAll();
    nodeFs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  test("loadClusterTarget calls the loader once, and not again for a target it already loaded", () => {
    let calls = 0;
    const counting = (t: ClusterTarget): ReturnType<typeof loadKubeconfig> => {
      calls++;
      return loadKubeconfig(t);
    };
    const loaded = loadClusterTarget({ kubeconfigPath: file, context: "ctx" }, counting);
    assert.equal(calls, 1);
    assert.equal(loadClusterTarget(loaded, counting), loaded);
    assert.equal(calls, 1);
    assert.equal(loaded.kubeconfigPath, file, "helm still gets the path it was given");
    assert.equal(loaded.context, "ctx");
  });

  test("a client connects from the loaded target without reading the file again", async () => {
    const loaded = loadClusterTarget({ kubeconfigPath: file });
    assert.equal(reads, 1);
    const kube = await KubeClient.connect(loaded);
    kube.close();
    assert.equal(reads, 1);
    assert.equal(kube.server, "http://127.0.0.1:1");
  });

  test("an apply hands its one loaded target to the steps: a consumer connecting from it reads nothing more", async () => {
    const stubs = new StubExecutors().on("release", async ({ ctx }) => {
      assert.ok(ctx.connection?.loaded !== undefined, "the step's connection carries the loaded kubeconfig");
      const again = await KubeClient.connect(ctx.connection);
      again.close();
    });
    const result = await applyOperation(specFixture([{ name: "release", type: "helm" }], { state: false }), {
      target: { kubeconfigPath: file },
      executors: stubs.map,
    });
    assert.equal(result.status, "succeeded", JSON.stringify(result));
    assert.equal(stubs.started("release"), 1);
    assert.equal(reads, 1, "the kubeconfig file was read once for the whole operation");
  });
});
