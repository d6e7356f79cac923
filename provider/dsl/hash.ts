/**
 * Step input hashes, per the spec's state section.
 *
 * The canonical form, version 1 (changing it re-runs every journaled step, so it is versioned):
 *
 *   sha256( "khook step-hash v1\n"
 *         + canonicalJson({ name, type, action: normalize(action) })
 *         + for each referenced local file or directory, in the order the action lists them:
 *             "\n" + role + " " + path-as-written + " " + contentDigest )
 *
 * - canonicalJson: object keys sorted by code point, no whitespace, JSON numbers and strings.
 * - canonicalAction: the loaded action (its kind's defaults applied) minus the fields equal to
 *   their default, and minus empty optional lists and maps; so writing a default explicitly, or
 *   adding an optional field to the code later (absent = default = omitted), never changes an
 *   existing hash. The hash and the executors read the same table. Then the kind rewrites
 *   spellings that mean the same (StepKind.canonical): inline manifests are hashed as data
 *   (steps/manifests/kind.ts), a helm chart's inline version sugar becomes `version`.
 * - Scheduling (`needs`, `when`, `timeout`, `retries`, `retryDelay`, `onError`) is never an input.
 *   The name is: it keys the record.
 * - contentDigest: sha256 of a file's bytes; for a directory, sha256 over `relpath NUL sha256(file) LF`
 *   for every regular file, walked in sorted order (`.git` excluded). A kustomization's local
 *   references outside its directory are walked too.
 */
import fs from "node:fs";
import path from "node:path";
import { nodeCrypto } from "../node-crypto.js";
import { yamlLibrary } from "./yaml.js";
import type { FileReference, StepKind } from "./step-kind.js";

export const HASH_FORMAT = "khook step-hash v1";

export function sha256Hex(data: string | Buffer): string {
  return nodeCrypto().createHash("sha256").update(data).digest("hex");
}

/** JSON with sorted keys and no whitespace: the same data always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return "null";
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(",")}}`;
}

/** Reads content digests once per path: many steps may share a values file. */
export class ContentDigests {
  private readonly cache = new Map<string, string | Error>();

  digest(ref: FileReference): string | Error {
    const key = `${ref.role}\0${ref.resolved}`;
    let d = this.cache.get(key);
    if (d === undefined) {
      try {
        d = ref.role === "kustomize" ? kustomizeDigest(ref.resolved) : pathDigest(ref.resolved);
      } catch (e) {
        d = e instanceof Error ? e : new Error(String(e));
      }
      this.cache.set(key, d);
    }
    return d;
  }
}

function pathDigest(p: string): string {
  const st = fs.statSync(p);
  if (st.isDirectory()) return directoryDigest([p]);
  return sha256Hex(fs.readFileSync(p));
}

function directoryDigest(roots: readonly string[]): string {
  const h = nodeCrypto().createHash("sha256");
  for (const root of roots) {
    h.update(`dir ${path.basename(root)}\n`);
    for (const rel of walkFiles(root)) h.update(`${rel}\0${sha256Hex(fs.readFileSync(path.join(root, rel)))}\n`);
  }
  return h.digest("hex");
}

/** Regular files under `root`, as sorted POSIX relative paths. */
export function walkFiles(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string, rel: string): void => {
    const entries = fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name === ".git") continue;
      const full = path.join(dir, e.name);
      const relPath = rel === "" ? e.name : `${rel}/${e.name}`;
      const st = fs.statSync(full);
      if (st.isDirectory()) visit(full, relPath);
      else if (st.isFile()) out.push(relPath);
    }
  };
  visit(root, "");
  return out;
}

const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/** A kustomize directory plus the local directories and files its kustomizations reach outside it. */
function kustomizeDigest(dir: string): string {
  const st = fs.statSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  const dirs = collectKustomizeDirs(dir);
  return directoryDigest(dirs);
}

function collectKustomizeDirs(start: string): string[] {
  const seen = new Set<string>();
  const order: string[] = [];
  const visit = (dir: string): void => {
    const real = path.resolve(dir);
    if (seen.has(real)) return;
    seen.add(real);
    order.push(real);
    for (const ref of localKustomizeReferences(real)) {
      const target = path.resolve(real, ref);
      if (isInside(target, start)) continue;
      if (fs.existsSync(target) && fs.statSync(target).isDirectory()) visit(target);
    }
  };
  visit(start);
  return order;
}

function isInside(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

export function readKustomization(dir: string): Record<string, unknown> | undefined {
  for (const name of KUSTOMIZATION_FILES) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) {
      const docs = yamlLibrary().parseAllDocuments(fs.readFileSync(file, "utf8"), { logLevel: "error" });
      const first = Array.isArray(docs) ? docs[0] : undefined;
      const value: unknown = first?.toJS();
      return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
    }
  }
  return undefined;
}

/** Every path-like entry of a kustomization that can reference another directory or a remote base. */
export function kustomizeReferences(k: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of ["resources", "bases", "components", "crds"]) {
    const list = k[key];
    if (Array.isArray(list)) for (const v of list) if (typeof v === "string") out.push(v);
  }
  return out;
}

function localKustomizeReferences(dir: string): string[] {
  const k = readKustomization(dir);
  if (k === undefined) return [];
  return kustomizeReferences(k).filter((r) => !isRemoteKustomizeReference(r));
}

/** URL or git references: kustomize would shell out to git for these. */
export function isRemoteKustomizeReference(ref: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(ref) ||
    /^git(@|::)/.test(ref) ||
    /^(github\.com|gitlab\.com|bitbucket\.org)\//.test(ref) ||
    /\?(ref|version|submodules|timeout)=/.test(ref)
  );
}

/** A remote reference in a local kustomize tree: the directory whose kustomization names it, and the reference as written. */
export interface RemoteKustomizeBase {
  dir: string;
  ref: string;
}

/** Remote references anywhere in a local kustomize tree. */
export function findRemoteKustomizeBases(dir: string): RemoteKustomizeBase[] {
  const found: RemoteKustomizeBase[] = [];
  const seen = new Set<string>();
  const visit = (d: string): void => {
    const real = path.resolve(d);
    if (seen.has(real)) return;
    seen.add(real);
    const k = readKustomization(real);
    if (k === undefined) return;
    for (const ref of kustomizeReferences(k)) {
      if (isRemoteKustomizeReference(ref)) found.push({ dir: real, ref });
      else {
        const target = path.resolve(real, ref);
        if (fs.existsSync(target) && fs.statSync(target).isDirectory()) visit(target);
      }
    }
  };
  visit(dir);
  return found;
}

/**
 * The action block in the hash's canonical form: the fields that differ from its kind's
 * defaults, whether the author wrote them or the loader filled them in, and no empty lists or
 * maps; then the kind's own rewriting of spellings that mean the same (StepKind.canonical).
 */
export function canonicalAction(kind: StepKind, action: unknown, stepName: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const defaults = kind.defaultsOf(action);
  for (const [k, v] of Object.entries(action as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    if (Object.hasOwn(defaults, k) && defaults[k] === v) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  kind.canonical?.(out, stepName);
  return out;
}

/** What a step's hash is of: its name, its kind and its normalized block. */
export interface StepHashInput {
  readonly name: string;
  readonly kind: StepKind;
  readonly action: unknown;
}

/**
 * The step's input hash, `sha256:<hex>`; `fileDigests` are in `fileReferences` order.
 * `hooks` are the hooks that can change the step's objects (`objectHooksFor`), in run order: each adds a line
 * `hook <name> <digest>`, so a step without hooks keeps the hash it always had.
 */
export function stepInputHash(
  step: StepHashInput,
  files: readonly { ref: FileReference; digest: string }[],
  hooks: readonly { name: string; digest: string }[] = [],
): string {
  return `sha256:${sha256Hex(stepHashPreimage(step, files, hooks))}`;
}

/**
 * The text `stepInputHash` digests. It holds the step's rendered action, so it may hold
 * secret values: it is never printed or stored, only digested (see keyed-hash.ts).
 */
export function stepHashPreimage(
  step: StepHashInput,
  files: readonly { ref: FileReference; digest: string }[],
  hooks: readonly { name: string; digest: string; secretDefinition?: string | undefined }[] = [],
): string {
  const action = canonicalAction(step.kind, step.action, step.name);
  let text = `${HASH_FORMAT}\n${canonicalJson({ name: step.name, type: step.kind.name, action })}`;
  for (const { ref, digest } of files) text += `\n${ref.role} ${ref.written} ${digest}`;
  for (const hook of hooks) text += `\nhook ${hook.name} ${hook.digest}`;
  // A hook whose definition holds a secret has a digest of the masked text: its real text is an input
  // here, so rotating the secret re-runs the step (whose hash is then keyed: the text holds a secret).
  for (const hook of hooks)
    if (hook.secretDefinition !== undefined) text += `\nhook-definition ${hook.name} ${hook.secretDefinition}`;
  return text;
}
