// Seeded random cases for kubectl's golden vectors (differential testing against Go): JSONPath templates
// over random documents, and (last-applied, manifest, live) triples for three-way patches, where each
// of the three is a random variation of the one before it. Deterministic: the same seeds always produce
// the same cases. Imported by cases.mjs.
/* eslint-disable */
function rng(seed) {
  const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const chance = (p) => rnd() < p;
  /** A random subset of `a`, in random order. */
  const subset = (a, p = 0.5) => a.filter(() => chance(p)).sort(() => rnd() - 0.5);
  return { rnd, pick, int, chance, subset };
}
const clone = (v) => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

// ---------------------------------------------------------------- jsonpath
export function randomJsonPathCases(N = 160, seed = 11) {
  const { pick, int, chance } = rng(seed);
  const keys = ["a", "b", "name", "items", "status"];
  const scalar = () => pick([0, 1, 2, 3, -1, 2.5, "x", "y", "", "Ready", true, false, null]);
  const value = (depth) => {
    if (depth <= 0 || chance(0.3)) return scalar();
    if (chance(0.5)) {
      const o = {};
      for (const k of keys) if (chance(0.45)) o[k] = value(depth - 1);
      return o;
    }
    return Array.from({ length: int(0, 3) }, () => value(depth - 1));
  };
  const segment = () => {
    const k = pick(keys);
    return pick([
      () => `.${k}`, () => `.${k}`, () => `.${k}`, () => `[${int(-3, 3)}]`, () => "[*]", () => ".*", () => `..${k}`,
      () => `[${pick(["", "0", "1", "-1"])}:${pick(["", "1", "2", "-1"])}]`, () => `['${k}']`, () => `[0,${int(1, 2)}]`, () => `['${k}','${pick(keys)}']`,
      () => `[?(@.${k})]`, () => `[?(@.${k}==${pick(["1", "'x'", '"Ready"', "true", "2.5"])})]`, () => `[?(@.${k}${pick([">", "<", ">=", "<=", "!="])}${pick(["1", "2", "'x'"])})]`,
    ])();
  };
  const out = [];
  for (let i = 0; i < N; i++) {
    const input = { a: value(3), b: value(2), items: Array.from({ length: int(0, 4) }, () => value(2)), status: value(2) };
    let body = "";
    const n = int(1, 4);
    for (let j = 0; j < n; j++) body += segment();
    if (!body.startsWith(".")) body = `.${pick(keys)}${body}`;
    const template = pick([`{${body}}`, `{${body}}`, body, body.slice(1)]);
    out.push({ name: `random jsonpath ${i}`, template, input });
  }
  return out;
}

// ---------------------------------------------------------------- strategic merge (Deployment)
export function randomStrategicCases(N = 220, seed = 7) {
  const { pick, int, chance, subset } = rng(seed);
  const keep = (prev, p, make) => (prev !== undefined && chance(p) ? clone(prev) : make());
  const maybe = (p, make) => (chance(p) ? make() : undefined);
  const byName = (list, key) => new Map((list ?? []).map((x) => [x[key], x]));

  const container = (name, prev, p) => {
    const c = { name };
    c.image = keep(prev?.image, p, () => `${name}:${pick(["v1", "v2", "v3"])}`);
    const args = keep(prev?.args, p, () => maybe(0.4, () => subset(["-v", "--a=1", "--b"], 0.6)));
    if (args !== undefined) c.args = args;
    const envPrev = byName(prev?.env, "name");
    const env = keep(prev?.env, p, () => maybe(0.6, () => subset(["A", "B", "C"], 0.6).map((n) => (envPrev.has(n) && chance(p) ? clone(envPrev.get(n)) : chance(0.8) ? { name: n, value: pick(["1", "2"]) } : { name: n, valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }))));
    if (env !== undefined) c.env = env;
    const ports = keep(prev?.ports, p, () => maybe(0.4, () => subset([80, 443, 8080], 0.5).map((port) => ({ containerPort: port, ...(chance(0.5) ? { name: `p${port}` } : {}) }))));
    if (ports !== undefined) c.ports = ports;
    const resources = keep(prev?.resources, p, () => maybe(0.3, () => ({ limits: { cpu: pick(["1", "2"]) }, ...(chance(0.5) ? { requests: { memory: "1Gi" } } : {}) })));
    if (resources !== undefined) c.resources = resources;
    if (chance(0.05)) c.image = null;
    return c;
  };
  const volume = (name) => ({ name, ...pick([{ emptyDir: {} }, { emptyDir: { medium: "Memory" } }, { configMap: { name: "cm" } }, { secret: { secretName: "s" } }]) });

  /** A Deployment like `prev` (each part kept with probability p), or a fresh one. */
  const deployment = (prev, p) => {
    const labels = keep(prev?.metadata?.labels, p, () => maybe(0.8, () => Object.fromEntries(subset(["app", "tier", "env"], 0.6).map((k) => [k, pick(["a", "b"])]))));
    const finalizers = keep(prev?.metadata?.finalizers, p, () => maybe(0.3, () => subset(["f.a", "f.b", "f.c"], 0.6)));
    const metadata = { name: "web" };
    if (labels !== undefined) metadata.labels = labels;
    if (finalizers !== undefined) metadata.finalizers = finalizers;
    const spec = {};
    const replicas = keep(prev?.spec?.replicas, p, () => maybe(0.7, () => pick([1, 2, 3, null])));
    if (replicas !== undefined) spec.replicas = replicas;
    const strategy = keep(prev?.spec?.strategy, p, () => maybe(0.5, () => pick([{ type: "Recreate" }, { type: "RollingUpdate" }, { type: "RollingUpdate", rollingUpdate: { maxSurge: pick([1, "25%"]) } }, { rollingUpdate: { maxUnavailable: 0 } }])));
    if (strategy !== undefined) spec.strategy = strategy;
    const prevPod = prev?.spec?.template?.spec;
    const prevContainers = byName(prevPod?.containers, "name");
    const names = prevPod?.containers && chance(p) ? prevPod.containers.map((c) => c.name) : subset(["app", "side", "log"], 0.6);
    if (chance(0.15)) names.reverse();
    const podSpec = { containers: names.map((n) => container(n, prevContainers.get(n), p)) };
    const volumes = keep(prevPod?.volumes, p, () => maybe(0.4, () => subset(["data", "conf"], 0.7).map(volume)));
    if (volumes !== undefined) podSpec.volumes = volumes;
    const nodeSelector = keep(prevPod?.nodeSelector, p, () => maybe(0.3, () => Object.fromEntries(subset(["zone", "disk"], 0.7).map((k) => [k, pick(["x", "y"])]))));
    if (nodeSelector !== undefined) podSpec.nodeSelector = nodeSelector;
    const tolerations = keep(prevPod?.tolerations, p, () => maybe(0.2, () => subset([{ key: "a", operator: "Exists" }, { key: "b", operator: "Equal", value: "v" }], 0.7)));
    if (tolerations !== undefined) podSpec.tolerations = tolerations;
    spec.template = { metadata: { labels: { app: "web" } }, spec: podSpec };
    return { apiVersion: "apps/v1", kind: "Deployment", metadata, spec };
  };
  /** What the server adds: identity, status, defaults, and sometimes a sidecar or a label of its own. */
  const serverSide = (o) => {
    const l = clone(o);
    l.metadata.uid = "u-1";
    l.metadata.resourceVersion = String(int(1, 99));
    if (chance(0.3)) l.metadata.labels = { ...(l.metadata.labels ?? {}), "srv": "x" };
    if (chance(0.3)) l.spec.template.spec.containers.push({ name: "injected", image: "proxy" });
    if (chance(0.3)) l.spec.strategy = l.spec.strategy ?? { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } };
    if (chance(0.3)) l.spec.template.spec.dnsPolicy = "ClusterFirst";
    l.status = { replicas: int(0, 3) };
    return l;
  };
  const out = [];
  for (let i = 0; i < N; i++) {
    const original = chance(0.12) ? null : deployment(undefined, 0);
    const modified = deployment(original ?? deployment(undefined, 0), pick([0.3, 0.7, 0.9]));
    const current = serverSide(deployment(chance(0.6) ? (original ?? modified) : modified, pick([0.5, 0.8, 1])));
    out.push({ name: `random deployment ${i}`, kind: "Deployment", original, modified, current });
  }
  return out;
}

// ---------------------------------------------------------------- strategic merge (Service, and long lists)
/** Services: ports merged on `port` (also the same port twice, TCP and UDP), selectors, types. */
export function randomServiceCases(N = 60, seed = 13) {
  const { pick, chance, subset } = rng(seed);
  const port = (p) => ({ port: p, ...(chance(0.4) ? { protocol: pick(["TCP", "UDP"]) } : {}), ...(chance(0.4) ? { targetPort: pick([8080, "http"]) } : {}), ...(chance(0.2) ? { name: `p${p}` } : {}) });
  const svc = () => {
    const spec = { ports: subset([53, 80, 443, 8443], 0.6).map(port) };
    if (chance(0.15) && spec.ports.length > 0) spec.ports.push({ ...spec.ports[0], protocol: "UDP" });
    if (chance(0.7)) spec.selector = Object.fromEntries(subset(["app", "tier"], 0.7).map((k) => [k, pick(["a", "b"])]));
    if (chance(0.4)) spec.type = pick(["ClusterIP", "NodePort", null]);
    return { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec };
  };
  const out = [];
  for (let i = 0; i < N; i++) {
    const original = chance(0.1) ? null : svc();
    const modified = chance(0.5) && original ? { ...clone(original), spec: { ...clone(original.spec), ports: subset(original.spec.ports, 0.8) } } : svc();
    const current = clone(chance(0.5) ? (original ?? modified) : modified);
    current.spec.clusterIP = "10.0.0.9";
    for (const p of current.spec.ports ?? []) if (chance(0.5)) p.protocol = p.protocol ?? "TCP";
    out.push({ name: `random service ${i}`, kind: "Service", original, modified, current });
  }
  return out;
}

/** Lists longer than Go's insertion-sort limits (12 for sort.Sort, 20 for a SliceStable block). */
export function randomLongListCases(N = 30, seed = 17) {
  const { pick, int, chance, subset } = rng(seed);
  const names = Array.from({ length: 45 }, (_, i) => `E${String(i).padStart(2, "0")}`);
  const env = (list) => list.map((n) => ({ name: n, value: pick(["1", "2"]) }));
  const dep = (envList, finalizers) => ({
    apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", ...(finalizers ? { finalizers } : {}) },
    spec: { template: { spec: { containers: [{ name: "app", image: "app:v1", env: envList }] } } },
  });
  const out = [];
  for (let i = 0; i < N; i++) {
    const o = subset(names, 0.6).slice(0, int(13, 40));
    const m = chance(0.5) ? subset(o, 0.9) : subset(names, 0.6);
    if (chance(0.3)) m.reverse();
    const c = [...m, ...subset(names.filter((n) => !m.includes(n)), 0.2)].sort(() => (chance(0.5) ? 1 : -1));
    const fin = (l) => (chance(0.5) ? l.slice(0, 25).map((n) => `f/${n}`) : undefined);
    out.push({ name: `random long lists ${i}`, kind: "Deployment", original: dep(env(o), fin(o)), modified: dep(env(m), fin(m)), current: dep(env(c), fin(c)) });
  }
  return out;
}

// ---------------------------------------------------------------- JSON merge (custom resources)
export function randomJsonMergeCases(N = 160, seed = 5) {
  const { pick, int, chance } = rng(seed);
  const keys = ["a", "b", "c", "d"];
  const scalar = () => pick([0, 1, "x", "y", true, false, "", 2.5]);
  const value = (prev, p, depth) => {
    if (prev !== undefined && chance(p)) {
      if (prev !== null && typeof prev === "object" && !Array.isArray(prev) && chance(0.7)) return map(prev, p, depth);
      return clone(prev);
    }
    if (depth <= 0 || chance(0.35)) return chance(0.06) ? null : scalar();
    if (chance(0.75)) return map(undefined, p, depth - 1);
    return Array.from({ length: int(0, 3) }, () => (chance(0.5) ? scalar() : map(undefined, 0, depth - 1)));
  };
  const map = (prev, p, depth) => {
    const o = {};
    for (const k of keys) {
      const had = prev && Object.prototype.hasOwnProperty.call(prev, k);
      if (had ? chance(p + (1 - p) / 3) : chance(0.4)) o[k] = value(had ? prev[k] : undefined, p, depth - 1);
    }
    return o;
  };
  const cr = (spec, name = "w") => ({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name }, spec });
  const out = [];
  for (let i = 0; i < N; i++) {
    const o = map(undefined, 0, 3);
    const m = map(o, pick([0.3, 0.7, 0.9]), 3);
    const c = map(chance(0.6) ? o : m, pick([0.5, 0.8, 1]), 3);
    out.push({ name: `random custom resource ${i}`, original: chance(0.12) ? null : cr(o), modified: cr(m, chance(0.03) ? "renamed" : "w"), current: cr(c) });
  }
  return out;
}
