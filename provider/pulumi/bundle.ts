/**
 * The file bundle: every local file a spec references, read at program time
 * by the SDK (or by the native provider's check) and carried in the resource's
 * inputs under `__bundle` (and echoed in its outputs).
 *
 * Why content rather than paths: destroy and refresh run from the stored
 * outputs, possibly after the files changed or moved, on another machine; and
 * editing a referenced file must show in `pulumi preview`. The provider
 * materializes the bundle into a private temporary directory with the same
 * relative layout, so input hashes computed there equal those computed on
 * the original tree (the hash covers each path as written plus the content,
 * and a directory's own name).
 *
 * Names: each entry is named by its path relative to the spec's directory
 * (`manifests/app.yaml`, `../shared/ns.yaml`), and `baseDir` holds only the
 * names of the directories between the bundle's top and the spec's directory
 * that the spec's paths walk through or that a directory's hash covers
 * ("." in the common case). No absolute path of the machine lands in state.
 * Absolute paths written in a spec are the exception: they are read live
 * where the provider runs.
 *
 * What the bundle refuses, because it would put into the Pulumi state what the
 * author did not mean to: a hook function outside the spec's directory tree
 * (reached through `../` or a symlink) unless opted in, and a bundle over its
 * size limit. `bundleInput` is the one place both shells (the SDK and the
 * native provider) get the bundle from.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FileReference, LocalFileKey } from "../dsl/step-kind.js";
import { SPEC_DEFAULTS } from "../dsl/defaults.js";
import type { VariableSources } from "../dsl/vars.js";
import { UNKNOWN, type Bundle } from "./wire.js";
import type * as HashModule from "../dsl/hash.js";
import type * as StepsModule from "../steps/index.js";
import type { Kind } from "../steps/contract.js";
import type * as VarsModule from "../dsl/vars.js";
import type * as SourceModule from "../dsl/source.js";
import type * as SpecYamlModule from "../dsl/yaml.js";

// Loaded on first use: a spec that references no local file costs no YAML parse at program time.
const hash = (): typeof HashModule => require("../dsl/hash.js") as typeof HashModule;
const stepKinds = (): Readonly<Record<string, Kind>> => (require("../steps/index.js") as typeof StepsModule).KINDS;

/** How each key that may name a local file looks in spec text: `chart:` names one only when its value is a path. */
const LOCAL_KEY_PATTERNS = {
  file: String.raw`\bfile["']?\s*:`,
  kustomize: String.raw`\bkustomize["']?\s*:`,
  chart: String.raw`\bchart["']?\s*:\s*["']?(?:\.|\/|\$)`,
} satisfies Record<LocalFileKey, string>;

/** The keys a step kind may name local files under (StepKind.localFileKeys), plus hook functions' exec:. */
const LOCAL_KEYS = Object.keys(LOCAL_KEY_PATTERNS) as LocalFileKey[];

/** Could the text (or a variable spliced into it) name a local file at all? Keys: file:, kustomize:, a chart: path, exec:. */
const MAYBE_LOCAL = new RegExp(
  [...LOCAL_KEYS.map((k) => LOCAL_KEY_PATTERNS[k]), String.raw`\bexec["']?\s*:`].join("|"),
);
const MAYBE_LOCAL_VALUE = new RegExp([...LOCAL_KEYS, "exec"].join("|"));

function mayReferenceFiles(specText: string, sources: VariableSources): boolean {
  if (MAYBE_LOCAL.test(specText)) return true;
  const values = [
    ...(sources.set ?? []).map(([, v]) => v),
    ...(sources.varFiles ?? []).flatMap((f) => Object.values(f.values)),
    ...Object.values(sources.secretVars ?? {}),
    ...Object.values(sources.env ?? {}),
    ...Object.values(sources.envVars ?? {}),
  ];
  return values.some((v) => typeof v === "string" && MAYBE_LOCAL_VALUE.test(v));
}

export type { Bundle };

/** The bundle's size limit by default: the bundle is copied into the Pulumi state, on every update. */
export const DEFAULT_BUNDLE_MAX_BYTES = 4 * 1024 * 1024;

export interface BundleOptions {
  /** Bundle hook functions from outside the spec's directory tree too (they land in the state). */
  allowFunctionsOutsideSpecDir?: boolean;
  /** The bundle's size limit (default DEFAULT_BUNDLE_MAX_BYTES). */
  maxBytes?: number;
}

/**
 * Finds every local file the spec references and reads it. Lenient on
 * purpose: an invalid spec still bundles what it can, and `check` reports
 * the problems (a missing file becomes "cannot read ..."). Throws, naming the
 * files, for the two refusals (see the module comment).
 */
export function collectBundle(
  specText: string,
  baseDir: string,
  sources: VariableSources,
  opts: BundleOptions = {},
): Bundle {
  const absBase = path.resolve(baseDir);
  if (!mayReferenceFiles(specText, sources)) return { baseDir: ".", files: {}, binaryFiles: {} };
  const paths = new Set<string>();
  const executablePaths = new Set<string>();
  /** Directories the spec's paths climb to (`../x` reaches the parent), and directories whose own name a hash covers. */
  const reached = new Set<string>();
  const hashedDirs = new Set<string>();
  for (const ref of referencedPaths(specText, absBase, sources)) {
    if (path.isAbsolute(ref.written)) continue; // read live by the provider
    if (ref.role === "function" && opts.allowFunctionsOutsideSpecDir !== true) refuseOutsideFunction(ref, absBase);
    reached.add(highestReached(absBase, ref.written));
    const { files, dirs } = expand(ref);
    for (const d of dirs) hashedDirs.add(d);
    for (const file of files) {
      paths.add(file);
      if (isExecutable(file)) executablePaths.add(file);
    }
  }
  if (paths.size === 0) return { baseDir: ".", files: {}, binaryFiles: {} };

  // The bundle's top: the deepest directory holding the spec's directory, every file and every
  // directory the paths climb to; one level higher when a hash covers that directory's own name.
  let common = absBase;
  for (const p of [...paths, ...reached, ...hashedDirs]) while (!isInside(p, common)) common = path.dirname(common);
  const top = hashedDirs.has(common) && path.dirname(common) !== common ? path.dirname(common) : common;
  const files: Record<string, string> = {};
  const binaryFiles: Record<string, string> = {};
  const executables: string[] = [];
  const sizes: [string, number][] = [];
  for (const p of [...paths].sort()) {
    let data: Buffer;
    try {
      data = fs.readFileSync(p);
    } catch {
      continue;
    }
    const key = toPosix(path.relative(absBase, p));
    sizes.push([key, data.length]);
    if (executablePaths.has(p)) executables.push(key);
    const text = asText(data);
    if (text !== undefined) files[key] = text;
    else binaryFiles[key] = data.toString("base64");
  }
  refuseOversized(sizes, opts.maxBytes ?? DEFAULT_BUNDLE_MAX_BYTES);
  return {
    baseDir: toPosix(path.relative(top, absBase)) || ".",
    files,
    binaryFiles,
    ...(executables.length > 0 ? { executables: executables.sort() } : {}),
  };
}

/** The highest directory a relative path written in the spec passes through, resolved lexically from `base` (`../spec/x` passes through the parent). */
function highestReached(base: string, written: string): string {
  let dir = base;
  let highest = base;
  for (const segment of written.split(/[\\/]+/)) {
    if (segment === "..") {
      dir = path.dirname(dir);
      if (!isInside(dir, highest)) highest = dir;
    } else if (segment !== "." && segment !== "") {
      dir = path.join(dir, segment);
    }
  }
  return highest;
}

/** The resource arguments that shape the bundle, as either shell receives them. */
export interface BundleArgs {
  allowFunctionsOutsideSpecDir?: unknown;
  maxBundleBytes?: unknown;
}

/** The bundle's options from the resource's arguments; a bad value is a problem naming the argument. */
export function bundleOptions(args: BundleArgs): {
  options: BundleOptions;
  problems: { property: string; reason: string }[];
} {
  const problems: { property: string; reason: string }[] = [];
  const options: BundleOptions = {};
  const allow = args.allowFunctionsOutsideSpecDir;
  if (allow !== undefined && allow !== null) {
    if (typeof allow === "boolean") options.allowFunctionsOutsideSpecDir = allow;
    else
      problems.push({
        property: "allowFunctionsOutsideSpecDir",
        reason: "allowFunctionsOutsideSpecDir must be true or false",
      });
  }
  const max = args.maxBundleBytes;
  if (max !== undefined && max !== null) {
    if (typeof max === "number" && Number.isSafeInteger(max) && max > 0) options.maxBytes = max;
    else
      problems.push({
        property: "maxBundleBytes",
        reason: `maxBundleBytes must be a whole number of bytes above 0, not ${JSON.stringify(max)}`,
      });
  }
  return { options, problems };
}

/**
 * The bundle as both shells put it into the resource's inputs (the SDK at program time, the
 * native provider in check): the files, and whether the bundle must be a Pulumi secret (a path
 * built from a secret variable would show the secret in a key). Throws for the refusals.
 */
export function bundleInput(
  specText: string,
  baseDir: string,
  sources: VariableSources,
  opts: BundleOptions = {},
): { bundle: Bundle; secret: boolean } {
  const bundle = collectBundle(specText, baseDir, sources, opts);
  const secretValues = Object.values(sources.secretVars ?? {}).filter((x) => x.length >= 3 && x !== UNKNOWN);
  const names = [...Object.keys(bundle.files), ...Object.keys(bundle.binaryFiles), bundle.baseDir];
  return { bundle, secret: names.some((k) => secretValues.some((x) => k.includes(x))) };
}

/** A function must be the spec's own: inside its directory tree once symlinks are resolved. */
function refuseOutsideFunction(ref: FileReference, absBase: string): void {
  let real: string;
  let realBase: string;
  try {
    real = fs.realpathSync(ref.resolved);
    realBase = fs.realpathSync(absBase);
  } catch {
    return; // missing: check reports it
  }
  if (isInside(real, realBase)) return;
  throw new Error(
    `the hook function ${ref.written} is outside the spec's directory (${isInside(ref.resolved, absBase) ? "through a symlink" : "through ../"}), and khook copies hook functions into the Pulumi state. ` +
      `Move it under the spec's directory, or set allowFunctionsOutsideSpecDir: true on the Khook resource to bundle it anyway.`,
  );
}

function refuseOversized(sizes: readonly [string, number][], maxBytes: number): void {
  const total = sizes.reduce((n, [, size]) => n + size, 0);
  if (total <= maxBytes) return;
  const largest = [...sizes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([file, size]) => `${file} (${kib(size)})`);
  throw new Error(
    `the files the spec references total ${kib(total)}, over the bundle's limit of ${kib(maxBytes)} (they are copied into the Pulumi state on every update); ` +
      `largest: ${largest.join(", ")}. Reference smaller files (e.g. a chart from a repository instead of a local .tgz), or raise maxBundleBytes on the Khook resource.`,
  );
}

function kib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The spec as a plain document after substitution, read by the loader's own parse (dsl/yaml.ts:
 * js-yaml, which a program loads in a fraction of the `yaml` library's time); undefined when it
 * does not parse (check reports why).
 */
function substitutedDocument(specText: string, sources: VariableSources): unknown {
  try {
    const { mergeVariables, substitute } = require("../dsl/vars.js") as typeof VarsModule;
    const { SourceText } = require("../dsl/source.js") as typeof SourceModule;
    const { parseSpecYaml } = require("../dsl/yaml.js") as typeof SpecYamlModule;
    const source = new SourceText(specText, undefined);
    const substituted = substitute(source, mergeVariables(sources));
    return parseSpecYaml(substituted.text, source, substituted.offsets).value;
  } catch {
    return undefined;
  }
}

/**
 * What a Khook resource's record is keyed by: its state record Secret (the resource journals by
 * default), or, with `state.enabled: false`, the owner marker named after the spec. Two resources
 * with one key share one record and one set of objects. Undefined when the spec does not parse.
 */
export function recordKey(
  specText: string,
  sources: VariableSources,
): { key: string; specName: string; where: string } | undefined {
  // Only metadata: and state: decide it; parsing just those keeps a 100-step spec's key at a few
  // milliseconds (it is computed at program time and in every check).
  return recordKeyOfDocument(
    substitutedDocument(topLevelEntries(specText, ["metadata", "state"]) ?? specText, sources),
  );
}

/** The record key of a parsed spec document (recordKey). */
export function recordKeyOfDocument(parsed: unknown): { key: string; specName: string; where: string } | undefined {
  const doc = parsed as
    | {
        metadata?: { name?: unknown } | null;
        state?: { enabled?: unknown; namespace?: unknown; name?: unknown } | null;
      }
    | null
    | undefined;
  const specName = doc?.metadata?.name;
  if (typeof specName !== "string" || specName === "") return undefined;
  const state = doc?.state ?? undefined;
  if (state?.enabled === false) return recordKeyOf(specName, undefined);
  const namespace = typeof state?.namespace === "string" ? state.namespace : SPEC_DEFAULTS.stateNamespace;
  const name = typeof state?.name === "string" ? state.name : `${SPEC_DEFAULTS.stateNamePrefix}${specName}`;
  return recordKeyOf(specName, { namespace, name });
}

/** The record key of spec `specName` journaling at `location` (undefined: `state.enabled: false`, so the owner marker). */
export function recordKeyOf(
  specName: string,
  location: { readonly namespace: string; readonly name: string } | undefined,
): { key: string; specName: string; where: string } {
  if (location === undefined)
    return { key: `marker/${specName}`, specName, where: `the owner marker of spec "${specName}"` };
  return {
    key: `record/${location.namespace}/${location.name}`,
    specName,
    where: `the state record Secret "${location.name}" in namespace "${location.namespace}"`,
  };
}

/** A top-level key of a block-style mapping, at column 0: plain, or quoted without escapes. */
const TOP_LEVEL_KEY = /^(?:"([^"\\]*)"|'([^']*)'|([A-Za-z_][A-Za-z0-9_.-]*))[ \t]*:(?:[ \t]|$)/;

/**
 * The lines of the top-level entries `keys` of a one-document, block-style YAML mapping, in
 * document order; undefined when the text is anything else (flow style, several documents,
 * directives, a top-level key in another form) or the entries use an alias or a merge key (their
 * anchor may stand elsewhere): the caller then parses the whole text. In block style a top-level
 * value's lines are indented, so each entry runs from its key to the next line at column 0.
 */
export function topLevelEntries(text: string, keys: readonly string[]): string | undefined {
  const wanted = new Set(keys);
  const kept: string[] = [];
  let keeping = false;
  let content = false;
  for (const line of text.split(/\r?\n/)) {
    const first = line[0];
    if (first === undefined || first === " " || first === "\t" || first === "#") {
      if (keeping) kept.push(line);
      continue;
    }
    if (line.startsWith("---") && /^---(?:[ \t]*(?:#.*)?)$/.test(line)) {
      if (content) return undefined; // a second document
      continue;
    }
    const key = TOP_LEVEL_KEY.exec(line);
    if (key === null) return undefined; // flow style, a directive, a complex key, a document end
    content = true;
    keeping = wanted.has(key[1] ?? key[2] ?? key[3]!);
    if (keeping) kept.push(line);
  }
  const entries = kept.join("\n");
  return /(?:^|[\s,[{])\*|<</.test(entries) ? undefined : entries;
}

function referencedPaths(specText: string, baseDir: string, sources: VariableSources): FileReference[] {
  const doc = substitutedDocument(specText, sources);
  if (doc === undefined) return [];
  const refs: FileReference[] = [];
  // Hook functions: the executables khook runs on post-render.
  const hooks = (doc as { hooks?: unknown } | null)?.hooks;
  if (Array.isArray(hooks)) {
    hooks.forEach((h: unknown, i) => {
      const exec = (h as { function?: { exec?: unknown } } | null)?.function?.exec;
      if (typeof exec === "string" && exec !== "")
        refs.push({
          role: "function",
          written: exec,
          resolved: path.resolve(baseDir, exec),
          field: `/hooks/${i}/function/exec`,
        });
    });
  }
  const steps = (doc as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return refs;
  for (const step of steps) {
    if (step === null || typeof step !== "object") continue;
    const kinds = stepKinds();
    const names = Object.keys(kinds).filter((k) => Object.hasOwn(step, k));
    const kind = names.length === 1 ? kinds[names[0]!] : undefined;
    const action = kind === undefined ? undefined : (step as Record<string, unknown>)[kind.name];
    if (kind === undefined || action === null || typeof action !== "object") continue;
    try {
      for (const r of kind.files(action, baseDir)) {
        if (typeof r.written === "string" && r.written !== "") refs.push(r);
      }
    } catch {
      // A malformed action: check reports it.
    }
  }
  return refs;
}

/** The regular files a reference stands for, and the directories among them whose own name its hash covers. */
function expand(ref: FileReference): { files: string[]; dirs: string[] } {
  const p = ref.resolved;
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return { files: [], dirs: [] };
  }
  if (!st.isDirectory()) return { files: st.isFile() ? [p] : [], dirs: [] };
  const dirs = ref.role === "kustomize" ? kustomizeDirs(p) : [p];
  const files: string[] = [];
  for (const d of dirs) {
    try {
      for (const rel of hash().walkFiles(d)) files.push(path.join(d, rel));
    } catch {
      // unreadable: check reports it
    }
  }
  return { files, dirs };
}

/** A kustomize directory plus the local directories its kustomizations reach (the hash covers them too). */
function kustomizeDirs(start: string): string[] {
  const seen = new Set<string>();
  const visit = (dir: string): void => {
    const real = path.resolve(dir);
    if (seen.has(real)) return;
    seen.add(real);
    let k: Record<string, unknown> | undefined;
    try {
      k = hash().readKustomization(real);
    } catch {
      return;
    }
    if (k === undefined) return;
    for (const r of hash().kustomizeReferences(k)) {
      if (hash().isRemoteKustomizeReference(r)) continue;
      const target = path.resolve(real, r);
      if (isInside(target, start)) continue;
      try {
        if (fs.statSync(target).isDirectory()) visit(target);
      } catch {
        // missing: kustomize reports it
      }
    }
  };
  visit(start);
  return [...seen];
}

function isInside(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}

function asText(data: Buffer): string | undefined {
  if (data.includes(0)) return undefined;
  const text = data.toString("utf8");
  return Buffer.from(text, "utf8").equals(data) ? text : undefined;
}

/** A stable digest of a bundle, for caching and directory names. */
export function bundleDigest(b: Pick<Bundle, "baseDir" | "files" | "binaryFiles" | "executables">): string {
  const h = createHash("sha256");
  h.update(`base ${b.baseDir}\n`);
  for (const [kind, map] of [
    ["t", b.files],
    ["b", b.binaryFiles],
  ] as const) {
    for (const key of Object.keys(map).sort()) {
      h.update(`${kind} ${key}\0`);
      h.update(map[key]!);
      h.update("\n");
    }
  }
  for (const key of [...(b.executables ?? [])].sort()) h.update(`x ${key}\n`);
  return h.digest("hex");
}

const materialized = new Map<string, { root: string; baseDir: string }>();
/** Bundle directories unused for this long are removed when another one is written. */
const BUNDLE_MAX_AGE_MS = 24 * 3600 * 1000;

/**
 * Where bundles are written: one directory per content digest, shared by every
 * provider process of this user. The engine kills provider processes rather than
 * letting them exit, so nothing can rely on cleanup at exit; content addressing
 * makes the directories reusable instead, and old ones are pruned.
 */
function bundlesDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  return path.join(os.tmpdir(), `khook-pulumi-bundles-${uid}`);
}

/**
 * Writes the bundle out (once per content) and returns the directory the spec's
 * relative paths resolve against, and the bundle root (to turn paths in
 * messages back into bundle-relative ones).
 */
export function materializeBundle(b: Bundle): { root: string; baseDir: string } {
  const keys = [...Object.keys(b.files), ...Object.keys(b.binaryFiles)];
  if (keys.length === 0) return { root: process.cwd(), baseDir: process.cwd() };
  const digest = bundleDigest(b);
  const hit = materialized.get(digest);
  if (hit !== undefined && fs.existsSync(hit.baseDir)) return hit;
  const parent = bundlesDir();
  const root = path.join(parent, digest.slice(0, 32));
  /** Where a path relative to `from` lands: never outside the bundle directory `r`. */
  const inside = (r: string, from: string, rel: string): string => {
    const p = path.resolve(from, ...rel.split("/"));
    if (!isInside(p, r)) throw new Error(`the file bundle holds a path outside its root: ${rel}`);
    return p;
  };
  const baseOf = (r: string): string => inside(r, r, b.baseDir === "" ? "." : b.baseDir);
  /** A file's place: keys are relative to the spec's directory. */
  const fileAt = (r: string, key: string): string => inside(r, baseOf(r), key);
  for (const key of keys) fileAt(root, key);
  if (!fs.existsSync(root)) {
    fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
    const partial = fs.mkdtempSync(path.join(parent, `.partial-${digest.slice(0, 8)}-`));
    try {
      for (const [key, text] of Object.entries(b.files)) {
        const p = fileAt(partial, key);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, text, "utf8");
      }
      for (const [key, data] of Object.entries(b.binaryFiles)) {
        const p = fileAt(partial, key);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, Buffer.from(data, "base64"));
      }
      for (const key of b.executables ?? []) fs.chmodSync(fileAt(partial, key), 0o755);
      fs.mkdirSync(baseOf(partial), { recursive: true });
      fs.renameSync(partial, root);
    } catch (e) {
      fs.rmSync(partial, { recursive: true, force: true });
      // Another process won the race with the same content: use theirs.
      if (!fs.existsSync(root)) throw e;
    }
    prune(parent, root);
  } else {
    touch(root);
  }
  const out = { root, baseDir: baseOf(root) };
  materialized.set(digest, out);
  return out;
}

function touch(dir: string): void {
  try {
    const now = new Date();
    fs.utimesSync(dir, now, now);
  } catch {
    // best effort
  }
}

function prune(parent: string, keep: string): void {
  try {
    const cutoff = Date.now() - BUNDLE_MAX_AGE_MS;
    for (const e of fs.readdirSync(parent)) {
      const p = path.join(parent, e);
      if (p === keep) continue;
      if (fs.statSync(p).mtimeMs < cutoff) fs.rmSync(p, { recursive: true, force: true });
    }
  } catch {
    // best effort
  }
}
