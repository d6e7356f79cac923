/**
 * The lexer of Go's text/template, restricted to the inside of one action. The input is a Go byte
 * string (see gostring.ts); the end of input plays the role of the closing `}}`.
 */
import { decodeRune, encodeRune, toJs } from "./gostring.js";
import { isDigit, isLetter } from "./unicode.js";

type TokenType =
  | "error"
  | "bool"
  | "char" // printable ASCII grab bag (',' etc.)
  | "charConstant"
  | "complex"
  | "assign"
  | "declare"
  | "eof"
  | "field"
  | "identifier"
  | "leftParen"
  | "number"
  | "pipe"
  | "rawString"
  | "rightParen"
  | "space"
  | "string"
  | "variable"
  | "keyword" // block break continue define else end if range template with
  | "dot"
  | "nil";

export interface Token {
  type: TokenType;
  /** Go byte string */
  val: string;
  pos: number;
}

const KEYWORDS = new Set(["block", "define", "else", "end", "if", "range", "template", "with"]);

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isAlphaNumeric = (r: number): boolean => r === 0x5f || isLetter(r) || isDigit(r);

/** Go's %#U of a rune, e.g. U+0021 '!' */
function fmtU(r: number): string {
  const hex = r.toString(16).toUpperCase().padStart(4, "0");
  return "U+" + hex + (r >= 0x20 && r !== 0x7f ? " '" + String.fromCodePoint(r) + "'" : "");
}

export function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let start = 0;
  let parenDepth = 0;

  const peek = (): number => (pos < input.length ? decodeRune(input, pos)[0] : -1);
  const next = (): number => {
    if (pos >= input.length) {
      pos++;
      return -1;
    }
    const [r, size] = decodeRune(input, pos);
    pos += size;
    return r;
  };
  const backup = (r: number): void => {
    pos -= r < 0 ? 1 : encodeRune(r).length;
  };
  const emit = (type: TokenType): void => {
    tokens.push({ type, val: input.slice(start, pos), pos: start });
    start = pos;
  };
  const fail = (msg: string): Token[] => {
    tokens.push({ type: "error", val: msg, pos: start });
    return tokens;
  };
  const accept = (valid: string): boolean => {
    const r = next();
    if (r >= 0 && valid.includes(String.fromCharCode(r)) && r < 0x80) return true;
    backup(r);
    return false;
  };
  const acceptRun = (valid: string): void => {
    for (;;) {
      const r = next();
      if (!(r >= 0 && r < 0x80 && valid.includes(String.fromCharCode(r)))) {
        backup(r);
        return;
      }
    }
  };
  const atTerminator = (): boolean => {
    const r = peek();
    if (r < 0) return true;
    if (isSpace(r)) return true;
    return r === 0x2e || r === 0x2c || r === 0x7c || r === 0x3a || r === 0x29 || r === 0x28;
  };
  const scanNumber = (): boolean => {
    accept("+-");
    let digits = "0123456789_";
    if (accept("0")) {
      if (accept("xX")) digits = "0123456789abcdefABCDEF_";
      else if (accept("oO")) digits = "01234567_";
      else if (accept("bB")) digits = "01_";
    }
    acceptRun(digits);
    if (accept(".")) acceptRun(digits);
    if (digits.length === 11 && accept("eE")) {
      accept("+-");
      acceptRun("0123456789_");
    }
    if (digits.length === 23 && accept("pP")) {
      accept("+-");
      acceptRun("0123456789_");
    }
    accept("i");
    if (isAlphaNumeric(peek())) {
      next();
      return false;
    }
    return true;
  };
  const goQuote = (s: string): string => JSON.stringify(toJs(s));

  for (;;) {
    if (pos >= input.length) {
      if (parenDepth > 0) return fail("unclosed left paren");
      start = pos;
      emit("eof");
      return tokens;
    }
    const r = next();
    if (isSpace(r)) {
      while (isSpace(peek())) next();
      emit("space");
      continue;
    }
    switch (r) {
      case 0x3d: // =
        emit("assign");
        continue;
      case 0x3a: // :
        if (next() !== 0x3d) return fail("expected :=");
        emit("declare");
        continue;
      case 0x7c:
        emit("pipe");
        continue;
      case 0x22: {
        // "
        for (;;) {
          const c = next();
          if (c === 0x5c) {
            const e = next();
            if (e >= 0 && e !== 0x0a) continue;
            return fail("unterminated quoted string");
          }
          if (c < 0 || c === 0x0a) return fail("unterminated quoted string");
          if (c === 0x22) break;
        }
        emit("string");
        continue;
      }
      case 0x60: {
        // `
        for (;;) {
          const c = next();
          if (c < 0) return fail("unterminated raw quoted string");
          if (c === 0x60) break;
        }
        emit("rawString");
        continue;
      }
      case 0x24: {
        // $
        if (atTerminator()) {
          emit("variable");
          continue;
        }
        let c: number;
        for (;;) {
          c = next();
          if (!isAlphaNumeric(c)) {
            backup(c);
            break;
          }
        }
        if (!atTerminator()) return fail("bad character " + fmtU(c));
        emit("variable");
        continue;
      }
      case 0x27: {
        // '
        for (;;) {
          const c = next();
          if (c === 0x5c) {
            const e = next();
            if (e >= 0 && e !== 0x0a) continue;
            return fail("unterminated character constant");
          }
          if (c < 0 || c === 0x0a) return fail("unterminated character constant");
          if (c === 0x27) break;
        }
        emit("charConstant");
        continue;
      }
      case 0x28:
        parenDepth++;
        emit("leftParen");
        continue;
      case 0x29:
        parenDepth--;
        if (parenDepth < 0) return fail("unexpected right paren");
        emit("rightParen");
        continue;
    }
    if (r === 0x2e) {
      const n = pos < input.length ? input.charCodeAt(pos) : -1;
      if (n < 0x30 || n > 0x39) {
        // field or dot
        if (atTerminator()) {
          emit("dot");
          continue;
        }
        let c: number;
        for (;;) {
          c = next();
          if (!isAlphaNumeric(c)) {
            backup(c);
            break;
          }
        }
        if (!atTerminator()) return fail("bad character " + fmtU(c));
        emit("field");
        continue;
      }
    }
    if (r === 0x2e || r === 0x2b || r === 0x2d || (r >= 0x30 && r <= 0x39)) {
      backup(r);
      if (!scanNumber()) return fail("bad number syntax: " + goQuote(input.slice(start, pos)));
      const sign = peek();
      if (sign === 0x2b || sign === 0x2d) {
        if (!scanNumber() || input.charCodeAt(pos - 1) !== 0x69)
          return fail("bad number syntax: " + goQuote(input.slice(start, pos)));
        emit("complex");
      } else emit("number");
      continue;
    }
    if (isAlphaNumeric(r)) {
      let c: number;
      for (;;) {
        c = next();
        if (!isAlphaNumeric(c)) {
          backup(c);
          break;
        }
      }
      const word = input.slice(start, pos);
      if (!atTerminator()) return fail("bad character " + fmtU(c));
      if (KEYWORDS.has(word)) emit("keyword");
      else if (word === "nil") emit("nil");
      else if (word === "true" || word === "false") emit("bool");
      else emit("identifier");
      continue;
    }
    if (r === 0x7d) {
      // `}` ends a Go action; khook pipelines cannot contain it.
      return fail('unexpected "}" in pipeline (a pipeline cannot contain })');
    }
    if (r >= 0x20 && r < 0x7f) {
      emit("char");
      continue;
    }
    return fail("unrecognized character in action: " + fmtU(r));
  }
}

/** Go's item.String() for messages. */
export function tokenString(t: Token): string {
  switch (t.type) {
    case "eof":
      return "EOF";
    case "error":
      return t.val;
    case "keyword":
    case "dot":
    case "nil":
      return "<" + toJs(t.val) + ">";
  }
  const v = toJs(t.val);
  if ([...v].length > 10) return JSON.stringify([...v].slice(0, 10).join("")) + "...";
  return JSON.stringify(v);
}
