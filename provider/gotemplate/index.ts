/**
 * The Go runtime's one door (see README.md). khook's pipeline evaluator: `${NAME|pipeline}` renders what Go's text/template with sprig v3
 * would render for `{{ . | <pipeline> }}` with the resolved value as dot.
 *
 * - parsePipeline(text): Go template syntax (commands separated by `|`, literals, `.`, `$`, fields,
 *   parenthesized pipelines); unknown functions fail like Go ("function "x" not defined"), functions
 *   khook excludes fail with the reason.
 * - runPipeline(parsed, value): Go semantics (the piped value is the last argument; Go's typing of
 *   constants and argument checks; sprig's functions ported from their Go sources) and Go's
 *   rendering of the result (fmt printing; nil is "<no value>").
 *
 * Errors are PipelineError; messages never contain the value.
 */
import { PipelineError } from "./template-error.js";
import { printResult, State, wrapExecError } from "./execute.js";
import { EXCLUDED, lookupFunction } from "./functions/index.js";
import { fromJs, toJs } from "./gostring.js";
import { ParseError, Parser, type PipeNode } from "./parser.js";

export { PipelineError };

/** A parsed pipeline: opaque to callers, immutable, safe to cache and reuse. */
export type ParsedPipeline = { readonly __brand: "ParsedPipeline"; readonly text: string };

interface ParsedInternal {
  readonly __brand: "ParsedPipeline";
  readonly text: string;
  readonly pipe: PipeNode;
}

function refusal(name: string): string | undefined {
  const n = toJs(name);
  const why = EXCLUDED.get(n);
  return why ? `function "${n}" is not allowed in khook pipelines: ${why}` : undefined;
}

/** Parses pipeline text (the part after the first `|`), throwing PipelineError on a syntax error. Pure. */
export function parsePipeline(text: string): ParsedPipeline {
  if (typeof text !== "string") throw new PipelineError("pipeline text must be a string");
  let pipe: PipeNode;
  try {
    const parser = new Parser(fromJs(". | " + text), {
      hasFunction: (name) => lookupFunction(toJs(name)) !== undefined,
      refusal,
    });
    pipe = parser.parseAction();
  } catch (e) {
    if (e instanceof ParseError) throw new PipelineError(`invalid pipeline ${JSON.stringify(text)}: ${e.message}`);
    if (e instanceof PipelineError) throw e;
    if (e instanceof RangeError) throw new PipelineError(`invalid pipeline ${JSON.stringify(text)}: too deeply nested`);
    throw e;
  }
  const parsed: ParsedInternal = Object.freeze({ __brand: "ParsedPipeline" as const, text, pipe });
  return parsed as ParsedPipeline;
}

/** Runs a parsed pipeline on the value and renders the result as Go's text/template would. */
export function runPipeline(pipeline: ParsedPipeline, value: string): string {
  const p = pipeline as ParsedInternal;
  if (!p || p.__brand !== "ParsedPipeline" || !p.pipe) throw new PipelineError("not a parsed pipeline");
  if (typeof value !== "string") throw new PipelineError("pipeline value must be a string");
  try {
    const dot = fromJs(value);
    const state = new State((name) => lookupFunction(toJs(name)), dot);
    const result = state.evalPipeline(dot, p.pipe, true);
    return toJs(printResult(result));
  } catch (e) {
    const err = wrapExecError(e);
    throw new PipelineError(`pipeline ${JSON.stringify(p.text)}: ${err.message}`);
  }
}
