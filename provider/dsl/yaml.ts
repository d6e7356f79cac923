/**
 * YAML parsing that keeps source positions. Positions are looked up lazily by
 * JSON pointer, and mapped through the substitution offsets to the original text.
 *
 * A valid spec never needs a position, and building the positioned Document is most
 * of a cold load, so the value comes from js-yaml's core schema first (the same YAML 1.2
 * core semantics; test/unit/yaml-parity.test.ts holds the two to it), and the Document
 * is built only when something asks for a position or the fast parse fails.
 */
import { CORE_SCHEMA, loadAll } from "js-yaml";
import type { Document, Node } from "yaml";
import type { Diagnostic, PositionLookup, SourcePosition } from "../errors.js";
import type { OffsetMap, SourceText } from "./source.js";
import type * as YamlModule from "yaml";

type YamlLibrary = typeof YamlModule;
let yamlModule: YamlLibrary | undefined;

/**
 * The `yaml` library, required on first use for the same reason as above: loading it is
 * the largest part of a `khook validate` start, and a valid spec never needs it.
 */
export function yamlLibrary(): YamlLibrary {
  yamlModule ??= require("yaml") as YamlLibrary;
  return yamlModule;
}

/** The largest spec, in bytes, that loading accepts (before and after variable substitution). */
export const MAX_SPEC_BYTES = 4 * 1024 * 1024;

/**
 * The bound on alias expansion, in the `yaml` library's measure (aliases resolved times the
 * aliases nested inside what they point at). Ordinary anchors stay far below it; an alias bomb
 * (`&a [x,x,...]`, `&b [*a,*a,...]`, ...) exceeds it after a few levels, before anything expands.
 */
export const MAX_ALIAS_COUNT = 1000;

/** The one-line problem for text over MAX_SPEC_BYTES, or undefined. */
export function specSizeProblem(text: string, what: string): string | undefined {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= MAX_SPEC_BYTES) return undefined;
  return `${what} is ${bytes} bytes, larger than the limit of ${MAX_SPEC_BYTES} bytes (${MAX_SPEC_BYTES / 1024 / 1024} MiB); move large manifests into files (manifests: - file:) or charts`;
}

/**
 * Whether the text may hold a YAML alias (`*name` where a node starts). js-yaml, the fast
 * path, has no alias bound, so text that may hold one goes to the `yaml` library, which has.
 * A false positive (a `*` in a quoted string) only costs the slower parse.
 */
export function mayHoldAlias(text: string): boolean {
  // `:` too: in flow style a JSON-like key takes its value without a space (`{"a":*x}`).
  return /(?:^|[\s[{,:])\*[^\s[\]{},]/m.test(text);
}

/**
 * The problem text when the `yaml` library refused to resolve aliases: over the bound, or an alias
 * whose anchor is not set before it (which the library only finds while resolving, not while
 * parsing); undefined for any other error.
 */
export function aliasProblem(e: unknown): { message: string; alias?: string } | undefined {
  if (!(e instanceof ReferenceError)) return undefined;
  const unresolved = /^Unresolved alias \(the anchor must be set before the alias\): (.*)$/.exec(e.message);
  if (unresolved !== null) {
    const name = unresolved[1]!;
    return {
      message: `YAML: alias *${name} has no anchor &${name} before it; an anchor must come before its aliases`,
      alias: name,
    };
  }
  if (!/alias/i.test(e.message)) return undefined;
  return {
    message: `YAML aliases (*name) expand beyond the limit of ${MAX_ALIAS_COUNT} alias expansions; write the values out, or use fewer nested aliases`,
  };
}

/**
 * The document as plain JS within the alias bound. A refused alias (over the bound, or without
 * its anchor) comes back as a problem; any other error is thrown.
 */
export function boundedToJS(doc: Document): { value: unknown } | { problem: { message: string; alias?: string } } {
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown };
  } catch (e) {
    const problem = aliasProblem(e);
    if (problem === undefined) throw e;
    return { problem };
  }
}

export interface ParsedYaml {
  value: unknown;
  positionOf: PositionLookup;
  diagnostics: Diagnostic[];
}

/**
 * Parses the substituted text of one spec document.
 * `original` and `offsets` let every position refer to what the author wrote.
 */
export function parseSpecYaml(substituted: string, original: SourceText, offsets: OffsetMap): ParsedYaml {
  const fast = fastParse(substituted);
  if (fast !== undefined) {
    let lookup: PositionLookup | undefined;
    return {
      value: fast,
      // The two parsers can disagree on odd text (a tab-indented scalar): with no positioned
      // Document, a problem still points at a line, the document's start.
      positionOf: (p) =>
        (lookup ??= positionedParse(substituted, original, offsets).positionOf)(p) ?? { line: 1, column: 1 },
      diagnostics: [],
    };
  }
  return positionedParse(substituted, original, offsets);
}

/** The value of a single-document stream, or undefined when anything is unusual (errors, several documents). */
function fastParse(text: string): unknown {
  if (mayHoldAlias(text)) return undefined;
  try {
    const docs = loadAll(text, null, { schema: CORE_SCHEMA }) as unknown[];
    const nonEmpty = docs.filter((d) => d !== null && d !== undefined);
    return nonEmpty.length === 1 ? nonEmpty[0] : undefined;
  } catch {
    return undefined;
  }
}

/** The `yaml` library's Document: every error with its position, and a position for every path. */
function positionedParse(substituted: string, original: SourceText, offsets: OffsetMap): ParsedYaml {
  const toPosition = (offset: number): SourcePosition => original.positionAt(offsets.toOriginal(offset));
  const docs = yamlLibrary().parseAllDocuments(substituted, {
    prettyErrors: false,
    uniqueKeys: true,
    strict: true,
    stringKeys: false,
    logLevel: "error",
  });
  const diagnostics: Diagnostic[] = [];
  const list = Array.isArray(docs) ? docs : [];
  // `---` alone makes a document whose contents is an empty null scalar: it holds nothing.
  const { isScalar } = yamlLibrary();
  const nonEmpty = list.filter(
    (d) => d.contents !== null && !(isScalar(d.contents) && d.contents.value === null && d.contents.source === ""),
  );
  if (nonEmpty.length > 1) {
    const second = nonEmpty[1]!;
    diagnostics.push({
      severity: "error",
      path: "",
      message: `a spec file holds one Khook document; found ${nonEmpty.length} (separated by ---)`,
      position: toPosition(second.range[0]),
      rule: "yaml",
    });
  }
  const doc = nonEmpty[0];
  const reported = new Set<string>();
  for (const d of list) {
    for (const err of d.errors) {
      // The parser quotes the text it tripped on, which may be a piece of a secret that it split into tokens.
      const secret = offsets.secretWithin(err.pos[0], err.pos[1]);
      const variable = offsets.variableWithin(err.pos[0], err.pos[1]);
      const message =
        secret !== undefined
          ? `YAML: the value of secret variable ${secret} breaks the YAML here (a value is substituted as raw text); write \${${secret} | quote} to insert it as one quoted string`
          : variable !== undefined
            ? `YAML: ${firstLine(err.message)}: the value of variable ${variable} breaks the YAML here (a value is substituted as raw text); write \${${variable} | quote} to insert it as one quoted string`
            : `YAML: ${firstLine(err.message)}`;
      const position = toPosition(err.pos[0]);
      const key = `${position.line}:${position.column}:${message}`;
      if (reported.has(key)) continue;
      reported.add(key);
      diagnostics.push({ severity: "error", path: "", message, position, rule: "yaml" });
    }
  }
  if (doc === undefined || diagnostics.length > 0) {
    if (doc === undefined && diagnostics.length === 0) {
      diagnostics.push({
        severity: "error",
        path: "",
        message: "the spec is empty",
        position: { line: 1, column: 1 },
        rule: "yaml",
      });
    }
    return { value: undefined, positionOf: () => undefined, diagnostics };
  }
  const positionOf = makePositionLookup(doc, toPosition);
  const js = boundedToJS(doc);
  if ("problem" in js) {
    const { problem } = js;
    const position = problem.alias !== undefined ? aliasOffset(doc, problem.alias) : undefined;
    return {
      value: undefined,
      positionOf,
      diagnostics: [
        {
          severity: "error",
          path: "",
          message: problem.message,
          position: position !== undefined ? toPosition(position) : positionOf(""),
          rule: problem.alias !== undefined ? "yaml" : "yaml-alias-limit",
        },
      ],
    };
  }
  return { value: js.value, positionOf, diagnostics };
}

/** Where the first alias `*name` starts. */
function aliasOffset(doc: Document, name: string): number | undefined {
  let offset: number | undefined;
  yamlLibrary().visit(doc, {
    Alias(_key, node) {
      if (node.source !== name || node.range === undefined || node.range === null) return undefined;
      offset = node.range[0];
      return yamlLibrary().visit.BREAK;
    },
  });
  return offset;
}

function firstLine(s: string): string {
  const i = s.indexOf("\n");
  return i === -1 ? s : s.slice(0, i);
}

/** Decodes one JSON-pointer segment (`~1` is `/`, `~0` is `~`). */
export function decodePointerSegment(s: string): string {
  return s.replace(/~1/g, "/").replace(/~0/g, "~");
}

export function encodePointerSegment(s: string | number): string {
  return String(s).replace(/~/g, "~0").replace(/\//g, "~1");
}

export function pointer(...segments: (string | number)[]): string {
  return segments.map((s) => `/${encodePointerSegment(s)}`).join("");
}

/** Finds a path's node, or the nearest ancestor that exists. Map entries point at their key. */
function makePositionLookup(doc: Document, toPosition: (offset: number) => SourcePosition): PositionLookup {
  const { isMap, isPair, isScalar, isSeq } = yamlLibrary();
  return (path: string) => {
    const segments = path === "" ? [] : path.slice(1).split("/").map(decodePointerSegment);
    let node: unknown = doc.contents;
    let offset = rangeStart(node) ?? 0;
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === seg);
        if (pair === undefined) break;
        offset = rangeStart(pair.key) ?? offset;
        node = pair.value;
      } else if (isSeq(node)) {
        const item = node.items[Number(seg)];
        if (item === undefined) break;
        offset = rangeStart(item) ?? offset;
        node = item;
      } else break;
    }
    return toPosition(offset);
  };
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return Array.isArray(range) ? range[0] : undefined;
}
