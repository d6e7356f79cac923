import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { evaluateCondition } from "../../provider/kubectl/conditions.js";
import { restartPatch, rfc3339, rolloutStatus } from "../../provider/kubectl/rollout.js";
import { formatWaitCondition, parseWaitFor, type WaitCondition } from "../../provider/kubectl/waitfor.js";

function ok(text: string, allowDelete = true): WaitCondition {
  const p = parseWaitFor(text, { allowDelete });
  if (!p.ok) throw new Error(`expected ${text} to parse: ${p.message}`);
  return p.condition;
}

function err(text: string, allowDelete = true): string {
  const p = parseWaitFor(text, { allowDelete });
  assert.equal(p.ok, false, `expected ${JSON.stringify(text)} to be rejected`);
  return p.ok ? "" : p.message;
}

describe("wait.for: condition=", () => {
  test("condition=Name defaults to True", () => {
    assert.deepEqual(ok("condition=Ready"), { kind: "condition", name: "Ready", value: "True" });
  });
  test("condition=Name=value", () => {
    assert.deepEqual(ok("condition=Ready=False"), { kind: "condition", name: "Ready", value: "False" });
    assert.deepEqual(ok("condition=Available=true"), { kind: "condition", name: "Available", value: "true" });
  });
  test("dotted condition types (CRDs) are fine", () => {
    assert.deepEqual(ok("condition=cert-manager.io/Ready"), {
      kind: "condition",
      name: "cert-manager.io/Ready",
      value: "True",
    });
  });
  test("errors", () => {
    assert.match(err("condition="), /names no condition/);
    assert.match(err("condition=Ready="), /no value/);
    assert.match(err("Condition=Ready"), /lower-case/);
  });
});

describe("wait.for: jsonpath=", () => {
  test("relaxed forms are equivalent", () => {
    for (const f of [
      "jsonpath={.status.phase}=Running",
      "jsonpath=.status.phase=Running",
      "jsonpath=status.phase=Running",
      "jsonpath={status.phase}=Running",
    ]) {
      const c = ok(f);
      assert.equal(c.kind, "jsonpath");
      if (c.kind === "jsonpath") {
        assert.equal(c.expr.source, "{.status.phase}", f);
        assert.equal(c.value, "Running", f);
      }
    }
  });
  test("without a value: existence", () => {
    const c = ok("jsonpath={.status.loadBalancer.ingress}");
    assert.equal(c.kind === "jsonpath" && c.value, undefined);
    const d = ok("jsonpath=.status.loadBalancer.ingress");
    assert.equal(d.kind === "jsonpath" && d.expr.source, "{.status.loadBalancer.ingress}");
  });
  test("braced filters with = inside", () => {
    const c = ok('jsonpath={.status.conditions[?(@.type=="Ready")].status}=True');
    assert.equal(c.kind, "jsonpath");
    if (c.kind === "jsonpath") {
      assert.equal(c.value, "True");
      assert.equal(c.expr.source, '{.status.conditions[?(@.type=="Ready")].status}');
    }
    const d = ok("jsonpath={.items[?(@.v>=2)].n}");
    assert.equal(d.kind === "jsonpath" && d.value, undefined);
    const e = ok('jsonpath={.a[?(@.b!="x")].c}=y');
    assert.equal(e.kind === "jsonpath" && e.value, "y");
  });
  test("an unbraced filter is rejected with the braced form as the fix", () => {
    assert.match(err('jsonpath=.status.conditions[?(@.type=="Ready")].status=True'), /braced form/);
  });
  test("quotes around the value are trimmed, like kubectl", () => {
    const c = ok("jsonpath={.status.phase}='Running'");
    assert.equal(c.kind === "jsonpath" && c.value, "Running");
  });
  test("a value may contain =", () => {
    const c = ok("jsonpath={.metadata.annotations.x}=a=b");
    assert.equal(c.kind === "jsonpath" && c.value, "a=b");
  });
  test("errors", () => {
    assert.match(err("jsonpath="), /needs an expression/);
    assert.match(err("jsonpath={.status.phase}="), /no value/);
    assert.match(err("jsonpath={.status.phase"), /unclosed/);
    assert.match(err("jsonpath={.status.phase}x"), /unexpected/);
    assert.match(err("jsonpath={.a[x]}"), /invalid/);
  });
});

describe("wait.for: delete and the rest", () => {
  test("delete only where allowed", () => {
    assert.deepEqual(ok("delete"), { kind: "delete" });
    assert.match(err("delete", false), /only valid in a wait/);
  });
  test("unknown forms name the accepted ones", () => {
    assert.match(err("ready"), /condition=<Name>/);
    assert.match(err(""), /empty/);
    assert.match(err("create"), /not supported/);
    assert.doesNotMatch(err("ready", false), /delete/);
  });
  test("formatting round-trips", () => {
    for (const f of [
      "condition=Ready",
      "condition=Ready=False",
      "jsonpath={.status.phase}=Running",
      "jsonpath={.status.phase}",
      "delete",
    ]) {
      assert.equal(formatWaitCondition(ok(f)), f);
      assert.deepEqual(ok(formatWaitCondition(ok(f))), ok(f));
    }
  });
});

describe("evaluating a condition on an object", () => {
  const obj = (status: unknown, generation?: number) => ({
    apiVersion: "v1",
    kind: "X",
    metadata: { name: "x", generation },
    status,
  });

  test("condition: case-insensitive type and status", () => {
    const o = obj({ conditions: [{ type: "Ready", status: "True" }] });
    assert.equal(evaluateCondition(ok("condition=Ready"), o).met, true);
    assert.equal(evaluateCondition(ok("condition=ready"), o).met, true);
    assert.equal(evaluateCondition(ok("condition=Ready=true"), o).met, true);
    assert.equal(evaluateCondition(ok("condition=Ready=False"), o).met, false);
  });
  test("condition: missing, or older than the generation, is not met", () => {
    assert.equal(evaluateCondition(ok("condition=Ready"), obj({})).met, false);
    assert.equal(evaluateCondition(ok("condition=Ready"), obj(undefined)).met, false);
    const stale = obj({ observedGeneration: 1, conditions: [{ type: "Ready", status: "True" }] }, 2);
    assert.equal(evaluateCondition(ok("condition=Ready"), stale).met, false);
    const staleOwn = obj(
      { observedGeneration: 2, conditions: [{ type: "Ready", status: "True", observedGeneration: 1 }] },
      2,
    );
    assert.equal(evaluateCondition(ok("condition=Ready"), staleOwn).met, false);
    const fresh = obj({ observedGeneration: 2, conditions: [{ type: "Ready", status: "True" }] }, 2);
    assert.equal(evaluateCondition(ok("condition=Ready"), fresh).met, true);
  });
  test("condition: the detail says what was seen", () => {
    const o = obj({ conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }] });
    assert.match(evaluateCondition(ok("condition=Ready"), o).detail, /Ready is False \(ContainersNotReady\)/);
  });
  test("jsonpath: value and existence", () => {
    const o = obj({ phase: "Running", readyReplicas: 2, empty: "", list: [] });
    assert.equal(evaluateCondition(ok("jsonpath={.status.phase}=Running"), o).met, true);
    assert.equal(evaluateCondition(ok("jsonpath={.status.phase}=Pending"), o).met, false);
    assert.equal(evaluateCondition(ok("jsonpath={.status.readyReplicas}=2"), o).met, true);
    assert.equal(evaluateCondition(ok("jsonpath={.status.phase}"), o).met, true);
    assert.equal(evaluateCondition(ok("jsonpath={.status.empty}"), o).met, false);
    assert.equal(evaluateCondition(ok("jsonpath={.status.list}"), o).met, false);
    assert.equal(evaluateCondition(ok("jsonpath={.status.missing}"), o).met, false);
    assert.equal(evaluateCondition(ok("jsonpath={.status.missing}=x"), o).met, false);
  });
  test("jsonpath: some value equals", () => {
    const o = obj({
      conditions: [
        { type: "A", status: "False" },
        { type: "Ready", status: "True" },
      ],
    });
    assert.equal(evaluateCondition(ok("jsonpath={.status.conditions[*].status}=True"), o).met, true);
    assert.equal(evaluateCondition(ok('jsonpath={.status.conditions[?(@.type=="Ready")].status}=True'), o).met, true);
    assert.equal(evaluateCondition(ok('jsonpath={.status.conditions[?(@.type=="A")].status}=True'), o).met, false);
  });
  test("jsonpath: a nested object never equals a value", () => {
    const o = obj({ nested: { a: 1 } });
    assert.equal(evaluateCondition(ok('jsonpath={.status.nested}={"a":1}'), o).met, false);
  });
  test("delete: only absence", () => {
    assert.equal(evaluateCondition(ok("delete"), undefined).met, true);
    assert.equal(evaluateCondition(ok("delete"), obj({})).met, false);
    assert.equal(evaluateCondition(ok("condition=Ready"), undefined).met, false);
  });
});

describe("rollout status: kubectl's completeness rules (the rollout step's wait condition)", () => {
  const deploy = (generation: number, spec: Record<string, unknown>, status: Record<string, unknown>) => ({
    kind: "Deployment",
    metadata: { name: "d", generation },
    spec,
    status,
  });
  test("Deployment", () => {
    assert.equal(
      rolloutStatus(deploy(2, { replicas: 3 }, { observedGeneration: 1 })).message,
      "Waiting for deployment spec update to be observed...",
    );
    assert.match(
      rolloutStatus(deploy(1, { replicas: 3 }, { observedGeneration: 1, updatedReplicas: 1, replicas: 3 })).message,
      /1 out of 3 new replicas have been updated/,
    );
    assert.match(
      rolloutStatus(
        deploy(1, { replicas: 3 }, { observedGeneration: 1, updatedReplicas: 3, replicas: 4, availableReplicas: 3 }),
      ).message,
      /1 old replicas are pending termination/,
    );
    assert.match(
      rolloutStatus(
        deploy(1, { replicas: 3 }, { observedGeneration: 1, updatedReplicas: 3, replicas: 3, availableReplicas: 2 }),
      ).message,
      /2 of 3 updated replicas are available/,
    );
    assert.deepEqual(
      rolloutStatus(
        deploy(1, { replicas: 3 }, { observedGeneration: 1, updatedReplicas: 3, replicas: 3, availableReplicas: 3 }),
      ),
      { state: "done", message: 'deployment "d" successfully rolled out' },
    );
    assert.equal(rolloutStatus(deploy(1, { replicas: 0 }, { observedGeneration: 1 })).state, "done");
    const stuck = deploy(
      1,
      { replicas: 3 },
      {
        observedGeneration: 1,
        conditions: [{ type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded" }],
      },
    );
    assert.deepEqual(rolloutStatus(stuck), {
      state: "failed",
      message: 'deployment "d" exceeded its progress deadline',
    });
  });
  test("DaemonSet", () => {
    const ds = (strategy: string, generation: number, status: Record<string, unknown>) => ({
      kind: "DaemonSet",
      metadata: { name: "a", generation },
      spec: { updateStrategy: { type: strategy } },
      status,
    });
    assert.equal(rolloutStatus(ds("OnDelete", 1, {})).state, "failed");
    assert.equal(
      rolloutStatus(ds("RollingUpdate", 2, { observedGeneration: 1 })).message,
      "Waiting for daemon set spec update to be observed...",
    );
    assert.match(
      rolloutStatus(
        ds("RollingUpdate", 1, { observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 2 }),
      ).message,
      /2 out of 3 new pods have been updated/,
    );
    assert.match(
      rolloutStatus(
        ds("RollingUpdate", 1, {
          observedGeneration: 1,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 1,
        }),
      ).message,
      /1 of 3 updated pods are available/,
    );
    assert.equal(
      rolloutStatus(
        ds("RollingUpdate", 1, {
          observedGeneration: 1,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 3,
        }),
      ).state,
      "done",
    );
  });
  test("StatefulSet", () => {
    const sts = (spec: Record<string, unknown>, status: Record<string, unknown>, generation = 1) => ({
      kind: "StatefulSet",
      metadata: { name: "s", generation },
      spec,
      status,
    });
    const ru = (partition?: number) => ({
      type: "RollingUpdate",
      ...(partition === undefined ? {} : { rollingUpdate: { partition } }),
    });
    assert.equal(rolloutStatus(sts({ updateStrategy: { type: "OnDelete" } }, {})).state, "failed");
    assert.equal(
      rolloutStatus(sts({ replicas: 2, updateStrategy: ru(0) }, { observedGeneration: 0 })).message,
      "Waiting for statefulset spec update to be observed...",
    );
    assert.equal(
      rolloutStatus(sts({ replicas: 3, updateStrategy: ru(0) }, { observedGeneration: 1, readyReplicas: 1 })).message,
      "Waiting for 2 pods to be ready...",
    );
    assert.match(
      rolloutStatus(
        sts({ replicas: 3, updateStrategy: ru(1) }, { observedGeneration: 1, readyReplicas: 3, updatedReplicas: 1 }),
      ).message,
      /1 out of 2 new pods have been updated/,
    );
    assert.deepEqual(
      rolloutStatus(
        sts({ replicas: 3, updateStrategy: ru(1) }, { observedGeneration: 1, readyReplicas: 3, updatedReplicas: 2 }),
      ),
      { state: "done", message: "partitioned roll out complete: 2 new pods have been updated..." },
    );
    assert.match(
      rolloutStatus(
        sts(
          { replicas: 2, updateStrategy: ru() },
          { observedGeneration: 1, readyReplicas: 2, updateRevision: "b", currentRevision: "a", updatedReplicas: 1 },
        ),
      ).message,
      /waiting for statefulset rolling update to complete 1 pods at revision b/,
    );
    assert.equal(
      rolloutStatus(
        sts(
          { replicas: 2, updateStrategy: ru() },
          { observedGeneration: 1, readyReplicas: 2, updateRevision: "b", currentRevision: "b", currentReplicas: 2 },
        ),
      ).state,
      "done",
    );
  });
  test("restart patch and timestamp", () => {
    const d = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));
    assert.equal(rfc3339(d), "2025-01-02T03:04:05Z");
    assert.deepEqual(restartPatch(d), {
      spec: {
        template: { metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": "2025-01-02T03:04:05Z" } } },
      },
    });
  });
});
