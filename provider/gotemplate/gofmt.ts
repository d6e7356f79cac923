/**
 * A port of Go's fmt printing (Sprint, Sprintln, Sprintf) over the Go value model.
 * Strings in and out are Go byte strings (see gostring.ts).
 */
import { decodeRune, encodeRune, RUNE_ERROR, runeCount } from "./gostring.js";
import { canBackquote, formatFloat, quote, quoteRune } from "./strconv.js";
import { isPrint } from "./unicode.js";
import { GoComplex, GoInt, GoMap, GoPtr, GoSlice, GoStruct, type GoValue, typeOf, typeString } from "./values.js";

const ldigits = "0123456789abcdefx";
const udigits = "0123456789ABCDEFX";

interface Flags {
  widPresent: boolean;
  precPresent: boolean;
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  plusV: boolean;
  sharpV: boolean;
  wid: number;
  prec: number;
}

function clearFlags(): Flags {
  return {
    widPresent: false,
    precPresent: false,
    minus: false,
    plus: false,
    sharp: false,
    space: false,
    zero: false,
    plusV: false,
    sharpV: false,
    wid: 0,
    prec: 0,
  };
}

const UNSET = Symbol("unset");

/** Does the value have a String() method (fmt.Stringer)? */
export function stringerOf(v: GoValue): ((...a: never[]) => string) | undefined {
  if (v instanceof GoStruct && v.type.stringer) {
    const f = v.type.stringer;
    return () => f(v);
  }
  if (v instanceof GoPtr && v.type.elem?.stringer) {
    const f = v.type.elem.stringer;
    const e = v.elem;
    if (e === null) return () => "<nil>"; // Go: the String call panics on a nil pointer; fmt prints <nil>
    return () => f(e);
  }
  return undefined;
}

class Printer {
  buf = "";
  f: Flags = clearFlags();
  arg: GoValue | typeof UNSET = UNSET;
  value: GoValue | typeof UNSET = UNSET;
  erroring = false;
  reordered = false;
  goodArgNum = true;

  // ---- fmt.fmt -----------------------------------------------------------------------------

  writePadding(n: number): void {
    if (n <= 0) return;
    const padByte = this.f.zero && !this.f.minus ? "0" : " ";
    this.buf += padByte.repeat(n);
  }

  pad(s: string): void {
    if (!this.f.widPresent || this.f.wid === 0) {
      this.buf += s;
      return;
    }
    const width = this.f.wid - runeCount(s);
    if (!this.f.minus) {
      this.writePadding(width);
      this.buf += s;
    } else {
      this.buf += s;
      this.writePadding(width);
    }
  }

  fmtBoolean(v: boolean): void {
    this.pad(v ? "true" : "false");
  }

  fmtUnicode(u: bigint): void {
    let prec = 4;
    if (this.f.precPresent && this.f.prec > 4) prec = this.f.prec;
    let out = "";
    if (this.f.sharp && u <= 0x10ffffn && isPrint(Number(u))) {
      out = " '" + encodeRune(Number(u)) + "'";
    }
    let hex = u.toString(16).toUpperCase();
    if (hex.length < prec) hex = "0".repeat(prec - hex.length) + hex;
    out = "U+" + hex + out;
    const oldZero = this.f.zero;
    this.f.zero = false;
    this.pad(out);
    this.f.zero = oldZero;
  }

  fmtInteger(u: bigint, base: number, isSigned: boolean, verb: string, digits: string): void {
    // u is the two's-complement uint64 bit pattern
    const negative = isSigned && BigInt.asIntN(64, u) < 0n;
    if (negative) u = BigInt.asUintN(64, -BigInt.asIntN(64, u));
    let prec = 0;
    if (this.f.precPresent) {
      prec = this.f.prec;
      if (prec === 0 && u === 0n) {
        const oldZero = this.f.zero;
        this.f.zero = false;
        this.writePadding(this.f.wid);
        this.f.zero = oldZero;
        return;
      }
    } else if (this.f.zero && !this.f.minus && this.f.widPresent) {
      prec = this.f.wid;
      if (negative || this.f.plus || this.f.space) prec--;
    }
    let s = u.toString(base);
    if (base === 16) s = [...s].map((c) => digits[parseInt(c, 16)]).join("");
    while (s.length < prec) s = "0" + s;
    if (this.f.sharp) {
      switch (base) {
        case 2:
          s = "0b" + s;
          break;
        case 8:
          if (s[0] !== "0") s = "0" + s;
          break;
        case 16:
          s = "0" + digits[16] + s;
          break;
      }
    }
    if (verb === "O") s = "0o" + s;
    if (negative) s = "-" + s;
    else if (this.f.plus) s = "+" + s;
    else if (this.f.space) s = " " + s;
    const oldZero = this.f.zero;
    this.f.zero = false;
    this.pad(s);
    this.f.zero = oldZero;
  }

  truncateString(s: string): string {
    if (this.f.precPresent) {
      let n = this.f.prec;
      for (let i = 0; i < s.length;) {
        n--;
        if (n < 0) return s.slice(0, i);
        i += decodeRune(s, i)[1];
      }
    }
    return s;
  }

  fmtS(s: string): void {
    this.pad(this.truncateString(s));
  }

  fmtSx(s: string, digits: string): void {
    let length = s.length;
    if (this.f.precPresent && this.f.prec < length) length = this.f.prec;
    let width = 2 * length;
    if (width > 0) {
      if (this.f.space) {
        if (this.f.sharp) width *= 2;
        width += length - 1;
      } else if (this.f.sharp) width += 2;
    } else {
      if (this.f.widPresent) this.writePadding(this.f.wid);
      return;
    }
    if (this.f.widPresent && this.f.wid > width && !this.f.minus) this.writePadding(this.f.wid - width);
    let out = "";
    if (this.f.sharp) out += "0" + digits[16];
    for (let i = 0; i < length; i++) {
      if (this.f.space && i > 0) {
        out += " ";
        if (this.f.sharp) out += "0" + digits[16];
      }
      const c = s.charCodeAt(i);
      out += digits[c >> 4]! + digits[c & 0xf]!;
    }
    this.buf += out;
    if (this.f.widPresent && this.f.wid > width && this.f.minus) this.writePadding(this.f.wid - width);
  }

  fmtQ(s: string): void {
    s = this.truncateString(s);
    if (this.f.sharp && canBackquote(s)) {
      this.pad("`" + s + "`");
      return;
    }
    this.pad(quote(s, this.f.plus));
  }

  fmtC(c: bigint): void {
    const r = c > 0x10ffffn ? RUNE_ERROR : Number(c);
    this.pad(encodeRune(r));
  }

  fmtQc(c: bigint): void {
    const r = c > 0x10ffffn ? RUNE_ERROR : Number(c);
    this.pad(quoteRune(r, this.f.plus));
  }

  fmtFloatF(v: number, verb: string, prec: number): void {
    if (this.f.precPresent) prec = this.f.prec;
    let num = formatFloat(v, verb, prec);
    if (num[0] === "-" || num[0] === "+") {
      // keep
    } else num = "+" + num;
    if (this.f.space && num[0] === "+" && !this.f.plus) num = " " + num.slice(1);
    if (num[1] === "I" || num[1] === "N") {
      const oldZero = this.f.zero;
      this.f.zero = false;
      if (num[1] === "N" && !this.f.space && !this.f.plus) num = num.slice(1);
      this.pad(num);
      this.f.zero = oldZero;
      return;
    }
    if (this.f.sharp && verb !== "b") {
      let digits = 0;
      switch (verb) {
        case "v":
        case "g":
        case "G":
        case "x":
          digits = prec;
          if (digits === -1) digits = 6;
      }
      let tail = "";
      let hasDecimalPoint = false;
      let sawNonzeroDigit = false;
      for (let i = 1; i < num.length; i++) {
        const c = num[i]!;
        if (c === ".") {
          hasDecimalPoint = true;
          continue;
        }
        if (c === "p" || c === "P") {
          tail = num.slice(i);
          num = num.slice(0, i);
          break;
        }
        if ((c === "e" || c === "E") && verb !== "x" && verb !== "X") {
          tail = num.slice(i);
          num = num.slice(0, i);
          break;
        }
        if (c !== "0") sawNonzeroDigit = true;
        if (sawNonzeroDigit) digits--;
      }
      if (!hasDecimalPoint) {
        if (num.length === 2 && num[1] === "0") digits--;
        num += ".";
      }
      while (digits > 0) {
        num += "0";
        digits--;
      }
      num += tail;
    }
    if (this.f.plus || num[0] !== "+") {
      if (this.f.zero && !this.f.minus && this.f.widPresent && this.f.wid > num.length) {
        this.buf += num[0];
        this.writePadding(this.f.wid - num.length);
        this.buf += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  // ---- fmt.pp ------------------------------------------------------------------------------

  badVerb(verb: string): void {
    this.erroring = true;
    this.buf += "%!" + verb + "(";
    if (this.arg !== UNSET && this.arg !== null) {
      this.buf += typeString(this.arg) + "=";
      this.printArg(this.arg, "v");
    } else if (this.value !== UNSET && this.value !== null) {
      this.buf += typeString(this.value) + "=";
      this.printValue(this.value, "v", 0);
    } else {
      this.buf += "<nil>";
    }
    this.buf += ")";
    this.erroring = false;
  }

  fmtBool(v: boolean, verb: string): void {
    if (verb === "t" || verb === "v") this.fmtBoolean(v);
    else this.badVerb(verb);
  }

  fmt0x64(v: bigint, leading0x: boolean): void {
    const sharp = this.f.sharp;
    this.f.sharp = leading0x;
    this.fmtInteger(v, 16, false, "v", ldigits);
    this.f.sharp = sharp;
  }

  fmtIntegerV(v: GoInt, verb: string): void {
    const u = BigInt.asUintN(64, v.v);
    const signed = v.signed;
    switch (verb) {
      case "v":
        if (this.f.sharpV && !signed) this.fmt0x64(u, true);
        else this.fmtInteger(u, 10, signed, verb, ldigits);
        return;
      case "d":
        return this.fmtInteger(u, 10, signed, verb, ldigits);
      case "b":
        return this.fmtInteger(u, 2, signed, verb, ldigits);
      case "o":
      case "O":
        return this.fmtInteger(u, 8, signed, verb, ldigits);
      case "x":
        return this.fmtInteger(u, 16, signed, verb, ldigits);
      case "X":
        return this.fmtInteger(u, 16, signed, verb, udigits);
      case "c":
        return this.fmtC(u);
      case "q":
        return this.fmtQc(u);
      case "U":
        return this.fmtUnicode(u);
    }
    this.badVerb(verb);
  }

  fmtFloat(v: number, verb: string): void {
    switch (verb) {
      case "v":
        return this.fmtFloatF(v, "g", -1);
      case "b":
      case "g":
      case "G":
      case "x":
      case "X":
        return this.fmtFloatF(v, verb, -1);
      case "f":
      case "e":
      case "E":
        return this.fmtFloatF(v, verb, 6);
      case "F":
        return this.fmtFloatF(v, "f", 6);
    }
    this.badVerb(verb);
  }

  fmtComplex(v: GoComplex, verb: string): void {
    switch (verb) {
      case "v":
      case "b":
      case "g":
      case "G":
      case "x":
      case "X":
      case "f":
      case "F":
      case "e":
      case "E": {
        const oldPlus = this.f.plus;
        this.buf += "(";
        this.fmtFloat(v.re, verb);
        this.f.plus = true;
        this.fmtFloat(v.im, verb);
        this.buf += "i)";
        this.f.plus = oldPlus;
        return;
      }
    }
    this.badVerb(verb);
  }

  fmtString(v: string, verb: string): void {
    switch (verb) {
      case "v":
        if (this.f.sharpV) this.fmtQ(v);
        else this.fmtS(v);
        return;
      case "s":
        return this.fmtS(v);
      case "x":
        return this.fmtSx(v, ldigits);
      case "X":
        return this.fmtSx(v, udigits);
      case "q":
        return this.fmtQ(v);
    }
    this.badVerb(verb);
  }

  fmtPointer(v: GoValue, verb: string): void {
    // Addresses are not deterministic in Go; khook prints a stable placeholder address.
    let u = 0n;
    if (v instanceof GoPtr || v instanceof GoSlice || v instanceof GoMap) {
      u = (v instanceof GoPtr ? v.elem === null : v.isNil) ? 0n : 0xc000010000n;
    } else {
      this.badVerb(verb);
      return;
    }
    switch (verb) {
      case "v":
        if (this.f.sharpV) {
          this.buf += "(" + typeString(v) + ")(";
          if (u === 0n) this.buf += "nil";
          else this.fmt0x64(u, true);
          this.buf += ")";
        } else if (u === 0n) this.pad("<nil>");
        else this.fmt0x64(u, !this.f.sharp);
        return;
      case "p":
        return this.fmt0x64(u, !this.f.sharp);
      case "b":
      case "o":
      case "d":
      case "x":
      case "X":
        return this.fmtIntegerV(new GoInt({ kind: "uintptr", str: "uintptr" }, u), verb);
    }
    this.badVerb(verb);
  }

  handleMethods(arg: GoValue, verb: string): boolean {
    if (this.erroring) return false;
    if (this.f.sharpV) return false;
    switch (verb) {
      case "v":
      case "s":
      case "x":
      case "X":
      case "q": {
        const s = stringerOf(arg);
        if (s) {
          this.fmtString(s(), verb);
          return true;
        }
      }
    }
    return false;
  }

  printArg(arg: GoValue, verb: string): void {
    this.arg = arg;
    this.value = UNSET;
    if (arg === null) {
      if (verb === "T" || verb === "v") this.pad("<nil>");
      else this.badVerb(verb);
      return;
    }
    if (verb === "T") {
      this.fmtS(typeString(arg));
      return;
    }
    if (verb === "p") {
      this.fmtPointer(arg, "p");
      return;
    }
    if (typeof arg === "boolean") return this.fmtBool(arg, verb);
    if (typeof arg === "number") return this.fmtFloat(arg, verb);
    if (typeof arg === "string") return this.fmtString(arg, verb);
    if (arg instanceof GoInt) return this.fmtIntegerV(arg, verb);
    if (arg instanceof GoComplex) return this.fmtComplex(arg, verb);
    if (!this.handleMethods(arg, verb)) this.printValue(arg, verb, 0);
  }

  /** Prints an element stored in a container of element type `elemIsInterface`. */
  printElem(v: GoValue, isInterface: boolean, verb: string, depth: number): void {
    if (isInterface) {
      if (v === null) {
        this.buf += this.f.sharpV ? "interface {}(nil)" : "<nil>";
        return;
      }
      this.printValue(v, verb, depth + 1);
      return;
    }
    this.printValue(v, verb, depth);
  }

  printValue(value: GoValue, verb: string, depth: number): void {
    if (depth > 0 && value !== null) {
      this.arg = value;
      if (this.handleMethods(value, verb)) return;
    }
    this.arg = UNSET;
    this.value = value;
    if (value === null) {
      if (depth === 0) this.fmtS("<invalid reflect.Value>");
      else if (verb === "v") this.fmtS("<nil>");
      else this.badVerb(verb);
      return;
    }
    if (typeof value === "boolean") return this.fmtBool(value, verb);
    if (typeof value === "number") return this.fmtFloat(value, verb);
    if (typeof value === "string") return this.fmtString(value, verb);
    if (value instanceof GoInt) return this.fmtIntegerV(value, verb);
    if (value instanceof GoComplex) return this.fmtComplex(value, verb);
    if (value instanceof GoMap) {
      const elemIface = value.type.elem?.kind === "interface";
      if (this.f.sharpV) {
        this.buf += value.type.str;
        if (value.isNil) {
          this.buf += "(nil)";
          return;
        }
        this.buf += "{";
      } else this.buf += "map[";
      const keys = [...value.m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      keys.forEach((k, i) => {
        if (i > 0) this.buf += this.f.sharpV ? ", " : " ";
        this.printValue(k, verb, depth + 1);
        this.buf += ":";
        this.printElem(value.m.get(k) ?? null, elemIface, verb, depth + 1);
      });
      this.buf += this.f.sharpV ? "}" : "]";
      return;
    }
    if (value instanceof GoStruct) {
      if (this.f.sharpV) this.buf += value.type.str;
      this.buf += "{";
      const fields = value.type.fields ?? [];
      value.fields.forEach((fv, i) => {
        if (i > 0) this.buf += this.f.sharpV ? ", " : " ";
        if (this.f.plusV || this.f.sharpV) this.buf += (fields[i]?.name ?? "") + ":";
        this.printElem(fv, fields[i]?.type.kind === "interface", verb, depth + 1);
      });
      this.buf += "}";
      return;
    }
    if (value instanceof GoSlice) {
      const elemIface = value.type.elem?.kind === "interface";
      if (this.f.sharpV) {
        this.buf += value.type.str;
        if (value.isNil) {
          this.buf += "(nil)";
          return;
        }
        this.buf += "{";
        value.items.forEach((x, i) => {
          if (i > 0) this.buf += ", ";
          this.printElem(x, elemIface, verb, depth + 1);
        });
        this.buf += "}";
      } else {
        this.buf += "[";
        value.items.forEach((x, i) => {
          if (i > 0) this.buf += " ";
          this.printElem(x, elemIface, verb, depth + 1);
        });
        this.buf += "]";
      }
      return;
    }
    if (value instanceof GoPtr) {
      if (depth === 0 && value.elem !== null) {
        this.buf += "&";
        this.printValue(value.elem, verb, depth + 1);
        return;
      }
      this.fmtPointer(value, verb);
      return;
    }
  }

  // ---- entry points --------------------------------------------------------------------------

  doPrint(a: GoValue[]): void {
    let prevString = false;
    a.forEach((arg, argNum) => {
      const isString = arg !== null && typeOf(arg)?.kind === "string";
      if (argNum > 0 && !isString && !prevString) this.buf += " ";
      this.f = clearFlags();
      this.printArg(arg, "v");
      prevString = isString;
    });
  }

  doPrintln(a: GoValue[]): void {
    a.forEach((arg, argNum) => {
      if (argNum > 0) this.buf += " ";
      this.f = clearFlags();
      this.printArg(arg, "v");
    });
    this.buf += "\n";
  }

  argNumber(argNum: number, format: string, i: number, numArgs: number): [number, number, boolean] {
    if (format.length <= i || format[i] !== "[") return [argNum, i, false];
    this.reordered = true;
    const [index, wid, ok] = parseArgNumber(format.slice(i));
    if (ok && 0 <= index && index < numArgs) return [index, i + wid, true];
    this.goodArgNum = false;
    return [argNum, i + wid, ok];
  }

  doPrintf(format: string, a: GoValue[]): void {
    const end = format.length;
    let argNum = 0;
    let afterIndex = false;
    this.reordered = false;
    formatLoop: for (let i = 0; i < end;) {
      this.goodArgNum = true;
      const lasti = i;
      while (i < end && format[i] !== "%") i++;
      if (i > lasti) this.buf += format.slice(lasti, i);
      if (i >= end) break;
      i++;
      this.f = clearFlags();
      simple: for (; i < end; i++) {
        const c = format[i]!;
        switch (c) {
          case "#":
            this.f.sharp = true;
            break;
          case "0":
            this.f.zero = true;
            break;
          case "+":
            this.f.plus = true;
            break;
          case "-":
            this.f.minus = true;
            break;
          case " ":
            this.f.space = true;
            break;
          default:
            if (c >= "a" && c <= "z" && argNum < a.length) {
              if (c === "v" || c === "w") {
                this.f.sharpV = this.f.sharp;
                this.f.sharp = false;
                this.f.plusV = this.f.plus;
                this.f.plus = false;
              }
              if (c === "w") {
                // %w outside Errorf is a bad verb
                this.arg = a[argNum] ?? null;
                this.value = UNSET;
                this.badVerb("w");
              } else this.printArg(a[argNum] ?? null, c);
              argNum++;
              i++;
              continue formatLoop;
            }
            break simple;
        }
      }
      [argNum, i, afterIndex] = this.argNumber(argNum, format, i, a.length);
      if (i < end && format[i] === "*") {
        i++;
        [this.f.wid, this.f.widPresent, argNum] = intFromArg(a, argNum);
        if (!this.f.widPresent) this.buf += "%!(BADWIDTH)";
        if (this.f.wid < 0) {
          this.f.wid = -this.f.wid;
          this.f.minus = true;
          this.f.zero = false;
        }
        afterIndex = false;
      } else {
        [this.f.wid, this.f.widPresent, i] = parsenum(format, i, end);
        if (afterIndex && this.f.widPresent) this.goodArgNum = false;
      }
      if (i + 1 < end && format[i] === ".") {
        i++;
        if (afterIndex) this.goodArgNum = false;
        [argNum, i, afterIndex] = this.argNumber(argNum, format, i, a.length);
        if (i < end && format[i] === "*") {
          i++;
          [this.f.prec, this.f.precPresent, argNum] = intFromArg(a, argNum);
          if (this.f.prec < 0) {
            this.f.prec = 0;
            this.f.precPresent = false;
          }
          if (!this.f.precPresent) this.buf += "%!(BADPREC)";
          afterIndex = false;
        } else {
          [this.f.prec, this.f.precPresent, i] = parsenum(format, i, end);
          if (!this.f.precPresent) {
            this.f.prec = 0;
            this.f.precPresent = true;
          }
        }
      }
      if (!afterIndex) [argNum, i, afterIndex] = this.argNumber(argNum, format, i, a.length);
      if (i >= end) {
        this.buf += "%!(NOVERB)";
        break;
      }
      const [r, size] = decodeRune(format, i);
      const verb = encodeRune(r);
      i += size;
      if (verb === "%") {
        this.buf += "%";
      } else if (!this.goodArgNum) {
        this.buf += "%!" + verb + "(BADINDEX)";
      } else if (argNum >= a.length) {
        this.buf += "%!" + verb + "(MISSING)";
      } else {
        if (verb === "v" || verb === "w") {
          this.f.sharpV = this.f.sharp;
          this.f.sharp = false;
          this.f.plusV = this.f.plus;
          this.f.plus = false;
        }
        if (verb === "w") {
          this.arg = a[argNum] ?? null;
          this.value = UNSET;
          this.badVerb("w");
        } else this.printArg(a[argNum] ?? null, verb);
        argNum++;
      }
    }
    if (!this.reordered && argNum < a.length) {
      this.f = clearFlags();
      this.buf += "%!(EXTRA ";
      a.slice(argNum).forEach((arg, i) => {
        if (i > 0) this.buf += ", ";
        if (arg === null) this.buf += "<nil>";
        else {
          this.buf += typeString(arg) + "=";
          this.printArg(arg, "v");
        }
      });
      this.buf += ")";
    }
  }
}

function tooLarge(x: number): boolean {
  return x > 1e6 || x < -1e6;
}

function parsenum(s: string, start: number, end: number): [number, boolean, number] {
  if (start >= end) return [0, false, end];
  let num = 0;
  let isnum = false;
  let newi = start;
  for (; newi < end && s[newi]! >= "0" && s[newi]! <= "9"; newi++) {
    if (tooLarge(num)) return [0, false, end];
    num = num * 10 + (s.charCodeAt(newi) - 0x30);
    isnum = true;
  }
  return [num, isnum, newi];
}

function parseArgNumber(format: string): [number, number, boolean] {
  if (format.length < 3) return [0, 1, false];
  for (let i = 1; i < format.length; i++) {
    if (format[i] === "]") {
      const [width, ok, newi] = parsenum(format, 1, i);
      if (!ok || newi !== i) return [0, i + 1, false];
      return [width - 1, i + 1, true];
    }
  }
  return [0, 1, false];
}

function intFromArg(a: GoValue[], argNum: number): [number, boolean, number] {
  let num = 0;
  let isInt = false;
  let newArgNum = argNum;
  if (argNum < a.length) {
    const v = a[argNum];
    if (v instanceof GoInt) {
      if (v.signed || v.v <= 0x7fffffffffffffffn) {
        num = Number(v.v);
        isInt = true;
      }
    }
    newArgNum = argNum + 1;
    if (tooLarge(num)) {
      num = 0;
      isInt = false;
    }
  }
  return [num, isInt, newArgNum];
}

/** fmt.Sprint */
export function sprint(a: GoValue[]): string {
  const p = new Printer();
  p.doPrint(a);
  return p.buf;
}

/** fmt.Sprintln */
export function sprintln(a: GoValue[]): string {
  const p = new Printer();
  p.doPrintln(a);
  return p.buf;
}

/** fmt.Sprintf */
export function sprintf(format: string, a: GoValue[]): string {
  const p = new Printer();
  p.doPrintf(format, a);
  return p.buf;
}

/** fmt.Sprintf("%v", v) */
export function sprintV(v: GoValue): string {
  const p = new Printer();
  p.printArg(v, "v");
  return p.buf;
}
