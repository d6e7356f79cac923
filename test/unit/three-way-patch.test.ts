import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  LAST_APPLIED_ANNOTATION,
  lastAppliedJson,
  parseLastApplied,
  withLastApplied,
} from "../../provider/kubectl/lastapplied.js";
import { parseGvDoc } from "../../provider/kubectl/patchplan.js";
import {
  applyMergePatch,
  createThreeWayJsonMergePatch,
  createThreeWayStrategicMergePatch,
  isMap,
  OpenApiV3PatchMeta,
  type JsonMap,
  type PatchMeta,
} from "../../provider/kubectl/threeway.js";

/** A slice of the real apps/v1 OpenAPI v3 document: $refs wrapped in allOf, extensions beside them. */
const ref = (name: string) => ({ allOf: [{ $ref: `#/components/schemas/${name}` }], default: {} });
const openapi = {
  paths: {
    "/apis/apps/v1/namespaces/{namespace}/deployments/{name}": {
      patch: {
        "x-kubernetes-group-version-kind": { group: "apps", version: "v1", kind: "Deployment" },
        requestBody: {
          content: {
            "application/json-patch+json": {},
            "application/merge-patch+json": {},
            "application/strategic-merge-patch+json": {},
            "application/apply-patch+yaml": {},
          },
        },
      },
    },
  },
  components: {
    schemas: {
      "io.k8s.api.apps.v1.Deployment": {
        type: "object",
        "x-kubernetes-group-version-kind": [{ group: "apps", version: "v1", kind: "Deployment" }],
        properties: {
          apiVersion: { type: "string" },
          kind: { type: "string" },
          metadata: ref("ObjectMeta"),
          spec: ref("DeploymentSpec"),
          status: { type: "object" },
        },
      },
      ObjectMeta: {
        type: "object",
        properties: {
          name: { type: "string" },
          labels: { type: "object", additionalProperties: { type: "string", default: "" } },
          annotations: { type: "object", additionalProperties: { type: "string", default: "" } },
          finalizers: {
            type: "array",
            items: { type: "string", default: "" },
            "x-kubernetes-patch-strategy": "merge",
            "x-kubernetes-list-type": "set",
          },
        },
      },
      DeploymentSpec: {
        type: "object",
        properties: {
          replicas: { type: "integer" },
          paused: { type: "boolean" },
          strategy: { ...ref("DeploymentStrategy"), "x-kubernetes-patch-strategy": "retainKeys" },
          template: ref("PodTemplateSpec"),
        },
      },
      DeploymentStrategy: {
        type: "object",
        properties: { type: { type: "string" }, rollingUpdate: { type: "object" } },
      },
      PodTemplateSpec: { type: "object", properties: { metadata: ref("ObjectMeta"), spec: ref("PodSpec") } },
      PodSpec: {
        type: "object",
        properties: {
          containers: {
            type: "array",
            items: ref("Container"),
            "x-kubernetes-patch-merge-key": "name",
            "x-kubernetes-patch-strategy": "merge",
          },
          volumes: {
            type: "array",
            items: ref("Volume"),
            "x-kubernetes-patch-merge-key": "name",
            "x-kubernetes-patch-strategy": "merge,retainKeys",
          },
          nodeSelector: { type: "object", additionalProperties: { type: "string" } },
        },
      },
      Container: {
        type: "object",
        properties: {
          name: { type: "string" },
          image: { type: "string" },
          args: { type: "array", items: { type: "string" } },
          env: {
            type: "array",
            items: ref("EnvVar"),
            "x-kubernetes-patch-merge-key": "name",
            "x-kubernetes-patch-strategy": "merge",
          },
          ports: {
            type: "array",
            items: ref("ContainerPort"),
            "x-kubernetes-patch-merge-key": "containerPort",
            "x-kubernetes-patch-strategy": "merge",
          },
        },
      },
      EnvVar: { type: "object", properties: { name: { type: "string" }, value: { type: "string" } } },
      ContainerPort: {
        type: "object",
        properties: { containerPort: { type: "integer" }, protocol: { type: "string" } },
      },
      Volume: {
        type: "object",
        properties: { name: { type: "string" }, emptyDir: { type: "object" }, configMap: { type: "object" } },
      },
    },
  },
};

const doc = parseGvDoc(openapi);
const meta: PatchMeta = new OpenApiV3PatchMeta(doc.schemas, doc.schemas["io.k8s.api.apps.v1.Deployment"] as JsonMap);

function deployment(
  containers: unknown[],
  extra: JsonMap = {},
  labels: Record<string, string> = { app: "web" },
): JsonMap {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", labels },
    spec: { replicas: 2, template: { metadata: { labels: { app: "web" } }, spec: { containers } }, ...extra },
  };
}

/** A small strategic-merge-patch applier (the server's side), enough to check what a patch does. */
function applySmp(target: unknown, patch: JsonMap, m: PatchMeta): JsonMap {
  const out: JsonMap = isMap(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$retainKeys" || k.startsWith("$setElementOrder/")) continue;
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const f = k.slice(k.indexOf("/") + 1);
      const cur = out[f];
      if (Array.isArray(cur)) out[f] = cur.filter((x) => !(v as unknown[]).includes(x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    if (isMap(v)) {
      out[k] = applySmp(out[k], v, m.forStruct(k).meta);
      continue;
    }
    if (Array.isArray(v)) {
      const f = m.forSlice(k);
      if (!f.strategies.includes("merge")) {
        out[k] = structuredClone(v);
        continue;
      }
      const cur = Array.isArray(out[k]) ? [...(out[k] as unknown[])] : [];
      if (f.mergeKey === "") {
        for (const x of v) if (!cur.includes(x)) cur.push(x);
        out[k] = cur;
        continue;
      }
      for (const item of v as JsonMap[]) {
        const i = cur.findIndex((c) => isMap(c) && c[f.mergeKey] === item[f.mergeKey]);
        if (item["$patch"] === "delete") {
          if (i >= 0) cur.splice(i, 1);
        } else if (i >= 0) cur[i] = applySmp(cur[i], item, f.meta);
        else cur.push(applySmp({}, item, f.meta));
      }
      out[k] = cur;
      continue;
    }
    out[k] = v;
  }
  if (Array.isArray(patch["$retainKeys"])) {
    const keep = new Set(patch["$retainKeys"] as string[]);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

function containersOf(d: JsonMap): JsonMap[] {
  return ((d["spec"] as JsonMap)["template"] as JsonMap)["spec"]
    ? ((((d["spec"] as JsonMap)["template"] as JsonMap)["spec"] as JsonMap)["containers"] as JsonMap[])
    : [];
}

describe("three-way strategic merge patch (built-in types)", () => {
  test("nothing changed gives {}", () => {
    const m = deployment([{ name: "app", image: "nginx:1" }]);
    const live = structuredClone(m) as JsonMap;
    (live["metadata"] as JsonMap)["uid"] = "123";
    (live["spec"] as JsonMap)["revisionHistoryLimit"] = 10;
    live["status"] = { replicas: 2 };
    assert.deepEqual(createThreeWayStrategicMergePatch(m, m, live, meta), {});
  });

  test("a field removed from the manifest is removed (and server fields stay)", () => {
    const original = deployment([{ name: "app", image: "nginx:1" }], { paused: true }, { app: "web", tier: "front" });
    const modified = deployment([{ name: "app", image: "nginx:1" }], {}, { app: "web" });
    const live = deployment(
      [{ name: "app", image: "nginx:1" }],
      { paused: true, revisionHistoryLimit: 10 },
      { app: "web", tier: "front", "added-by": "someone" },
    );
    const patch = createThreeWayStrategicMergePatch(original, modified, live, meta);
    assert.deepEqual(patch, { metadata: { labels: { tier: null } }, spec: { paused: null } });
    const after = applySmp(live, patch, meta);
    assert.deepEqual((after["metadata"] as JsonMap)["labels"], { app: "web", "added-by": "someone" });
    assert.equal((after["spec"] as JsonMap)["paused"], undefined);
    assert.equal((after["spec"] as JsonMap)["revisionHistoryLimit"], 10);
  });

  test("without last-applied nothing is deleted (fields only added or changed)", () => {
    const modified = deployment([{ name: "app", image: "nginx:2" }]);
    const live = deployment([{ name: "app", image: "nginx:1" }], { paused: true });
    const patch = createThreeWayStrategicMergePatch(undefined, modified, live, meta);
    assert.deepEqual(patch, {
      spec: {
        template: {
          spec: { containers: [{ name: "app", image: "nginx:2" }], "$setElementOrder/containers": [{ name: "app" }] },
        },
      },
    });
  });

  test("list items merge by key: a removed container gets $patch: delete, an injected one is left alone", () => {
    const original = deployment([
      { name: "app", image: "nginx:1" },
      { name: "sidecar", image: "envoy:1" },
    ]);
    const modified = deployment([{ name: "app", image: "nginx:2" }]);
    const live = deployment([
      { name: "app", image: "nginx:1" },
      { name: "sidecar", image: "envoy:1" },
      { name: "injected", image: "istio" },
    ]);
    const patch = createThreeWayStrategicMergePatch(original, modified, live, meta);
    const podSpec = ((patch["spec"] as JsonMap)["template"] as JsonMap)["spec"] as JsonMap;
    assert.deepEqual(podSpec["$setElementOrder/containers"], [{ name: "app" }]);
    assert.deepEqual(
      new Set((podSpec["containers"] as JsonMap[]).map((c) => lastAppliedJson(c))),
      new Set([
        lastAppliedJson({ name: "app", image: "nginx:2" }),
        lastAppliedJson({ name: "sidecar", $patch: "delete" }),
      ]),
    );
    const after = containersOf(applySmp(live, patch, meta));
    assert.deepEqual(after.map((c) => `${String(c["name"])}=${String(c["image"])}`).sort(), [
      "app=nginx:2",
      "injected=istio",
    ]);
  });

  test("nested merge lists: an env var removed from one container", () => {
    const c = (env: JsonMap[]) => [{ name: "app", image: "x", env }];
    const original = deployment(
      c([
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ]),
    );
    const modified = deployment(c([{ name: "A", value: "1" }]));
    const live = deployment(
      c([
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ]),
    );
    const patch = createThreeWayStrategicMergePatch(original, modified, live, meta);
    assert.deepEqual(patch, {
      spec: {
        template: {
          spec: {
            containers: [
              { name: "app", env: [{ name: "B", $patch: "delete" }], "$setElementOrder/env": [{ name: "A" }] },
            ],
            "$setElementOrder/containers": [{ name: "app" }],
          },
        },
      },
    });
    assert.deepEqual(containersOf(applySmp(live, patch, meta))[0]!["env"], [{ name: "A", value: "1" }]);
  });

  test("numeric merge keys (container ports)", () => {
    const c = (ports: JsonMap[]) => [{ name: "app", image: "x", ports }];
    const original = deployment(c([{ containerPort: 80 }, { containerPort: 443 }]));
    const modified = deployment(c([{ containerPort: 80 }, { containerPort: 8443 }]));
    const live = deployment(
      c([
        { containerPort: 80, protocol: "TCP" },
        { containerPort: 443, protocol: "TCP" },
      ]),
    );
    const patch = createThreeWayStrategicMergePatch(original, modified, live, meta);
    const ports = containersOf(applySmp(live, patch, meta))[0]!["ports"] as JsonMap[];
    assert.deepEqual(ports.map((p) => p["containerPort"]).sort(), [80, 8443]);
    assert.equal(ports.find((p) => p["containerPort"] === 80)!["protocol"], "TCP");
  });

  test("lists without a strategy are replaced whole", () => {
    const original = deployment([{ name: "app", image: "x", args: ["a", "b"] }]);
    const modified = deployment([{ name: "app", image: "x", args: ["a"] }]);
    const live = structuredClone(original);
    const patch = createThreeWayStrategicMergePatch(original, modified, live, meta);
    assert.deepEqual(containersOf(applySmp(live, patch, meta))[0]!["args"], ["a"]);
    assert.deepEqual((((patch["spec"] as JsonMap)["template"] as JsonMap)["spec"] as JsonMap)["containers"], [
      { name: "app", args: ["a"] },
    ]);
  });

  test("merge lists of scalars: $deleteFromPrimitiveList", () => {
    const mk = (finalizers: string[]): JsonMap => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", finalizers },
    });
    const patch = createThreeWayStrategicMergePatch(mk(["a", "b"]), mk(["a", "c"]), mk(["a", "b", "server"]), meta);
    assert.deepEqual(patch, {
      metadata: {
        finalizers: ["c"],
        "$deleteFromPrimitiveList/finalizers": ["b"],
        "$setElementOrder/finalizers": ["a", "c"],
      },
    });
    assert.deepEqual((applySmp(mk(["a", "b", "server"]), patch, meta)["metadata"] as JsonMap)["finalizers"], [
      "a",
      "server",
      "c",
    ]);
  });

  test("retainKeys: switching the strategy type clears the old strategy's fields", () => {
    const original = deployment([{ name: "app", image: "x" }], {
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } },
    });
    const modified = deployment([{ name: "app", image: "x" }], { strategy: { type: "Recreate" } });
    const live = structuredClone(original);
    const patch = createThreeWayStrategicMergePatch(original, modified, live, meta);
    assert.deepEqual((patch["spec"] as JsonMap)["strategy"], {
      type: "Recreate",
      rollingUpdate: null,
      $retainKeys: ["type"],
    });
    assert.deepEqual((applySmp(live, patch, meta)["spec"] as JsonMap)["strategy"], { type: "Recreate" });
  });

  test("maps of strings (nodeSelector) merge key by key", () => {
    const mk = (_ns: Record<string, string>) => deployment([{ name: "app", image: "x" }], {}, { app: "web" });
    const o = mk({});
    ((o["spec"] as JsonMap)["template"] as JsonMap)["spec"] = {
      containers: [{ name: "app", image: "x" }],
      nodeSelector: { a: "1", b: "2" },
    };
    const m = structuredClone(o);
    ((m["spec"] as JsonMap)["template"] as JsonMap)["spec"] = {
      containers: [{ name: "app", image: "x" }],
      nodeSelector: { a: "1" },
    };
    const patch = createThreeWayStrategicMergePatch(o, m, o, meta);
    assert.deepEqual(patch, { spec: { template: { spec: { nodeSelector: { b: null } } } } });
  });

  test("takeover from kubectl: its last-applied annotation is the original", () => {
    // What `kubectl apply` stored (keys sorted, annotations {}).
    const kubectlAnnotation =
      '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app":"web","old":"x"},"name":"web","namespace":"default"},"spec":{"replicas":2,"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1","name":"app"},{"image":"busybox","name":"debug"}]}}}}\n';
    const live: JsonMap = {
      ...deployment(
        [
          { name: "app", image: "nginx:1" },
          { name: "debug", image: "busybox" },
        ],
        {},
        { app: "web", old: "x" },
      ),
    };
    (live["metadata"] as JsonMap)["namespace"] = "default";
    (live["metadata"] as JsonMap)["annotations"] = {
      [LAST_APPLIED_ANNOTATION]: kubectlAnnotation,
      "deployment.kubernetes.io/revision": "1",
    };
    const manifest = deployment([{ name: "app", image: "nginx:1" }]);
    (manifest["metadata"] as JsonMap)["namespace"] = "default";
    const original = parseLastApplied(live);
    assert.ok(original);
    const modified = withLastApplied(manifest) as JsonMap;
    const patch = createThreeWayStrategicMergePatch(original, modified, live, meta);
    const after = applySmp(live, patch, meta);
    assert.deepEqual((after["metadata"] as JsonMap)["labels"], { app: "web" });
    assert.deepEqual(
      containersOf(after).map((c) => c["name"]),
      ["app"],
    );
    const annots = (after["metadata"] as JsonMap)["annotations"] as Record<string, string>;
    assert.equal(annots["deployment.kubernetes.io/revision"], "1");
    assert.equal(
      annots[LAST_APPLIED_ANNOTATION],
      lastAppliedJson({ ...manifest, metadata: { ...(manifest["metadata"] as JsonMap), annotations: {} } }),
    );
    // Applying the same manifest again is a no-op.
    assert.deepEqual(createThreeWayStrategicMergePatch(parseLastApplied(after as never), modified, after, meta), {});
  });

  test("property: the result is the manifest plus fields only others set", () => {
    const name = fc.constantFrom("a", "b", "c", "d", "e");
    const containers = fc.uniqueArray(fc.record({ name, image: fc.constantFrom("x:1", "x:2", "y:1") }), {
      selector: (c) => c.name,
      maxLength: 5,
    });
    const labels = fc.dictionary(fc.constantFrom("l1", "l2", "l3", "l4"), fc.constantFrom("v1", "v2"));
    fc.assert(
      fc.property(containers, containers, containers, labels, labels, labels, (oc, mc, cc, ol, ml, cl) => {
        const original = deployment(oc, {}, ol);
        const modified = deployment(mc, {}, ml);
        // live: what was last applied, plus whatever others did since
        const live = deployment(cc, {}, cl);
        const after = applySmp(live, createThreeWayStrategicMergePatch(original, modified, live, meta), meta);
        const gotLabels = ((after["metadata"] as JsonMap)["labels"] ?? {}) as Record<string, string>;
        const wantLabels: Record<string, string> = { ...ml };
        for (const [k, v] of Object.entries(cl)) if (!(k in ml) && !(k in ol)) wantLabels[k] = v;
        assert.deepEqual(gotLabels, wantLabels);
        const got = new Map(containersOf(after).map((c) => [c["name"], c["image"]]));
        const want = new Map<unknown, unknown>(mc.map((c) => [c.name, c.image]));
        for (const c of cc) if (!want.has(c.name) && !oc.some((o) => o.name === c.name)) want.set(c.name, c.image);
        assert.deepEqual(got, want);
      }),
      { numRuns: 300 },
    );
  });
});

describe("three-way JSON merge patch (custom resources)", () => {
  const cr = (spec: JsonMap, status?: JsonMap): JsonMap => ({
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "w" },
    spec,
    ...(status ? { status } : {}),
  });

  test("unchanged gives {}", () => {
    assert.deepEqual(createThreeWayJsonMergePatch(cr({ a: 1 }), cr({ a: 1 }), cr({ a: 1 }, { ready: true })), {});
  });
  test("a removed field becomes null; server-added fields stay", () => {
    const patch = createThreeWayJsonMergePatch(
      cr({ a: 1, b: { c: 2, d: 3 } }),
      cr({ a: 1, b: { c: 2 } }),
      cr({ a: 1, b: { c: 2, d: 3, e: 4 }, x: 9 }),
    );
    assert.deepEqual(patch, { spec: { b: { d: null } } });
    assert.deepEqual(
      applyMergePatch(cr({ a: 1, b: { c: 2, d: 3, e: 4 }, x: 9 }), patch),
      cr({ a: 1, b: { c: 2, e: 4 }, x: 9 }),
    );
  });
  test("lists are replaced whole", () => {
    const patch = createThreeWayJsonMergePatch(cr({ l: [1, 2] }), cr({ l: [1] }), cr({ l: [1, 2] }));
    assert.deepEqual(patch, { spec: { l: [1] } });
  });
  test("changes and additions come from live vs manifest", () => {
    const patch = createThreeWayJsonMergePatch(cr({ a: 1 }), cr({ a: 2, n: "new" }), cr({ a: 5 }));
    assert.deepEqual(patch, { spec: { a: 2, n: "new" } });
  });
  test("changing apiVersion, kind or name is refused", () => {
    assert.throws(
      () => createThreeWayJsonMergePatch(cr({}), { ...cr({}), kind: "Gadget" }, cr({})),
      /apiVersion, kind and name/,
    );
    assert.throws(
      () => createThreeWayJsonMergePatch(cr({}), { ...cr({}), metadata: { name: "other" } }, cr({})),
      /apiVersion, kind and name/,
    );
  });
  test("property: result = manifest plus fields only others set", () => {
    const m = fc.dictionary(
      fc.constantFrom("a", "b", "c", "d"),
      fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant("s")),
    );
    fc.assert(
      fc.property(m, m, m, (o, mo, cu) => {
        const after = applyMergePatch(cr(cu), createThreeWayJsonMergePatch(cr(o), cr(mo), cr(cu))) as JsonMap;
        const want: JsonMap = { ...mo };
        for (const [k, v] of Object.entries(cu)) if (!(k in mo) && !(k in o)) want[k] = v;
        assert.deepEqual(after["spec"], want);
      }),
    );
  });
});

describe("last-applied encoding, like kubectl", () => {
  test("keys sorted, compact, trailing newline, annotations {}", () => {
    const obj = {
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: { namespace: "default", name: "x" },
      data: { b: "2", a: "1" },
    };
    const w = withLastApplied(obj);
    assert.equal(
      w.metadata!.annotations![LAST_APPLIED_ANNOTATION],
      '{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"x","namespace":"default"}}\n',
    );
  });
  test("Go's HTML escaping and integer-looking keys sort as strings", () => {
    assert.equal(lastAppliedJson({ s: "<a&b>", "10": 1, "9": 2 }), '{"10":1,"9":2,"s":"\\u003ca\\u0026b\\u003e"}\n');
  });
  test("an existing last-applied annotation is not nested into the new one", () => {
    const obj = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "x", annotations: { keep: "y", [LAST_APPLIED_ANNOTATION]: "old" } },
    };
    const w = withLastApplied(obj);
    const stored = JSON.parse(w.metadata!.annotations![LAST_APPLIED_ANNOTATION]!) as JsonMap;
    assert.deepEqual((stored["metadata"] as JsonMap)["annotations"], { keep: "y" });
    assert.equal(w.metadata!.annotations!["keep"], "y");
  });
  test("parseLastApplied tolerates garbage", () => {
    assert.equal(
      parseLastApplied({ metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: "{not json" } } }),
      undefined,
    );
    assert.equal(parseLastApplied({ metadata: {} }), undefined);
  });
});

describe("OpenAPI v3 document index", () => {
  test("finds the kind's schema and whether PATCH takes strategic merge", () => {
    assert.equal(doc.byGvk.get("apps/v1/Deployment"), "io.k8s.api.apps.v1.Deployment");
    assert.equal(doc.smp.get("apps/v1/Deployment"), true);
    const cr = parseGvDoc({
      paths: {
        "/apis/example.com/v1/widgets/{name}": {
          patch: {
            "x-kubernetes-group-version-kind": { group: "example.com", version: "v1", kind: "Widget" },
            requestBody: { content: { "application/merge-patch+json": {} } },
          },
        },
      },
    });
    assert.equal(cr.smp.get("example.com/v1/Widget"), false);
  });
  test("merge keys and strategies resolve through allOf/$ref", () => {
    const containers = meta
      .forStruct("spec")
      .meta.forStruct("template")
      .meta.forStruct("spec")
      .meta.forSlice("containers");
    assert.equal(containers.mergeKey, "name");
    assert.deepEqual(containers.strategies, ["merge"]);
    assert.equal(containers.meta.forSlice("env").mergeKey, "name");
    assert.deepEqual(meta.forStruct("spec").meta.forSlice("nope").strategies, []);
  });
});
