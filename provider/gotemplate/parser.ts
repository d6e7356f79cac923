/**
 * The parser of Go's text/template for one action `{{ . | <pipeline> }}`: commands separated by `|`,
 * operands (literals, `.`, `$`, fields, chains, parenthesized pipelines) and Go's checks
 * (unknown functions, undefined variables, non-executable stages) at parse time.
 */
import { toJs } from "./gostring.js";
import { lex, type Token, tokenString } from "./lexer.js";
import {
  NumError,
  parseFloat as goParseFloat,
  parseInt as goParseInt,
  parseUint as goParseUint,
  unquote,
  unquoteChar,
} from "./strconv.js";

export type Node =
  | { type: "dot" }
  | { type: "nil" }
  | { type: "bool"; value: boolean }
  | NumberNode
  | { type: "string"; quoted: string; text: string }
  | { type: "field"; idents: string[] }
  | { type: "variable"; idents: string[] }
  | { type: "identifier"; name: string }
  | { type: "chain"; node: Node; fields: string[] }
  | PipeNode;

export interface NumberNode {
  type: "number";
  text: string;
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  int64: bigint;
  uint64: bigint;
  float64: number;
  complex: [number, number];
}

export interface CommandNode {
  args: Node[];
}

export interface PipeNode {
  type: "pipe";
  decl: string[];
  isAssign: boolean;
  cmds: CommandNode[];
}

export class ParseError extends Error {}

/** Node.String() as Go prints nodes in messages (Go byte strings converted for display). */
export function nodeString(n: Node): string {
  switch (n.type) {
    case "dot":
      return ".";
    case "nil":
      return "nil";
    case "bool":
      return n.value ? "true" : "false";
    case "number":
      return toJs(n.text);
    case "string":
      return toJs(n.quoted);
    case "field":
      return n.idents.map((x) => "." + toJs(x)).join("");
    case "variable":
      return n.idents.map(toJs).join(".");
    case "identifier":
      return toJs(n.name);
    case "chain":
      return (
        (n.node.type === "pipe" ? "(" + nodeString(n.node) + ")" : nodeString(n.node)) +
        n.fields.map((f) => "." + toJs(f)).join("")
      );
    case "pipe": {
      let s = "";
      if (n.decl.length) s += n.decl.map(toJs).join(", ") + (n.isAssign ? " = " : " := ");
      return s + n.cmds.map((c) => c.args.map(nodeString).join(" ")).join(" | ");
    }
  }
}

function newNumber(text: string, typ: "number" | "complex" | "charConstant"): NumberNode {
  const n: NumberNode = {
    type: "number",
    text,
    isInt: false,
    isUint: false,
    isFloat: false,
    isComplex: false,
    int64: 0n,
    uint64: 0n,
    float64: 0,
    complex: [0, 0],
  };
  const simplifyComplex = (): void => {
    if (n.complex[1] === 0) {
      n.isFloat = true;
      n.float64 = n.complex[0];
      if (Number.isInteger(n.float64) && Math.abs(n.float64) < 2 ** 63) {
        n.isInt = true;
        n.int64 = BigInt(n.float64);
      }
      if (Number.isInteger(n.float64) && n.float64 >= 0 && n.float64 < 2 ** 64) {
        n.isUint = true;
        n.uint64 = BigInt(n.float64);
      }
    }
  };
  if (typ === "charConstant") {
    let r: number;
    let next: number;
    let multibyte: boolean;
    try {
      [r, multibyte, next] = unquoteChar(text, 1, text.charCodeAt(0));
    } catch {
      throw new ParseError("invalid syntax");
    }
    void multibyte;
    if (text.slice(next) !== "'") throw new ParseError("malformed character constant: " + toJs(text));
    n.int64 = BigInt(r);
    n.isInt = true;
    n.uint64 = BigInt(r);
    n.isUint = true;
    n.float64 = r;
    n.isFloat = true;
    return n;
  }
  if (typ === "complex") {
    // fmt.Sscan of "a+bi" / "a-bi"
    const m = /^([+-]?[^+-]*(?:[eEpP][+-][^+-]*)?)([+-].*)i$/.exec(text);
    if (!m) throw new ParseError("bad complex constant: " + toJs(text));
    try {
      n.complex = [goParseFloat(m[1]!), goParseFloat(m[2]!)];
    } catch {
      throw new ParseError("strconv.ParseFloat: parsing " + JSON.stringify(toJs(text)) + ": invalid syntax");
    }
    n.isComplex = true;
    simplifyComplex();
    return n;
  }
  if (text.length > 0 && text[text.length - 1] === "i") {
    try {
      const f = goParseFloat(text.slice(0, -1));
      n.isComplex = true;
      n.complex = [0, f];
      simplifyComplex();
      return n;
    } catch {
      // fall through
    }
  }
  let u = 0n;
  try {
    u = goParseUint(text, 0, 64);
    n.isUint = true;
    n.uint64 = u;
  } catch {
    // not a uint
  }
  try {
    const i = goParseInt(text, 0, 64);
    n.isInt = true;
    n.int64 = i;
    if (i === 0n) {
      n.isUint = true;
      n.uint64 = u;
    }
  } catch {
    // not an int
  }
  if (n.isInt) {
    n.isFloat = true;
    n.float64 = Number(n.int64);
  } else if (n.isUint) {
    n.isFloat = true;
    n.float64 = Number(n.uint64);
  } else {
    let f: number | undefined;
    try {
      f = goParseFloat(text);
    } catch (e) {
      if (!(e instanceof NumError)) throw e;
    }
    if (f !== undefined) {
      if (!/[.eEpP]/.test(text)) throw new ParseError("integer overflow: " + JSON.stringify(toJs(text)));
      n.isFloat = true;
      n.float64 = f;
      if (!n.isInt && Number.isInteger(f) && Math.abs(f) < 2 ** 63) {
        n.isInt = true;
        n.int64 = BigInt(f);
      }
      if (!n.isUint && Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
        n.isUint = true;
        n.uint64 = BigInt(f);
      }
    }
  }
  if (!n.isInt && !n.isUint && !n.isFloat) throw new ParseError("illegal number syntax: " + JSON.stringify(toJs(text)));
  return n;
}

/**
 * Go allows 10000 nested parenthesized pipelines; khook stops at 256 so that evaluation can never
 * run out of JavaScript stack (which would make the outcome depend on the engine's state).
 */
const MAX_STACK_DEPTH = 256;

interface ParseOptions {
  /** Is a function name defined (at parse time, like Go's funcs check)? */
  hasFunction(name: string): boolean;
  /** Called for names that are defined but refused by khook (returns the error message). */
  refusal?(name: string): string | undefined;
}

export class Parser {
  private tokens: Token[];
  private i = 0;
  private vars: string[] = ["$"];
  private depth = 0;

  constructor(
    text: string,
    private readonly opts: ParseOptions,
  ) {
    this.tokens = lex(text);
  }

  private errorf(msg: string): never {
    throw new ParseError(msg);
  }

  private next(): Token {
    const t = this.tokens[this.i] ?? this.tokens[this.tokens.length - 1]!;
    if (this.i < this.tokens.length) this.i++;
    return t;
  }
  private backup(): void {
    this.i--;
  }
  private peek(): Token {
    return this.tokens[this.i] ?? this.tokens[this.tokens.length - 1]!;
  }
  private nextNonSpace(): Token {
    let t: Token;
    do t = this.next();
    while (t.type === "space");
    return t;
  }
  private peekNonSpace(): Token {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }

  private unexpected(t: Token, context: string): never {
    if (t.type === "error") this.errorf(t.val);
    this.errorf("unexpected " + tokenString(t) + " in " + context);
  }

  /** Parses the whole input as the action's pipeline; `end` is EOF. */
  parseAction(): PipeNode {
    return this.pipeline("command", "eof");
  }

  private pipeline(context: string, end: "eof" | "rightParen"): PipeNode {
    const pipe: PipeNode = { type: "pipe", decl: [], isAssign: false, cmds: [] };
    const v = this.peekNonSpace();
    if (v.type === "variable") {
      const save = this.i;
      this.nextNonSpace();
      const nxt = this.peekNonSpace();
      if (nxt.type === "assign" || nxt.type === "declare") {
        pipe.isAssign = nxt.type === "assign";
        this.nextNonSpace();
        pipe.decl.push(v.val);
        this.vars.push(v.val);
      } else if (nxt.type === "char" && nxt.val === ",") {
        this.errorf("too many declarations in " + context);
      } else {
        this.i = save;
      }
    }
    for (;;) {
      const token = this.nextNonSpace();
      if (token.type === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      switch (token.type) {
        case "bool":
        case "charConstant":
        case "complex":
        case "dot":
        case "field":
        case "identifier":
        case "number":
        case "nil":
        case "rawString":
        case "string":
        case "variable":
        case "leftParen":
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf("missing value for " + context);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]?.type;
      if (t === "bool" || t === "dot" || t === "nil" || t === "number" || t === "string")
        this.errorf("non executable command in pipeline stage " + (i + 2));
    });
  }

  private command(): CommandNode {
    const cmd: CommandNode = { args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const token = this.next();
      if (token.type === "space") continue;
      if (token.type === "eof" || token.type === "rightParen") this.backup();
      else if (token.type !== "pipe") this.unexpected(token, "operand");
      break;
    }
    if (cmd.args.length === 0) this.errorf("empty command");
    return cmd;
  }

  private operand(): Node | undefined {
    const node = this.term();
    if (!node) return undefined;
    if (this.peek().type === "field") {
      const fields: string[] = [];
      while (this.peek().type === "field") fields.push(this.next().val.slice(1));
      switch (node.type) {
        case "field":
          return { type: "field", idents: [...node.idents, ...fields] };
        case "variable":
          return { type: "variable", idents: [...node.idents, ...fields] };
        case "bool":
        case "string":
        case "number":
        case "nil":
        case "dot":
          this.errorf("unexpected . after term " + JSON.stringify(nodeString(node)));
      }
      return { type: "chain", node, fields };
    }
    return node;
  }

  private term(): Node | undefined {
    const token = this.nextNonSpace();
    switch (token.type) {
      case "identifier": {
        const name = token.val;
        const refusal = this.opts.refusal?.(name);
        if (refusal) this.errorf(refusal);
        if (!this.opts.hasFunction(name)) this.errorf("function " + JSON.stringify(toJs(name)) + " not defined");
        return { type: "identifier", name };
      }
      case "dot":
        return { type: "dot" };
      case "nil":
        return { type: "nil" };
      case "variable": {
        const idents = token.val.split(".");
        if (!this.vars.includes(idents[0]!)) this.errorf("undefined variable " + JSON.stringify(toJs(idents[0]!)));
        return { type: "variable", idents };
      }
      case "field":
        return { type: "field", idents: [token.val.slice(1)] };
      case "bool":
        return { type: "bool", value: token.val === "true" };
      case "charConstant":
      case "complex":
      case "number":
        return newNumber(token.val, token.type);
      case "leftParen": {
        if (this.depth >= MAX_STACK_DEPTH)
          this.errorf(`max expression depth exceeded (khook allows ${MAX_STACK_DEPTH} nested parentheses)`);
        this.depth++;
        try {
          return this.pipeline("parenthesized pipeline", "rightParen");
        } finally {
          this.depth--;
        }
      }
      case "string":
      case "rawString": {
        let text: string;
        try {
          text = unquote(token.val);
        } catch {
          this.errorf("invalid syntax in string literal " + toJs(token.val));
        }
        return { type: "string", quoted: token.val, text };
      }
    }
    this.backup();
    return undefined;
  }
}
