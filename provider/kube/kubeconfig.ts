/**
 * Kubeconfig loading and credentials with kubectl's (client-go's clientcmd)
 * semantics, natively. @kubernetes/client-node used to do this, but loading
 * its module graph costs 0.5–1.6 s, which dominated every CLI start; it is now
 * loaded only for users whose credentials are dynamic (an exec plugin or an
 * auth provider), and only then.
 *
 * What kubectl does, and so what this does:
 *  - Sources, in order: explicit content; an explicit path; `KUBECONFIG` (a
 *    path list: missing entries are skipped, the first file to define a
 *    cluster/user/context name wins, the first non-empty current-context
 *    wins); `~/.kube/config`; else the in-cluster service account, which is
 *    also used when the kubeconfig files define nothing at all.
 *  - Relative file references (certificate-authority, client-certificate,
 *    client-key, tokenFile, and an exec command containing a `/`) resolve
 *    against the directory of the file that holds them.
 *  - The selected context's cluster and user are checked the way kubectl
 *    checks them before use, with kubectl's wording.
 *  - A tokenFile is re-read at most once a minute (projected service account
 *    tokens rotate); the file's token wins over `token` while it is readable.
 *
 * No message here ever contains a credential: only names, paths and field names.
 */
import fs from "node:fs";
import type * as http from "node:http";
import type * as https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  CORE_SCHEMA,
  eventsToAst,
  parseEvents,
  SCALAR_STYLE,
  type Node as JsYamlNode,
  type ScalarNode as JsYamlScalar,
} from "js-yaml";
import type { Document, Node, Scalar, YAMLMap, YAMLSeq } from "yaml";
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeConfigError } from "./api-errors.js";
import type * as YamlModule from "yaml";

// -------------------------------------------------------------------- model

export interface KubeconfigCluster {
  readonly name: string;
  /** As written; "" when absent (an error only if this cluster is selected). */
  readonly server: string;
  /** Absolute when it came from a file. */
  readonly certificateAuthority?: string | undefined;
  /** Base64, as in the file. */
  readonly certificateAuthorityData?: string | undefined;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string | undefined;
}

export interface KubeconfigUser {
  readonly name: string;
  readonly clientCertificate?: string | undefined;
  readonly clientCertificateData?: string | undefined;
  readonly clientKey?: string | undefined;
  readonly clientKeyData?: string | undefined;
  readonly token?: string | undefined;
  readonly tokenFile?: string | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly impersonate?: string | undefined;
  readonly impersonateUid?: string | undefined;
  readonly impersonateGroups?: readonly string[] | undefined;
  readonly impersonateExtra?: Readonly<Record<string, readonly string[]>> | undefined;
  /** Raw `exec` block, handed to @kubernetes/client-node. */
  readonly exec?: Record<string, unknown> | undefined;
  /** Raw `auth-provider` block, handed to @kubernetes/client-node. */
  readonly authProvider?: Record<string, unknown> | undefined;
}

export interface KubeconfigContext {
  readonly name: string;
  /** "" when absent. */
  readonly cluster: string;
  /** "" when absent. */
  readonly user: string;
  readonly namespace?: string | undefined;
}

/** One kubeconfig, or several merged. Maps keep file order (used in error messages). */
export interface Kubeconfig {
  readonly clusters: Map<string, KubeconfigCluster>;
  readonly users: Map<string, KubeconfigUser>;
  readonly contexts: Map<string, KubeconfigContext>;
  /** "" when unset. */
  currentContext: string;
}

/** Where the kubeconfig came from, for error messages. */
export type ConfigSource = { kind: "content" } | { kind: "file"; files: string[] } | { kind: "in-cluster" };

export interface LoadedKubeconfig {
  readonly config: Kubeconfig;
  readonly source: ConfigSource;
}

export interface KubeconfigLoadOptions {
  kubeconfigPath?: string | undefined;
  kubeconfigContent?: string | undefined;
}

/** What the loader reads from the machine; tests substitute their own. */
export interface HostEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  /** Where a pod's service account is mounted. */
  readonly serviceAccountDir: string;
}

export function hostEnvironment(): HostEnvironment {
  return {
    env: process.env,
    homeDir: os.homedir(),
    serviceAccountDir: "/var/run/secrets/kubernetes.io/serviceaccount",
  };
}

// The names client-node gave the in-cluster entries; they show up in contextName and error messages.
const IN_CLUSTER = { cluster: "inCluster", user: "inClusterUser", context: "inClusterContext" } as const;

// -------------------------------------------------------------------- what to mask

/** Shorter values are not masked: a short field value (`admin`, `true`) would blank out ordinary words everywhere. */
const MIN_MASKED_CREDENTIAL_LENGTH = 8;

/** The keys of an auth-provider's `config` that hold secrets (access-token, refresh-token, id-token, client-secret, ...). */
const SECRET_CONFIG_KEY = /token|password|secret|key/i;

/**
 * The credentials in a kubeconfig that khook masks in everything it prints, the
 * CLI and the Pulumi provider alike (a session registers them with its redactor):
 * of every user, not only the selected one, its token, password, client key and
 * client certificate data, and the secret entries of its auth-provider config.
 * Paths and names are not credentials and stay readable.
 */
export function credentialsToMask(config: Kubeconfig): string[] {
  const out = new Set<string>();
  const add = (v: unknown): void => {
    if (typeof v === "string" && v.length >= MIN_MASKED_CREDENTIAL_LENGTH) out.add(v);
  };
  for (const user of config.users.values()) {
    for (const v of [user.token, user.password, user.clientKeyData, user.clientCertificateData]) add(v);
    const providerConfig = user.authProvider?.["config"];
    if (providerConfig !== null && typeof providerConfig === "object") {
      for (const [k, v] of Object.entries(providerConfig)) if (SECRET_CONFIG_KEY.test(k)) add(v);
    }
  }
  return [...out];
}

// -------------------------------------------------------------------- loading

/** Loads the kubeconfig from the first source that applies (see the file comment). Does not select a context. */
export function loadKubeconfig(
  opts: KubeconfigLoadOptions,
  host: HostEnvironment = hostEnvironment(),
): LoadedKubeconfig {
  if (opts.kubeconfigContent !== undefined && opts.kubeconfigContent !== "") {
    return { config: parseContent(opts.kubeconfigContent), source: { kind: "content" } };
  }
  if (opts.kubeconfigPath !== undefined && opts.kubeconfigPath !== "") {
    if (!fs.existsSync(opts.kubeconfigPath))
      throw new KubeConfigError(`kubeconfig ${opts.kubeconfigPath} does not exist`);
    return orInCluster(loadFiles([opts.kubeconfigPath]), host);
  }
  const list = host.env["KUBECONFIG"];
  if (list) {
    const files = list.split(path.delimiter).filter((f) => f !== "");
    // kubectl skips missing entries of KUBECONFIG.
    const present = files.filter((f) => fs.existsSync(f));
    if (present.length === 0) {
      if (inClusterPossible(host)) return loadInCluster(host);
      throw new KubeConfigError(`none of the kubeconfig files in KUBECONFIG exist: ${files.join(path.delimiter)}`);
    }
    return orInCluster({ config: loadFiles(present).config, source: { kind: "file", files } }, host);
  }
  const def = path.join(host.homeDir, ".kube", "config");
  if (fs.existsSync(def)) return orInCluster(loadFiles([def]), host);
  if (inClusterPossible(host)) return loadInCluster(host);
  throw new KubeConfigError(
    `no kubeconfig found: pass one explicitly, set KUBECONFIG, or create ${def} (in a pod, the service account is used)`,
  );
}

/** kubectl falls back to the in-cluster service account when the kubeconfig files define nothing. */
function orInCluster(loaded: LoadedKubeconfig, host: HostEnvironment): LoadedKubeconfig {
  return isEmpty(loaded.config) && inClusterPossible(host) ? loadInCluster(host) : loaded;
}

function isEmpty(c: Kubeconfig): boolean {
  return c.clusters.size === 0 && c.users.size === 0 && c.contexts.size === 0 && c.currentContext === "";
}

function parseContent(text: string): Kubeconfig {
  try {
    return parseKubeconfig(text, undefined);
  } catch (e) {
    throw new KubeConfigError(`the kubeconfig content is not valid: ${errText(e)}`);
  }
}

/** Reads and merges existing files, first definition of a name winning. */
function loadFiles(files: readonly string[]): LoadedKubeconfig {
  const configs = files.map((file) => {
    try {
      const abs = path.resolve(file);
      return parseKubeconfig(fs.readFileSync(abs, "utf8"), path.dirname(abs));
    } catch (e) {
      throw new KubeConfigError(`kubeconfig ${file} is not valid: ${errText(e)}`);
    }
  });
  return { config: mergeKubeconfigs(configs), source: { kind: "file", files: [...files] } };
}

/** kubectl's merge: for each name the first config that defines it wins, as does the first non-empty current-context. */
export function mergeKubeconfigs(configs: readonly Kubeconfig[]): Kubeconfig {
  const merged: Kubeconfig = { clusters: new Map(), users: new Map(), contexts: new Map(), currentContext: "" };
  for (const c of configs) {
    addMissing(merged.clusters, c.clusters);
    addMissing(merged.users, c.users);
    addMissing(merged.contexts, c.contexts);
    if (merged.currentContext === "") merged.currentContext = c.currentContext;
  }
  return merged;
}

function addMissing<T>(into: Map<string, T>, from: ReadonlyMap<string, T>): void {
  for (const [name, v] of from) if (!into.has(name)) into.set(name, v);
}

function inClusterPossible(host: HostEnvironment): boolean {
  // client-go's inClusterClientConfig.Possible().
  if (!host.env["KUBERNETES_SERVICE_HOST"] || !host.env["KUBERNETES_SERVICE_PORT"]) return false;
  try {
    return !fs.statSync(path.join(host.serviceAccountDir, "token")).isDirectory();
  } catch {
    return false;
  }
}

/** client-go's in-cluster config: always https; the CA only if it exists; namespace from POD_NAMESPACE, else the namespace file. */
function loadInCluster(host: HostEnvironment): LoadedKubeconfig {
  const hostName = host.env["KUBERNETES_SERVICE_HOST"] ?? "";
  const hostPort = net.isIPv6(hostName)
    ? `[${hostName}]:${host.env["KUBERNETES_SERVICE_PORT"]}`
    : `${hostName}:${host.env["KUBERNETES_SERVICE_PORT"]}`;
  const ca = path.join(host.serviceAccountDir, "ca.crt");
  const config: Kubeconfig = {
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: IN_CLUSTER.context,
  };
  config.clusters.set(IN_CLUSTER.cluster, {
    name: IN_CLUSTER.cluster,
    server: `https://${hostPort}`,
    certificateAuthority: fs.existsSync(ca) ? ca : undefined,
    insecureSkipTlsVerify: false,
  });
  config.users.set(IN_CLUSTER.user, { name: IN_CLUSTER.user, tokenFile: path.join(host.serviceAccountDir, "token") });
  config.contexts.set(IN_CLUSTER.context, {
    name: IN_CLUSTER.context,
    cluster: IN_CLUSTER.cluster,
    user: IN_CLUSTER.user,
    namespace: host.env["POD_NAMESPACE"] || readTrimmed(path.join(host.serviceAccountDir, "namespace")) || undefined,
  });
  return { config, source: { kind: "in-cluster" } };
}

function readTrimmed(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return undefined;
  }
}

export function describeSource(s: ConfigSource): string {
  switch (s.kind) {
    case "content":
      return "the given kubeconfig content";
    case "in-cluster":
      return "the in-cluster service account";
    case "file":
      return s.files.length === 1 ? `kubeconfig ${s.files[0]}` : `kubeconfig ${s.files.join(path.delimiter)}`;
  }
}

/** "<source> is not valid: <why>", in the wording the loader already uses for parse errors. */
function invalidIn(s: ConfigSource, why: string): KubeConfigError {
  return new KubeConfigError(
    `${s.kind === "content" ? "the kubeconfig content" : describeSource(s)} is not valid: ${why}`,
  );
}

// -------------------------------------------------------------------- parsing

/** Thrown while parsing; the loader prefixes it with the source. */
class ParseError extends Error {}

/**
 * Parses one kubeconfig document. With `baseDir`, relative file references are
 * made absolute against it, as kubectl does for files.
 *
 * Scalars are read from the YAML syntax tree rather than converted values, so
 * a field kubectl reads as a string keeps the text as written (`password: 0123`
 * stays "0123", where a YAML number would have lost the zero).
 *
 * Every CLI run and Pulumi operation parses its kubeconfig, and loading the `yaml`
 * library is most of that cost, so js-yaml's syntax tree (js-yaml is already loaded
 * for the spec) is read first. It is used only for documents it describes exactly as
 * the `yaml` library would (see `plainTree`); anything else, every error included,
 * is read by the `yaml` library, whose reading is the reference and whose messages
 * carry positions. test/unit/kubeconfig-parity.test.ts holds the two to the same result.
 */
export function parseKubeconfig(text: string, baseDir: string | undefined): Kubeconfig {
  const plain = plainTree(text);
  if (plain !== undefined) {
    try {
      return readKubeconfig(plain, baseDir);
    } catch {
      // A document the fast reading refuses (or finds wrong) gets the reference reading and its message.
    }
  }
  return parseKubeconfigFully(text, baseDir);
}

/** The `yaml` library's reading: the reference, with the positioned error messages. Exported for the parity test. */
export function parseKubeconfigFully(text: string, baseDir: string | undefined): Kubeconfig {
  const { LineCounter, parseDocument } = yamlLibrary();
  const lines = new LineCounter();
  // prettyErrors would quote the offending source line, which may hold a credential.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, logLevel: "error" });
  const first = doc.errors[0];
  if (first) {
    const at = lines.linePos(first.pos[0]);
    throw new ParseError(`${first.message.replace(/\s+$/, "")} at line ${at.line}, column ${at.col}`);
  }
  return readKubeconfig(documentTree(doc), baseDir);
}

type YamlLibrary = typeof YamlModule;
let yamlModule: YamlLibrary | undefined;

/** The `yaml` library, required on first use: most kubeconfigs never need it (see parseKubeconfig). */
function yamlLibrary(): YamlLibrary {
  yamlModule ??= require("yaml") as YamlLibrary;
  return yamlModule;
}

/** A scalar as the reader sees it. */
interface ScalarView {
  /** The text as written (a quoted scalar's value). */
  readonly text: string;
  /** Written without quotes, not as a block scalar. */
  readonly plain: boolean;
  /** Its value when the YAML 1.2 core schema reads it as a boolean. */
  readonly bool: boolean | undefined;
}

/** What reading a kubeconfig needs from a parsed document, for either parser. Nodes come with aliases resolved. */
interface Tree<N> {
  readonly root: N | undefined;
  /** "null" for an absent node and a null scalar. */
  kind(node: N | undefined): "null" | "map" | "seq" | "scalar" | "other";
  get(map: N, key: string): N | undefined;
  /** A mapping's entries, each key as text. */
  entries(map: N): [string, N][];
  items(seq: N): N[];
  scalar(node: N): ScalarView;
  /** A plain JS copy, as YAML 1.2's core schema converts it. */
  toJS(node: N): unknown;
}

/** The `yaml` library's Document. */
function documentTree(doc: Document): Tree<unknown> {
  const { isAlias, isMap, isScalar, isSeq } = yamlLibrary();
  const deref = (node: unknown): unknown => (isAlias(node) ? node.resolve(doc) : node);
  const asMap = (node: unknown): YAMLMap => node as YAMLMap;
  return {
    root: deref(doc.contents),
    kind: (n) =>
      n === undefined || n === null || (isScalar(n) && n.value === null)
        ? "null"
        : isMap(n)
          ? "map"
          : isSeq(n)
            ? "seq"
            : isScalar(n)
              ? "scalar"
              : "other",
    get: (m, key) => deref(asMap(m).get(key, true)),
    entries: (m) =>
      asMap(m).items.map((pair) => {
        const key = deref(pair.key);
        return [isScalar(key) ? String(key.value) : "", deref(pair.value)];
      }),
    items: (s) => (s as YAMLSeq).items.map(deref),
    scalar: (n) => {
      const s = n as Scalar;
      return {
        text: typeof s.value === "string" ? s.value : (s.source ?? String(s.value)),
        plain: s.type === "PLAIN",
        bool: typeof s.value === "boolean" ? s.value : undefined,
      };
    },
    toJS: (n): unknown => (n as Node).toJS(doc) as unknown,
  };
}

/** Refusal of the fast reading: the document goes to the `yaml` library. */
class NotPlain extends Error {}

const CORE = "tag:yaml.org,2002:";
/** The longest implicit key the `yaml` library accepts (YAML's 1024-character limit). */
const MAX_IMPLICIT_KEY = 1024;

/**
 * js-yaml's syntax tree of a document that both parsers read the same way, or undefined.
 * That is: one document, no directives (a `%YAML 1.1` would change the schema), no tags,
 * no aliases, no tab characters (the two libraries differ on where tabs may stand), and
 * mappings whose keys are distinct strings. Kubeconfigs written by kubectl, cloud CLIs
 * and cluster installers are like that; a document that is not goes to the `yaml` library.
 */
function plainTree(text: string): Tree<JsYamlNode> | undefined {
  if (text.includes("\t")) return undefined;
  let docs: ReturnType<typeof eventsToAst>;
  try {
    docs = eventsToAst(parseEvents(text, {}), { source: text, schema: CORE_SCHEMA });
  } catch {
    return undefined;
  }
  if (docs.length > 1) return undefined;
  const doc = docs[0];
  if (doc !== undefined && doc.directives.length > 0) return undefined;
  const root = doc?.contents ?? undefined;
  if (root !== undefined && !isPlain(root)) return undefined;
  return {
    root,
    kind: (n) =>
      n === undefined || (n.kind === "scalar" && n.tag === `${CORE}null`)
        ? "null"
        : n.kind === "mapping"
          ? "map"
          : n.kind === "sequence"
            ? "seq"
            : n.kind === "scalar"
              ? "scalar"
              : "other",
    get: (m, key) =>
      m.kind === "mapping" ? m.items.find((pair) => (pair.key as JsYamlScalar).value === key)?.value : undefined,
    entries: (m) =>
      m.kind === "mapping"
        ? m.items.map((pair): [string, JsYamlNode] => [(pair.key as JsYamlScalar).value, pair.value])
        : [],
    items: (s) => (s.kind === "sequence" ? s.items : []),
    scalar: (n) => {
      const s = n as JsYamlScalar;
      return {
        text: s.value,
        plain: s.style === SCALAR_STYLE.PLAIN,
        bool: s.tag === `${CORE}bool` ? /^(?:[Tt]rue|TRUE)$/.test(s.value) : undefined,
      };
    },
    // exec and auth-provider blocks: typed values are the `yaml` library's business (and those users load client-node anyway).
    toJS: () => {
      throw new NotPlain();
    },
  };
}

/** Whether every node under `node` is one the fast reading describes exactly (see plainTree). */
function isPlain(node: JsYamlNode): boolean {
  if (node.kind === "alias" || node.tagged) return false;
  if (node.kind === "scalar") return true;
  if (node.kind === "sequence") return node.items.every(isPlain);
  const keys = new Set<string>();
  for (const { key, value } of node.items) {
    if (
      key.kind !== "scalar" ||
      key.tagged ||
      key.tag !== `${CORE}str` ||
      key.value.length > MAX_IMPLICIT_KEY ||
      keys.has(key.value)
    )
      return false;
    keys.add(key.value);
    if (!isPlain(value)) return false;
  }
  return true;
}

/** Reads the kubeconfig fields from either parser's tree. */
function readKubeconfig<N>(tree: Tree<N>, baseDir: string | undefined): Kubeconfig {
  const r = new Reader(tree, baseDir);
  const top = r.map(tree.root, "the document");
  const config: Kubeconfig = {
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: r.str(top, "current-context", "") ?? "",
  };
  r.named(top, "clusters", "cluster", config.clusters, (m, at, name) => r.cluster(m, at, name));
  r.named(top, "users", "user", config.users, (m, at, name) => r.user(m, at, name));
  r.named(top, "contexts", "context", config.contexts, (m, at, name) => r.context(m, at, name));
  return config;
}

/** Typed, path-annotated access to a parsed tree. */
class Reader<N> {
  constructor(
    private readonly tree: Tree<N>,
    private readonly baseDir: string | undefined,
  ) {}

  map(node: N | undefined, at: string): N | undefined {
    const kind = this.tree.kind(node);
    if (kind === "null") return undefined;
    if (kind !== "map") throw new ParseError(`${at} must be a mapping`);
    return node;
  }

  seq(node: N | undefined, at: string): N[] {
    const kind = this.tree.kind(node);
    if (kind === "null") return [];
    if (kind !== "seq") throw new ParseError(`${at} must be a list`);
    return this.tree.items(node!);
  }

  private field(m: N | undefined, key: string): N | undefined {
    return m === undefined ? undefined : this.tree.get(m, key);
  }

  /** A scalar's text, or undefined for null; `what` names it in the error for anything else. */
  private text(n: N | undefined, what: string): string | undefined {
    const kind = this.tree.kind(n);
    if (kind === "null") return undefined;
    if (kind !== "scalar") throw new ParseError(`${what} must be a string`);
    return this.tree.scalar(n!).text;
  }

  /**
   * A string field. Empty counts as absent, as in kubectl. Unquoted numbers
   * and booleans keep their source text: kubectl rejects them, but the text is
   * what was meant, and @kubernetes/client-node accepted them before.
   */
  str(m: N | undefined, key: string, at: string): string | undefined {
    const s = this.text(this.field(m, key), join(at, key));
    return s === "" ? undefined : s;
  }

  /** A boolean field, with YAML 1.1's plain spellings (kubectl's YAML library accepts `yes`, `on`, ...; not quoted ones). */
  bool(m: N | undefined, key: string, at: string): boolean {
    const n = this.field(m, key);
    const kind = this.tree.kind(n);
    if (kind === "null") return false;
    const s = kind === "scalar" ? this.tree.scalar(n!) : undefined;
    if (s?.bool !== undefined) return s.bool;
    const word = s?.plain === true ? s.text : "";
    if (/^(y|Y|yes|Yes|YES|on|On|ON)$/.test(word)) return true;
    if (/^(n|N|no|No|NO|off|Off|OFF)$/.test(word)) return false;
    throw new ParseError(`${join(at, key)} must be true or false`);
  }

  /** A file reference, made absolute against the kubeconfig's directory. */
  file(m: N | undefined, key: string, at: string): string | undefined {
    const f = this.str(m, key, at);
    return f === undefined || this.baseDir === undefined ? f : path.resolve(this.baseDir, f);
  }

  /** Base64 data; checked here because kubectl refuses the whole file when it does not decode. */
  base64(m: N | undefined, key: string, at: string): string | undefined {
    const s = this.str(m, key, at);
    if (s === undefined) return undefined;
    const compact = s.replace(/[\r\n]/g, "");
    if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact))
      throw new ParseError(`${join(at, key)} is not valid base64`);
    return compact;
  }

  private strList(m: N | undefined, key: string, at: string): string[] | undefined {
    const out = this.seq(this.field(m, key), join(at, key)).map((item, i) => {
      const s = this.tree.kind(item) === "scalar" ? this.text(item, "") : undefined;
      if (s === undefined) throw new ParseError(`${join(at, key)}[${i}] must be a string`);
      return s;
    });
    return out.length > 0 ? out : undefined;
  }

  /** A plain JS copy of a subtree, for blocks interpreted by @kubernetes/client-node. */
  private js(m: N | undefined, key: string, at: string): Record<string, unknown> | undefined {
    const n = this.map(this.field(m, key), join(at, key));
    return n === undefined ? undefined : (this.tree.toJS(n) as Record<string, unknown>);
  }

  /** A list of `{name, <kind>: {...}}` entries; a name defined twice in one file is an error, as in kubectl. */
  named<T>(
    top: N | undefined,
    list: string,
    kind: string,
    into: Map<string, T>,
    read: (m: N | undefined, at: string, name: string) => T,
  ): void {
    this.seq(this.field(top, list), list).forEach((item, i) => {
      const at = `${list}[${i}]`;
      const entry = this.map(item, at);
      const name = this.str(entry, "name", at);
      if (name === undefined) throw new ParseError(`${at}.name is missing`);
      if (into.has(name)) throw new ParseError(`${kind} "${name}" is defined twice`);
      into.set(name, read(this.map(this.field(entry, kind), `${at}.${kind}`), `${at}.${kind}`, name));
    });
  }

  cluster(m: N | undefined, at: string, name: string): KubeconfigCluster {
    return {
      name,
      server: this.str(m, "server", at) ?? "",
      certificateAuthority: this.file(m, "certificate-authority", at),
      certificateAuthorityData: this.base64(m, "certificate-authority-data", at),
      insecureSkipTlsVerify: this.bool(m, "insecure-skip-tls-verify", at),
      tlsServerName: this.str(m, "tls-server-name", at),
      // proxy-url, disable-compression, extensions: not used.
    };
  }

  user(m: N | undefined, at: string, name: string): KubeconfigUser {
    return {
      name,
      clientCertificate: this.file(m, "client-certificate", at),
      clientCertificateData: this.base64(m, "client-certificate-data", at),
      clientKey: this.file(m, "client-key", at),
      clientKeyData: this.base64(m, "client-key-data", at),
      token: this.str(m, "token", at),
      tokenFile: this.file(m, "tokenFile", at),
      username: this.str(m, "username", at),
      password: this.str(m, "password", at),
      impersonate: this.str(m, "as", at),
      impersonateUid: this.str(m, "as-uid", at),
      impersonateGroups: this.strList(m, "as-groups", at),
      impersonateExtra: this.extra(m, at),
      exec: this.execBlock(m, at),
      authProvider: this.js(m, "auth-provider", at),
    };
  }

  private extra(m: N | undefined, at: string): Record<string, string[]> | undefined {
    const extra = this.map(this.field(m, "as-user-extra"), join(at, "as-user-extra"));
    if (extra === undefined) return undefined;
    const out: Record<string, string[]> = {};
    for (const [k] of this.tree.entries(extra)) out[k] = this.strList(extra, k, join(at, "as-user-extra")) ?? [];
    return out;
  }

  /** kubectl resolves an exec command against the kubeconfig's directory only when it is a path, not a PATH lookup. */
  private execBlock(m: N | undefined, at: string): Record<string, unknown> | undefined {
    const exec = this.js(m, "exec", at);
    const command = exec?.["command"];
    if (exec === undefined || this.baseDir === undefined || typeof command !== "string" || !command.includes("/"))
      return exec;
    return { ...exec, command: path.resolve(this.baseDir, command) };
  }

  context(m: N | undefined, at: string, name: string): KubeconfigContext {
    return {
      name,
      cluster: this.str(m, "cluster", at) ?? "",
      user: this.str(m, "user", at) ?? "",
      namespace: this.str(m, "namespace", at),
    };
  }
}

function join(at: string, key: string): string {
  return at === "" ? key : `${at}.${key}`;
}

// -------------------------------------------------------------------- selecting a context

export interface KubeconfigSelection {
  readonly source: ConfigSource;
  readonly contextName: string;
  /** The context's namespace, else `default` (like kubectl). */
  readonly namespace: string;
  readonly cluster: KubeconfigCluster;
  /** The API server URL without trailing slashes, with kubectl's default scheme when the kubeconfig gives none. */
  readonly server: string;
  /** The context's user; an empty (anonymous) user when the context names none that is defined, as in kubectl. */
  readonly user: KubeconfigUser;
  /** Whether the server is https. kubectl sends credentials only then; over http it is anonymous (impersonation aside). */
  readonly secure: boolean;
  /** Whether the context's user is defined (error messages name it only then). */
  readonly userDefined: boolean;
}

/** Picks the context (`--context`, else current-context) and checks it the way kubectl does before use. */
export function selectContext(loaded: LoadedKubeconfig, context?: string): KubeconfigSelection {
  const { config, source } = loaded;
  if (context !== undefined && context !== "" && !config.contexts.has(context)) {
    const known = [...config.contexts.keys()];
    throw new KubeConfigError(
      `context "${context}" does not exist in ${describeSource(source)} (contexts: ${known.join(", ") || "none"})`,
    );
  }
  const name = context || config.currentContext;
  const ctx = config.contexts.get(name);
  if (!name || !ctx) {
    throw new KubeConfigError(
      `${describeSource(source)} has no current context; set one (kubectl config use-context) or pass a context`,
    );
  }
  const cluster = config.clusters.get(ctx.cluster);
  if (ctx.cluster === "" || !cluster) {
    throw new KubeConfigError(`context "${name}" in ${describeSource(source)} refers to a cluster that is not defined`);
  }
  const defined = ctx.user !== "" ? config.users.get(ctx.user) : undefined;
  const user: KubeconfigUser = defined ?? { name: ctx.user };
  const server = serverUrl(cluster);
  const secure = /^https:\/\//i.test(server);
  // kubectl checks the entries first (clientcmd's ConfirmUsable); its TLS transport checks more, but only for https.
  const problems = [
    ...clusterProblems(cluster),
    ...userProblems(user),
    ...(secure ? transportProblems(cluster, user) : []),
  ];
  if (problems.length > 0) throw invalidIn(source, problems.join("; "));
  return {
    source,
    contextName: name,
    namespace: ctx.namespace || "default",
    cluster,
    server,
    user,
    userDefined: defined !== undefined,
    secure,
  };
}

/** kubectl's checks of a cluster entry (clientcmd validateClusterInfo, and the TLS transport's). */
function clusterProblems(c: KubeconfigCluster): string[] {
  const out: string[] = [];
  if (c.server === "") out.push(`no server found for cluster "${c.name}"`);
  if (c.certificateAuthority !== undefined && c.certificateAuthorityData !== undefined) {
    out.push(
      `certificate-authority-data and certificate-authority are both specified for ${c.name}. certificate-authority-data will override.`,
    );
  }
  if (c.certificateAuthority !== undefined) {
    const err = unreadable(c.certificateAuthority);
    if (err) out.push(`unable to read certificate-authority ${c.certificateAuthority} for ${c.name} due to ${err}`);
  }
  return out;
}

/** What client-go's transport refuses (only reached for https servers). */
function transportProblems(c: KubeconfigCluster, u: KubeconfigUser): string[] {
  const out: string[] = [];
  if (c.insecureSkipTlsVerify && (c.certificateAuthority !== undefined || c.certificateAuthorityData !== undefined)) {
    out.push(`specifying a root certificates file with the insecure flag is not allowed`);
  }
  if (u.tokenFile !== undefined && u.token === undefined && u.username !== undefined)
    out.push(`username/password or bearer token may be set, but not both`);
  return out;
}

/** kubectl's checks of a user entry (clientcmd validateAuthInfo, and the transport's). */
function userProblems(u: KubeconfigUser): string[] {
  const out: string[] = [];
  const methods: string[] = [];
  if (u.token !== undefined) methods.push("token");
  if (u.username !== undefined || u.password !== undefined) methods.push("basicAuth");
  if (u.clientCertificate !== undefined || u.clientCertificateData !== undefined) out.push(...clientCertProblems(u));
  if (u.exec !== undefined) out.push(...execProblems(u, u.exec));
  if (methods.length > 1)
    out.push(
      `more than one authentication method found for ${u.name}; found [${methods.join(" ")}], only one is allowed`,
    );
  return out;
}

function clientCertProblems(u: KubeconfigUser): string[] {
  const out: string[] = [];
  if (u.clientCertificate !== undefined && u.clientCertificateData !== undefined) {
    out.push(`client-cert-data and client-cert are both specified for ${u.name}. client-cert-data will override.`);
  }
  if (u.clientKey !== undefined && u.clientKeyData !== undefined) {
    out.push(`client-key-data and client-key are both specified for ${u.name}; client-key-data will override`);
  }
  if (u.clientKey === undefined && u.clientKeyData === undefined) {
    out.push(
      `client-key-data or client-key must be specified for ${u.name} to use the clientCert authentication method.`,
    );
  }
  for (const [what, file] of [
    ["client-cert", u.clientCertificate],
    ["client-key", u.clientKey],
  ] as const) {
    const err = file === undefined ? undefined : unreadable(file);
    if (err) out.push(`unable to read ${what} ${file} for ${u.name} due to ${err}`);
  }
  return out;
}

function execProblems(u: KubeconfigUser, exec: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (u.authProvider !== undefined)
    out.push(`authProvider cannot be provided in combination with an exec plugin for ${u.name}`);
  if (!exec["command"]) out.push(`command must be specified for ${u.name} to use exec authentication plugin`);
  const apiVersion = exec["apiVersion"];
  if (!apiVersion) out.push(`apiVersion must be specified for ${u.name} to use exec authentication plugin`);
  // kubectl defaults interactiveMode for the beta/alpha exec APIs only; v1 must say it.
  const legacy =
    apiVersion === "client.authentication.k8s.io/v1beta1" || apiVersion === "client.authentication.k8s.io/v1alpha1";
  const mode = exec["interactiveMode"] ?? (legacy ? "IfAvailable" : "");
  if (mode === "") out.push(`interactiveMode must be specified for ${u.name} to use exec authentication plugin`);
  else if (mode !== "Never" && mode !== "IfAvailable" && mode !== "Always")
    out.push(`invalid interactiveMode for ${u.name}: ${JSON.stringify(String(mode))}`);
  return out;
}

function unreadable(file: string): string | undefined {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return undefined;
  } catch (e) {
    return errText(e);
  }
}

/**
 * A server without a scheme is http in kubectl: client-go decides whether the
 * transport is TLS before it merges any TLS settings (so CA data does not make it https).
 */
function serverUrl(c: KubeconfigCluster): string {
  const s = c.server.includes("://") ? c.server : `http://${c.server}`;
  return s.replace(/\/+$/, "");
}

// -------------------------------------------------------------------- credentials

export interface TlsMaterial {
  ca?: Buffer | string | undefined;
  cert?: Buffer | string | undefined;
  key?: Buffer | string | undefined;
  servername?: string | undefined;
  rejectUnauthorized?: boolean | undefined;
}

export interface Auth {
  tls: TlsMaterial;
  headers: http.OutgoingHttpHeaders;
}

export interface Credentials {
  /**
   * TLS material and headers for the next request. Static credentials return
   * the same TLS object every time; an exec plugin may rotate the client
   * certificate, and then new connections must use the new one.
   */
  current(): Promise<Auth>;
}

/** Static credentials natively; exec plugins and auth providers through @kubernetes/client-node. */
export async function credentialsFor(sel: KubeconfigSelection): Promise<Credentials> {
  // Over http kubectl runs no exec plugin (it would send no credentials anyway).
  if (sel.secure && (sel.user.exec !== undefined || sel.user.authProvider !== undefined))
    return DynamicCredentials.create(sel);
  return new StaticCredentials(sel);
}

/** Certificates, a token, a token file or basic auth: everything read once, except a token file (once a minute). */
export class StaticCredentials implements Credentials {
  private readonly tls: TlsMaterial;
  private readonly user: KubeconfigUser;
  private readonly tokenFile: TokenFile | undefined;
  private bearer: string | undefined;
  private headers: http.OutgoingHttpHeaders;

  constructor(sel: KubeconfigSelection, now: () => number = Date.now) {
    const { cluster, source } = sel;
    // kubectl sends no credentials to an http server; impersonation headers still go.
    const user: KubeconfigUser = sel.secure ? sel.user : impersonationOnly(sel.user);
    const cert = bytes(user.clientCertificateData, user.clientCertificate, "client-cert", user.name, source);
    this.tls = {
      ca: bytes(
        cluster.certificateAuthorityData,
        cluster.certificateAuthority,
        "certificate-authority",
        cluster.name,
        source,
      ),
      cert,
      // Like client-go, a key without a certificate is not used.
      key: cert === undefined ? undefined : bytes(user.clientKeyData, user.clientKey, "client-key", user.name, source),
      servername: cluster.tlsServerName,
      rejectUnauthorized: cluster.insecureSkipTlsVerify ? false : undefined,
    };
    this.user = user;
    this.tokenFile = user.tokenFile === undefined ? undefined : new TokenFile(user.tokenFile, user.token, now, sel);
    this.bearer = this.tokenFile?.current() ?? user.token;
    this.headers = staticHeaders(user, this.bearer);
  }

  current(): Promise<Auth> {
    const bearer = this.tokenFile?.current() ?? this.bearer;
    if (bearer !== this.bearer) {
      this.bearer = bearer;
      this.headers = staticHeaders(this.user, bearer);
    }
    return Promise.resolve({ tls: this.tls, headers: this.headers });
  }
}

function impersonationOnly(u: KubeconfigUser): KubeconfigUser {
  return {
    name: u.name,
    impersonate: u.impersonate,
    impersonateUid: u.impersonateUid,
    impersonateGroups: u.impersonateGroups,
    impersonateExtra: u.impersonateExtra,
  };
}

/** kubectl prefers the `-data` field ("will override"); a file is read now. */
function bytes(
  data: string | undefined,
  file: string | undefined,
  what: string,
  owner: string,
  source: ConfigSource,
): Buffer | undefined {
  if (data !== undefined) return Buffer.from(data, "base64");
  if (file === undefined) return undefined;
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw invalidIn(source, `unable to read ${what} ${file} for ${owner} due to ${errText(e)}`);
  }
}

/**
 * client-go's cached file token source: re-read at most once a minute, so a
 * rotated projected token is picked up; when a re-read fails the last token
 * (else the kubeconfig's `token`) is kept.
 */
class TokenFile {
  private token: string | undefined;
  private readAt = 0;

  constructor(
    private readonly file: string,
    private readonly fallback: string | undefined,
    private readonly now: () => number,
    sel: KubeconfigSelection,
  ) {
    const err = this.read();
    if (err !== undefined && fallback === undefined)
      throw invalidIn(sel.source, `unable to read tokenFile ${file} for ${sel.user.name || "the user"} due to ${err}`);
  }

  current(): string | undefined {
    if (this.now() - this.readAt >= 60_000) this.read();
    return this.token ?? this.fallback;
  }

  private read(): string | undefined {
    this.readAt = this.now();
    let text: string;
    try {
      text = fs.readFileSync(this.file, "utf8").trim();
    } catch (e) {
      return errText(e);
    }
    // client-go treats an empty token file as a failed read (it may be mid-rotation).
    if (text === "") return "the file is empty";
    this.token = text;
    return undefined;
  }
}

/** Authorization and impersonation headers (client-go's bearer, basic and impersonating round trippers). */
function staticHeaders(user: KubeconfigUser, bearer: string | undefined): http.OutgoingHttpHeaders {
  const h: http.OutgoingHttpHeaders = { ...impersonationHeaders(user) };
  if (bearer) h["Authorization"] = `Bearer ${bearer}`;
  else if (user.username)
    h["Authorization"] = `Basic ${Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64")}`;
  return h;
}

export function impersonationHeaders(user: KubeconfigUser): http.OutgoingHttpHeaders {
  const h: http.OutgoingHttpHeaders = {};
  if (user.impersonate) h["Impersonate-User"] = user.impersonate;
  if (user.impersonateUid) h["Impersonate-Uid"] = user.impersonateUid;
  if (user.impersonateGroups) h["Impersonate-Group"] = [...user.impersonateGroups];
  for (const [k, v] of Object.entries(user.impersonateExtra ?? {}))
    h[`Impersonate-Extra-${headerKeyEscape(k)}`] = [...v];
  return h;
}

/** client-go's headerKeyEscape: %-encode bytes that are not legal in a header name, and `%` itself. */
function headerKeyEscape(key: string): string {
  let out = "";
  for (const b of Buffer.from(key, "utf8")) {
    const c = String.fromCharCode(b);
    out += /^[!#$&'*+\-.^_`|~0-9A-Za-z]$/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Exec plugins and auth providers, exactly as before: @kubernetes/client-node
 * computes headers and TLS per request (it caches credentials until they expire).
 */
class DynamicCredentials implements Credentials {
  private constructor(
    private readonly kc: KubeConfig,
    private readonly sel: KubeconfigSelection,
  ) {}

  static async create(sel: KubeconfigSelection): Promise<DynamicCredentials> {
    // Loaded only here: the package is large, and static credentials do not need it.
    const { KubeConfig: KubeConfigClass } = await import("@kubernetes/client-node");
    const kc = new KubeConfigClass();
    kc.loadFromOptions(clientNodeOptions(sel));
    return new DynamicCredentials(kc, sel);
  }

  async current(): Promise<Auth> {
    const o: https.RequestOptions & { headers?: Record<string, string> } = { headers: {} };
    try {
      await this.kc.applyToHTTPSOptions(o);
    } catch (e) {
      const how = this.sel.user.exec !== undefined ? "exec plugin" : "auth provider";
      throw new KubeConfigError(
        `cannot get credentials for user "${this.sel.user.name}" (context "${this.sel.contextName}"): its ${how} failed: ${errText(e)}; fix or re-authenticate the ${how} (for example, log in again), then retry`,
      );
    }
    const headers: http.OutgoingHttpHeaders = { ...impersonationHeaders(this.sel.user) };
    for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    if (typeof o.auth === "string" && o.auth !== "" && headers["Authorization"] === undefined) {
      headers["Authorization"] = `Basic ${Buffer.from(o.auth).toString("base64")}`;
    }
    return {
      tls: {
        ca: o.ca as Buffer | string | undefined,
        cert: o.cert as Buffer | string | undefined,
        key: o.key as Buffer | string | undefined,
        servername: o.servername ?? undefined,
        rejectUnauthorized: o.rejectUnauthorized,
      },
      headers,
    };
  }
}

/** The selected entries in client-node's shapes (paths already absolute, the server already defaulted). */
function clientNodeOptions(sel: KubeconfigSelection): unknown {
  const { cluster: c, user: u } = sel;
  return {
    clusters: [
      {
        name: c.name,
        server: sel.server,
        caFile: c.certificateAuthority,
        caData: c.certificateAuthorityData,
        skipTLSVerify: c.insecureSkipTlsVerify,
        tlsServerName: c.tlsServerName,
      },
    ],
    users: [
      {
        name: u.name,
        exec: u.exec,
        authProvider: u.authProvider,
        certFile: u.clientCertificate,
        certData: u.clientCertificateData,
        keyFile: u.clientKey,
        keyData: u.clientKeyData,
        token: u.token,
        username: u.username,
        password: u.password,
        // Impersonation headers are added natively (client-node knows only `as`).
      },
    ],
    contexts: [{ name: sel.contextName, cluster: c.name, user: u.name, namespace: sel.namespace }],
    currentContext: sel.contextName,
  };
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
