/**
 * How the launcher runs one container of a pod as a host process, decided without I/O: the
 * container's environment as the kubelet would give it (downward API fields, Secret and ConfigMap
 * keys, `$(VAR)` expansion), its command line with mounted paths moved to the pod's directory on
 * the host, every listener moved to a loopback port, and a kubeconfig instead of the in-cluster
 * service account, and where its readiness probe is asked. launcher.ts gathers the facts (the
 * pod, the Secrets and ConfigMaps it names, free ports, the materialised volumes) and acts on the plan.
 */
import type { LabImage } from "./lab-images";

/** The API server's JSON of a pod (or of anything it names), read by its documented fields. */
export type Json = any;

/** Data of the Secrets and ConfigMaps a pod names, by `<namespace>/<name>` (Secret values decoded). */
export interface PodData {
  secrets: Record<string, Record<string, string> | undefined>;
  configMaps: Record<string, Record<string, string> | undefined>;
}

export class LaunchError extends Error {}

/** kubelet's `$(VAR)` expansion: `$$` is `$`, a defined `$(NAME)` its value, anything else stays as written. */
export function expandVars(text: string, vars: ReadonlyMap<string, string>): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "$" || i + 1 >= text.length) {
      out += c;
      continue;
    }
    const n = text[i + 1]!;
    if (n === "$") {
      out += "$";
      i++;
    } else if (n === "(") {
      const close = text.indexOf(")", i + 2);
      if (close < 0) {
        out += text.slice(i);
        break;
      }
      const name = text.slice(i + 2, close);
      out += vars.has(name) ? vars.get(name)! : `$(${name})`;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

/** The value of a downward API `fieldRef` path, as the kubelet resolves it. */
export function fieldValue(pod: Json, fieldPath: string): string {
  const md = pod.metadata ?? {};
  const sub = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (sub) return String(md[sub[1]!]?.[sub[2]!] ?? "");
  switch (fieldPath) {
    case "metadata.name":
      return String(md.name ?? "");
    case "metadata.namespace":
      return String(md.namespace ?? "");
    case "metadata.uid":
      return String(md.uid ?? "");
    case "spec.nodeName":
      return String(pod.spec?.nodeName ?? "");
    case "spec.serviceAccountName":
      return String(pod.spec?.serviceAccountName ?? "");
    case "status.podIP":
      return String(pod.status?.podIP ?? "");
    case "status.podIPs":
      return ((pod.status?.podIPs ?? []) as { ip: string }[]).map((p) => p.ip).join(",");
    case "status.hostIP":
      return String(pod.status?.hostIP ?? "");
    case "status.hostIPs":
      return ((pod.status?.hostIPs ?? []) as { ip: string }[]).map((p) => p.ip).join(",");
    default:
      throw new LaunchError(`unsupported downward API field ${fieldPath}`);
  }
}

/** A resource quantity in the units a `resourceFieldRef` divisor asks for, rounded up as the kubelet does. */
export function resourceValue(container: Json, resource: string, divisor = "1"): string {
  const [kind, name] = resource.split(".") as [string, string];
  const q = container.resources?.[kind]?.[name];
  if (q === undefined) return "0";
  return String(Math.ceil(quantity(String(q)) / quantity(divisor)));
}

function quantity(q: string): number {
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q);
  if (!m) throw new LaunchError(`cannot read the quantity ${q}`);
  const units: Record<string, number> = {
    "": 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
  };
  const u = units[m[2]!];
  if (u === undefined) throw new LaunchError(`unknown quantity unit in ${q}`);
  return Number(m[1]) * u;
}

/** The container's environment, in the kubelet's order: envFrom first, then env (later entries win). */
export function containerEnv(pod: Json, container: Json, data: PodData): Map<string, string> {
  const ns = String(pod.metadata?.namespace ?? "");
  const vars = new Map<string, string>();
  const source = (kind: "secrets" | "configMaps", name: string, optional: boolean) => {
    const d = data[kind][`${ns}/${name}`];
    if (d === undefined && !optional)
      throw new LaunchError(`${kind === "secrets" ? "Secret" : "ConfigMap"} ${ns}/${name} not found`);
    return d;
  };
  for (const from of (container.envFrom ?? []) as Json[]) {
    const ref = from.configMapRef ?? from.secretRef;
    const d = source(from.configMapRef ? "configMaps" : "secrets", ref.name, Boolean(ref.optional));
    for (const [k, v] of Object.entries(d ?? {})) vars.set(`${from.prefix ?? ""}${k}`, v);
  }
  for (const e of (container.env ?? []) as Json[]) {
    const vf = e.valueFrom;
    if (vf === undefined) {
      vars.set(e.name, expandVars(String(e.value ?? ""), vars));
    } else if (vf.fieldRef) {
      vars.set(e.name, fieldValue(pod, vf.fieldRef.fieldPath));
    } else if (vf.resourceFieldRef) {
      vars.set(e.name, resourceValue(container, vf.resourceFieldRef.resource, vf.resourceFieldRef.divisor));
    } else {
      const ref = vf.secretKeyRef ?? vf.configMapKeyRef;
      const kind = vf.secretKeyRef ? "secrets" : "configMaps";
      const d = source(kind, ref.name, Boolean(ref.optional));
      const v = d?.[ref.key];
      if (v === undefined && !ref.optional) throw new LaunchError(`key ${ref.key} not in ${ns}/${ref.name}`);
      if (v !== undefined) vars.set(e.name, v);
    }
  }
  return vars;
}

/** `text` with a mounted path (`mountPath` or below it) moved to where the volume is on the host. */
export function hostPath(text: string, mounts: ReadonlyMap<string, string>): string {
  const byLength = [...mounts.keys()].sort((a, b) => b.length - a.length);
  const move = (p: string) => {
    for (const m of byLength) {
      const base = m.replace(/\/+$/, "") || "/";
      if (p === base) return mounts.get(m)!;
      if (p.startsWith(base === "/" ? "/" : `${base}/`))
        return mounts.get(m)! + p.slice(base === "/" ? 0 : base.length);
    }
    return p;
  };
  const eq = /^(--?[A-Za-z0-9][-A-Za-z0-9_.]*=)(\/.*)$/.exec(text);
  if (eq) return eq[1]! + move(eq[2]!);
  return text.startsWith("/") ? move(text) : text;
}

/** A listener of the process: the port the pod declares for it and the loopback port it really uses. */
export interface PortMapping {
  flag: string;
  containerPort: number;
  localPort: number;
}

export interface Probe {
  kind: "http" | "tcp" | "none";
  scheme?: "HTTP" | "HTTPS";
  path?: string;
  headers?: Record<string, string>;
  /** The loopback port the probe asks. */
  localPort?: number;
}

export interface LaunchPlan {
  args: string[];
  env: Record<string, string>;
  ports: PortMapping[];
  readiness: Probe;
}

/** The value a flag has in `args` (`--f=v` or `--f v`; the last one wins), with where it is. */
function findFlag(args: string[], flag: string): { value: string; at: number; joined: boolean }[] {
  const found: { value: string; at: number; joined: boolean }[] = [];
  args.forEach((a, i) => {
    if (a.startsWith(`${flag}=`)) found.push({ value: a.slice(flag.length + 1), at: i, joined: true });
    else if (a === flag && i + 1 < args.length) found.push({ value: args[i + 1]!, at: i, joined: false });
  });
  return found;
}

/** The container port a name or number refers to. */
export function containerPort(container: Json, port: number | string): number {
  if (typeof port === "number") return port;
  if (/^\d+$/.test(port)) return Number(port);
  const p = ((container.ports ?? []) as Json[]).find((x) => x.name === port);
  if (!p) throw new LaunchError(`container ${container.name} has no port named ${port}`);
  return Number(p.containerPort);
}

export interface PlanInput {
  pod: Json;
  container: Json;
  image: LabImage;
  data: PodData;
  /** Container mount path → the host directory (or file) holding that volume's content. */
  mounts: ReadonlyMap<string, string>;
  /** A free loopback port for a listener. */
  freePort: (containerPort: number) => number;
  kubeconfig: string;
  /** Environment every process gets besides the container's (PATH, HOME). */
  baseEnv: Record<string, string>;
}

/** The command line, environment, port mappings and readiness probe of one launched container. */
export function planLaunch(input: PlanInput): LaunchPlan {
  const { container, image } = input;
  const vars = containerEnv(input.pod, container, input.data);
  const env: Record<string, string> = { ...input.baseEnv };
  for (const [k, v] of vars) env[k] = hostPath(v, input.mounts);
  // The image's entrypoint is the binary: command[0] names it in the container, the rest are arguments.
  const raw = [...((container.command ?? []) as string[]).slice(1), ...((container.args ?? []) as string[])];
  let args = raw.map((a) => hostPath(expandVars(a, vars), input.mounts));

  const ports: PortMapping[] = [];
  for (const l of image.listeners) {
    const found = findFlag(args, l.flag);
    const last = found[found.length - 1];
    if (last && l.form === "hostport" && last.value === "0") continue; // the binary's "disabled"
    const cport = last
      ? Number(l.form === "port" ? last.value : last.value.slice(last.value.lastIndexOf(":") + 1))
      : l.defaultPort;
    if (!Number.isInteger(cport) || cport <= 0)
      throw new LaunchError(`cannot read the port of ${l.flag}=${last?.value ?? ""}`);
    const local = input.freePort(cport);
    const value = l.form === "port" ? String(local) : `127.0.0.1:${local}`;
    const drop = new Set(found.flatMap((f) => (f.joined ? [f.at] : [f.at, f.at + 1])));
    args = [...args.filter((_, i) => !drop.has(i)), `${l.flag}=${value}`];
    ports.push({ flag: l.flag, containerPort: cport, localPort: local });
  }
  const kubeconfigFlags = image.kubeconfigFlags ?? ["--kubeconfig"];
  const kc = new Set(
    kubeconfigFlags.flatMap((flag) => findFlag(args, flag).flatMap((f) => (f.joined ? [f.at] : [f.at, f.at + 1]))),
  );
  args = [
    ...args.filter((_, i) => !kc.has(i)),
    ...(image.loopbackFlags ?? []),
    ...kubeconfigFlags.map((f) => `${f}=${input.kubeconfig}`),
  ];
  // controller-runtime's config loader reads KUBECONFIG, not the binary's own --kubeconfig (cainjector).
  env["KUBECONFIG"] = input.kubeconfig;

  return { args, env, ports, readiness: probe(container, container.readinessProbe, ports) };
}

function probe(container: Json, p: Json, ports: PortMapping[]): Probe {
  if (!p) return { kind: "none" };
  const local = (port: number | string) => {
    const cport = containerPort(container, port);
    const m = ports.find((x) => x.containerPort === cport);
    if (!m)
      throw new LaunchError(`the readiness probe asks port ${cport}, which no known listener of the binary serves`);
    return m.localPort;
  };
  if (p.httpGet) {
    const headers: Record<string, string> = {};
    for (const h of (p.httpGet.httpHeaders ?? []) as { name: string; value: string }[]) headers[h.name] = h.value;
    return {
      kind: "http",
      scheme: p.httpGet.scheme === "HTTPS" ? "HTTPS" : "HTTP",
      path: String(p.httpGet.path ?? "/"),
      headers,
      localPort: local(p.httpGet.port),
    };
  }
  if (p.tcpSocket) return { kind: "tcp", localPort: local(p.tcpSocket.port) };
  if (p.grpc) return { kind: "tcp", localPort: local(Number(p.grpc.port)) };
  throw new LaunchError("an exec readiness probe runs in the container's file system, which the lab does not have");
}
