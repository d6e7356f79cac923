/** The pure comparisons behind the live check: kubectl/applied-drift.ts (objects) and helm/release-drift.ts (releases). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  describeFields,
  differingFields,
  holdsApplied,
  patchedFields,
  withStringDataMerged,
} from "../../provider/kubectl/applied-drift.js";
import { createThreeWayJsonMergePatch, type JsonMap } from "../../provider/kubectl/threeway.js";
import { decideReleaseDrift, differingValuePaths, type ReleaseDriftFacts } from "../../provider/helm/release-drift.js";
import type { StoredRevision } from "../../provider/helm/storage.js";
import type { KubeObject } from "../../provider/kubectl/types.js";

const cm = (data: Record<string, string>, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "a", namespace: "n", resourceVersion: "1", uid: "u" },
  data,
  ...extra,
});

describe("kubectl/drift: objects", () => {
  test("differingFields names leaf paths, quotes keys that are not words, and ignores status, volatile metadata and last-applied", () => {
    const before = cm({ a: "1", "app.properties": "x" });
    const after = cm({ a: "2", "app.properties": "y" }, {
      metadata: {
        name: "a",
        namespace: "n",
        resourceVersion: "9",
        uid: "u",
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}" },
        managedFields: [{ manager: "x" }],
      },
      status: { x: 1 },
    } as Partial<KubeObject>);
    assert.deepEqual(differingFields(before, after), ["data.a", 'data["app.properties"]']);
  });

  test("a map added or removed whole is named once; list elements by index", () => {
    assert.deepEqual(differingFields(cm({}), cm({}, { binaryData: { x: "eA==" } } as Partial<KubeObject>)), [
      "binaryData",
    ]);
    const pod = (c: unknown[]): KubeObject => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { containers: c },
    });
    assert.deepEqual(
      differingFields(pod([{ name: "a", image: "x:1" }]), pod([{ name: "a", image: "x:2" }, { name: "b" }])),
      ["spec.containers[0].image", "spec.containers[1]"],
    );
  });

  test("holdsApplied: extra live fields are not drift; a changed or missing applied field is; lists must match in length", () => {
    const applied = { data: { a: "1" }, spec: { ports: [{ port: 80 }] } };
    assert.equal(
      holdsApplied(applied, { data: { a: "1", b: "2" }, spec: { ports: [{ port: 80, protocol: "TCP" }] } }),
      true,
    );
    assert.equal(holdsApplied(applied, { data: { a: "2" }, spec: { ports: [{ port: 80 }] } }), false);
    assert.equal(holdsApplied(applied, { data: {}, spec: { ports: [{ port: 80 }] } }), false);
    assert.equal(holdsApplied(applied, { data: { a: "1" }, spec: { ports: [{ port: 80 }, { port: 81 }] } }), false);
    assert.equal(holdsApplied({ a: null }, { b: 1 }), true, "null asks for absence");
  });

  test("patchedFields: the paths a three-way patch sets or removes, without last-applied and directives", () => {
    const original = { data: { a: "1", gone: "x" } } as JsonMap;
    const modified = {
      data: { a: "1" },
      metadata: { annotations: { "kubectl.kubernetes.io/last-applied-configuration": "new" } },
    } as JsonMap;
    const live = { data: { a: "hand", gone: "x" }, metadata: { annotations: {} } } as JsonMap;
    const patch = createThreeWayJsonMergePatch(original, modified, live);
    assert.deepEqual(patchedFields(patch), ["data.a", "data.gone"]);
    assert.deepEqual(patchedFields({ $setElementOrder: {}, spec: { $patch: "replace", x: 1 } }), ["spec.x"]);
  });

  test("withStringDataMerged: a Secret's stringData is compared as the base64 data the server keeps", () => {
    const s = { kind: "Secret", data: { a: "YQ==" }, stringData: { b: "b" } } as JsonMap;
    assert.deepEqual(withStringDataMerged(s), { kind: "Secret", data: { a: "YQ==", b: "Yg==" } });
    const c = { kind: "ConfigMap", stringData: { b: "b" } } as JsonMap;
    assert.equal(withStringDataMerged(c), c, "only Secrets");
  });

  test("describeFields counts what it does not name", () => {
    const many = Array.from({ length: 10 }, (_, i) => `data.k${i}`);
    assert.equal(describeFields(many), `${many.slice(0, 8).join(", ")} and 2 more`);
  });
});

function revision(
  n: number,
  extra: Partial<StoredRevision["revision"]> = {},
  config: Record<string, unknown> = {},
): StoredRevision {
  return {
    revision: {
      revision: n,
      updated: `2026-01-0${n}T00:00:00Z`,
      status: "superseded",
      chart: "web-1.0.0",
      app_version: "1",
      description: n === 1 ? "Install complete" : "Upgrade complete",
      ...extra,
    },
    config,
  };
}

function facts(
  revisions: StoredRevision[],
  recordedRevision: number | undefined,
  finishedAt = "2026-01-02T12:00:00Z",
): ReleaseDriftFacts {
  return { release: "web", namespace: "apps", revisions, recordedRevision, finishedAt };
}

describe("helm/drift: releases", () => {
  test("the recorded revision still deployed is in sync", () => {
    const d = decideReleaseDrift(facts([revision(1), revision(2, { status: "deployed" })], 2));
    assert.equal(d.state, "in-sync");
    assert.match(d.reason, /at revision 2 \(web-1.0.0, deployed\), as khook left it/);
  });

  test("helm-rollback-is-drift: another revision names it, what helm said, and the value paths that differ (never the values)", () => {
    const d = decideReleaseDrift(
      facts(
        [
          revision(1, {}, { replicas: 1, auth: { password: "p1" } }),
          revision(2, {}, { replicas: 3, auth: { password: "p2" } }),
          revision(3, { status: "deployed", description: "Rollback to 1" }, { replicas: 1, auth: { password: "p1" } }),
        ],
        2,
      ),
    );
    assert.equal(d.state, "drifted");
    assert.ok(d.state === "drifted" && d.change === "revision");
    assert.deepEqual(d.state === "drifted" ? d.fields : [], ["values.auth.password", "values.replicas"]);
    assert.match(
      d.reason,
      /is at revision 3 \(web-1.0.0, deployed\) \("Rollback to 1"\), not at revision 2 that khook left: values differ at auth.password, replicas/,
    );
    assert.ok(!d.reason.includes("p1") && !d.reason.includes("p2"));
  });

  test("uninstalled (history gone or kept) and pending are drift", () => {
    assert.ok(decideReleaseDrift(facts([], 2)).state === "drifted");
    const kept = decideReleaseDrift(facts([revision(1), revision(2, { status: "uninstalled" })], 2));
    assert.ok(kept.state === "drifted" && kept.change === "uninstalled");
    const pending = decideReleaseDrift(facts([revision(1), revision(2, { status: "pending-upgrade" })], 1));
    assert.ok(pending.state === "drifted" && pending.change === "pending");
  });

  test("a record without the revision is judged by time: a revision deployed after the step finished is drift", () => {
    const later = decideReleaseDrift(
      facts([revision(1), revision(3, { status: "deployed" })], undefined, "2026-01-02T00:00:00Z"),
    );
    assert.equal(later.state, "drifted");
    const before = decideReleaseDrift(facts([revision(1, { status: "deployed" })], undefined, "2026-01-02T00:00:00Z"));
    assert.equal(before.state, "in-sync");
  });

  test("differingValuePaths walks maps and names leaves and whole sides", () => {
    assert.deepEqual(differingValuePaths({ a: { b: 1, c: [1] } }, { a: { b: 1, c: [2] }, d: { e: 1 } }), ["a.c", "d"]);
  });
});
