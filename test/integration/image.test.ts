/**
 * khook's OCI image as a user gets it, without a container runtime: assembled from layers
 * (test/harness/image.ts) and pushed to a real registry (distribution, with basic auth), pulled
 * back and unpacked, and its entrypoint run inside the unpacked root as the image's user (a
 * chroot in a private mount namespace, /proc and /dev mounted as a runtime would) against the
 * real cluster. What a runtime adds and this does not: cgroups, seccomp, its own network
 * namespace; the root filesystem, the user, the environment and the files are the image's own.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { HookServer } from "../harness/hook-server.js";
import {
  buildImage,
  exportImage,
  IMAGE_HOME,
  IMAGE_UID,
  runInRootfs,
  type BuiltImage,
  type ImageConfig,
} from "../harness/image.js";
import {
  startOciRegistry,
  testChartPath,
  testCluster,
  withNamespace,
  type OciRegistryFixture,
} from "../harness/index.js";
import { HELM_VERSION, KUSTOMIZE_VERSION } from "../harness/toolchain.js";

describe("the OCI image, without a container runtime", () => {
  let registry: OciRegistryFixture;
  let image: BuiltImage;
  let rootfs: string;
  let pulled: { digest: string; config: ImageConfig };
  let server: HookServer;

  before(async () => {
    const failed = process.env["KHOOK_TEST_SEA_ERROR"];
    if (failed !== undefined) throw new Error(failed);
    registry = await startOciRegistry({ username: "khook", password: "image-push-only", push: false });
    const options = { login: { username: registry.username, password: registry.password }, plainHttp: true };
    image = await buildImage(`${registry.host}/khook:test`, options);
    rootfs = fs.mkdtempSync(path.join(os.tmpdir(), "khook-rootfs-"));
    pulled = await exportImage(image.reference, rootfs, options);
    server = await HookServer.start();
  });
  after(async () => {
    await server?.close();
    await registry?.close();
    // The mounts lived in the runs' own namespaces: nothing is mounted under rootfs now.
    if (rootfs !== undefined) fs.rmSync(rootfs, { recursive: true, force: true });
  });

  test("the image pulled is the image pushed: khook as entrypoint, a non-root user, no shell, the CA bundle", () => {
    assert.equal(pulled.digest, image.digest);
    assert.deepEqual(pulled.config.Entrypoint, ["/usr/local/bin/khook"]);
    assert.equal(pulled.config.User, `${IMAGE_UID}:${IMAGE_UID}`);
    assert.equal(pulled.config.Labels?.["io.khook.helm.version"], `v${HELM_VERSION}`);
    for (const shell of ["bin/sh", "usr/bin/sh", "bin/bash", "usr/bin/env"])
      assert.equal(fs.existsSync(path.join(rootfs, shell)), false, `${shell} is not in the image`);
    assert.match(
      fs.readFileSync(path.join(rootfs, "etc", "passwd"), "utf8"),
      new RegExp(`^khook:x:${IMAGE_UID}:${IMAGE_UID}:`, "m"),
    );
    assert.equal(fs.statSync(path.join(rootfs, "home", "khook")).uid, IMAGE_UID);
    assert.equal(
      fs.statSync(path.join(rootfs, "usr", "local", "bin", "khook")).uid,
      0,
      "the executable is root's: the user cannot replace it",
    );
    assert.ok(
      (
        fs
          .readFileSync(path.join(rootfs, "etc", "ssl", "certs", "ca-certificates.crt"), "utf8")
          .match(/BEGIN CERTIFICATE/g) ?? []
      ).length > 100,
    );
  });

  test("khook version, run inside, names the pinned helm and kustomize", async () => {
    const r = await runInRootfs(rootfs, pulled.config, ["version"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`^helm v${HELM_VERSION.replace(/\./g, "\\.")} \\(/usr/local/bin/helm\\)$`, "m"));
    assert.match(
      r.stdout,
      new RegExp(`^kustomize v${KUSTOMIZE_VERSION.replace(/\./g, "\\.")} \\(/usr/local/bin/kustomize\\)$`, "m"),
    );
  });

  test("khook apply, run inside, installs a helm release on the cluster, a webhook changing it through the post-renderer", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "image");
    server.on("pre-apply", {
      kind: "ok",
      change: (c) =>
        Object.fromEntries(
          Object.entries(c).map(([k, v]) => [
            k,
            {
              ...v,
              metadata: {
                ...(v.metadata as object),
                labels: { ...((v.metadata as { labels?: object }).labels ?? {}), audited: "image" },
              },
            },
          ]),
        ),
    });
    // What a Job would mount: the spec, its chart and a kubeconfig, readable by the image's user.
    const work = path.join(rootfs, "home", "khook", "work");
    fs.cpSync(testChartPath("khook-test-app"), path.join(work, "chart"), { recursive: true });
    fs.copyFileSync(cluster.kubeconfig, path.join(work, "kubeconfig"));
    fs.writeFileSync(
      path.join(work, "spec.yaml"),
      `apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: image}\nstate: {namespace: ${ns}}\nhooks:\n  - name: audit\n    on: [pre-apply]\n    webhook: {url: '${server.url}', timeout: 5s}\nsteps:\n  - name: chart\n    helm:\n      chart: ./chart\n      namespace: ${ns}\n      values: {message: from-image}\n`,
    );
    for (const e of [
      work,
      ...fs.readdirSync(work, { recursive: true, encoding: "utf8" }).map((f) => path.join(work, f)),
    ])
      fs.chownSync(e, IMAGE_UID, IMAGE_UID);
    const r = await runInRootfs(rootfs, pulled.config, ["apply", "-f", "work/spec.yaml", "-o", "json"], {
      KUBECONFIG: `${IMAGE_HOME}/work/kubeconfig`,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(
      (JSON.parse(r.stdout) as { steps: { name: string; status: string }[] }).steps.map((s) => [s.name, s.status]),
      [["chart", "ok"]],
    );
    const label = await cluster.kubectl([
      "-n",
      ns,
      "get",
      "configmap",
      "chart-app",
      "-o",
      "jsonpath={.metadata.labels.audited}",
    ]);
    assert.equal(label.stdout, "image", label.stderr);
    const release = await cluster.kubectl(["-n", ns, "get", "secrets", "-l", "owner=helm,name=chart", "-o", "name"]);
    assert.match(release.stdout, /sh\.helm\.release\.v1\.chart\.v1/);
  });
});
