/**
 * Variables: merging the sources with the spec's precedence, and textual
 * substitution of `${NAME}`, `${NAME:-default}`, `${NAME|pipeline}` and
 * `${NAME:-default|pipeline}` before YAML parsing.
 *
 * Extension to the spec: `$${` is a literal `${` (shell snippets in job args need it).
 */
import { invalidInput, type Diagnostic } from "../errors.js";
import { MIN_SECRET_LENGTH, Redactor } from "../redact.js";
import type { ParsedPipeline, PipelineError } from "../gotemplate/index.js";
import { OffsetMap, SourceText } from "./source.js";
import type * as GotemplateModule from "../gotemplate/index.js";

export const DEFAULT_VAR_PREFIX = "KHOOK_VAR_";
export const DEFAULT_SECRET_PREFIX = "KHOOK_SECRET_";

/** Where a variable's value came from, highest precedence first. */
export type VariableOrigin = "set" | "var-file" | "secret-env" | "secret-input" | "env";

export interface VariableSources {
  /** `--set NAME=value` (and the Pulumi `vars` input), in order; later wins. */
  set?: ReadonlyArray<readonly [string, string]>;
  /** Parsed `--var-file` maps, in order; later files win. */
  varFiles?: ReadonlyArray<{ file: string; values: Readonly<Record<string, string>> }>;
  /** Secret values given directly (the Pulumi `secretVars` input); same rank as KHOOK_SECRET_*. */
  secretVars?: Readonly<Record<string, string>>;
  /** The process environment, read only through the two prefixes (scanEnvironment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Variables already read from an environment, names without the prefix (the Pulumi `envVars` input); same rank as `env`'s. */
  envVars?: Readonly<Record<string, string>>;
  varPrefix?: string;
  secretPrefix?: string;
}

export interface ResolvedVariable {
  value: string;
  origin: VariableOrigin;
  secret: boolean;
}

export interface MergedVariables {
  readonly values: ReadonlyMap<string, ResolvedVariable>;
  readonly redactor: Redactor;
}

/**
 * Problems with the environment prefixes: an empty one would turn the whole environment (PATH,
 * HOME, CI tokens) into spec variables, or make every environment value a secret.
 */
export function prefixProblems(prefixes: {
  varPrefix?: string | undefined;
  secretPrefix?: string | undefined;
}): string[] {
  const out: string[] = [];
  const check = (value: string | undefined, flag: string, what: string, fallback: string): void => {
    if (value === "")
      out.push(
        `${flag} is empty, which would make every environment variable (PATH, HOME, CI tokens...) ${what}; give a prefix such as ${fallback}, or leave it unset for the default`,
      );
  };
  check(prefixes.varPrefix, "the variable prefix (--var-prefix, varPrefix)", "a spec variable", DEFAULT_VAR_PREFIX);
  check(prefixes.secretPrefix, "the secret prefix (--secret-prefix, secretPrefix)", "a secret", DEFAULT_SECRET_PREFIX);
  return out;
}

/**
 * The variables and secrets an environment holds under the two prefixes, names
 * without the prefix. The one scan: the CLI's loader and the Pulumi SDK (at
 * program time) both use it. A name under both prefixes is a secret.
 */
export function scanEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  prefixes: { varPrefix?: string | undefined; secretPrefix?: string | undefined },
): { vars: Record<string, string>; secrets: Record<string, string> } {
  const varPrefix = prefixes.varPrefix ?? DEFAULT_VAR_PREFIX;
  const secretPrefix = prefixes.secretPrefix ?? DEFAULT_SECRET_PREFIX;
  const vars: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const [key, value] of sortedEntries(env)) {
    if (value === undefined) continue;
    if (key.startsWith(secretPrefix) && key.length > secretPrefix.length)
      secrets[key.slice(secretPrefix.length)] = value;
    else if (key.startsWith(varPrefix) && key.length > varPrefix.length) vars[key.slice(varPrefix.length)] = value;
  }
  return { vars, secrets };
}

/** Applies `--set` > `--var-file` > KHOOK_SECRET_* > KHOOK_VAR_* and registers every secret value. */
export function mergeVariables(sources: VariableSources): MergedVariables {
  const problems = prefixProblems(sources);
  if (problems.length > 0) throw invalidInput(problems.join("\n"), []);
  const redactor = new Redactor();
  const values = new Map<string, ResolvedVariable>();
  const put = (name: string, value: string, origin: VariableOrigin, secret: boolean): void => {
    values.set(name, { value, origin, secret });
  };
  const fromEnv = scanEnvironment(sources.env ?? {}, sources);

  // Lowest precedence first; each later source overwrites.
  for (const [name, value] of sortedEntries({ ...fromEnv.vars, ...(sources.envVars ?? {}) }))
    put(name, value, "env", false);
  for (const [name, value] of sortedEntries(fromEnv.secrets)) {
    redactor.add(value);
    put(name, value, "secret-env", true);
  }
  for (const [name, value] of Object.entries(sources.secretVars ?? {})) {
    redactor.add(value);
    put(name, value, "secret-input", true);
  }
  for (const { values: fileValues } of sources.varFiles ?? []) {
    for (const [name, value] of Object.entries(fileValues)) put(name, value, "var-file", false);
  }
  for (const [name, value] of sources.set ?? []) put(name, value, "set", false);
  return { values, redactor };
}

function sortedEntries<V>(o: Readonly<Record<string, V>>): [string, V][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** One `${...}` occurrence, parsed. */
export interface VariableReference {
  name: string;
  defaultValue: string | undefined;
  pipelineText: string | undefined;
  /** Offsets of the whole `${...}` in the original text. */
  start: number;
  end: number;
}

export interface SubstitutionResult {
  text: string;
  /** Maps offsets in `text` back to the original. */
  offsets: OffsetMap;
  /** Every variable name referenced, for `plan` and the Pulumi SDK. */
  referenced: ReadonlySet<string>;
  diagnostics: Diagnostic[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why a name given to --set, a var file or the Pulumi inputs can never be referenced as `${NAME}`; undefined when it can. */
export function variableNameProblem(name: string): string | undefined {
  if (NAME.test(name)) return undefined;
  const shown = JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}...` : name);
  return `${shown} is not a variable name a spec can reference as \${NAME}: a name is letters, digits and _, not starting with a digit (variables are flat: there is no a.b nesting)`;
}

/**
 * Substitutes every reference in one pass and reports every problem at once.
 * Text without `${` comes back unchanged.
 */
export function substitute(source: SourceText, vars: MergedVariables): SubstitutionResult {
  const text = source.text;
  const diagnostics: Diagnostic[] = [];
  const referenced = new Set<string>();
  const offsets = new OffsetMap();
  const missing = new Map<string, number[]>();
  const shortSecrets = new Set<string>();
  let out = "";
  let copiedUpTo = 0;
  let i = text.indexOf("$");

  while (i !== -1 && i < text.length) {
    if (text.startsWith("$${", i)) {
      // `$${` -> literal `${`: drop one `$`.
      out += text.slice(copiedUpTo, i);
      offsets.replaced(out.length, i, 2, 3);
      out += "${";
      copiedUpTo = i + 3;
      i = text.indexOf("$", copiedUpTo);
      continue;
    }
    if (text[i + 1] !== "{") {
      i = text.indexOf("$", i + 1);
      continue;
    }
    const close = text.indexOf("}", i + 2);
    if (close === -1) {
      diagnostics.push(
        problem(
          source,
          i,
          "unterminated variable reference: `${` has no closing `}` (write `$${` for a literal `${`)",
          "variable-syntax",
        ),
      );
      break;
    }
    if (nameSpansLines(text.slice(i + 2, close))) {
      // `${` with no `}` on its line: the next `}` belongs to later text (often another reference),
      // so report this one and go on scanning right after it.
      diagnostics.push(
        problem(
          source,
          i,
          "unterminated variable reference: `${` has no closing `}` on its line (write `$${` for a literal `${`)",
          "variable-syntax",
        ),
      );
      i = text.indexOf("$", i + 2);
      continue;
    }
    const parsed = parseReference(text.slice(i + 2, close));
    let replacement: string | undefined;
    if ("problem" in parsed) {
      diagnostics.push(problem(source, i, parsed.problem, parsed.rule));
    } else {
      referenced.add(parsed.name);
      replacement = resolveReference(parsed, vars, source, i, diagnostics, missing, shortSecrets);
    }
    out += text.slice(copiedUpTo, i);
    const value = replacement ?? "";
    // Marked so that a YAML error inside the value never quotes a piece of a secret.
    const secret =
      replacement !== undefined && "name" in parsed && vars.values.get(parsed.name)?.secret === true
        ? parsed.name
        : undefined;
    offsets.replaced(
      out.length,
      i,
      value.length,
      close + 1 - i,
      secret,
      replacement !== undefined && "name" in parsed ? parsed.name : undefined,
    );
    out += value;
    copiedUpTo = close + 1;
    i = text.indexOf("$", copiedUpTo);
  }
  out += text.slice(copiedUpTo);

  for (const [name, at] of missing) {
    const first = at[0] ?? 0;
    const more = at.length > 1 ? ` (referenced ${at.length} times; first here)` : "";
    diagnostics.push(
      problem(
        source,
        first,
        `variable ${name} is not set and has no default${more}; pass --set ${name}=..., add it to a --var-file, export KHOOK_VAR_${name} (or KHOOK_SECRET_${name} for a secret), or write \${${name}:-default}`,
        "variable-missing",
      ),
    );
  }
  diagnostics.sort(
    (a, b) =>
      (a.position?.line ?? 0) - (b.position?.line ?? 0) || (a.position?.column ?? 0) - (b.position?.column ?? 0),
  );
  return { text: out, offsets, referenced, diagnostics };
}

/** True when the name part of `${...}` (before any `:-` or `|`) runs past the end of its line. */
function nameSpansLines(inner: string): boolean {
  const ends = [inner.indexOf(":-"), inner.indexOf("|")].filter((n) => n !== -1);
  return inner.slice(0, ends.length > 0 ? Math.min(...ends) : inner.length).includes("\n");
}

/** Parses the inside of `${...}`; on bad syntax, a message for people and the rule it breaks. */
function parseReference(inner: string): Omit<VariableReference, "start" | "end"> | { problem: string; rule: string } {
  const pipeAt = inner.indexOf("|");
  const defaultAt = inner.indexOf(":-");
  let head: string;
  let pipelineText: string | undefined;
  let defaultValue: string | undefined;
  if (defaultAt !== -1 && (pipeAt === -1 || defaultAt < pipeAt)) {
    head = inner.slice(0, defaultAt);
    const rest = inner.slice(defaultAt + 2);
    const restPipe = rest.indexOf("|");
    // A default combined with a pipeline cannot contain `|`: the first `|` starts the pipeline.
    defaultValue = restPipe === -1 ? rest : rest.slice(0, restPipe);
    pipelineText = restPipe === -1 ? undefined : rest.slice(restPipe + 1);
  } else if (pipeAt !== -1) {
    head = inner.slice(0, pipeAt);
    pipelineText = inner.slice(pipeAt + 1);
  } else {
    head = inner;
  }
  const name = head.trim();
  // Escaped, so that a problem stays one line of the problem list.
  const shown = JSON.stringify(inner.length > 40 ? `${inner.slice(0, 40)}...` : inner).slice(1, -1);
  if (!NAME.test(name)) {
    return {
      problem: `invalid variable reference \${${shown}}: a name is letters, digits and _ (not starting with a digit), optionally followed by :-default and | pipeline`,
      rule: "variable-syntax",
    };
  }
  // The first `}` ends the reference, so a `{` in the default means a `}` (or a nested
  // `${...}`) was cut off and would silently end up as literal text after the value.
  if (defaultValue?.includes("{") === true) {
    return {
      problem: `in the default of \${${name}}: the reference ends at the first \`}\`, and a default cannot contain \`}\`; set the value with a variable (--set ${name}=..., a --var-file or KHOOK_VAR_${name}) instead; defaults cannot nest references either`,
      rule: "variable-default-braces",
    };
  }
  if (pipelineText !== undefined && pipelineText.trim() === "") {
    return { problem: `invalid variable reference to ${name}: empty pipeline after |`, rule: "variable-syntax" };
  }
  // Go's parser takes a trailing `|` as the end of the pipeline; here it is a stage left empty,
  // like `${A|}`. A `|` that ends an argument is inside its quotes, so the text ends with the quote.
  if (pipelineText?.trimEnd().endsWith("|") === true) {
    return {
      problem: `invalid variable reference to ${name}: empty pipeline stage after the last |`,
      rule: "variable-syntax",
    };
  }
  return { name, defaultValue, pipelineText };
}

type PipelineModule = typeof GotemplateModule;
let pipelineModule: PipelineModule | undefined;

/**
 * The Go template evaluator, required on the first `${NAME|pipeline}`: its function library
 * is a large share of a CLI start, and most references have no pipeline.
 */
function pipelines(): PipelineModule {
  pipelineModule ??= require("../gotemplate/index.js") as PipelineModule;
  return pipelineModule;
}

const pipelineCache = new Map<string, ParsedPipeline | PipelineError>();

function compilePipeline(text: string): ParsedPipeline | PipelineError {
  let parsed = pipelineCache.get(text);
  if (parsed === undefined) {
    const { PipelineError, parsePipeline } = pipelines();
    try {
      parsed = parsePipeline(text);
    } catch (e) {
      parsed = e instanceof PipelineError ? e : new PipelineError(String(e));
    }
    pipelineCache.set(text, parsed);
  }
  return parsed;
}

function resolveReference(
  ref: Omit<VariableReference, "start" | "end">,
  vars: MergedVariables,
  source: SourceText,
  at: number,
  diagnostics: Diagnostic[],
  missing: Map<string, number[]>,
  shortSecrets: Set<string>,
): string | undefined {
  const found = vars.values.get(ref.name);
  let value: string;
  let secret = false;
  if (found !== undefined) {
    value = found.value;
    secret = found.secret;
    if (secret && isUnmaskable(value)) {
      if (!shortSecrets.has(ref.name))
        diagnostics.push(problem(source, at, shortSecretMessage(`secret variable ${ref.name}`), "secret-min-length"));
      shortSecrets.add(ref.name);
      return undefined;
    }
  } else if (ref.defaultValue !== undefined) {
    value = ref.defaultValue;
  } else {
    const list = missing.get(ref.name) ?? [];
    list.push(at);
    missing.set(ref.name, list);
    return undefined;
  }
  if (ref.pipelineText === undefined) return value;

  const pipeline = compilePipeline(ref.pipelineText);
  const { PipelineError, runPipeline } = pipelines();
  if (pipeline instanceof PipelineError) {
    diagnostics.push(problem(source, at, `in the pipeline of \${${ref.name}|...}: ${pipeline.message}`, "pipeline"));
    return undefined;
  }
  try {
    const result = runPipeline(pipeline, value);
    if (secret && isUnmaskable(result)) {
      diagnostics.push(
        problem(
          source,
          at,
          shortSecretMessage(`the pipeline output of secret variable ${ref.name}`),
          "secret-min-length",
        ),
      );
      return undefined;
    }
    if (secret) vars.redactor.add(result);
    return result;
  } catch (e) {
    const message = e instanceof PipelineError ? e.message : String(e);
    // A pipeline error may quote its input; never let a secret through.
    diagnostics.push(
      problem(source, at, `in the pipeline of \${${ref.name}|...}: ${vars.redactor.redact(message)}`, "pipeline"),
    );
    return undefined;
  }
}

/**
 * Secrets are masked by their text, and a 1-2 character text occurs in ordinary output all the
 * time (masking "42" would mangle every number with a 42 in it), so such a secret cannot be kept
 * out of output soundly: it is refused at load instead. An empty value has nothing to hide. The
 * text without surrounding whitespace counts too: a plain YAML scalar drops it (` ab ` shows as `ab`).
 */
function isUnmaskable(value: string): boolean {
  const trimmed = value.trim();
  return (
    (value.length > 0 && value.length < MIN_SECRET_LENGTH) || (trimmed.length > 0 && trimmed.length < MIN_SECRET_LENGTH)
  );
}

function shortSecretMessage(what: string): string {
  return `${what} is shorter than ${MIN_SECRET_LENGTH} characters (surrounding whitespace not counted), so khook cannot keep it out of output (secrets are masked by their text, and a 1-2 character text is everywhere); use a secret of at least ${MIN_SECRET_LENGTH} characters, or, if the value is not secret, pass it as a plain variable (--set or the variable prefix)`;
}

function problem(source: SourceText, offset: number, message: string, rule: string): Diagnostic {
  return { severity: "error", path: "", message, position: source.positionAt(offset), rule };
}
