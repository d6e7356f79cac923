/**
 * wait-names-its-blocking-cause: a wait that does not converge names what blocks it by
 * following the waited-on objects one hop at a time (Deployment → ReplicaSet → Pod → claim),
 * one line per distinct cause. Every "blocked" case has a near twin that is not.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MAX_CAUSES, stallCauses } from "../../provider/kubectl/blockers.js";
import type { KubeObject } from "../../provider/kubectl/types.js";
import { StallMonitor, stallAfterMs } from "../../provider/steps/cluster/stall.js";
import { contextFor, loadSteps } from "./support/executor-context.js";
import { FakeKube } from "./support/fake-kube.js";

let uidSeq = 0;
function mk(kind: string, name: string, extra: Record<string, unknown> = {}, owner?: KubeObject): KubeObject {
  return {
    kind,
    metadata: {
      name,
      namespace: "db",
      uid: `uid-${kind}-${name}-${++uidSeq}`,
      labels: { app: "mysql" },
      ...(owner
        ? { ownerReferences: [{ uid: owner.metadata?.uid, kind: owner.kind, name: owner.metadata?.name }] }
        : {}),
    },
    ...extra,
  };
}

const deployment = (): KubeObject =>
  mk("Deployment", "mysql", { spec: { replicas: 1, selector: { matchLabels: { app: "mysql" } } } });
const rsOf = (d: KubeObject, replicas = 1): KubeObject =>
  mk("ReplicaSet", `mysql-${replicas}`, { spec: { replicas } }, d);
function pod(
  owner: KubeObject | undefined,
  name: string,
  status: Record<string, unknown>,
  spec: Record<string, unknown> = {},
): KubeObject {
  return mk("Pod", name, { spec: { containers: [{ name: "main", image: "mysql:8" }], ...spec }, status }, owner);
}
const event = (
  about: KubeObject,
  type: "Warning" | "Normal",
  reason: string,
  message: string,
  at = "2026-11-25T10:00:00Z",
): KubeObject =>
  ({
    kind: "Event",
    metadata: { name: `e${++uidSeq}`, namespace: "db" },
    involvedObject: { uid: about.metadata?.uid, kind: about.kind, name: about.metadata?.name },
    type,
    reason,
    message,
    lastTimestamp: at,
  }) as KubeObject;

const pending = { phase: "Pending" };
const withClaim = { volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data" } }] };

describe("wait-names-its-blocking-cause", () => {
  test("an unbound claim: the deployment's pod is blocked by the claim, named with the binder's reason (one hop past the scheduler)", () => {
    const d = deployment();
    const rs = rsOf(d);
    const p = pod(
      rs,
      "mysql-abc",
      {
        ...pending,
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message: "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
          },
        ],
      },
      withClaim,
    );
    const claim = mk("PersistentVolumeClaim", "data", { status: { phase: "Pending" } });
    const binding = event(
      claim,
      "Normal",
      "FailedBinding",
      "no persistent volumes available for this claim and no storage class is set",
    );
    assert.deepEqual(stallCauses({ subjects: [d], related: [rs, p, claim, binding] }), [
      "pod/mysql-abc: persistentvolumeclaim/data is not bound (no persistent volumes available for this claim and no storage class is set)",
    ]);
    // The twin: the claim is bound, the pod scheduled and starting. Nothing blocks it.
    const bound = { ...claim, status: { phase: "Bound" } };
    const starting = pod(
      rs,
      "mysql-abc",
      {
        ...pending,
        conditions: [{ type: "PodScheduled", status: "True" }],
        containerStatuses: [{ name: "main", state: { waiting: { reason: "ContainerCreating" } } }],
      },
      withClaim,
    );
    assert.deepEqual(stallCauses({ subjects: [d], related: [rs, starting, bound] }), []);
  });

  test("a claim the pod names that does not exist is the cause", () => {
    const d = deployment();
    const rs = rsOf(d);
    const p = pod(rs, "mysql-abc", pending, withClaim);
    assert.deepEqual(stallCauses({ subjects: [d], related: [rs, p] }), [
      "pod/mysql-abc: persistentvolumeclaim/data does not exist",
    ]);
  });

  test("an image that cannot be pulled: the container's waiting reason and message", () => {
    const d = deployment();
    const rs = rsOf(d);
    const p = pod(rs, "mysql-abc", {
      ...pending,
      containerStatuses: [
        {
          name: "main",
          state: { waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "mysql:nope"' } },
        },
      ],
    });
    assert.deepEqual(stallCauses({ subjects: [d], related: [rs, p] }), [
      'pod/mysql-abc: container main is waiting: ImagePullBackOff (Back-off pulling image "mysql:nope")',
    ]);
  });

  test("a crash loop: the waiting reason and the last exit code", () => {
    const s = mk("StatefulSet", "mysql");
    const p = pod(s, "mysql-0", {
      phase: "Running",
      containerStatuses: [
        {
          name: "main",
          state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 5m0s restarting failed container" } },
          lastState: { terminated: { exitCode: 137, reason: "OOMKilled" } },
        },
      ],
    });
    assert.deepEqual(stallCauses({ subjects: [s], related: [p] }), [
      "pod/mysql-0: container main is waiting: CrashLoopBackOff (back-off 5m0s restarting failed container), last exit code 137 (OOMKilled)",
    ]);
  });

  test("an unschedulable pod: the scheduler's message", () => {
    const d = deployment();
    const rs = rsOf(d);
    const p = pod(rs, "mysql-abc", {
      ...pending,
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
        },
      ],
    });
    assert.deepEqual(stallCauses({ subjects: [d], related: [rs, p] }), [
      "pod/mysql-abc: cannot be scheduled: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector",
    ]);
  });

  test("one line per distinct cause: identical causes of several pods share a line; a fourth is counted", () => {
    const d = mk("DaemonSet", "agent");
    const stuck = {
      ...pending,
      containerStatuses: [{ name: "main", state: { waiting: { reason: "ErrImagePull", message: "not found" } } }],
    };
    const pods = ["a", "b", "c", "d"].map((n) => pod(d, `agent-${n}`, stuck));
    assert.deepEqual(stallCauses({ subjects: [d], related: pods }), [
      "pod/agent-a, pod/agent-b, pod/agent-c and 1 more: container main is waiting: ErrImagePull (not found)",
    ]);
  });

  test("a controller that cannot create its pods (quota, an admission webhook): its FailedCreate", () => {
    const d = deployment();
    const rs = mk(
      "ReplicaSet",
      "mysql-1",
      {
        spec: { replicas: 1 },
        status: {
          conditions: [
            {
              type: "ReplicaFailure",
              status: "True",
              reason: "FailedCreate",
              message: 'pods "mysql-1-x" is forbidden: exceeded quota: compute',
            },
          ],
        },
      },
      d,
    );
    assert.deepEqual(stallCauses({ subjects: [d], related: [rs] }), [
      'replicaset/mysql-1: cannot create pods: FailedCreate: pods "mysql-1-x" is forbidden: exceeded quota: compute',
    ]);
    const job = mk("Job", "migrate");
    const denied = event(
      job,
      "Warning",
      "FailedCreate",
      'Error creating: admission webhook "policy.example.com" denied the request: no',
    );
    assert.deepEqual(stallCauses({ subjects: [job], related: [denied] }), [
      'job/migrate: cannot create pods: FailedCreate: Error creating: admission webhook "policy.example.com" denied the request: no',
    ]);
  });

  test("a Job's failed pod: the container's exit code", () => {
    const job = mk("Job", "migrate");
    const p = pod(job, "migrate-x", {
      phase: "Failed",
      containerStatuses: [{ name: "main", state: { terminated: { exitCode: 3, reason: "Error" } } }],
    });
    assert.deepEqual(stallCauses({ subjects: [job], related: [p] }), [
      "pod/migrate-x: container main exited with code 3 (Error)",
    ]);
    const succeeded = pod(job, "migrate-y", {
      phase: "Succeeded",
      containerStatuses: [{ name: "main", state: { terminated: { exitCode: 0, reason: "Completed" } } }],
    });
    assert.deepEqual(stallCauses({ subjects: [job], related: [succeeded] }), []);
  });

  test("a Service without endpoints: no pod matches its selector, or its pods are not ready", () => {
    const svc = mk("Service", "mysql", { spec: { selector: { app: "mysql" } } });
    assert.deepEqual(stallCauses({ subjects: [svc], related: [] }), [
      "service/mysql: has no endpoints: no pod matches its selector app=mysql",
    ]);
    const slice = {
      kind: "EndpointSlice",
      metadata: { name: "mysql-x", namespace: "db", labels: { "kubernetes.io/service-name": "mysql" } },
      endpoints: [{ conditions: { ready: true } }],
    } as KubeObject;
    assert.deepEqual(stallCauses({ subjects: [svc], related: [slice] }), []);
    const notReady = pod(undefined, "mysql-0", { phase: "Running", conditions: [{ type: "Ready", status: "False" }] });
    assert.deepEqual(stallCauses({ subjects: [svc], related: [notReady] }), [
      "service/mysql: has no ready endpoints: 1 matching pod is not ready",
    ]);
  });

  test("a pod whose status says nothing: the newest warning event about it", () => {
    const p = pod(undefined, "web", {
      ...pending,
      conditions: [
        { type: "PodScheduled", status: "True" },
        { type: "Ready", status: "False" },
      ],
    });
    const older = event(
      p,
      "Warning",
      "FailedMount",
      'MountVolume.SetUp failed for volume "cfg": configmap "cfg" not found',
      "2026-11-25T10:00:00Z",
    );
    const newer = event(
      p,
      "Warning",
      "FailedMount",
      'MountVolume.SetUp failed for volume "cfg": configmap "cfg2" not found',
      "2026-11-25T10:01:00Z",
    );
    const normal = event(p, "Normal", "Scheduled", "assigned", "2026-11-25T10:02:00Z");
    assert.deepEqual(stallCauses({ subjects: [p], related: [older, newer, normal] }), [
      'pod/web: FailedMount: MountVolume.SetUp failed for volume "cfg": configmap "cfg2" not found',
    ]);
  });

  test("old ReplicaSets scaled to zero are not followed: their pods' troubles are history", () => {
    const d = deployment();
    const old = rsOf(d, 0);
    const current = rsOf(d, 1);
    const oldPod = pod(old, "mysql-old", {
      ...pending,
      containerStatuses: [{ name: "main", state: { waiting: { reason: "ImagePullBackOff" } } }],
    });
    const newPod = pod(current, "mysql-new", { phase: "Running", conditions: [{ type: "Ready", status: "True" }] });
    assert.deepEqual(stallCauses({ subjects: [d], related: [old, current, oldPod, newPod] }), []);
  });

  test(`at most ${MAX_CAUSES} lines; the rest is counted`, () => {
    const d = mk("DaemonSet", "agent");
    const pods = Array.from({ length: 9 }, (_, i) =>
      pod(d, `agent-${i}`, {
        ...pending,
        containerStatuses: [{ name: "main", state: { waiting: { reason: "ErrImagePull", message: `image ${i}` } } }],
      }),
    );
    const lines = stallCauses({ subjects: [d], related: pods });
    assert.equal(lines.length, MAX_CAUSES);
    assert.equal(lines.at(-1), `and ${9 - MAX_CAUSES + 1} more causes`);
  });
});

describe("wait-logs-each-blocking-cause-once", () => {
  test("after stallAfterMs without progress the causes are logged, each distinct one once; progress restarts the clock", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const kube = new FakeKube();
    const pull = (image: string) => ({
      phase: "Pending",
      containerStatuses: [
        {
          name: "main",
          state: { waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${image}"` } },
        },
      ],
    });
    kube.seed({ apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "apps" }, status: pull("web:1") });
    const lines: string[] = [];
    const ctx = contextFor(
      loadSteps("  - name: w\n    wait: { for: condition=Ready, on: pod/web, namespace: apps }\n"),
      kube,
      lines,
    );
    const every = stallAfterMs(ctx.deadline);
    const monitor = new StallMonitor(ctx, () => [{ apiVersion: "v1", kind: "Pod", name: "web", namespace: "apps" }]);
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 50; i++) await new Promise<void>((r) => setImmediate(r));
    };
    t.mock.timers.tick(every - 1);
    await settle();
    assert.deepEqual(lines, [], "nothing before the wait has stalled for stallAfterMs");
    monitor.progress();
    t.mock.timers.tick(every - 1);
    await settle();
    assert.deepEqual(lines, [], "progress restarts the clock");
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(lines, [
      'blocked: pod/web: container main is waiting: ImagePullBackOff (Back-off pulling image "web:1")',
    ]);
    t.mock.timers.tick(every);
    await settle();
    assert.equal(lines.length, 1, "the same cause is not logged again");
    kube.seed({ apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "apps" }, status: pull("web:2") });
    t.mock.timers.tick(every);
    await settle();
    assert.equal(
      lines.at(-1),
      'blocked: pod/web: container main is waiting: ImagePullBackOff (Back-off pulling image "web:2")',
      "a new cause is logged",
    );
    monitor.stop();
  });
});
