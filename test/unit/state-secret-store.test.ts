/**
 * The Secret store's protocol against a fake API server (the real-cluster
 * checks live in test/integration/state-secret.test.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Journal } from "../../provider/state/journal.js";
import type { DeleteOptions, DeleteResult, KubeObject, ResourceType } from "../../provider/kube/index.js";
import {
  MANAGED_BY_LABEL,
  SecretRecordStore,
  SPEC_LABEL,
  labelValue,
  type SecretClient,
} from "../../provider/state/secret-store.js";
import { PermanentStoreError, RecordConflictError } from "../../provider/state/store.js";
import { runSpec } from "../../provider/engine/run.js";
import { noExtras, specFixture, StubExecutors } from "./support/engine-fixtures.js";

class FakeApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface FakeSecret {
  metadata: {
    name: string;
    namespace: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  type?: string;
  data?: Record<string, string>;
}

/** Secrets in one namespace, with resourceVersion checks and per-verb denial. */
class FakeSecrets implements SecretClient {
  readonly objects = new Map<string, FakeSecret>();
  readonly log: string[] = [];
  deny = new Set<string>();
  rv = 1;
  /** Called before a replace is applied (to simulate a concurrent writer). */
  beforePut: (() => void) | undefined;

  private enter(verb: string, rt: ResourceType, namespace: string | undefined, name: string): void {
    assert.equal(rt.resource, "secrets");
    assert.equal(rt.group, "");
    this.log.push(`${verb} ${namespace}/${name}`);
    if (this.deny.has(verb))
      throw new FakeApiError(
        403,
        `secrets is forbidden: User "sa" cannot ${verb} resource "secrets" in API group "" in the namespace "${namespace}"`,
      );
  }

  async get(rt: ResourceType, name: string, namespace?: string): Promise<KubeObject | undefined> {
    this.enter("get", rt, namespace, name);
    const o = this.objects.get(name);
    return o === undefined ? undefined : (structuredClone(o) as KubeObject);
  }

  async create(rt: ResourceType, obj: KubeObject): Promise<KubeObject> {
    const body = structuredClone(obj) as unknown as FakeSecret;
    this.enter("create", rt, body.metadata.namespace, body.metadata.name);
    if (this.objects.has(body.metadata.name)) throw new FakeApiError(409, "already exists");
    body.metadata.resourceVersion = String(++this.rv);
    this.objects.set(body.metadata.name, body);
    return structuredClone(body) as KubeObject;
  }

  async replace(rt: ResourceType, obj: KubeObject): Promise<KubeObject> {
    const body = structuredClone(obj) as unknown as FakeSecret;
    this.enter("update", rt, body.metadata.namespace, body.metadata.name);
    this.beforePut?.();
    const cur = this.objects.get(body.metadata.name);
    if (!cur) throw new FakeApiError(404, "not found");
    if (body.metadata.resourceVersion !== cur.metadata.resourceVersion)
      throw new FakeApiError(409, "the object has been modified");
    body.metadata.resourceVersion = String(++this.rv);
    this.objects.set(body.metadata.name, body);
    return structuredClone(body) as KubeObject;
  }

  async delete(rt: ResourceType, name: string, namespace?: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    this.enter("delete", rt, namespace, name);
    const cur = this.objects.get(name);
    if (!cur) return { status: "not-found", name, namespace };
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== cur.metadata.resourceVersion)
      throw new FakeApiError(409, "precondition failed");
    this.objects.delete(name);
    return { status: "deleted", name, namespace, uid: undefined, object: undefined };
  }
}

const loc = { namespace: "kube-system", name: "khook-state-demo" };

function record(api: FakeSecrets): unknown {
  const o = api.objects.get(loc.name);
  assert.ok(o?.data?.["record.json"]);
  return JSON.parse(Buffer.from(o.data["record.json"], "base64").toString("utf8"));
}

describe("state: Secret store protocol", () => {
  test("the record Secret is labelled managed-by khook and khook.io/spec, with one JSON blob in data[record.json]", async () => {
    const api = new FakeSecrets();
    const store = new SecretRecordStore(api, loc, "demo");
    assert.equal(await store.read(), undefined);
    await store.write('{"x":1}', undefined);
    const o = api.objects.get(loc.name);
    assert.equal(o?.metadata.labels?.[MANAGED_BY_LABEL], "khook");
    assert.equal(o?.metadata.labels?.[SPEC_LABEL], "demo");
    assert.deepEqual(Object.keys(o?.data ?? {}), ["record.json"]);
    assert.deepEqual(record(api), { x: 1 });
    assert.deepEqual(api.log, ["get kube-system/khook-state-demo", "create kube-system/khook-state-demo"]);
    assert.deepEqual((await store.read())?.json, '{"x":1}');
  });

  test("khook refuses a Secret of the record's name that it does not own, and writes nothing", async () => {
    const api = new FakeSecrets();
    api.objects.set(loc.name, {
      metadata: { ...loc, resourceVersion: "7", labels: { app: "other" } },
      data: { password: "c2VjcmV0" },
    });
    const store = new SecretRecordStore(api, loc, "demo");
    await assert.rejects(store.read(), (e: unknown) => {
      assert.ok(e instanceof PermanentStoreError);
      assert.match(e.message, /refusing to use Secret "khook-state-demo" in namespace "kube-system"/);
      assert.match(e.message, /app\.kubernetes\.io\/managed-by=khook/);
      assert.match(e.message, /state\.name/);
      return true;
    });
    await assert.rejects(store.delete(undefined), PermanentStoreError);
    assert.ok(
      api.log.every((l) => l.startsWith("get")),
      api.log.join("\n"),
    );
    assert.deepEqual(api.objects.get(loc.name)?.data, { password: "c2VjcmV0" });
  });

  test("every write carries the resourceVersion it was given; losing the race is a conflict, never an overwrite", async () => {
    const api = new FakeSecrets();
    const store = new SecretRecordStore(api, loc, "demo");
    await store.read();
    const v1 = await store.write('{"v":1}', undefined);
    const v2 = await store.write('{"v":2}', v1);
    // Another runner writes in between.
    api.objects.get(loc.name)!.metadata.resourceVersion = String(++api.rv);
    await assert.rejects(
      store.write('{"v":3}', v2),
      (e: unknown) => e instanceof RecordConflictError && e.kind === "changed",
    );
    assert.deepEqual(record(api), { v: 2 }, "the other runner's version is not overwritten");
    assert.deepEqual(
      api.log.map((l) => l.split(" ")[0]),
      ["get", "create", "update", "update"],
    );
    await assert.rejects(
      store.write('{"v":4}', undefined),
      (e: unknown) => e instanceof RecordConflictError && e.kind === "exists",
    );
  });

  test("a Secret deleted mid-run is a conflict of kind gone (the journal decides what to write)", async () => {
    const api = new FakeSecrets();
    const store = new SecretRecordStore(api, loc, "demo");
    await store.read();
    const v1 = await store.write('{"v":1}', undefined);
    api.objects.delete(loc.name);
    await assert.rejects(
      store.write('{"v":2}', v1),
      (e: unknown) => e instanceof RecordConflictError && e.kind === "gone",
    );
    assert.equal(api.objects.size, 0);
  });

  test("keeps labels, annotations and the type of an owned Secret when replacing it", async () => {
    const api = new FakeSecrets();
    api.objects.set(loc.name, {
      metadata: {
        ...loc,
        resourceVersion: "3",
        labels: { [MANAGED_BY_LABEL]: "khook", team: "platform" },
        annotations: { note: "hi" },
      },
      type: "khook.io/state",
      data: {},
    });
    const store = new SecretRecordStore(api, loc, "demo");
    assert.deepEqual(await store.read(), { json: undefined, version: "3" });
    await store.write("{}", "3");
    const o = api.objects.get(loc.name)!;
    assert.equal(o.metadata.labels?.["team"], "platform");
    assert.equal(o.metadata.annotations?.["note"], "hi");
    assert.equal(o.type, "khook.io/state");
  });

  test("RBAC: a forbidden write names the verb, the Secret and the namespace", async () => {
    const api = new FakeSecrets();
    api.deny.add("create");
    const store = new SecretRecordStore(api, loc, "demo");
    await store.read();
    await assert.rejects(store.write("{}", undefined), (e: unknown) => {
      assert.ok(e instanceof PermanentStoreError);
      assert.match(e.message, /^forbidden to create Secret "khook-state-demo" in namespace "kube-system"/);
      assert.match(e.message, /get, create and update on secrets/);
      return true;
    });
  });

  test("RBAC: a run whose record write is forbidden fails with that message (exit 1) before its first step (no lease, no run)", async () => {
    const api = new FakeSecrets();
    api.deny.add("create");
    const spec = specFixture([{ name: "a" }], { name: "demo", state: loc });
    const store = new SecretRecordStore(api, loc, "demo");
    const r = await runSpec(spec, {
      mode: "apply",
      executors: new StubExecutors().map,
      context: noExtras,
      journal: Journal.forSpec(spec, store),
    });
    assert.equal(r.steps[0]?.status, "skipped");
    assert.equal(r.status, "failed");
    assert.match(r.journalError ?? "", /forbidden to create Secret "khook-state-demo" in namespace "kube-system"/);
    assert.equal(store.calls.create, 1, "no retries after a permanent error");
  });

  test("a missing namespace is explained", async () => {
    const api: SecretClient = {
      get: () => Promise.resolve(undefined),
      create: () => Promise.reject(new FakeApiError(404, 'namespaces "nope" not found')),
      replace: () => Promise.reject(new FakeApiError(404, "not found")),
      delete: (_rt, name, namespace) => Promise.resolve({ status: "not-found", name, namespace }),
    };
    const store = new SecretRecordStore(api, { namespace: "nope", name: "x" }, "demo");
    await store.read();
    await assert.rejects(store.write("{}", undefined), /namespace "nope" does not exist/);
  });

  test("delete uses the resourceVersion precondition and treats absent as done", async () => {
    const api = new FakeSecrets();
    const store = new SecretRecordStore(api, loc, "demo");
    await store.read();
    const v = await store.write("{}", undefined);
    api.objects.get(loc.name)!.metadata.resourceVersion = String(++api.rv);
    await assert.rejects(store.delete(v), RecordConflictError);
    assert.equal(api.objects.size, 1, "a record changed since it was read is not deleted");
    await store.delete(api.objects.get(loc.name)!.metadata.resourceVersion);
    assert.equal(api.objects.size, 0);
    await store.delete(v);
    const fresh = new SecretRecordStore(api, loc, "demo");
    await fresh.delete(undefined);
  });

  test("delete refuses a foreign Secret", async () => {
    const api = new FakeSecrets();
    api.objects.set(loc.name, { metadata: { ...loc, resourceVersion: "1" } });
    await assert.rejects(new SecretRecordStore(api, loc, "demo").delete(undefined), PermanentStoreError);
    assert.equal(api.objects.size, 1);
  });

  test("spec names become valid label values", () => {
    assert.equal(labelValue("demo"), "demo");
    assert.equal(labelValue("a".repeat(80)).length, 63);
    assert.equal(labelValue("-x_"), "x");
  });

  test("a full apply costs one GET and one write per step completion at most (coalesced)", async () => {
    const api = new FakeSecrets();
    const spec = specFixture(
      Array.from({ length: 30 }, (_, i) => ({ name: `s${i}` })),
      { name: "demo", state: loc },
    );
    const store = new SecretRecordStore(api, loc, "demo");
    await runSpec(spec, {
      mode: "apply",
      executors: new StubExecutors().map,
      context: noExtras,
      journal: Journal.forSpec(spec, store),
    });
    assert.equal(store.calls.get, 1);
    assert.ok(store.calls.create + store.calls.update <= 31, JSON.stringify(store.calls));
    // Unchanged re-run: one GET, and only the record writes.
    const again = new SecretRecordStore(api, loc, "demo");
    await runSpec(spec, {
      mode: "apply",
      executors: new StubExecutors().map,
      context: noExtras,
      journal: Journal.forSpec(spec, again),
    });
    assert.equal(again.calls.get, 1);
    assert.ok(again.calls.update <= 2, JSON.stringify(again.calls));
    assert.equal(again.calls.create + again.calls.delete, 0);
  });
});
