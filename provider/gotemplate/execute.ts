/**
 * The execution half of text/template for one action: evaluation of pipelines, commands, arguments
 * (with Go's typing of constants and its type checks), fields/methods, variables and the final
 * rendering (printValue).
 */
import { PipelineError } from "./template-error.js";
import { sprint } from "./gofmt.js";
import { toJs } from "./gostring.js";
import { type CommandNode, type Node, nodeString, type NumberNode, type PipeNode } from "./parser.js";
import { truth } from "./conv.js";
import {
  canBeNil,
  ExecError,
  type FuncDef,
  GoCallError,
  GoComplex,
  GoInt,
  GoMap,
  GoPtr,
  GoStruct,
  type GoType,
  type GoValue,
  INT_KINDS,
  intOfType,
  T_ANY,
  T_INT,
  typeOf,
  UINT_KINDS,
  zeroOf,
} from "./values.js";

const MISSING = Symbol("missing");
type Final = GoValue | typeof MISSING;

interface FuncLookup {
  (name: string): FuncDef | undefined;
}

function errorf(msg: string): never {
  throw new ExecError(msg);
}

/** Does evaluating this node depend on the value (dot or a variable)? Used to keep values out of messages. */
function dependsOnValue(n: Node): boolean {
  switch (n.type) {
    case "dot":
    case "field":
    case "variable":
      return true;
    case "chain":
      return dependsOnValue(n.node);
    case "pipe":
      return n.cmds.some((c) => c.args.some(dependsOnValue));
  }
  return false;
}

function isHexInt(s: string): boolean {
  return s.length > 2 && s[0] === "0" && (s[1] === "x" || s[1] === "X") && !/[pP]/.test(s);
}

export class State {
  private readonly vars: { name: string; value: GoValue }[];

  constructor(
    private readonly funcs: FuncLookup,
    dot: GoValue,
  ) {
    this.vars = [{ name: "$", value: dot }];
  }

  private varValue(name: string): GoValue {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    errorf("undefined variable: " + toJs(name));
  }

  private setVar(name: string, value: GoValue): void {
    for (let i = this.vars.length - 1; i >= 0; i--)
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    errorf("undefined variable: " + toJs(name));
  }

  evalPipeline(dot: GoValue, pipe: PipeNode, topLevel = false): GoValue {
    let value: Final = MISSING;
    let tainted = false;
    pipe.cmds.forEach((cmd, i) => {
      value = this.evalCommand(dot, cmd, value, tainted);
      tainted = tainted || cmd.args.some(dependsOnValue) || (topLevel && i === 0);
    });
    const v = value === MISSING ? null : (value as GoValue);
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, v);
      else this.vars.push({ name, value: v });
    }
    return v;
  }

  private notAFunction(args: Node[] | null, final: Final): void {
    if ((args && args.length > 1) || final !== MISSING) {
      errorf("can't give argument to non-function " + nodeString(args![0]!));
    }
  }

  private evalCommand(dot: GoValue, cmd: CommandNode, final: Final, finalTainted: boolean): GoValue {
    const first = cmd.args[0]!;
    switch (first.type) {
      case "field":
        return this.evalFieldChain(dot, dot, first, first.idents, cmd.args, final);
      case "chain":
        return this.evalChainNode(dot, first, cmd.args, final);
      case "identifier":
        return this.evalFunction(dot, first.name, cmd.args, final, finalTainted);
      case "pipe":
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case "variable":
        return this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case "bool":
        return first.value;
      case "dot":
        return dot;
      case "nil":
        errorf("nil is not a command");
      case "number":
        return this.idealConstant(first);
      case "string":
        return first.text;
    }
  }

  private idealConstant(c: NumberNode): GoValue {
    if (c.isComplex) return new GoComplex(c.complex[0], c.complex[1]);
    if (c.isFloat && !isHexInt(c.text) && c.text[0] !== "'" && /[.eEpP]/.test(c.text)) return c.float64;
    if (c.isInt) return new GoInt(T_INT, c.int64);
    if (c.isUint) errorf(toJs(c.text) + " overflows int");
    return null;
  }

  private evalChainNode(
    dot: GoValue,
    chain: Extract<Node, { type: "chain" }>,
    args: Node[] | null,
    final: Final,
  ): GoValue {
    if (chain.node.type === "nil") errorf("indirection through explicit nil in " + nodeString(chain));
    const pipe = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(dot, pipe, chain, chain.fields, args, final);
  }

  private evalVariableNode(
    dot: GoValue,
    v: Extract<Node, { type: "variable" }>,
    args: Node[] | null,
    final: Final,
  ): GoValue {
    const value = this.varValue(v.idents[0]!);
    if (v.idents.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(dot, value, v, v.idents.slice(1), args, final);
  }

  private evalFieldChain(
    dot: GoValue,
    receiver: GoValue,
    _node: Node,
    idents: string[],
    args: Node[] | null,
    final: Final,
  ): GoValue {
    const n = idents.length;
    for (let i = 0; i < n - 1; i++) receiver = this.evalField(dot, idents[i]!, null, MISSING, receiver);
    return this.evalField(dot, idents[n - 1]!, args, final, receiver);
  }

  private evalField(dot: GoValue, fieldName: string, args: Node[] | null, final: Final, receiver: GoValue): GoValue {
    if (receiver === null) return null;
    const typ = typeOf(receiver)!;
    let isNil = false;
    let addressable = false;
    let recv: GoValue = receiver;
    if (recv instanceof GoPtr) {
      if (recv.elem === null) isNil = true;
      else {
        recv = recv.elem;
        addressable = true;
      }
    }
    const name = toJs(fieldName);
    // methods
    const structType = recv instanceof GoStruct ? recv.type : recv instanceof GoPtr ? recv.type.elem : undefined;
    const method = structType?.methods?.get(name);
    if (method && (!method.ptr || addressable || isNil)) {
      if (isNil) errorf("nil pointer evaluating " + typ.str + "." + name);
      const target = recv as GoStruct;
      const m: FuncDef = { params: method.params, impl: (a) => method.impl(target, a) };
      return this.evalCall(dot, m, name, args, final, false);
    }
    const hasArgs = (args !== null && args.length > 1) || final !== MISSING;
    if (recv instanceof GoStruct) {
      const idx = recv.type.fields?.findIndex((f) => f.name === name) ?? -1;
      if (idx >= 0) {
        if (!/^\p{Lu}/u.test(name)) errorf(name + " is an unexported field of struct type " + typ.str);
        if (hasArgs) errorf(name + " has arguments but cannot be invoked as function");
        return recv.fields[idx] ?? null;
      }
    } else if (recv instanceof GoMap) {
      if (hasArgs) errorf(name + " is not a method but has arguments");
      return recv.m.has(fieldName) ? (recv.m.get(fieldName) ?? null) : null;
    } else if (recv instanceof GoPtr && isNil) {
      const et = recv.type.elem;
      if (et?.fields?.some((f) => f.name === name)) errorf("nil pointer evaluating " + typ.str + "." + name);
    }
    errorf("can't evaluate field " + name + " in type " + typ.str);
  }

  private evalFunction(dot: GoValue, name: string, args: Node[] | null, final: Final, finalTainted: boolean): GoValue {
    const fn = this.funcs(name);
    if (!fn) errorf(JSON.stringify(toJs(name)) + " is not a defined function");
    if (name === "fail" && !fn.builtin) {
      const tainted = (final !== MISSING && finalTainted) || (args ?? []).slice(1).some(dependsOnValue);
      return this.evalCall(dot, fn, name, args, final, tainted);
    }
    return this.evalCall(dot, fn, name, args, final, false);
  }

  private evalCall(
    dot: GoValue,
    fn: FuncDef,
    name: string,
    argNodes: Node[] | null,
    final: Final,
    messageTainted: boolean,
  ): GoValue {
    const args = argNodes ? argNodes.slice(1) : [];
    const numIn = args.length + (final !== MISSING ? 1 : 0);
    const typNumIn = fn.params.length + (fn.variadic ? 1 : 0);
    let numFixed = args.length;
    if (fn.variadic) {
      numFixed = fn.params.length;
      if (numIn < numFixed)
        errorf(`wrong number of args for ${toJs(name)}: want at least ${fn.params.length} got ${args.length}`);
    } else if (numIn !== fn.params.length) {
      errorf(`wrong number of args for ${toJs(name)}: want ${typNumIn} got ${numIn}`);
    }

    if (fn.builtin && (name === "and" || name === "or")) {
      let v: GoValue = null;
      const argType = fn.params[0]!;
      for (const arg of args) {
        v = this.evalArg(dot, argType, arg);
        if (truth(v) === (name === "or")) return v;
      }
      if (final !== MISSING) v = this.validateType(final, argType);
      return v;
    }

    const argv: GoValue[] = [];
    let i = 0;
    for (; i < numFixed && i < args.length; i++) argv.push(this.evalArg(dot, fn.params[i]!, args[i]!));
    if (fn.variadic) for (; i < args.length; i++) argv.push(this.evalArg(dot, fn.variadic, args[i]!));
    if (final !== MISSING) {
      let t: GoType;
      if (fn.variadic) t = numIn - 1 < numFixed ? fn.params[numIn - 1]! : fn.variadic;
      else t = fn.params[fn.params.length - 1]!;
      argv.push(this.validateType(final, t));
    }
    try {
      return fn.impl(argv);
    } catch (e) {
      if (e instanceof GoCallError) {
        if (messageTainted) errorf(`error calling ${toJs(name)}: (message withheld: it is derived from the value)`);
        errorf(`error calling ${toJs(name)}: ${toJs(e.message)}`);
      }
      if (e instanceof ExecError || e instanceof PipelineError) throw e;
      if (e instanceof RangeError) errorf(`error calling ${toJs(name)}: result too large`);
      throw e;
    }
  }

  private validateType(value: GoValue, typ: GoType | null): GoValue {
    if (value === null) {
      if (typ === null) return null;
      if (canBeNil(typ)) return zeroOf(typ);
      errorf("invalid value; expected " + typ.str);
    }
    if (typ === null || typ.reflectValue || typ.kind === "interface") return value;
    const vt = typeOf(value)!;
    if (vt.str === typ.str) return value;
    if (value instanceof GoPtr && value.type.elem?.str === typ.str) {
      if (value.elem === null) errorf("dereference of nil pointer of type " + typ.str);
      return value.elem;
    }
    errorf("wrong type for value; expected " + typ.str + "; got " + vt.str);
  }

  private evalArg(dot: GoValue, typ: GoType | null, n: Node): GoValue {
    switch (n.type) {
      case "dot":
        return this.validateType(dot, typ);
      case "nil":
        if (typ && canBeNil(typ)) return zeroOf(typ);
        errorf("cannot assign nil to " + (typ ? typ.str : "<nil>"));
      case "field":
        return this.validateType(this.evalFieldChain(dot, dot, n, n.idents, [n], MISSING), typ);
      case "variable":
        return this.validateType(this.evalVariableNode(dot, n, null, MISSING), typ);
      case "pipe":
        return this.validateType(this.evalPipeline(dot, n), typ);
      case "identifier":
        return this.validateType(this.evalFunction(dot, n.name, null, MISSING, false), typ);
      case "chain":
        return this.validateType(this.evalChainNode(dot, n, null, MISSING), typ);
    }
    if (typ === null) errorf("can't handle " + nodeString(n) + " for arg of type <nil>");
    const k = typ.kind;
    if (k === "bool") {
      if (n.type === "bool") return n.value;
      errorf("expected bool; found " + nodeString(n));
    }
    if (k === "complex128" || k === "complex64") {
      if (n.type === "number" && n.isComplex) return new GoComplex(n.complex[0], n.complex[1]);
      errorf("expected complex; found " + nodeString(n));
    }
    if (k === "float64" || k === "float32") {
      if (n.type === "number" && n.isFloat) return n.float64;
      errorf("expected float; found " + nodeString(n));
    }
    if (INT_KINDS.has(k)) {
      if (n.type === "number" && n.isInt) return intOfType(typ, n.int64);
      errorf("expected integer; found " + nodeString(n));
    }
    if (UINT_KINDS.has(k)) {
      if (n.type === "number" && n.isUint) return intOfType(typ, n.uint64);
      errorf("expected unsigned integer; found " + nodeString(n));
    }
    if (k === "interface" || typ.reflectValue) return this.evalEmptyInterface(dot, n);
    if (k === "string") {
      if (n.type === "string") return n.text;
      errorf("expected string; found " + nodeString(n));
    }
    errorf("can't handle " + nodeString(n) + " for arg of type " + typ.str);
  }

  private evalEmptyInterface(dot: GoValue, n: Node): GoValue {
    switch (n.type) {
      case "bool":
        return n.value;
      case "dot":
        return dot;
      case "number":
        return this.idealConstant(n);
      case "string":
        return n.text;
    }
    return this.evalArg(dot, T_ANY, n);
  }
}

/** text/template's printValue: how the final value of the action is rendered (a Go byte string). */
export function printResult(v: GoValue): string {
  if (v instanceof GoPtr) {
    // fmt prints a nil pointer (whose String method would panic) as <nil>
    if (v.elem === null) return "<nil>";
    v = v.elem;
  }
  if (v === null) return "<no value>";
  return sprint([v]);
}

export function wrapExecError(e: unknown): PipelineError {
  if (e instanceof PipelineError) return e;
  if (e instanceof ExecError) return new PipelineError(e.message);
  if (e instanceof GoCallError) return new PipelineError(e.message);
  if (e instanceof RangeError) return new PipelineError("pipeline too deeply nested or result too large");
  return new PipelineError("internal error while evaluating the pipeline");
}
