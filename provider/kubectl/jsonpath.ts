/**
 * The JSONPath dialect of `kubectl wait --for=jsonpath=…`: kubectl's relaxed syntax
 * (cmdget.RelaxedJSONPathExpression) over client-go's jsonpath (k8s.io/client-go/util/jsonpath) with
 * missing keys allowed, for one `{...}` expression: fields (`.a.b`, `['a']`, `.a\.b`), `*`, `[n]`,
 * `[-1]`, slices `[a:b:c]`, `[*]`, recursive descent `..`, filters `[?(@.a=="b")]`, `[?(@.a)]`,
 * `[?(@.n>=2)]`, and unions `['a','b']` / `[0,2]`. test/golden/kubectl holds Go's answers.
 *
 * Deliberate differences (test/golden/kubectl/README.md):
 * - evaluation is total: where client-go fails (an index out of range, a filter over a non-list,
 *   comparing a number with a string), the expression yields no values ("not yet") instead of an error;
 * - what always fails in client-go once evaluated (an unknown identifier, a slice step <= 0, an unknown
 *   filter operator), or can never match (an empty field name, as in `{$.a}` = `{.$.a}` or `{.a.}`), is
 *   rejected when parsing, so validation reports it.
 */

export type Literal = string | number | boolean;

/** How Go compares a number: int64 and float64 values never compare equal or less. */
type NumKind = "int" | "float" | "uint";

export type Segment =
  | { t: "field"; name: string }
  | { t: "wildcard" }
  | { t: "array"; start: ArrayParam; end: ArrayParam & { derived: boolean }; step: ArrayParam }
  | { t: "recursive" }
  | { t: "filter"; left: Segment[]; op: FilterOp; right: Segment[] }
  | { t: "union"; branches: Segment[][] }
  | { t: "literal"; value: Literal; kind?: NumKind };

export interface ArrayParam {
  known: boolean;
  value: number;
}

export type FilterOp = "exists" | "==" | "!=" | "<" | "<=" | ">" | ">=";

export interface JsonPathExpr {
  /** The normalized braced form kubectl evaluates, e.g. `{.status.phase}`. */
  readonly source: string;
  readonly segments: readonly Segment[];
}

export type JsonPathParse = { ok: true; expr: JsonPathExpr } | { ok: false; message: string };

class ParseError extends Error {}

/** kubectl's RelaxedJSONPathExpression: `{.a.b}`, `{a.b}`, `.a.b` and `a.b` all mean `{.a.b}`. */
const RELAXED = /^\{\.?([^{}]+)\}$|^\.?([^{}]+)$/;

export function parseJsonPath(text: string): JsonPathParse {
  if (text === "") return { ok: false, message: "the jsonpath expression is empty" };
  const m = RELAXED.exec(text);
  if (!m) {
    return {
      ok: false,
      message: `"${text}" is not a jsonpath expression kubectl accepts: use {.a.b}, .a.b or a.b (a single expression, no nested braces, nothing around the braces)`,
    };
  }
  const body = `.${m[1] ?? m[2] ?? ""}`;
  try {
    return { ok: true, expr: { source: `{${body}}`, segments: parseAction(body) } };
  } catch (e) {
    return { ok: false, message: `invalid jsonpath "${text}": ${(e as Error).message}` };
  }
}

function parseAction(text: string): Segment[] {
  return new Parser(text).parseAll();
}

const isTerminator = (c: string | undefined): boolean =>
  c === undefined || c === " " || c === "\t" || c === "\r" || c === "\n" || ".,[]$@{}".includes(c);
const isAlphaNumeric = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{Nd}_]/u.test(c);
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/s;
const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;

/** client-go's jsonpath parser, inside one action (the text between the braces). */
class Parser {
  private pos = 0;
  private readonly out: Segment[] = [];
  constructor(private readonly s: string) {}

  parseAll(): Segment[] {
    while (this.pos < this.s.length) this.parseOne();
    return this.out;
  }

  private parseOne(): void {
    const s = this.s;
    if (s.startsWith("[?(", this.pos)) return this.parseFilter();
    if (s.startsWith("..", this.pos)) return this.parseRecursive();
    const c = s[this.pos]!;
    this.pos++;
    if (c === "\n" || c === "\r") throw new ParseError("unclosed action");
    if (c === " " || c === "@" || c === "$") return;
    if (c === "[") return this.parseArray();
    if (c === '"' || c === "'") return this.parseQuote(c);
    if (c === ".") return this.parseField();
    this.pos--;
    if (c === "+" || c === "-" || /\p{Nd}/u.test(c)) return this.parseNumber();
    if (isAlphaNumeric(c)) return this.parseIdentifier();
    throw new ParseError(`unrecognized character ${JSON.stringify(c)} at position ${this.pos + 1}`);
  }

  private parseRecursive(): void {
    if (this.out[this.out.length - 1]?.t === "recursive") throw new ParseError("invalid multiple recursive descent");
    this.pos += 2;
    this.out.push({ t: "recursive" });
    if (isAlphaNumeric(this.s[this.pos])) this.parseField();
  }

  /** After the dot: up to a terminator (a backslash escapes one), backslashes removed; `*` is the wildcard. */
  private parseField(): void {
    const start = this.pos;
    while (this.pos < this.s.length) {
      const c = this.s[this.pos]!;
      if (c === "\\") this.pos += 2;
      else if (isTerminator(c)) break;
      else this.pos++;
    }
    const raw = this.s.slice(start, Math.min(this.pos, this.s.length));
    if (raw === "") {
      // client-go looks up the key "" here, which no Kubernetes object has: the wait could never end.
      throw new ParseError(
        `empty field name at position ${start}: kubectl would look up the key "" and never match (a leading $ or @ is not the root in kubectl's relaxed form: write {.a.b})`,
      );
    }
    this.out.push(raw === "*" ? { t: "wildcard" } : { t: "field", name: raw.replace(/\\/g, "") });
  }

  private parseIdentifier(): void {
    const start = this.pos;
    while (this.pos < this.s.length && !isTerminator(this.s[this.pos])) this.pos++;
    const word = this.s.slice(start, this.pos);
    if (word === "true" || word === "false") this.out.push({ t: "literal", value: word === "true" });
    else
      throw new ParseError(
        `unrecognized identifier ${JSON.stringify(word)} (quote strings in filters: @.type=="Ready")`,
      );
  }

  private parseNumber(): void {
    const start = this.pos;
    if (this.s[this.pos] === "+" || this.s[this.pos] === "-") this.pos++;
    while (this.pos < this.s.length && /[\p{Nd}.]/u.test(this.s[this.pos]!)) this.pos++;
    const text = this.s.slice(start, this.pos);
    if (/^[+-]?\d+$/.test(text)) {
      this.out.push({ t: "literal", value: Number(text), kind: "int" });
      return;
    }
    const n = Number(text);
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) || !Number.isFinite(n))
      throw new ParseError(`cannot parse number ${text}`);
    this.out.push({ t: "literal", value: n, kind: "float" });
  }

  /** A quoted string ends at the first unescaped matching quote; escapes are Go's. */
  private parseQuote(q: string): void {
    const start = this.pos - 1;
    for (;;) {
      const c = this.s[this.pos];
      if (c === undefined || c === "\n") throw new ParseError("unterminated quoted string");
      this.pos++;
      if (c === q && this.s[this.pos - 2] !== "\\") break;
    }
    this.out.push({ t: "literal", value: unquote(this.s.slice(start + 1, this.pos - 1)) });
  }

  private parseArray(): void {
    const close = this.s.indexOf("]", this.pos);
    const nl = this.s.indexOf("\n", this.pos);
    if (close < 0 || (nl >= 0 && nl < close)) throw new ParseError("unterminated array");
    let text = this.s.slice(this.pos, close);
    this.pos = close + 1;
    if (text === "*") text = ":";
    const parts = text.split(",");
    if (parts.length > 1) {
      this.out.push({ t: "union", branches: parts.map((p) => parseAction(`[${p.replace(/^ +| +$/g, "")}]`)) });
      return;
    }
    // ['a.b'] is parsed as .a.b, as client-go does: dots in it separate fields.
    const dict = DICT_KEY.exec(text);
    if (dict) {
      this.out.push(...parseAction(`.${dict[1]}`));
      return;
    }
    const sl = SLICE.exec(text);
    if (!sl) throw new ParseError(`invalid array index ${text}`);
    const param = (g: string | undefined, i: number): ArrayParam => {
      const v = g === undefined ? "" : i > 0 ? g.slice(1) : g;
      if (g !== undefined && g !== "" && !(i > 0 && v === "")) {
        const n = Number(v);
        if (v === "" || v === "-" || !Number.isSafeInteger(n)) throw new ParseError(`array index ${v} is not a number`);
        return { known: true, value: n };
      }
      return { known: false, value: 0 };
    };
    const start = param(sl[1], 0);
    const end =
      sl[2] === undefined || sl[2] === ""
        ? { known: true, value: start.value + 1, derived: true }
        : { ...param(sl[2], 1), derived: false };
    const step = param(sl[3], 2);
    if (step.known && step.value <= 0) throw new ParseError("the step of a slice must be > 0");
    this.out.push({ t: "array", start, end, step });
  }

  private parseFilter(): void {
    this.pos += 3;
    const bodyStart = this.pos;
    let begin = false;
    let end = false;
    let pair = "";
    for (;;) {
      const c = this.s[this.pos];
      if (c === undefined || c === "\n") throw new ParseError("unterminated filter");
      this.pos++;
      if (c === '"' || c === "'") {
        if (!begin) {
          begin = true;
          pair = c;
        } else if (this.s[this.pos - 2] !== "\\" && c === pair) {
          end = true;
        }
      } else if (c === ")" && begin === end) {
        break;
      }
    }
    if (this.s[this.pos] !== "]") throw new ParseError("unclosed filter: expected ] after )");
    this.pos++;
    const body = this.s.slice(bodyStart, this.pos - 2);
    const m = FILTER.exec(body);
    if (!m) {
      this.out.push({ t: "filter", left: parseAction(body), op: "exists", right: [] });
      return;
    }
    const op = m[2]!;
    if (!["==", "!=", "<", "<=", ">", ">="].includes(op)) throw new ParseError(`unrecognized filter operator ${op}`);
    this.out.push({ t: "filter", left: parseAction(m[1]!), op: op as FilterOp, right: parseAction(m[3]!) });
  }
}

/** The escapes of Go's strconv.UnquoteChar that matter in a filter literal. */
function unquote(s: string): string {
  const simple: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    "\\": "\\",
    "'": "'",
    '"': '"',
    a: "\x07",
    b: "\b",
    f: "\f",
    v: "\v",
  };
  return s.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/gs, (all, e: string) => {
    if (e.length > 1) return String.fromCodePoint(parseInt(e.slice(1), 16));
    return simple[e] ?? all;
  });
}

// ------------------------------------------------------------------ evaluation

/** Where client-go's evaluation fails; `partial` is what its function returned along with the error. */
class EvalError extends Error {
  constructor(
    message: string,
    readonly partial: unknown[],
  ) {
    super(message);
  }
}

/** A literal or a byte of a string, with its Go kind (numbers in documents are int64 when whole). */
class Typed {
  constructor(
    readonly value: Literal,
    readonly kind: NumKind | "string" | "bool",
  ) {}
}

/** Every value the expression yields on `data`, in client-go's order. Never throws: where client-go fails, nothing. */
export function evaluateJsonPath(expr: JsonPathExpr, data: unknown): unknown[] {
  try {
    return walk([data], expr.segments).map((v) => (v instanceof Typed ? v.value : v));
  } catch (e) {
    if (e instanceof EvalError) return [];
    throw e;
  }
}

function walk(input: unknown[], segments: readonly Segment[]): unknown[] {
  let cur = input;
  for (const seg of segments) cur = step(cur, seg);
  return cur;
}

/** Children as client-go walks them: map values, list items, and the bytes of a string. */
function children(v: unknown): unknown[] {
  if (isMap(v)) return Object.values(v);
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return [...Buffer.from(v, "utf8")].map((b) => new Typed(b, "uint"));
  return [];
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
      for (const v of input) if (v !== null) out.push(...children(v));
      return out;
    case "array":
      return evalArray(input, seg);
    case "recursive":
      for (const v of input) collectRecursive(v, out);
      return out;
    case "filter":
      return evalFilter(input, seg);
    case "union":
      for (const b of seg.branches) out.push(...walk(input, b));
      return out;
    case "literal":
      return input.map(() => new Typed(seg.value, seg.kind ?? (typeof seg.value === "string" ? "string" : "bool")));
  }
}

function evalArray(input: unknown[], seg: Extract<Segment, { t: "array" }>): unknown[] {
  const result: unknown[] = [];
  for (const value of input) {
    if (value === null) continue;
    if (!Array.isArray(value)) throw new EvalError(`${goTypeName(value)} is not array or slice`, input);
    const len = value.length;
    let start = seg.start.known ? seg.start.value : 0;
    if (start < 0) start += len;
    let end = seg.end.known ? seg.end.value : len;
    if (end < 0 || (end === 0 && seg.end.derived)) end += len;
    if (end === start) return result; // client-go returns here, skipping the remaining inputs
    if (start >= len || start < 0)
      throw new EvalError(`array index out of bounds: index ${start}, length ${len}`, input);
    if (end > len || end < 0) throw new EvalError(`array index out of bounds: index ${end - 1}, length ${len}`, input);
    if (start > end) throw new EvalError(`starting index ${start} is greater than ending index ${end}`, input);
    const stepBy = seg.step.known ? seg.step.value : 1;
    for (let i = start; i < end; i += stepBy) result.push(value[i]);
  }
  return result;
}

/** kubectl's `..`: each value with children (maps, lists, non-empty strings), then its descendants. */
function collectRecursive(v: unknown, out: unknown[]): void {
  if (v === null) return;
  const c = children(v);
  if (c.length === 0) return;
  out.push(v);
  for (const x of c) collectRecursive(x, out);
}

function evalFilter(input: unknown[], f: Extract<Segment, { t: "filter" }>): unknown[] {
  const results: unknown[] = [];
  for (const value of input) {
    if (!Array.isArray(value))
      throw new EvalError(`${goTypeName(value)} is not array or slice and cannot be filtered`, input);
    for (const el of value) {
      if (f.op === "exists") {
        let lefts: unknown[];
        try {
          lefts = walk([el], f.left);
        } catch (e) {
          if (!(e instanceof EvalError)) throw e;
          lefts = e.partial; // client-go ignores the error here and looks at what came back with it
        }
        if (lefts.length > 0) results.push(el);
        continue;
      }
      const lefts = walkIn(input, [el], f.left);
      if (lefts.length === 0) continue;
      if (lefts.length > 1) throw new EvalError("can only compare one element at a time", input);
      const rights = walkIn(input, [el], f.right);
      if (rights.length === 0) continue;
      if (rights.length > 1) throw new EvalError("can only compare one element at a time", input);
      if (compare(lefts[0], f.op, rights[0], results)) results.push(el);
    }
  }
  return results;
}

/** An error inside a filter's operand is the filter's error (client-go returns the filter's input with it). */
function walkIn(filterInput: unknown[], input: unknown[], segments: readonly Segment[]): unknown[] {
  try {
    return walk(input, segments);
  } catch (e) {
    if (e instanceof EvalError) throw new EvalError(e.message, filterInput);
    throw e;
  }
}

type Basic = { kind: NumKind | "string" | "bool"; value: Literal };

/** Go's reflect kind of a document value: whole numbers are int64 (as kubectl decodes JSON), others float64. */
function basic(v: unknown, partial: unknown[]): Basic {
  if (v instanceof Typed) return { kind: v.kind, value: v.value };
  if (typeof v === "string") return { kind: "string", value: v };
  if (typeof v === "boolean") return { kind: "bool", value: v };
  if (typeof v === "number") return { kind: isGoInt(v) ? "int" : "float", value: v };
  throw new EvalError("invalid type for comparison", partial);
}

/** text/template's eq/lt (client-go's fork): different kinds are an error, except int against uint. */
function compare(a: unknown, op: FilterOp, b: unknown, partial: unknown[]): boolean {
  const x = basic(a, partial);
  const y = basic(b, partial);
  const intUint = (x.kind === "int" && y.kind === "uint") || (x.kind === "uint" && y.kind === "int");
  if (x.kind !== y.kind && !intUint) throw new EvalError("incompatible types for comparison", partial);
  const eq = (): boolean => x.value === y.value;
  const lt = (): boolean => {
    if (x.kind === "bool") throw new EvalError("invalid type for comparison", partial);
    return x.value < y.value;
  };
  switch (op) {
    case "==":
      return eq();
    case "!=":
      return !eq();
    case "<":
      return lt();
    case "<=":
      return lt() || eq();
    case ">":
      return !(lt() || eq());
    case ">=":
      return !lt();
    default:
      return false;
  }
}

const INT64_LIMIT = 9223372036854775808;

function isGoInt(v: number): boolean {
  return Number.isInteger(v) && v >= -INT64_LIMIT && v < INT64_LIMIT;
}

function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (isMap(v)) return "map[string]interface {}";
  if (Array.isArray(v)) return "[]interface {}";
  if (typeof v === "number") return isGoInt(v) ? "int64" : "float64";
  if (typeof v === "boolean") return "bool";
  return "string";
}

/** How kubectl prints a scalar result (`fmt.Sprintf("%v")`) for comparison with a wait value. */
export function formatJsonPathValue(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") return isGoInt(v) ? BigInt(v).toString() : goFloat(v);
  return JSON.stringify(v);
}

/** fmt's %v of a float64: the shortest digits, in exponent form when the decimal exponent is < -4 or >= 6 (1e+06, 1e-05). */
function goFloat(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  const [mantissa, expText] = v.toExponential().split("e") as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  return String(v);
}

/** A "non-empty" value for `jsonpath=<expr>` without a value: not null, "", [] or {}. */
export function isNonEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Typed);
}
