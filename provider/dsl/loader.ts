/**
 * Loading a spec, in the spec's order: variables -> pipelines -> YAML (with
 * positions) -> JSON Schema -> semantic rules -> CEL `when:` -> DAG -> input
 * hashes. Every problem found is reported at once, as one invalid-input error.
 * The step kinds are an argument (provider/load-spec.ts passes khook's): each
 * kind's rules, defaults, summary and files come from it.
 */
import fs from "node:fs";
import path from "node:path";
import type { Document } from "yaml";
import {
  diagnosticsError,
  errorsOnly,
  invalidInput,
  type Diagnostic,
  type PositionLookup,
  type SourcePosition,
} from "../errors.js";
import { splitUserinfo } from "../helm/chart.js";
import { computeLevels } from "./dag.js";
import { parseDuration } from "./duration.js";
import { canonicalJson, ContentDigests, sha256Hex, stepHashPreimage } from "./hash.js";
import { stepHookPoints } from "./hook-events.js";
import { kindOf, type KindSet } from "./step-kind.js";
import { registerKeyedStep, UNKEYED_HASH } from "./keyed-hash.js";
import type { Redactor } from "../redact.js";
import type { LoadedSpec, LoadedStep, StateSettings } from "./loaded.js";
import {
  checkHooks,
  isCredentialHeader,
  loadHooks,
  objectHooksFor,
  secretDefinitionOf,
  type LoadedHook,
} from "./hooks.js";
import { checkRules } from "./rules.js";
import { validateSchema } from "./schema.js";
import { decodeUtf8, SourceText } from "./source.js";
import type { KhookDocument } from "./document.js";
import { deepFreeze, SPEC_DEFAULTS } from "./defaults.js";
import { mergeVariables, substitute, variableNameProblem, type MergedVariables, type VariableSources } from "./vars.js";
import { evaluateWhen } from "./when.js";
import { parseSpecYaml, pointer, specSizeProblem, yamlLibrary } from "./yaml.js";

export interface LoadOptions extends Omit<VariableSources, "varFiles"> {
  /** The spec file. Relative paths in the spec resolve against its directory. */
  file?: string;
  /** The spec text, when it does not come from `file` (stdin, the Pulumi `spec` input). */
  text?: string;
  /** Where relative paths resolve when `text` is given; default: the working directory. */
  baseDir?: string;
  /** `--var-file` paths, in order. */
  varFiles?: readonly string[];
  /** Already-parsed var files (the Pulumi SDK reads them at program time). */
  varFileValues?: VariableSources["varFiles"];
}

/** Loads and validates a spec with these step kinds. Throws a KhookError (invalid-input) listing every problem. */
export function loadSpecWith(kinds: KindSet, options: LoadOptions): LoadedSpec {
  const displayName = options.file ?? "<stdin>";
  const source = readSource(options);
  const varFiles = [...(options.varFileValues ?? []), ...(options.varFiles ?? []).map(readVarFile)];
  const vars = mergeVariables({ ...options, varFiles });
  const fail = (ds: Diagnostic[]): never => {
    throw diagnosticsError(redactDiagnostics(ds, vars), displayName);
  };

  const tooBig = specSizeProblem(source.text, "the spec");
  if (tooBig !== undefined)
    fail([{ severity: "error", path: "", message: tooBig, position: { line: 1, column: 1 }, rule: "spec-size-limit" }]);
  const substituted = substitute(source, vars);
  if (errorsOnly(substituted.diagnostics).length > 0) fail(substituted.diagnostics);
  const tooBigSubstituted = specSizeProblem(substituted.text, "the spec after variable substitution");
  if (tooBigSubstituted !== undefined)
    fail([
      {
        severity: "error",
        path: "",
        message: tooBigSubstituted,
        position: { line: 1, column: 1 },
        rule: "spec-size-limit",
      },
    ]);

  const parsed = parseSpecYaml(substituted.text, source, substituted.offsets);
  if (errorsOnly(parsed.diagnostics).length > 0) fail(parsed.diagnostics);

  // Before any message can quote them: even an invalid spec's credentials stay masked.
  registerCredentials(parsed.value, kinds, vars);
  const diagnostics: Diagnostic[] = [...substituted.diagnostics];
  diagnostics.push(...validateSchema(parsed.value, parsed.positionOf));
  const doc = parsed.value as KhookDocument;
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) fail(diagnostics);

  const baseDir =
    options.file !== undefined ? path.dirname(path.resolve(options.file)) : path.resolve(options.baseDir ?? ".");
  // A step's action rules assume the action's shape: they are skipped only for a step whose action
  // (or the step object itself) failed the schema. A bad name or timeout hides nothing else.
  const schemaInvalidSteps = new Set<number>();
  for (const d of diagnostics) {
    const m = /^\/steps\/(\d+)(?:\/([^/]+))?/.exec(d.path);
    if (m && d.severity === "error" && (m[2] === undefined || Object.hasOwn(kinds, m[2])))
      schemaInvalidSteps.add(Number(m[1]));
  }
  const stepsValid = Array.isArray(doc.steps);

  // `when:` is decided once, here, against the merged variables, before the rules: an excluded
  // step's local files are not read (they may legitimately be absent where it is excluded).
  const plainVars = new Map([...vars.values].map(([k, v]) => [k, v.value]));
  const whenOutcomes = new Map<number, boolean>();
  if (stepsValid) {
    doc.steps.forEach((step, i) => {
      if (typeof step?.when !== "string") return;
      const r = evaluateWhen(step.when, plainVars);
      if (r.ok) whenOutcomes.set(i, r.value);
      else
        diagnostics.push({
          severity: "error",
          path: pointer("steps", i, "when"),
          message: r.message,
          rule: "when-cel",
          position: parsed.positionOf(pointer("steps", i, "when")),
        });
    });
  }
  const excludedSteps = new Set([...whenOutcomes].filter(([, v]) => !v).map(([i]) => i));
  if (stepsValid)
    diagnostics.push(
      ...checkRules(doc, { kinds, baseDir, positionOf: parsed.positionOf, schemaInvalidSteps, excludedSteps }),
    );
  if (stepsValid && Array.isArray(doc.hooks)) {
    const schemaInvalidHooks = new Set<number>();
    for (const d of diagnostics) {
      const m = /^\/hooks\/(\d+)/.exec(d.path);
      if (m && d.severity === "error") schemaInvalidHooks.add(Number(m[1]));
    }
    diagnostics.push(...checkHooks(doc, { kinds, baseDir, positionOf: parsed.positionOf, schemaInvalidHooks }));
  }
  if (errorsOnly(diagnostics).length > 0) fail(diagnostics);

  const hooks = loadHooks(doc, kinds, baseDir, parsed.positionOf, vars.redactor);
  const steps = buildSteps(doc, kinds, baseDir, whenOutcomes, hooks, diagnostics, parsed.positionOf, vars.redactor);
  if (errorsOnly(diagnostics).length > 0) fail(diagnostics);

  const stepsByName = new Map(steps.map((s) => [s.name, s]));
  const maxLevel = steps.reduce((m, s) => Math.max(m, s.level), -1);
  const levels: string[][] = Array.from({ length: maxLevel + 1 }, () => []);
  for (const s of steps) levels[s.level]!.push(s.name);
  const state = stateSettings(doc);
  let hash: string | undefined;
  return Object.freeze({
    name: doc.metadata.name,
    file: options.file,
    baseDir,
    steps,
    stepsByName,
    levels,
    hooks,
    state,
    stateDeclared:
      doc.state === undefined || doc.state === null ? "absent" : doc.state.enabled === false ? "disabled" : "enabled",
    // Digested when first read, as each step's inputHash is: `validate` never asks, and never loads node:crypto.
    get specHash() {
      return (hash ??= specHash(doc.metadata.name, steps, state));
    },
    vars: plainVars,
    redactor: vars.redactor,
    warnings: redactDiagnostics(
      diagnostics.filter((d) => d.severity === "warning"),
      vars,
    ),
  });
}

function readSource(options: LoadOptions): SourceText {
  if (options.text !== undefined) return new SourceText(options.text, options.file);
  if (options.file === undefined) throw invalidInput("no spec given: pass -f FILE (or -f - for stdin)", []);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(options.file);
  } catch (e) {
    throw invalidInput(
      `cannot read the spec ${options.file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`,
      [],
    );
  }
  return new SourceText(decodeUtf8(bytes, options.file, "the spec"), options.file);
}

/** A var file is a flat `NAME: value` map; values are scalars, kept as their text. */
export function readVarFile(file: string): { file: string; values: Record<string, string> } {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw invalidInput(
      `cannot read the var file ${file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`,
      [],
    );
  }
  return { file, values: parseVarFile(decodeUtf8(bytes, file, "the var file"), file) };
}

/**
 * Values keep the author's text: `1.10` stays `1.10` (not 1.1), `0x1F`, `1e3` and big integers
 * stay as written, because a variable is substituted as text. Quoted and block scalars are their
 * string value; an empty value or `~` is "".
 */
export function parseVarFile(text: string, file: string): Record<string, string> {
  const { isMap, isScalar, parseDocument } = yamlLibrary();
  const doc = parseDocument(text, { prettyErrors: false, logLevel: "error" });
  if (doc.errors.some((e) => e.code === "MULTIPLE_DOCS")) {
    const count = yamlLibrary().parseAllDocuments(text).length;
    throw invalidInput(
      `the var file ${file} holds ${count} YAML documents (separated by ---); a var file is one flat NAME: value map: merge them into one, or pass each with its own --var-file`,
      [],
    );
  }
  if (doc.errors.length > 0)
    throw invalidInput(`the var file ${file} is not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`, []);
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return {};
  if (!isMap(root)) throw invalidInput(`the var file ${file} must be a flat map of NAME: value`, []);
  const out: Record<string, string> = {};
  const problems: Diagnostic[] = [];
  const source = new SourceText(text, file);
  for (const pair of root.items) {
    const k = scalarText(pair.key, doc);
    const at = (node: unknown): { position?: SourcePosition } => {
      const range = (node as { range?: [number, number, number] } | null)?.range;
      return range ? { position: source.positionAt(range[0]) } : {};
    };
    const node = yamlLibrary().isAlias(pair.value) ? pair.value.resolve(doc) : pair.value;
    const badName = variableNameProblem(k);
    if (badName !== undefined)
      problems.push({ severity: "error", path: `/${k}`, message: badName, rule: "var-file", ...at(pair.key) });
    else if (node !== null && node !== undefined && !isScalar(node))
      problems.push({
        severity: "error",
        path: `/${k}`,
        message: `${k} must be a scalar (a var file is a flat NAME: value map)`,
        rule: "var-file",
        ...at(pair.value),
      });
    else out[k] = scalarText(node, doc);
  }
  if (problems.length > 0) throw diagnosticsError(problems, file);
  return out;
}

/** A scalar as the author wrote it: strings as their value, numbers and booleans as their source text. */
function scalarText(node: unknown, doc: Document): string {
  const { isAlias, isScalar } = yamlLibrary();
  const resolved = isAlias(node) ? node.resolve(doc) : node;
  if (!isScalar(resolved)) return resolved === null || resolved === undefined ? "" : String(resolved);
  const v = resolved.value;
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  return resolved.source ?? String(v);
}

/** Credentials (each kind says where its blocks hold them) are masked everywhere, whatever their source. */
function registerCredentials(doc: unknown, kinds: KindSet, vars: MergedVariables): void {
  const steps = (doc as { steps?: unknown } | null)?.steps;
  const addUrl = (u: unknown): void => {
    if (typeof u !== "string") return;
    const info = splitUserinfo(u);
    if (info.password) vars.redactor.add(info.password);
  };
  const entries = (list: unknown): Record<string, unknown>[] =>
    Array.isArray(list) ? list.filter((x): x is Record<string, unknown> => x !== null && typeof x === "object") : [];
  for (const step of entries(steps)) {
    for (const kind of Object.values(kinds)) {
      if (Object.hasOwn(step, kind.name))
        for (const secret of kind.credentials?.(step[kind.name]) ?? []) vars.redactor.add(secret);
    }
  }
  // Webhook credentials: the values of credential headers by name (Authorization, Proxy-Authorization,
  // Cookie), and URL userinfo (which the rules reject). Any other header is secret only when its value
  // comes from a secret source, which the redactor already holds.
  for (const hook of entries((doc as { hooks?: unknown } | null)?.hooks)) {
    const webhook = hook.webhook as Record<string, unknown> | undefined;
    if (webhook === null || typeof webhook !== "object") continue;
    addUrl(webhook.url);
    const headers = webhook.headers;
    if (headers === null || typeof headers !== "object") continue;
    for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
      if (typeof value !== "string" || !isCredentialHeader(name)) continue;
      vars.redactor.add(value);
      // `Bearer <token>`: the token alone is the secret too.
      const scheme = /^[A-Za-z][A-Za-z0-9-]*\s+(\S.*)$/.exec(value);
      if (scheme) vars.redactor.add(scheme[1]!);
    }
  }
}

function buildSteps(
  doc: KhookDocument,
  kinds: KindSet,
  baseDir: string,
  whenOutcomes: ReadonlyMap<number, boolean>,
  hooks: readonly LoadedHook[],
  diagnostics: Diagnostic[],
  positionOf: PositionLookup,
  redactor: Redactor,
): LoadedStep[] {
  const defaults = doc.defaults ?? {};
  const levels = computeLevels(doc.steps.map((s) => ({ name: s.name, needs: s.needs ?? [] })));
  const digests = new ContentDigests();
  return doc.steps.map((step, index): LoadedStep => {
    // The rules passed: every step has exactly one kind's action key.
    const kind = kindOf(step, kinds)!;
    const action = deepFreeze(kind.normalize(step[kind.name], step.name));
    const whenHolds = whenOutcomes.get(index) ?? true;
    const files = kind.files(action, baseDir).map((ref) => {
      // Excluded by when: not read, not hashed; the hash notes the path only.
      if (!whenHolds) return { ref, digest: "not-read" };
      const digest = digests.digest(ref);
      if (digest instanceof Error) {
        const p = pointer("steps", index, kind.name) + ref.field;
        diagnostics.push({
          severity: "error",
          path: p,
          message: `cannot read ${ref.written}: ${digest.message}`,
          rule: "local-file-exists",
          position: positionOf(p),
        });
        return { ref, digest: "" };
      }
      return { ref, digest };
    });
    const timeout = step.timeout ?? defaults.timeout ?? SPEC_DEFAULTS.timeout;
    const retryDelay = step.retryDelay ?? defaults.retryDelay ?? SPEC_DEFAULTS.retryDelay;
    const stepHooks = hooks.filter((h) => h.steps.includes(step.name));
    const hookPoints = stepHookPoints(kind.hookPoints, action);
    const reshaping = objectHooksFor({ hooks: stepHooks, hookPoints }).map((h) => ({
      name: h.name,
      digest: h.digest,
      secretDefinition: secretDefinitionOf(h),
    }));
    const preimage = stepHashPreimage({ name: step.name, kind, action }, files, reshaping);
    // A step whose hashed text holds a secret value gets a keyed hash (keyed-hash.ts): a plain digest could be brute-forced back.
    const keyed = redactor.size > 0 && redactor.redact(preimage) !== preimage;
    let inputHash: string | undefined = keyed ? UNKEYED_HASH : undefined;
    const loaded: LoadedStep = {
      type: kind.name,
      action,
      name: step.name,
      needs: step.needs ?? [],
      when: step.when,
      whenHolds,
      timeoutMs: parseDuration(timeout) ?? 0,
      retries: step.retries ?? defaults.retries ?? SPEC_DEFAULTS.retries,
      retryDelayMs: parseDuration(retryDelay) ?? 0,
      onError: step.onError ?? defaults.onError ?? SPEC_DEFAULTS.onError,
      level: levels.get(step.name) ?? 0,
      // The digest of its preimage, taken when first read (the commands that show, compare or record
      // hashes); the preimage is this closure's, never a property.
      get inputHash() {
        return (inputHash ??= `sha256:${sha256Hex(preimage)}`);
      },
      hooks: stepHooks,
      hookPoints,
      ...(whenHolds || files.length === 0 ? {} : { unreadFiles: files.map((f) => f.ref.written) }),
      summary: kind.summary(step.name, action),
      index,
      // Positions are only wanted for errors; asking for one parses the positioned Document.
      get position() {
        return positionOf(pointer("steps", index));
      },
    };
    const frozen = Object.freeze(loaded);
    if (keyed) registerKeyedStep(frozen, preimage);
    return frozen;
  });
}

function stateSettings(doc: KhookDocument): StateSettings | undefined {
  const s = doc.state;
  if (s === undefined || s === null || s.enabled === false) return undefined;
  return {
    namespace: s.namespace ?? SPEC_DEFAULTS.stateNamespace,
    name: s.name ?? `${SPEC_DEFAULTS.stateNamePrefix}${doc.metadata.name}`,
  };
}

/** The whole-spec fingerprint: every step's name, input hash and scheduling, and the state settings. */
function specHash(name: string, steps: readonly LoadedStep[], state: StateSettings | undefined): string {
  const body = canonicalJson({
    name,
    state: state ?? null,
    steps: steps.map((s) => ({
      name: s.name,
      hash: s.inputHash,
      needs: s.needs,
      when: s.when ?? null,
      timeoutMs: s.timeoutMs,
      retries: s.retries,
      retryDelayMs: s.retryDelayMs,
      onError: s.onError,
    })),
  });
  return `sha256:${sha256Hex(body)}`;
}

/** Messages and paths: a secret substituted into a key is part of the JSON-pointer path. */
function redactDiagnostics(ds: readonly Diagnostic[], vars: MergedVariables): Diagnostic[] {
  // Fragments too: a parser's message quotes the token it tripped on, which may be a piece of a substituted secret.
  return ds.map((d) => ({
    ...d,
    path: vars.redactor.redactFragments(d.path),
    message: vars.redactor.redactFragments(d.message),
  }));
}
