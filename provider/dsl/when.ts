/**
 * `when:` conditions: CEL, type-checked to bool, evaluated once at load.
 * The environment is the merged variable map (`vars`, map<string, string>),
 * `vars.get(name, default)`, and CEL's standard library as the spec lists it.
 */
import type { Environment } from "@marcbachmann/cel-js";
import type * as CelModule from "@marcbachmann/cel-js";

/** Functions and macros from CEL's standard library that a condition may call. */
const ALLOWED_CALLS = new Set([
  // macros
  "has",
  "all",
  "exists",
  "exists_one",
  "map",
  "filter",
  // string functions the spec lists, plus size
  "startsWith",
  "endsWith",
  "contains",
  "matches",
  "size",
  // standard conversions and type functions
  "int",
  "uint",
  "double",
  "string",
  "bool",
  "bytes",
  "dyn",
  "type",
  "duration",
  "timestamp",
  // khook's one addition
  "get",
]);

let environment: Environment | undefined;

function celEnvironment(): Environment {
  // Required on the first condition, not at the top: most specs have no `when:`, and every
  // CLI start and Pulumi preview would otherwise pay for loading the CEL library.
  environment ??= new (require("@marcbachmann/cel-js") as typeof CelModule).Environment({
    homogeneousAggregateLiterals: false,
  })
    .registerVariable("vars", "map<string, string>")
    .registerFunction({
      name: "get",
      receiverType: "map<string, string>",
      returnType: "string",
      params: [
        { name: "name", type: "string" },
        { name: "default", type: "string" },
      ],
      handler: (vars: unknown, name: unknown, fallback: unknown): string => {
        const map = vars as Record<string, string> | Map<string, string>;
        const key = String(name);
        if (map instanceof Map) return map.has(key) ? String(map.get(key)) : String(fallback);
        return Object.hasOwn(map, key) ? String(map[key]) : String(fallback);
      },
      description: "the variable's value, or the default when unset",
    });
  return environment;
}

export type WhenResult = { ok: true; value: boolean } | { ok: false; message: string };

/** Checks and evaluates one condition against the merged variables. */
export function evaluateWhen(expression: string, vars: ReadonlyMap<string, string>): WhenResult {
  const env = celEnvironment();
  let parsed: ReturnType<Environment["parse"]>;
  try {
    parsed = env.parse(expression);
  } catch (e) {
    return { ok: false, message: `when: is not a valid CEL expression: ${celMessage(e)}` };
  }
  const disallowed = [...calledFunctions(parsed.ast)].filter((f) => !ALLOWED_CALLS.has(f));
  if (disallowed.length > 0) {
    return {
      ok: false,
      message: `when: calls ${disallowed.map((f) => `${f}()`).join(", ")}, which ${disallowed.length === 1 ? "is" : "are"} not part of CEL's standard library; conditions may use ==, !=, &&, ||, !, in, ?:, startsWith, endsWith, contains, matches, size, has() and vars.get()`,
    };
  }
  const checked = env.check(expression);
  if (!checked.valid) {
    return { ok: false, message: `when: does not type-check: ${celMessage(checked.error)}` };
  }
  if (checked.type !== "bool") {
    return {
      ok: false,
      message: `when: must be a bool condition, but it is of type ${String(checked.type)}; compare strings, e.g. vars.get("ENABLED", "false") == "true"`,
    };
  }
  try {
    const value = env.evaluate(expression, { vars: Object.fromEntries(vars) });
    if (typeof value !== "boolean") return { ok: false, message: `when: evaluated to a ${typeof value}, not a bool` };
    return { ok: true, value };
  } catch (e) {
    const message = celMessage(e);
    const missing = /No such key: (\S+)/.exec(message);
    if (missing) {
      return {
        ok: false,
        message: `when: reads vars.${missing[1]}, which is not set; use vars.get("${missing[1]}", "default") or has(vars.${missing[1]})`,
      };
    }
    return { ok: false, message: `when: failed to evaluate: ${message}` };
  }
}

interface CelNode {
  op: string;
  args: unknown;
}

function calledFunctions(ast: unknown, into = new Set<string>()): Set<string> {
  if (ast === null || typeof ast !== "object") return into;
  if (Array.isArray(ast)) {
    for (const a of ast) calledFunctions(a, into);
    return into;
  }
  const node = ast as CelNode;
  if ((node.op === "call" || node.op === "rcall") && Array.isArray(node.args) && typeof node.args[0] === "string") {
    into.add(node.args[0]);
  }
  if (typeof node.args === "object") calledFunctions(node.args, into);
  return into;
}

/** The library's messages carry a source excerpt after the first line; keep the first. */
function celMessage(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0]!.trim();
}
