/** sprig's regex functions over Go's regexp (goregexp.ts, on re2js: linear time, no time limit). The regex is the first argument. */
import { def } from "../conv.js";
import * as re from "../goregexp.js";
import {
  type FuncDef,
  GoCallError,
  GoInt,
  GoSlice,
  type GoValue,
  stringsOf,
  T_INT,
  T_SLICE_STRING,
  T_STRING,
} from "../values.js";

const S = T_STRING;

function compile(expr: string, must: boolean): re.GoRegexp {
  try {
    return re.compile(expr);
  } catch (e) {
    if (e instanceof re.RegexSyntaxError) {
      // regexp.MustCompile panics with "regexp: Compile(`...`): <err>"; the pattern is left out here
      throw new GoCallError(must ? e.message : "regexp: Compile: " + e.message);
    }
    throw e;
  }
}

const strs = (xs: string[] | null): GoSlice => (xs === null ? new GoSlice(T_SLICE_STRING, [], true) : stringsOf(xs));
const n = (v: GoValue): number => Number((v as GoInt).v);

export const regexFunctions: Record<string, FuncDef> = {
  regexMatch: def([S, S], ([r, sv]) => {
    const s = sv as string;
    let g: re.GoRegexp;
    try {
      g = re.compile(r as string);
    } catch (e) {
      if (e instanceof re.RegexSyntaxError) return false;
      throw e;
    }
    return re.matchString(g, s);
  }),
  mustRegexMatch: def([S, S], ([r, s]) => {
    const g = compile(r as string, true);
    return re.matchString(g, s as string);
  }),
  regexFindAll: def([S, S, T_INT], ([r, s, k]) => {
    const g = compile(r as string, false);
    return strs(re.findAllString(g, s as string, n(k!)));
  }),
  mustRegexFindAll: def([S, S, T_INT], ([r, s, k]) => {
    const g = compile(r as string, true);
    return strs(re.findAllString(g, s as string, n(k!)));
  }),
  regexFind: def([S, S], ([r, s]) => {
    const g = compile(r as string, false);
    return re.findString(g, s as string);
  }),
  mustRegexFind: def([S, S], ([r, s]) => {
    const g = compile(r as string, true);
    return re.findString(g, s as string);
  }),
  regexReplaceAll: def([S, S, S], ([r, s, repl]) => {
    const g = compile(r as string, false);
    return re.replaceAllString(g, s as string, repl as string);
  }),
  mustRegexReplaceAll: def([S, S, S], ([r, s, repl]) => {
    const g = compile(r as string, true);
    return re.replaceAllString(g, s as string, repl as string);
  }),
  regexReplaceAllLiteral: def([S, S, S], ([r, s, repl]) => {
    const g = compile(r as string, false);
    return re.replaceAllLiteralString(g, s as string, repl as string);
  }),
  mustRegexReplaceAllLiteral: def([S, S, S], ([r, s, repl]) => {
    const g = compile(r as string, true);
    return re.replaceAllLiteralString(g, s as string, repl as string);
  }),
  regexSplit: def([S, S, T_INT], ([r, s, k]) => {
    const g = compile(r as string, false);
    return strs(re.split(g, s as string, n(k!)));
  }),
  mustRegexSplit: def([S, S, T_INT], ([r, s, k]) => {
    const g = compile(r as string, true);
    return strs(re.split(g, s as string, n(k!)));
  }),
  regexQuoteMeta: def([S], ([s]) => re.quoteMeta(s as string)),
};
