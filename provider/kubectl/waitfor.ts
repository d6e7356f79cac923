/**
 * The `wait.for` / `apply.waitFor` grammar — kubectl wait's `--for` forms:
 *
 *   condition=<Name>            status.conditions[type==Name].status is "True"
 *   condition=<Name>=<value>    ... equals <value> (both compared case-insensitively, like kubectl)
 *   jsonpath=<expr>             the expression yields at least one non-empty value
 *   jsonpath=<expr>=<value>     some yielded value equals <value>
 *   delete                      every matching resource is gone (wait: only)
 *
 * `<expr>` is kubectl's relaxed JSONPath: `{.status.phase}`, `.status.phase`
 * and `status.phase` are the same. Expressions with filters contain `=` and
 * must use the braced form: `jsonpath={.status.conditions[?(@.type=="Ready")].status}=True`.
 */
import { parseJsonPath, type JsonPathExpr } from "./jsonpath.js";

export type WaitCondition =
  | { kind: "condition"; name: string; value: string }
  | { kind: "jsonpath"; expr: JsonPathExpr; value?: string }
  | { kind: "delete" };

export type WaitForParse = { ok: true; condition: WaitCondition } | { ok: false; message: string };

const FORMS_WITH_DELETE = "condition=<Name>[=<value>], jsonpath=<expr>[=<value>], or delete";
const FORMS = "condition=<Name>[=<value>] or jsonpath=<expr>[=<value>]";

export function parseWaitFor(text: string, opts: { allowDelete: boolean }): WaitForParse {
  const forms = opts.allowDelete ? FORMS_WITH_DELETE : FORMS;
  const s = text.trim();
  if (s === "") return { ok: false, message: `the condition is empty; expected ${forms}` };

  // kubectl also takes `Delete`; the spec's grammar, and so the schema, spell it `delete`.
  if (s !== "delete" && s.toLowerCase() === "delete")
    return { ok: false, message: `"${s}" must be lower-case: write delete` };
  if (s === "delete") {
    if (!opts.allowDelete) {
      return {
        ok: false,
        message: `"delete" is only valid in a wait: step (apply.waitFor waits on objects it just applied); expected ${forms}`,
      };
    }
    return { ok: true, condition: { kind: "delete" } };
  }

  if (s.startsWith("condition=")) {
    const rest = s.slice("condition=".length);
    const eq = rest.indexOf("=");
    const name = (eq < 0 ? rest : rest.slice(0, eq)).trim();
    const value = eq < 0 ? "True" : rest.slice(eq + 1).trim();
    if (name === "")
      return { ok: false, message: `"${text}" names no condition: expected condition=<Name>, e.g. condition=Ready` };
    if (/\s/.test(name)) return { ok: false, message: `condition name "${name}" contains whitespace` };
    if (eq >= 0 && value === "") {
      return {
        ok: false,
        message: `"${text}" has no value after the second "=": expected condition=<Name>=<value>, e.g. condition=Ready=False`,
      };
    }
    return { ok: true, condition: { kind: "condition", name, value } };
  }

  if (s.startsWith("jsonpath=")) {
    const rest = s.slice("jsonpath=".length);
    const split = splitJsonPath(rest);
    if (!split.ok) return split;
    const parsed = parseJsonPath(split.expr);
    if (!parsed.ok) return { ok: false, message: parsed.message };
    if (split.value === undefined) return { ok: true, condition: { kind: "jsonpath", expr: parsed.expr } };
    // kubectl trims quotes around the value: jsonpath='{.status.phase}'='Running'
    const value = split.value.trim().replace(/^['"]+|['"]+$/g, "");
    if (value === "") {
      return {
        ok: false,
        message: `"${text}" has no value after "=": expected jsonpath=<expr>=<value>, e.g. jsonpath={.status.readyReplicas}=2`,
      };
    }
    return { ok: true, condition: { kind: "jsonpath", expr: parsed.expr, value } };
  }

  const head = s.split("=")[0] ?? s;
  if (["condition", "jsonpath"].includes(head.toLowerCase()) || head.toLowerCase() === "create") {
    if (head.toLowerCase() === "create") {
      return {
        ok: false,
        message: `"create" is not supported; to wait for an object to exist use jsonpath={.metadata.name} (a kind/name target that does not exist yet is waited for)`,
      };
    }
    return { ok: false, message: `"${head}" must be lower-case: expected ${forms}` };
  }
  return { ok: false, message: `"${text}" is not a wait condition; expected ${forms}` };
}

/**
 * Splits `<expr>[=<value>]`. A braced expression ends at its matching `}`;
 * an unbraced one at the first `=`, so it cannot contain a filter.
 */
function splitJsonPath(
  rest: string,
): { ok: true; expr: string; value: string | undefined } | { ok: false; message: string } {
  const r = rest.trimStart();
  if (r === "") return { ok: false, message: `jsonpath= needs an expression, e.g. jsonpath={.status.phase}=Running` };
  if (r.startsWith("{")) {
    let depth = 0;
    let quote: string | undefined;
    for (let i = 0; i < r.length; i++) {
      const c = r[i]!;
      if (quote) {
        if (c === "\\") i++;
        else if (c === quote) quote = undefined;
        continue;
      }
      if (c === '"' || c === "'") quote = c;
      else if (c === "{") depth++;
      else if (c === "}") {
        depth--;
        if (depth === 0) {
          const expr = r.slice(0, i + 1);
          const after = r.slice(i + 1);
          if (after.trim() === "") return { ok: true, expr, value: undefined };
          if (!after.startsWith("=")) {
            return {
              ok: false,
              message: `unexpected "${after}" after the jsonpath expression ${expr}: expected =<value> or nothing`,
            };
          }
          return { ok: true, expr, value: after.slice(1) };
        }
      }
    }
    return { ok: false, message: `the jsonpath expression "${r}" has an unclosed "{"` };
  }
  if (r.includes("[?(")) {
    return {
      ok: false,
      message: `a jsonpath filter contains "=" and needs the braced form: jsonpath={${r.startsWith(".") ? "" : "."}${r.split("=")[0]}...}=<value>, e.g. jsonpath={.status.conditions[?(@.type=="Ready")].status}=True`,
    };
  }
  const eq = r.indexOf("=");
  if (eq < 0) return { ok: true, expr: r, value: undefined };
  return { ok: true, expr: r.slice(0, eq), value: r.slice(eq + 1) };
}

/** The condition as written in a spec (normalized), for plan lines and errors. */
export function formatWaitCondition(c: WaitCondition): string {
  switch (c.kind) {
    case "delete":
      return "delete";
    case "condition":
      return c.value.toLowerCase() === "true" ? `condition=${c.name}` : `condition=${c.name}=${c.value}`;
    case "jsonpath":
      return c.value === undefined ? `jsonpath=${c.expr.source}` : `jsonpath=${c.expr.source}=${c.value}`;
  }
}
