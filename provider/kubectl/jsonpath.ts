/**
 * The JSONPath dialect of kubectl (k8s.io/client-go/util/jsonpath), for one
 * `{...}` expression: fields (`.a.b`, `['a.b']`, `.a\.b`), `*`, `[n]`, `[-1]`,
 * slices `[a:b:c]`, `[*]`, recursive descent `..`, filters `[?(@.a=="b")]`,
 * `[?(@.a)]`, `[?(@.n>=2)]`, and unions `['a','b']` / `[0,2]`.
 *
 * Evaluation is total: a missing field, an out-of-range index or a filter over
 * a non-list yields no values ("not yet") instead of an error — kubectl's
 * `AllowMissingKeys(true)`, extended to indexes, which is what waiting needs.
 */

export type Literal = string | number | boolean;

export type Segment =
  | { t: "field"; name: string }
  | { t: "wildcard" }
  | { t: "slice"; start: number | undefined; end: number | undefined; step: number | undefined; single: boolean }
  | { t: "recursive" }
  | { t: "filter"; left: Segment[]; op: FilterOp; right: Segment[] }
  | { t: "union"; branches: Segment[][] }
  | { t: "literal"; value: Literal };

export type FilterOp = "exists" | "==" | "!=" | "<" | "<=" | ">" | ">=";

export interface JsonPathExpr {
  /** The normalized braced form, e.g. `{.status.phase}`. */
  readonly source: string;
  readonly segments: readonly Segment[];
}

export type JsonPathParse = { ok: true; expr: JsonPathExpr } | { ok: false; message: string };

class ParseError extends Error {}

/**
 * Parses kubectl's relaxed form: `{.status.phase}`, `{status.phase}`,
 * `.status.phase` and `status.phase` are the same expression.
 */
export function parseJsonPath(text: string): JsonPathParse {
  const t = text.trim();
  if (t === "") return { ok: false, message: "the jsonpath expression is empty" };
  const m = /^\{\.?([^{}]+)\}$|^\.?([^{}]+)$/.exec(t);
  if (!m) {
    return {
      ok: false,
      message: `"${text}" is not a jsonpath expression kubectl accepts: use {.a.b}, .a.b or a.b (a single expression, no nested braces)`,
    };
  }
  const spec = (m[1] ?? m[2] ?? "").trim();
  const body = spec.startsWith("$") || spec.startsWith("@") ? spec : `.${spec}`;
  try {
    const segments = new Parser(body).parseAll();
    return { ok: true, expr: { source: `{${body}}`, segments } };
  } catch (e) {
    return { ok: false, message: `invalid jsonpath "${text}": ${(e as Error).message}` };
  }
}

const TERMINATORS = new Set([" ", "\t", "\r", "\n", ".", ",", "[", "]", "$", "@", "{", "}"]);

class Parser {
  private pos = 0;
  constructor(private readonly s: string) {}

  parseAll(): Segment[] {
    const out: Segment[] = [];
    while (this.pos < this.s.length) this.parseOne(out);
    return out;
  }

  private parseOne(out: Segment[]): void {
    const s = this.s;
    if (s.startsWith("[?(", this.pos)) return this.parseFilter(out);
    if (s.startsWith("..", this.pos)) {
      if (out[out.length - 1]?.t === "recursive") throw new ParseError("invalid multiple recursive descent");
      this.pos += 2;
      out.push({ t: "recursive" });
      if (this.pos < s.length && /[\p{L}\p{N}_]/u.test(s[this.pos]!)) this.parseField(out);
      return;
    }
    const c = s[this.pos]!;
    if (c === " " || c === "@" || c === "$") {
      this.pos++;
      return;
    }
    if (c === "\n" || c === "\r") throw new ParseError("unclosed action");
    if (c === "[") return this.parseArray(out);
    if (c === '"' || c === "'") return this.parseQuote(out, c);
    if (c === ".") {
      this.pos++;
      return this.parseField(out);
    }
    if (c === "+" || c === "-" || /\d/.test(c)) return this.parseNumber(out);
    if (/[\p{L}\p{N}_]/u.test(c)) return this.parseIdentifier(out);
    throw new ParseError(`unrecognized character "${c}" at position ${this.pos + 1}`);
  }

  private parseField(out: Segment[]): void {
    let name = "";
    while (this.pos < this.s.length) {
      const c = this.s[this.pos]!;
      if (c === "\\") {
        name += this.s[this.pos + 1] ?? "";
        this.pos += 2;
        continue;
      }
      if (TERMINATORS.has(c)) break;
      name += c;
      this.pos++;
    }
    if (name === "*") out.push({ t: "wildcard" });
    else if (name !== "") out.push({ t: "field", name });
  }

  private parseIdentifier(out: Segment[]): void {
    const start = this.pos;
    while (this.pos < this.s.length && !TERMINATORS.has(this.s[this.pos]!)) this.pos++;
    const word = this.s.slice(start, this.pos);
    if (word === "true" || word === "false") out.push({ t: "literal", value: word === "true" });
    else if (word === "range" || word === "end") throw new ParseError(`"${word}" (range/end templates) is not supported here`);
    else throw new ParseError(`unrecognized identifier "${word}"`);
  }

  private parseNumber(out: Segment[]): void {
    const start = this.pos;
    if (this.s[this.pos] === "+" || this.s[this.pos] === "-") this.pos++;
    while (this.pos < this.s.length && /[\d.]/.test(this.s[this.pos]!)) this.pos++;
    const text = this.s.slice(start, this.pos);
    const n = Number(text);
    if (text === "" || text === "+" || text === "-" || !Number.isFinite(n)) throw new ParseError(`cannot parse number ${text}`);
    out.push({ t: "literal", value: n });
  }

  private parseQuote(out: Segment[], q: string): void {
    const start = this.pos;
    this.pos++;
    let value = "";
    for (;;) {
      if (this.pos >= this.s.length) throw new ParseError(`unterminated quoted string starting at position ${start + 1}`);
      const c = this.s[this.pos]!;
      if (c === "\n") throw new ParseError("unterminated quoted string");
      if (c === "\\") {
        const n = this.s[this.pos + 1] ?? "";
        value += n === "n" ? "\n" : n === "t" ? "\t" : n;
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (c === q) break;
      value += c;
    }
    out.push({ t: "literal", value });
  }

  private parseArray(out: Segment[]): void {
    const close = this.s.indexOf("]", this.pos);
    if (close < 0 || this.s.slice(this.pos, close).includes("\n")) throw new ParseError("unterminated array: missing ]");
    let text = this.s.slice(this.pos + 1, close);
    this.pos = close + 1;
    if (text.trim() === "*") text = ":";
    const parts = text.split(",");
    if (parts.length > 1) {
      const branches = parts.map((p) => new Parser(`[${p.trim()}]`).parseAll());
      out.push({ t: "union", branches });
      return;
    }
    const dict = /^'([^']*)'$/.exec(text) ?? /^"([^"]*)"$/.exec(text);
    if (dict) {
      out.push({ t: "field", name: dict[1]! });
      return;
    }
    const sl = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/.exec(text);
    if (!sl) throw new ParseError(`invalid array index [${text}]`);
    const num = (s: string | undefined): number | undefined => (s === undefined || s === "" ? undefined : Number(s));
    const start = num(sl[1]);
    const hasColon = sl[2] !== undefined;
    if (!hasColon) {
      if (start === undefined) throw new ParseError("empty array index []");
      out.push({ t: "slice", start, end: undefined, step: undefined, single: true });
      return;
    }
    const end = num(sl[2]?.slice(1));
    const step = num(sl[3]?.slice(1));
    if (step !== undefined && step <= 0) throw new ParseError("the step of a slice must be > 0");
    out.push({ t: "slice", start, end, step, single: false });
  }

  private parseFilter(out: Segment[]): void {
    const begin = this.pos;
    this.pos += 3;
    const bodyStart = this.pos;
    let quote: string | undefined;
    for (;;) {
      if (this.pos >= this.s.length) throw new ParseError(`unterminated filter starting at position ${begin + 1}`);
      const c = this.s[this.pos]!;
      if (quote) {
        if (c === "\\") this.pos++;
        else if (c === quote) quote = undefined;
      } else if (c === '"' || c === "'") {
        quote = c;
      } else if (c === ")") {
        break;
      }
      this.pos++;
    }
    const body = this.s.slice(bodyStart, this.pos);
    this.pos++; // )
    if (this.s[this.pos] !== "]") throw new ParseError("unclosed filter: expected ] after )");
    this.pos++;
    const m = /^([^!<>=]+)([!<>=]+)(.+?)$/s.exec(body);
    if (!m) {
      out.push({ t: "filter", left: new Parser(body.trim()).parseAll(), op: "exists", right: [] });
      return;
    }
    const op = m[2]!;
    if (!["==", "!=", "<", "<=", ">", ">="].includes(op)) throw new ParseError(`unrecognized filter operator ${op}`);
    out.push({
      t: "filter",
      left: new Parser(m[1]!.trim()).parseAll(),
      op: op as FilterOp,
      right: new Parser(m[3]!.trim()).parseAll(),
    });
  }
}

// ------------------------------------------------------------------ evaluation

/** Every value the expression yields on `data`, in document order. Never throws. */
export function evaluateJsonPath(expr: JsonPathExpr, data: unknown): unknown[] {
  return walk([data], expr.segments);
}

function walk(input: unknown[], segments: readonly Segment[]): unknown[] {
  let cur = input;
  for (const seg of segments) {
    cur = step(cur, seg);
    if (cur.length === 0) return cur;
  }
  return cur;
}

function step(input: unknown[], seg: Segment): unknown[] {
  const out: unknown[] = [];
  switch (seg.t) {
    case "field":
      for (const v of input) {
        if (isMap(v) && Object.prototype.hasOwnProperty.call(v, seg.name)) out.push(v[seg.name]);
      }
      return out;
    case "wildcard":
      for (const v of input) {
        if (isMap(v)) out.push(...Object.values(v));
        else if (Array.isArray(v)) out.push(...v);
      }
      return out;
    case "slice":
      for (const v of input) if (Array.isArray(v)) out.push(...slice(v, seg));
      return out;
    case "recursive":
      for (const v of input) collectRecursive(v, out);
      return out;
    case "filter":
      for (const v of input) {
        if (!Array.isArray(v)) continue;
        for (const el of v) if (filterMatches(el, seg)) out.push(el);
      }
      return out;
    case "union":
      for (const b of seg.branches) out.push(...walk(input, b));
      return out;
    case "literal":
      return input.map(() => seg.value);
  }
}

function slice(arr: unknown[], seg: Extract<Segment, { t: "slice" }>): unknown[] {
  const len = arr.length;
  if (seg.single) {
    const i = seg.start! < 0 ? seg.start! + len : seg.start!;
    return i >= 0 && i < len ? [arr[i]] : [];
  }
  let start = seg.start ?? 0;
  if (start < 0) start += len;
  let end = seg.end ?? len;
  if (end < 0) end += len;
  if (start === end) return [];
  if (start < 0 || start >= len || end < 0 || end > len || start > end) return [];
  const step = seg.step ?? 1;
  const out: unknown[] = [];
  for (let i = start; i < end; i += step) out.push(arr[i]);
  return out;
}

/** kubectl's `..`: every map/list with children, pre-order (leaves are reached through the next segment). */
function collectRecursive(v: unknown, out: unknown[]): void {
  const children = isMap(v) ? Object.values(v) : Array.isArray(v) ? v : [];
  if (children.length === 0) return;
  out.push(v);
  for (const c of children) collectRecursive(c, out);
}

function filterMatches(el: unknown, f: Extract<Segment, { t: "filter" }>): boolean {
  const lefts = walk([el], f.left);
  if (f.op === "exists") return lefts.length > 0;
  if (lefts.length !== 1) return false;
  const rights = walk([el], f.right);
  if (rights.length !== 1) return false;
  return compare(lefts[0], f.op, rights[0]);
}

function compare(a: unknown, op: FilterOp, b: unknown): boolean {
  const ta = typeof a;
  const tb = typeof b;
  if (ta !== tb || (ta !== "string" && ta !== "number" && ta !== "boolean")) return false;
  if (ta === "boolean" && op !== "==" && op !== "!=") return false;
  const x = a as string | number | boolean;
  const y = b as string | number | boolean;
  switch (op) {
    case "==":
      return x === y;
    case "!=":
      return x !== y;
    case "<":
      return x < y;
    case "<=":
      return x <= y;
    case ">":
      return x > y;
    case ">=":
      return x >= y;
    default:
      return false;
  }
}

/** How kubectl prints a scalar result (`fmt.Sprintf("%v")`) for comparison with a wait value. */
export function formatJsonPathValue(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

/** A "non-empty" value for `jsonpath=<expr>` without a value: not null, "", [] or {}. */
export function isNonEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
