// The inputs for kubectl's golden vectors (see README.md): hand-written corner cases, then seeded random
// cases from random-cases.mjs (differential testing). Prints cases.json:
//   node cases.mjs > cases.json && go run . vectors
/* eslint-disable */
import { randomJsonPathCases, randomStrategicCases, randomServiceCases, randomLongListCases, randomJsonMergeCases } from "./random-cases.mjs";

const clone = (v) => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

// ---------------------------------------------------------------- jsonpath
const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web-0",
    namespace: "prod",
    generation: 3,
    labels: { app: "web", "app.kubernetes.io/name": "web", tier: "" },
    annotations: { "example.com/weight": "0.5" },
    ownerReferences: [{ kind: "StatefulSet", name: "web", controller: true }],
  },
  spec: {
    replicas: 3,
    paused: false,
    ratio: 0.25,
    big: 12345678901,
    tiny: 0.000001,
    huge: 1e21,
    nothing: null,
    empty: "",
    emptyList: [],
    emptyMap: {},
    containers: [
      { name: "app", image: "nginx:1.25", ports: [{ containerPort: 80 }, { containerPort: 443 }], args: ["-v", "--x=1"] },
      { name: "side", image: "busybox", ports: [], env: [{ name: "A", value: "1" }] },
      { name: "log", image: "fluentbit", ready: true },
    ],
    matrix: [[1, 2], [3, 4]],
  },
  status: {
    phase: "Running",
    readyReplicas: 3,
    observedGeneration: 3,
    loadBalancer: { ingress: [{ ip: "10.0.0.1" }] },
    conditions: [
      { type: "Initialized", status: "True", observedGeneration: 1 },
      { type: "Ready", status: "True", observedGeneration: 3, reason: "" },
      { type: "Available", status: "False", observedGeneration: 2, reason: "MinimumReplicasUnavailable" },
    ],
  },
};
const list = { kind: "List", items: [{ metadata: { name: "a" }, n: 1, ok: true }, { metadata: { name: "b" }, n: 2, ok: false }, { metadata: { name: "c" }, n: 3.5 }] };

const jsonpath = [];
const jp = (template, input = pod, name) => jsonpath.push({ ...(name ? { name } : {}), template, input });
for (const t of [
  // kubectl wait's relaxed forms
  "{.status.phase}", ".status.phase", "status.phase", "{status.phase}", "{$.status.phase}", "$.status.phase", "{@.status.phase}",
  " {.status.phase}", "{.status.phase} ", "{.status.phase}{.metadata.name}", "{range .spec.containers[*]}{.name}{end}", "", "{}", "{.}", ".", "{..}",
  "{.status.phase", ".status.phase}", "{{.status.phase}}", "{.status. phase}", "{ .status.phase }", "{.status.missing}", "{.nope.deeper.still}",
  // fields and escapes
  "{.metadata.labels.app}", "{.metadata.labels.app\\.kubernetes\\.io/name}", "{.metadata.labels['app.kubernetes.io/name']}", '{.metadata.labels["app.kubernetes.io/name"]}',
  "{.metadata.labels.tier}", "{.metadata.annotations.example\\.com/weight}", "{.metadata.labels}", "{.metadata.ownerReferences[0].controller}",
  "{.spec.replicas}", "{.spec.paused}", "{.spec.ratio}", "{.spec.big}", "{.spec.tiny}", "{.spec.huge}", "{.spec.nothing}", "{.spec.empty}", "{.spec.emptyList}", "{.spec.emptyMap}",
  "{.spec.containers.name}", "{.spec.replicas.x}", "{.metadata.name.x}",
  // indexes and slices
  "{.spec.containers[0].image}", "{.spec.containers[-1].name}", "{.spec.containers[2].ready}", "{.spec.containers[3].name}", "{.spec.containers[-4].name}",
  "{.spec.containers[0:2].name}", "{.spec.containers[1:].name}", "{.spec.containers[:1].name}", "{.spec.containers[::2].name}", "{.spec.containers[0:0].name}",
  "{.spec.containers[2:1].name}", "{.spec.containers[0:5].name}", "{.spec.containers[-2:].name}", "{.spec.containers[0:3:0].name}", "{.spec.containers[*].name}",
  "{.spec.containers[*].ports[*].containerPort}", "{.spec.containers[0].ports[1].containerPort}", "{.spec.containers[1].ports[0].containerPort}",
  "{.spec.emptyList[0]}", "{.spec.emptyList[*]}", "{.spec.matrix[1][0]}", "{.spec.matrix[*][1]}", "{.metadata[0]}", "{.spec.containers[]}", "{.spec.containers[a]}",
  "{.spec.containers[0,2].name}", "{.spec.containers[*]['name','image']}", "{['kind','apiVersion']}", "{.status['phase','readyReplicas']}",
  "{.spec.containers[0].args[*]}", "{.spec.containers[0].args}",
  // wildcards and recursive descent
  "{.metadata.labels.*}", "{.status.loadBalancer.*}", "{.status.loadBalancer.ingress[*].ip}", "{..ip}", "{..containerPort}", "{.spec..name}", "{..observedGeneration}", "{.status..status}", "{...name}",
  "{.spec.containers[*].*}", "{..}", "{.spec.empty.*}",
  // filters
  '{.status.conditions[?(@.type=="Ready")].status}', "{.status.conditions[?(@.type=='Ready')].status}", '{.status.conditions[?(@.type!="Ready")].type}',
  "{.status.conditions[?(@.reason)].type}", '{.status.conditions[?(@.reason=="")].type}', "{.status.conditions[?(@.observedGeneration>=2)].type}",
  "{.status.conditions[?(@.observedGeneration<2)].type}", "{.status.conditions[?(@.observedGeneration>1)].type}", "{.status.conditions[?(@.observedGeneration<=3)].type}",
  "{.status.conditions[?(@.observedGeneration==3)].type}", '{.status.conditions[?(@.type=="Missing")].status}', '{.status.conditions[?(@.type=="Ready")]}',
  '{.status.conditions[?(@.type=="Ready")].reason}', '{.status.conditions[?(@.status=="True")].type}', '{.status.conditions[?(@.type==Ready)].status}',
  '{.status.conditions[?(@.type=="Ready"].status}', '{.status.conditions[?(@.type=~"Re")].status}', '{.status[?(@.type=="Ready")]}',
  "{.spec.containers[?(@.ready==true)].name}", "{.spec.containers[?(@.ready)].name}", "{.spec.containers[?(@.ports)].name}", '{.spec.containers[?(@.image=="busybox")].env[0].value}',
  '{.spec.containers[?(@.name=="app")].ports[?(@.containerPort==443)].containerPort}', "{.status.conditions[?(@.observedGeneration>'2')].type}",
  '{.status.conditions[?(@.type>"B")].type}', "{.status.conditions[?(@.observedGeneration==3.0)].type}", "{.status.conditions[?(@.observedGeneration>=2.5)].type}",
  '{.status.conditions[?(@.type=="Ready" )].status}', '{.status.conditions[?( @.type == "Ready" )].status}', "{.status.conditions[?(@..status)].type}",
  "{.status.conditions[?(@.type)].type}", "{.spec.containers[?(@.env[0].name=='A')].name}", '{.metadata.ownerReferences[?(@.controller==true)].name}',
  '{.spec.containers[?(@.name=="app")]}', '{.status.conditions[?(@.type=="Ready")].observedGeneration}',
  // oddities
  "{.status.phase[0]}", "{.spec.containers[0]..name}", "{.spec.containers['0']}", "{.status.conditions[1]['type']}", "{.'status'}", '{."status"}', "{.status.conditions[?(@.type=='Ready')].status,}",
  "{.status.phase,.metadata.name}", "{.spec.containers[0].name.length}", "{.true}", "{.3}", "{.-1}", "{.status.phase.}", "{.status..}", "{.spec.containers[0]name}",
]) jp(t);
for (const t of ['{.items[?(@.metadata.name=="b")].n}', "{.items[*].metadata.name}", "{.items[?(@.n>1)].metadata.name}", "{.items[?(@.n<3.5)].metadata.name}",
  "{.items[?(@.ok==false)].metadata.name}", "{.items[?(@.ok)].metadata.name}", "{.items[-1].n}", "{.items[?(@.n>=3.5)].metadata.name}", "{.items[?(@.n!=2)].n}", "{.items..name}"]) jp(t, list);
jp("{.status.phase}", { status: { phase: null } });
jp("{.status.phase}", { status: null });
jp("{.a}", { a: 0 });
jp("{.a}", { a: -7 });
jp("{.a}", { a: 1.5 });
jp("{.a}", { a: 100000000000000000000 });
jp("{.a}", { a: 1e-7 });
jp("{.a}", { a: "  padded  " });
jp("{.a}", { a: "ünïcödé 日本" });
jp("{.a[0]}", { a: [null] });
jp("{.a[*]}", { a: [1, "x", true, null, { b: 1 }, [2]] });
jp("{.a.b}", { a: [{ b: 1 }, { b: 2 }] });
jp("{.a[?(@.b)]}", { a: { b: 1 } });
jp("{.a[?(@.b)]}", { a: [1, 2] });
jp("{.a[?(@.b==1)]}", { a: [{ b: 1 }, { b: "1" }, { b: true }] });
jp("{.a[?(@.b=='1')]}", { a: [{ b: 1 }, { b: "1" }] });
jp("{.a[?(@.b==true)]}", { a: [{ b: true }, { b: "true" }] });
jp("{.a[?(@.b<1)]}", { a: [{ b: "0" }] });
jp("{.a[?(@.b[*])].c}", { a: [{ b: [1, 2], c: "two" }, { b: [3], c: "one" }, { b: [], c: "none" }] });
jp("{.a[?(@.b[*]==1)].c}", { a: [{ b: [1, 2], c: "two" }, { b: [1], c: "one" }] });
for (const c of randomJsonPathCases()) jsonpath.push(c);

// ---------------------------------------------------------------- strategic merge (built-in kinds)
const container = (name, extra = {}) => ({ name, image: `${name}:v1`, ...extra });
const deployment = ({ containers = [container("app")], labels = { app: "web" }, spec = {}, podSpec = {}, metadata = {} } = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", labels, ...metadata },
  spec: { replicas: 2, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers, ...podSpec } }, ...spec },
});
const live = (obj, extra = {}) => {
  const o = clone(obj);
  o.metadata = { ...o.metadata, uid: "u-1", resourceVersion: "7", generation: 2, ...extra };
  o.status = { replicas: 2, readyReplicas: 2 };
  return o;
};

const strategic = [];
const sm = (name, original, modified, current, kind = "Deployment") => strategic.push({ name, kind, original: original ?? null, modified, current });

const d0 = deployment();
sm("nothing changed", d0, d0, live(d0));
sm("no last-applied: only additions and changes", null, deployment({ labels: { app: "web", t: "x" } }), live(deployment({ labels: { app: "web", extra: "server" } })));
sm("replicas changed", d0, deployment({ spec: { replicas: 5 } }), live(d0));
sm("conflict: live drifted, manifest wins", deployment({ spec: { replicas: 2 } }), deployment({ spec: { replicas: 3 } }), live(deployment({ spec: { replicas: 9 } })));
sm("live drift on a field the manifest keeps is reverted", d0, d0, live(deployment({ spec: { replicas: 9 } })));
sm("label added", d0, deployment({ labels: { app: "web", tier: "fe" } }), live(d0));
sm("label removed from the manifest is deleted", deployment({ labels: { app: "web", tier: "fe" } }), d0, live(deployment({ labels: { app: "web", tier: "fe" } })));
sm("label added by someone else is kept", d0, d0, live(deployment({ labels: { app: "web", other: "x" } })));
sm("label removed from manifest but already gone from live", deployment({ labels: { app: "web", tier: "fe" } }), d0, live(d0));
sm("all labels removed", d0, deployment({ labels: undefined }), live(d0));
sm("explicit null in the manifest", d0, deployment({ spec: { replicas: null } }), live(d0));
sm("explicit null for a field absent from live", d0, deployment({ spec: { paused: null } }), live(d0));
sm("image changed: $setElementOrder", d0, deployment({ containers: [container("app", { image: "app:v2" })] }), live(d0));
sm("container added", d0, deployment({ containers: [container("app"), container("side")] }), live(d0));
sm("container added first", d0, deployment({ containers: [container("side"), container("app")] }), live(d0));
sm("container removed: $patch delete", deployment({ containers: [container("app"), container("side")] }), d0, live(deployment({ containers: [container("app"), container("side")] })));
sm("container injected by a webhook is kept", d0, d0, live(deployment({ containers: [container("app"), container("istio-proxy")] })));
sm("injected container, image change", d0, deployment({ containers: [container("app", { image: "app:v3" })] }), live(deployment({ containers: [container("istio-proxy"), container("app")] })));
sm("containers reordered", deployment({ containers: [container("a"), container("b")] }), deployment({ containers: [container("b"), container("a")] }), live(deployment({ containers: [container("a"), container("b")] })));
sm("container replaced by another", deployment({ containers: [container("a")] }), deployment({ containers: [container("b")] }), live(deployment({ containers: [container("a")] })));
sm("all containers removed", d0, deployment({ containers: [] }), live(d0));
sm("containers list removed", d0, deployment({ containers: undefined }), live(d0));
sm("env merge by name: add, change, delete", deployment({ containers: [container("app", { env: [{ name: "A", value: "1" }, { name: "B", value: "2" }] })] }),
  deployment({ containers: [container("app", { env: [{ name: "A", value: "9" }, { name: "C", value: "3" }] })] }),
  live(deployment({ containers: [container("app", { env: [{ name: "A", value: "1" }, { name: "B", value: "2" }, { name: "X", value: "srv" }] })] })));
sm("env value removed, valueFrom added", deployment({ containers: [container("app", { env: [{ name: "A", value: "1" }] })] }),
  deployment({ containers: [container("app", { env: [{ name: "A", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] })] }),
  live(deployment({ containers: [container("app", { env: [{ name: "A", value: "1" }] })] })));
sm("args is replaced whole", deployment({ containers: [container("app", { args: ["a", "b"] })] }), deployment({ containers: [container("app", { args: ["a", "c"] })] }), live(deployment({ containers: [container("app", { args: ["a", "b"] })] })));
sm("args removed", deployment({ containers: [container("app", { args: ["a"] })] }), d0, live(deployment({ containers: [container("app", { args: ["a"] })] })));
sm("ports merge on containerPort", deployment({ containers: [container("app", { ports: [{ containerPort: 80 }, { containerPort: 443 }] })] }),
  deployment({ containers: [container("app", { ports: [{ containerPort: 8080 }, { containerPort: 80, name: "http" }] })] }),
  live(deployment({ containers: [container("app", { ports: [{ containerPort: 80, protocol: "TCP" }, { containerPort: 443, protocol: "TCP" }] })] })));
sm("finalizers: primitive list merge", deployment({ metadata: { finalizers: ["a", "b"] } }), deployment({ metadata: { finalizers: ["b", "c"] } }), live(deployment({ metadata: { finalizers: ["a", "b", "srv"] } })));
sm("finalizers: reorder only", deployment({ metadata: { finalizers: ["a", "b"] } }), deployment({ metadata: { finalizers: ["b", "a"] } }), live(deployment({ metadata: { finalizers: ["a", "b"] } })));
sm("finalizers: all removed", deployment({ metadata: { finalizers: ["a", "b"] } }), deployment({ metadata: { finalizers: [] } }), live(deployment({ metadata: { finalizers: ["a", "b"] } })));
sm("finalizers: list dropped", deployment({ metadata: { finalizers: ["a"] } }), d0, live(deployment({ metadata: { finalizers: ["a"] } })));
sm("finalizers: numbers and duplicates", deployment({ metadata: { finalizers: ["b", "a", "a"] } }), deployment({ metadata: { finalizers: ["a", "c", "c"] } }), live(deployment({ metadata: { finalizers: ["a", "b"] } })));
sm("strategy retainKeys: RollingUpdate to Recreate", deployment({ spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } } }),
  deployment({ spec: { strategy: { type: "Recreate" } } }), live(deployment({ spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: "25%" } } } })));
sm("strategy retainKeys: Recreate to RollingUpdate", deployment({ spec: { strategy: { type: "Recreate" } } }),
  deployment({ spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "50%" } } } }), live(deployment({ spec: { strategy: { type: "Recreate" } } })));
sm("strategy retainKeys: unchanged", deployment({ spec: { strategy: { type: "Recreate" } } }), deployment({ spec: { strategy: { type: "Recreate" } } }), live(deployment({ spec: { strategy: { type: "Recreate" } } })));
sm("strategy retainKeys: server defaults only", deployment({ spec: { strategy: { type: "RollingUpdate" } } }), deployment({ spec: { strategy: { type: "RollingUpdate" } } }),
  live(deployment({ spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } } } })));
sm("strategy retainKeys: null in the manifest", deployment({ spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } } }),
  deployment({ spec: { strategy: { type: "RollingUpdate", rollingUpdate: null } } }), live(deployment({ spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } } })));
const vol = (name, src) => ({ name, ...src });
sm("volumes merge,retainKeys: emptyDir to configMap", deployment({ podSpec: { volumes: [vol("data", { emptyDir: {} })] } }),
  deployment({ podSpec: { volumes: [vol("data", { configMap: { name: "cm" } })] } }), live(deployment({ podSpec: { volumes: [vol("data", { emptyDir: {} })] } })));
sm("volumes: one added, one removed", deployment({ podSpec: { volumes: [vol("a", { emptyDir: {} }), vol("b", { emptyDir: {} })] } }),
  deployment({ podSpec: { volumes: [vol("a", { emptyDir: {} }), vol("c", { secret: { secretName: "s" } })] } }),
  live(deployment({ podSpec: { volumes: [vol("a", { emptyDir: {} }), vol("b", { emptyDir: {} })] } })));
sm("volumes: configMap items changed", deployment({ podSpec: { volumes: [vol("a", { configMap: { name: "x", items: [{ key: "k", path: "p" }] } })] } }),
  deployment({ podSpec: { volumes: [vol("a", { configMap: { name: "x", items: [{ key: "k2", path: "p" }] } })] } }),
  live(deployment({ podSpec: { volumes: [vol("a", { configMap: { name: "x", items: [{ key: "k", path: "p" }], defaultMode: 420 } })] } })));
sm("nodeSelector: add, change, remove", deployment({ podSpec: { nodeSelector: { a: "1", b: "2" } } }), deployment({ podSpec: { nodeSelector: { a: "9", c: "3" } } }),
  live(deployment({ podSpec: { nodeSelector: { a: "1", b: "2", z: "srv" } } })));
sm("resources: limits changed, requests removed", deployment({ containers: [container("app", { resources: { limits: { cpu: "1" }, requests: { cpu: "100m" } } })] }),
  deployment({ containers: [container("app", { resources: { limits: { cpu: "2", memory: "1Gi" } } })] }),
  live(deployment({ containers: [container("app", { resources: { limits: { cpu: "1" }, requests: { cpu: "100m" } } })] })));
sm("tolerations: no merge key, replaced whole", deployment({ podSpec: { tolerations: [{ key: "a", operator: "Exists" }] } }),
  deployment({ podSpec: { tolerations: [{ key: "a", operator: "Exists" }, { key: "b", operator: "Exists" }] } }),
  live(deployment({ podSpec: { tolerations: [{ key: "a", operator: "Exists" }] } })));
sm("imagePullSecrets merge by name", deployment({ podSpec: { imagePullSecrets: [{ name: "a" }] } }), deployment({ podSpec: { imagePullSecrets: [{ name: "b" }] } }),
  live(deployment({ podSpec: { imagePullSecrets: [{ name: "a" }] } })));
sm("hostAliases merge by ip, hostnames replaced", deployment({ podSpec: { hostAliases: [{ ip: "1.1.1.1", hostnames: ["a"] }] } }),
  deployment({ podSpec: { hostAliases: [{ ip: "1.1.1.1", hostnames: ["a", "b"] }, { ip: "2.2.2.2", hostnames: ["c"] }] } }),
  live(deployment({ podSpec: { hostAliases: [{ ip: "1.1.1.1", hostnames: ["a"] }] } })));
sm("initContainers and containers together", d0, deployment({ containers: [container("app", { image: "app:v2" })], podSpec: { initContainers: [container("init")] } }), live(d0));
sm("type change: map to scalar", d0, deployment({ spec: { template: "oops" } }), live(d0));
sm("type change: scalar to map", deployment({ spec: { replicas: 1 } }), deployment({ spec: { replicas: { a: 1 } } }), live(d0));
sm("type change: list to map", d0, deployment({ containers: { name: "app" } }), live(d0));
sm("merge key missing in the manifest's element", d0, deployment({ containers: [{ image: "x" }] }), live(d0));
sm("merge key missing in live's element", d0, deployment({ containers: [container("app", { image: "app:v2" })] }), live(deployment({ containers: [{ image: "x" }, container("app")] })));
sm("duplicate merge keys in the manifest", d0, deployment({ containers: [container("app"), container("app", { image: "other" })] }), live(d0));
sm("$patch: replace on the containers list", d0, deployment({ containers: [container("app"), { $patch: "replace" }] }), live(deployment({ containers: [container("app"), container("x")] })));
sm("$patch: delete element in the manifest", d0, deployment({ containers: [container("app"), { name: "x", $patch: "delete" }] }), live(deployment({ containers: [container("app"), container("x")] })));
sm("$patch: replace on a map", d0, deployment({ podSpec: { nodeSelector: { a: "1", $patch: "replace" } } }), live(deployment({ podSpec: { nodeSelector: { b: "2" } } })));
sm("ownerReferences merge by uid", deployment({ metadata: { ownerReferences: [{ uid: "1", kind: "X", name: "x", apiVersion: "v1" }] } }),
  deployment({ metadata: { ownerReferences: [{ uid: "2", kind: "Y", name: "y", apiVersion: "v1" }] } }), live(deployment({ metadata: { ownerReferences: [{ uid: "1", kind: "X", name: "x", apiVersion: "v1" }] } })));
sm("annotations: last-applied style change", deployment({ metadata: { annotations: { a: "1" } } }), deployment({ metadata: { annotations: { a: "2", b: "" } } }),
  live(deployment({ metadata: { annotations: { a: "1", "deployment.kubernetes.io/revision": "3" } } })));
sm("empty manifest map vs live map", d0, deployment({ podSpec: { nodeSelector: {} } }), live(deployment({ podSpec: { nodeSelector: { a: "1" } } })));
sm("empty list in manifest vs live list", deployment({ podSpec: { imagePullSecrets: [{ name: "a" }] } }), deployment({ podSpec: { imagePullSecrets: [] } }), live(deployment({ podSpec: { imagePullSecrets: [{ name: "a" }] } })));
sm("original is empty object", {}, d0, live(d0));
sm("live lacks the whole spec", d0, d0, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" } });
sm("numbers: int vs float", deployment({ spec: { replicas: 2 } }), deployment({ spec: { replicas: 2.5 } }), live(d0));
sm("unicode and special keys in labels", d0, deployment({ labels: { app: "web", "a.b/c-d_e": "日本", "$weird": "x" } }), live(d0));

const svc = (ports, extra = {}) => ({ apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { selector: { app: "web" }, ports, ...extra } });
const liveSvc = (o) => { const l = clone(o); l.spec.clusterIP = "10.0.0.5"; l.spec.type = l.spec.type ?? "ClusterIP"; for (const p of l.spec.ports ?? []) { p.protocol = p.protocol ?? "TCP"; p.targetPort = p.targetPort ?? p.port; } return l; };
sm("service ports merge on port", svc([{ port: 80 }]), svc([{ port: 80, targetPort: 8080 }, { port: 443 }]), liveSvc(svc([{ port: 80 }])), "Service");
sm("service port removed", svc([{ port: 80 }, { port: 443 }]), svc([{ port: 80 }]), liveSvc(svc([{ port: 80 }, { port: 443 }])), "Service");
sm("service: same port twice (TCP and UDP)", svc([{ port: 53, protocol: "TCP" }]), svc([{ port: 53, protocol: "TCP" }, { port: 53, protocol: "UDP" }]), liveSvc(svc([{ port: 53, protocol: "TCP" }])), "Service");
sm("service type NodePort to ClusterIP", svc([{ port: 80 }], { type: "NodePort" }), svc([{ port: 80 }]), liveSvc(svc([{ port: 80, nodePort: 30080 }], { type: "NodePort" })), "Service");
sm("service selector replaced keys", svc([{ port: 80 }]), svc([{ port: 80 }], { selector: { app: "api" } }), liveSvc(svc([{ port: 80 }])), "Service");
const cm = (data, extra = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data, ...extra });
sm("configmap data keys", cm({ a: "1", b: "2" }), cm({ a: "1", c: "3" }), cm({ a: "1", b: "2", d: "srv" }), "ConfigMap");
sm("configmap binaryData added, data removed", cm({ a: "1" }), { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, binaryData: { b: "AAE=" } }, cm({ a: "1" }), "ConfigMap");
sm("configmap immutable flag", cm({ a: "1" }), cm({ a: "1" }, { immutable: true }), cm({ a: "1" }), "ConfigMap");
const podObj = (spec, metadata = {}) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", ...metadata }, spec });
sm("pod: containers and volumeMounts merge on mountPath", podObj({ containers: [container("c", { volumeMounts: [{ name: "v", mountPath: "/a" }] })] }),
  podObj({ containers: [container("c", { volumeMounts: [{ name: "v", mountPath: "/b" }] })] }), podObj({ containers: [container("c", { volumeMounts: [{ name: "v", mountPath: "/a" }, { name: "token", mountPath: "/var/run/secrets" }] })], nodeName: "n1" }), "Pod");
sm("pod: readinessGates and schedulingGates", podObj({ containers: [container("c")], schedulingGates: [{ name: "g1" }] }), podObj({ containers: [container("c")], schedulingGates: [] }),
  podObj({ containers: [container("c")], schedulingGates: [{ name: "g1" }] }), "Pod");
sm("pod: ephemeralContainers untouched by apply", podObj({ containers: [container("c")] }), podObj({ containers: [container("c")] }),
  podObj({ containers: [container("c")], ephemeralContainers: [container("debug")] }), "Pod");
const ds = (spec) => ({ apiVersion: "apps/v1", kind: "DaemonSet", metadata: { name: "d" }, spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers: [container("c")] } }, ...spec } });
sm("daemonset updateStrategy (no retainKeys)", ds({ updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } } }), ds({ updateStrategy: { type: "OnDelete" } }),
  ds({ updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } } }), "DaemonSet");
const job = (spec) => ({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec: { template: { spec: { restartPolicy: "Never", containers: [container("c")] } }, ...spec } });
sm("job: backoffLimit and podFailurePolicy rules (atomic list)", job({ backoffLimit: 2 }), job({ backoffLimit: 3, podFailurePolicy: { rules: [{ action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] }] } }),
  job({ backoffLimit: 2, completions: 1, parallelism: 1 }), "Job");
for (const c of [...randomStrategicCases(), ...randomServiceCases(), ...randomLongListCases()]) strategic.push(c);

// ---------------------------------------------------------------- JSON merge (custom resources)
const cr = (spec, extra = {}) => ({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", ...extra }, spec });
const jsonmerge = [];
const jm = (name, original, modified, current) => jsonmerge.push({ name, original: original ?? null, modified, current });
jm("nothing changed", cr({ a: 1 }), cr({ a: 1 }), cr({ a: 1 }));
jm("scalar changed", cr({ a: 1 }), cr({ a: 2 }), cr({ a: 1 }));
jm("field removed from the manifest", cr({ a: 1, b: 2 }), cr({ a: 1 }), cr({ a: 1, b: 2 }));
jm("field added by the server kept", cr({ a: 1 }), cr({ a: 1 }), cr({ a: 1, s: "srv" }));
jm("lists replaced whole", cr({ l: [1, 2] }), cr({ l: [2, 1] }), cr({ l: [1, 2] }));
jm("list of maps replaced whole", cr({ l: [{ name: "a", v: 1 }] }), cr({ l: [{ name: "a", v: 2 }] }), cr({ l: [{ name: "a", v: 1, s: 1 }] }));
jm("nested maps", cr({ m: { a: { b: 1, c: 2 } } }), cr({ m: { a: { b: 3 } } }), cr({ m: { a: { b: 1, c: 2, d: 4 } } }));
jm("no last-applied", null, cr({ a: 1 }), cr({ a: 0, z: 1 }));
jm("explicit null in the manifest", cr({ a: 1 }), cr({ a: null }), cr({ a: 1 }));
jm("null for a field live lacks", cr({}), cr({ a: null }), cr({}));
jm("empty map in the manifest", cr({ m: { a: 1 } }), cr({ m: {} }), cr({ m: { a: 1 } }));
jm("empty map added", cr({}), cr({ m: {} }), cr({}));
jm("map replaced by scalar", cr({ m: { a: 1 } }), cr({ m: 5 }), cr({ m: { a: 1 } }));
jm("scalar replaced by map", cr({ m: 5 }), cr({ m: { a: 1 } }), cr({ m: 5 }));
jm("conflict: live drifted", cr({ a: 1 }), cr({ a: 2 }), cr({ a: 7 }));
jm("live drift on kept field reverted", cr({ a: 1 }), cr({ a: 1 }), cr({ a: 7 }));
jm("removed in manifest, already gone live", cr({ a: 1, b: 1 }), cr({ a: 1 }), cr({ a: 1 }));
jm("name changed", cr({ a: 1 }), { ...cr({ a: 1 }), metadata: { name: "other" } }, cr({ a: 1 }));
jm("kind changed", cr({ a: 1 }), { ...cr({ a: 1 }), kind: "Gadget" }, cr({ a: 1 }));
jm("apiVersion changed", cr({ a: 1 }), { ...cr({ a: 1 }), apiVersion: "example.com/v2" }, cr({ a: 1 }));
jm("name missing from live", cr({ a: 1 }), cr({ a: 1 }), { apiVersion: "example.com/v1", kind: "Widget", metadata: {}, spec: { a: 1 } });
jm("labels and annotations", cr({}, { labels: { a: "1" } }), cr({}, { labels: { b: "2" }, annotations: { x: "y" } }), cr({}, { labels: { a: "1", c: "srv" } }));
jm("status present live", cr({ a: 1 }), cr({ a: 2 }), { ...cr({ a: 1 }), status: { ready: true } });
jm("nested null deletions", cr({ m: { a: { b: 1 } } }), cr({ m: {} }), cr({ m: { a: { b: 1 } } }));
jm("$patch keys are plain keys here", cr({ a: 1 }), cr({ a: 1, $patch: "delete" }), cr({ a: 1 }));
for (const c of randomJsonMergeCases()) jsonmerge.push(c);

const out = { jsonpath, strategic, jsonmerge };
process.stdout.write("{\n" + Object.entries(out).map(([k, v]) => `${JSON.stringify(k)}: [\n${v.map((c) => JSON.stringify(c)).join(",\n")}\n]`).join(",\n") + "\n}\n");
