// The lab's launcher, its pure half (test/harness/launch-plan.ts, lab-images.ts): how a pod's
// container becomes a host process, and kwok's stages agreeing with the launcher on which pods are its.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as yaml from "js-yaml";
import { LAB_IMAGES, imageName, labImageFor } from "../harness/lab-images.js";
import {
  LaunchError,
  containerEnv,
  expandVars,
  hostPath,
  planLaunch,
  resourceValue,
  type PlanInput,
} from "../harness/launch-plan.js";
import { goDurationMs } from "../harness/launcher.js";
import { repoRoot } from "../harness/util.js";

test("lab: kwok's stages leave exactly the launcher's images to it (pod-ready and pod-complete skip them, pod-launch takes them)", () => {
  const stages = yaml.loadAll(
    fs.readFileSync(path.join(repoRoot(), "test", "harness", "kwok", "stages.yaml"), "utf8"),
  ) as {
    metadata: { name: string };
    spec: { selector: { matchExpressions: { key: string; operator: string; values?: string[] }[] } };
  }[];
  const byImage = (name: string) => {
    const s = stages.find((x) => x.metadata.name === name);
    assert.ok(s, `stage ${name}`);
    return s.spec.selector.matchExpressions.filter((e) => e.key.startsWith(".spec.containers.[].image | "));
  };
  const names = LAB_IMAGES.map((i) => i.image).sort();
  for (const [stage, op] of [
    ["pod-ready", "NotIn"],
    ["pod-complete", "NotIn"],
    ["pod-launch", "In"],
  ] as const) {
    const exprs = byImage(stage);
    assert.equal(exprs.length, 1, stage);
    assert.equal(exprs[0]!.operator, op, stage);
    assert.deepEqual([...exprs[0]!.values!].sort(), names, stage);
  }
});

test("lab: an image is matched by its repository's last path segment, whatever the registry, tag or digest", () => {
  assert.equal(imageName("quay.io/jetstack/cert-manager-webhook:v1.21.2"), "cert-manager-webhook");
  assert.equal(
    imageName("127.0.0.1:5000/mirror/jetstack/cert-manager-controller@sha256:abcd"),
    "cert-manager-controller",
  );
  assert.equal(imageName("registry.k8s.io/metrics-server/metrics-server:v0.8.1"), "metrics-server");
  assert.equal(imageName("cert-manager-cainjector"), "cert-manager-cainjector");
  assert.equal(labImageFor("localhost:5000/cert-manager-webhook-extra:1"), undefined);
  assert.equal(labImageFor("busybox:1")?.tool, undefined);
});

test("lab: $(VAR) expands as the kubelet expands it", () => {
  const vars = new Map([
    ["A", "x"],
    ["B", "$(A)"],
  ]);
  assert.equal(expandVars("--ns=$(A)", vars), "--ns=x");
  assert.equal(expandVars("$$(A) $(C) $ $(A", vars), "$(A) $(C) $ $(A");
  assert.equal(expandVars("$(B)", vars), "$(A)", "values are not expanded twice");
});

const pod = (containers: unknown[], extra: Record<string, unknown> = {}) => ({
  metadata: { name: "web-1", namespace: "cert-manager", uid: "u-1", labels: { app: "web" } },
  spec: { serviceAccountName: "web", nodeName: "kwok-node-0", containers, ...extra },
  status: { podIP: "10.244.0.9", hostIP: "10.0.0.1" },
});

function input(p: ReturnType<typeof pod>, over: Partial<PlanInput> = {}): PlanInput {
  let next = 40000;
  const container = p.spec.containers[0] as { image: string };
  return {
    pod: p,
    container,
    image: labImageFor(container.image)!,
    data: { secrets: {}, configMaps: {} },
    mounts: new Map(),
    freePort: () => next++,
    kubeconfig: "/lab/pod/kubeconfig",
    baseEnv: { PATH: "/usr/bin" },
    ...over,
  };
}

test("lab: cert-manager's webhook as its chart runs it: $(POD_NAMESPACE) expanded, listeners on loopback ports, the pod's kubeconfig, the readiness probe on its healthz port", () => {
  const p = pod([
    {
      name: "cert-manager-webhook",
      image: "quay.io/jetstack/cert-manager-webhook:v1.21.2",
      args: [
        "--v=2",
        "--secure-port=10250",
        "--dynamic-serving-ca-secret-namespace=$(POD_NAMESPACE)",
        "--dynamic-serving-dns-names=cm-webhook.$(POD_NAMESPACE).svc",
      ],
      env: [{ name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } }],
      ports: [
        { name: "https", containerPort: 10250 },
        { name: "healthcheck", containerPort: 6080 },
      ],
      readinessProbe: { httpGet: { path: "/healthz", port: "healthcheck", scheme: "HTTP" } },
    },
  ]);
  const plan = planLaunch(input(p));
  assert.deepEqual(plan.args, [
    "--v=2",
    "--dynamic-serving-ca-secret-namespace=cert-manager",
    "--dynamic-serving-dns-names=cm-webhook.cert-manager.svc",
    "--secure-port=40000",
    "--healthz-port=40001",
    "--metrics-listen-address=127.0.0.1:40002",
    "--kubeconfig=/lab/pod/kubeconfig",
  ]);
  assert.deepEqual(plan.env, { PATH: "/usr/bin", POD_NAMESPACE: "cert-manager", KUBECONFIG: "/lab/pod/kubeconfig" });
  assert.deepEqual(
    plan.ports.map((x) => [x.containerPort, x.localPort]),
    [
      [10250, 40000],
      [6080, 40001],
      [9402, 40002],
    ],
  );
  assert.deepEqual(plan.readiness, { kind: "http", scheme: "HTTP", path: "/healthz", headers: {}, localPort: 40001 });
});

test("lab: metrics-server's --cert-dir on its emptyDir moves to the pod's directory, and it binds loopback only", () => {
  const p = pod(
    [
      {
        name: "metrics-server",
        image: "registry.k8s.io/metrics-server/metrics-server:v0.8.1",
        args: ["--secure-port=10250", "--cert-dir=/tmp", "--kubelet-use-node-status-port"],
        ports: [{ name: "https", containerPort: 10250 }],
        volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
        readinessProbe: { httpGet: { path: "/readyz", port: "https", scheme: "HTTPS" } },
      },
    ],
    { volumes: [{ name: "tmp", emptyDir: {} }] },
  );
  const plan = planLaunch(input(p, { mounts: new Map([["/tmp", "/lab/pod/volumes/tmp"]]) }));
  assert.deepEqual(plan.args, [
    "--cert-dir=/lab/pod/volumes/tmp",
    "--kubelet-use-node-status-port",
    "--secure-port=40000",
    "--bind-address=127.0.0.1",
    "--kubeconfig=/lab/pod/kubeconfig",
    "--authentication-kubeconfig=/lab/pod/kubeconfig",
    "--authorization-kubeconfig=/lab/pod/kubeconfig",
  ]);
  assert.equal(plan.readiness.scheme, "HTTPS");
  assert.equal(plan.readiness.localPort, 40000);
});

test("lab: a listener flag given as two arguments, or turned off with 0, is understood", () => {
  const p = pod([
    {
      name: "c",
      image: "x/cert-manager-cainjector:v1",
      args: ["--metrics-listen-address", "0.0.0.0:9999", "--kubeconfig", "/etc/kube/config"],
    },
  ]);
  const plan = planLaunch(input(p));
  assert.deepEqual(plan.args, ["--metrics-listen-address=127.0.0.1:40000", "--kubeconfig=/lab/pod/kubeconfig"]);
  assert.equal(plan.ports[0]!.containerPort, 9999);
  assert.deepEqual(plan.readiness, { kind: "none" });
  const off = planLaunch(
    input(pod([{ name: "c", image: "x/cert-manager-cainjector:v1", args: ["--metrics-listen-address=0"] }])),
  );
  assert.deepEqual(off.args, ["--metrics-listen-address=0", "--kubeconfig=/lab/pod/kubeconfig"]);
  assert.deepEqual(off.ports, []);
});

test("lab: the environment has envFrom first, then env; downward API, resources, Secret and ConfigMap keys", () => {
  const c = {
    name: "c",
    image: "x/metrics-server:1",
    resources: { limits: { memory: "128Mi", cpu: "500m" } },
    envFrom: [{ configMapRef: { name: "cfg" }, prefix: "CFG_" }],
    env: [
      { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
      { name: "APP", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
      { name: "MEM_MI", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
      { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } },
      { name: "TOKEN", valueFrom: { secretKeyRef: { name: "s", key: "token" } } },
      { name: "OPT", valueFrom: { secretKeyRef: { name: "absent", key: "k", optional: true } } },
      { name: "URL", value: "https://$(NODE):1/$(CFG_a)" },
    ],
  };
  const p = pod([c]);
  const env = containerEnv(p, c, {
    secrets: { "cert-manager/s": { token: "t0k3n" } },
    configMaps: { "cert-manager/cfg": { a: "b" } },
  });
  assert.deepEqual(Object.fromEntries(env), {
    CFG_a: "b",
    NODE: "kwok-node-0",
    APP: "web",
    MEM_MI: "128",
    CPU: "1",
    TOKEN: "t0k3n",
    URL: "https://kwok-node-0:1/b",
  });
  assert.equal(resourceValue(c, "limits.cpu", "1m"), "500");
  assert.throws(() => containerEnv(p, c, { secrets: {}, configMaps: { "cert-manager/cfg": {} } }), LaunchError);
});

test("lab: mounted paths move to the host, in bare arguments and --flag=values, longest mount first", () => {
  const mounts = new Map([
    ["/etc/certs", "/h/certs"],
    ["/etc/certs/ca", "/h/ca"],
  ]);
  assert.equal(hostPath("--tls-cert-file=/etc/certs/tls.crt", mounts), "--tls-cert-file=/h/certs/tls.crt");
  assert.equal(hostPath("/etc/certs/ca/ca.crt", mounts), "/h/ca/ca.crt");
  assert.equal(hostPath("/etc/certsx", mounts), "/etc/certsx");
  assert.equal(hostPath("--name=value", mounts), "--name=value");
});

test("lab: an exec readiness probe, or one on a port no listener serves, is refused with the reason", () => {
  const exec = pod([
    { name: "c", image: "x/cert-manager-controller:1", readinessProbe: { exec: { command: ["true"] } } },
  ]);
  assert.throws(() => planLaunch(input(exec)), /exec readiness probe/);
  const other = pod([
    { name: "c", image: "x/cert-manager-controller:1", readinessProbe: { tcpSocket: { port: 7777 } } },
  ]);
  assert.throws(() => planLaunch(input(other)), /port 7777, which no known listener/);
});

test("lab: a launched pod starts late by its khook.io/test-ready-after Go duration, as kwok's pods become Ready late", () => {
  assert.equal(goDurationMs("8s"), 8000);
  assert.equal(goDurationMs("1m30s"), 90_000);
  assert.equal(goDurationMs("500ms"), 500);
  assert.equal(goDurationMs("1.5s"), 1500);
  assert.equal(goDurationMs(undefined), 0);
  assert.equal(goDurationMs("soon"), 0);
});
