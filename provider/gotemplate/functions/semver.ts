/** A port of Masterminds/semver v3.3.0 (NewVersion, NewConstraint, Check) as sprig uses it. */
import { def } from "../conv.js";
import { jsonString } from "../gojson.js";
import * as re from "../goregexp.js";
import { NumError, parseUint } from "../strconv.js";
import {
  type FuncDef,
  GoCallError,
  GoInt,
  GoPtr,
  GoStruct,
  type GoType,
  type GoValue,
  goInt,
  type MethodDef,
  ptrTo,
  T_STRING,
  T_UINT64,
} from "../values.js";

interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
  metadata: string;
  original: string;
}

class SemverError extends Error {}

const semVerRegex =
  `v?([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?` +
  `(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?` +
  `(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?`;
const cvRegex =
  `v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?` +
  `(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?` +
  `(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?`;
const ops = `=||!=|>|<|>=|=>|<=|=<|~|~>|\\^`;

let compiled:
  | { version: re.GoRegexp; constraint: re.GoRegexp; range: re.GoRegexp; find: re.GoRegexp; valid: re.GoRegexp }
  | undefined;
function regexes(): NonNullable<typeof compiled> {
  compiled ??= {
    version: re.compile("^" + semVerRegex + "$"),
    constraint: re.compile(`^\\s*(${ops})\\s*(${cvRegex})\\s*$`),
    range: re.compile(`\\s*(${cvRegex})\\s+-\\s+(${cvRegex})\\s*`),
    find: re.compile(`(${ops})\\s*(${cvRegex})`),
    valid: re.compile(`^(\\s*(${ops})\\s*(${cvRegex})\\s*)((?:\\s+|,\\s*)(${ops})\\s*(${cvRegex})\\s*)*$`),
  };
  return compiled;
}

/** FindStringSubmatch: group strings ("" for unmatched), or null. */
function submatch(g: re.GoRegexp, s: string): string[] | null {
  const all = re.findAllIndex(g, s, 1);
  const m = all[0];
  if (!m) return null;
  const out: string[] = [];
  for (let i = 0; i < m.length; i += 2) out.push(m[i]! < 0 ? "" : s.slice(m[i], m[i + 1]));
  return out;
}

const NUM = "0123456789";
const ALLOWED = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-" + NUM;
const containsOnly = (s: string, comp: string): boolean => [...s].every((c) => comp.includes(c));

function validatePrerelease(p: string): void {
  for (const part of p.split(".")) {
    if (containsOnly(part, NUM)) {
      if (part.length > 1 && part[0] === "0") throw new SemverError("Version segment starts with 0");
    } else if (!containsOnly(part, ALLOWED)) throw new SemverError("Invalid Prerelease string");
  }
}

function validateMetadata(m: string): void {
  for (const part of m.split(".")) if (!containsOnly(part, ALLOWED)) throw new SemverError("Invalid Metadata string");
}

function segment(s: string): bigint {
  try {
    return parseUint(s, 10, 64);
  } catch (e) {
    if (e instanceof NumError) throw new SemverError("Error parsing version segment: " + e.message);
    throw e;
  }
}

function newVersion(v: string): Version {
  const m = submatch(regexes().version, v);
  if (!m) throw new SemverError("Invalid Semantic Version");
  const sv: Version = { major: 0n, minor: 0n, patch: 0n, pre: m[5]!, metadata: m[8]!, original: v };
  sv.major = segment(m[1]!);
  if (m[2] !== "") sv.minor = segment(m[2]!.slice(1));
  if (m[3] !== "") sv.patch = segment(m[3]!.slice(1));
  if (sv.pre !== "") validatePrerelease(sv.pre);
  if (sv.metadata !== "") validateMetadata(sv.metadata);
  return sv;
}

function strictNewVersion(v: string): Version {
  // only used for "0.0.0"
  return { major: 0n, minor: 0n, patch: 0n, pre: "", metadata: "", original: v };
}

function versionString(v: Version): string {
  let s = `${v.major}.${v.minor}.${v.patch}`;
  if (v.pre !== "") s += "-" + v.pre;
  if (v.metadata !== "") s += "+" + v.metadata;
  return s;
}

const cmpSeg = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === "") return o !== "" ? -1 : 1;
  if (o === "") return s !== "" ? 1 : -1;
  let oi = 0n;
  let si = 0n;
  let n1 = false;
  let n2 = false;
  try {
    oi = parseUint(o, 10, 64);
  } catch {
    n1 = true;
  }
  try {
    si = parseUint(s, 10, 64);
  } catch {
    n2 = true;
  }
  if (n1 && n2) return s > o ? 1 : -1;
  if (n1) return -1;
  if (n2) return 1;
  return si > oi ? 1 : -1;
}

function comparePrerelease(v: string, o: string): number {
  const sparts = v.split(".");
  const oparts = o.split(".");
  const l = Math.max(sparts.length, oparts.length);
  for (let i = 0; i < l; i++) {
    const d = comparePrePart(sparts[i] ?? "", oparts[i] ?? "");
    if (d !== 0) return d;
  }
  return 0;
}

function compare(v: Version, o: Version): number {
  let d = cmpSeg(v.major, o.major);
  if (d !== 0) return d;
  d = cmpSeg(v.minor, o.minor);
  if (d !== 0) return d;
  d = cmpSeg(v.patch, o.patch);
  if (d !== 0) return d;
  if (v.pre === "" && o.pre === "") return 0;
  if (v.pre === "") return 1;
  if (o.pre === "") return -1;
  return comparePrerelease(v.pre, o.pre);
}

interface Constraint {
  con: Version;
  orig: string;
  origfunc: string;
  minorDirty: boolean;
  dirty: boolean;
  patchDirty: boolean;
}

const isX = (x: string): boolean => x === "x" || x === "*" || x === "X";

function parseConstraint(c: string): Constraint {
  if (c.length > 0) {
    const m = submatch(regexes().constraint, c);
    if (!m) throw new SemverError("improper constraint");
    const cs: Constraint = {
      con: strictNewVersion("0.0.0"),
      orig: m[2]!,
      origfunc: m[1]!,
      minorDirty: false,
      dirty: false,
      patchDirty: false,
    };
    let ver = m[2]!;
    if (isX(m[3]!) || m[3] === "") {
      ver = "0.0.0" + m[6];
      cs.dirty = true;
    } else if (isX(m[4]!.replace(/^\./, "")) || m[4] === "") {
      cs.minorDirty = true;
      cs.dirty = true;
      ver = `${m[3]}.0.0${m[6]}`;
    } else if (isX(m[5]!.replace(/^\./, "")) || m[5] === "") {
      cs.dirty = true;
      cs.patchDirty = true;
      ver = `${m[3]}${m[4]}.0${m[6]}`;
    }
    try {
      cs.con = newVersion(ver);
    } catch {
      throw new SemverError("constraint Parser Error");
    }
    return cs;
  }
  return { con: strictNewVersion("0.0.0"), orig: c, origfunc: "", minorDirty: false, patchDirty: false, dirty: true };
}

function rewriteRange(i: string): string {
  const g = regexes().range;
  const ms = re.findAllIndex(g, i, -1);
  if (ms.length === 0) return i;
  let o = i;
  for (const m of ms) {
    const grp = (k: number): string => (m[2 * k]! < 0 ? "" : i.slice(m[2 * k], m[2 * k + 1]));
    const t = `>= ${grp(1)}, <= ${grp(11)} `;
    const whole = grp(0);
    const at = o.indexOf(whole);
    if (at >= 0) o = o.slice(0, at) + t + o.slice(at + whole.length);
  }
  return o;
}

function newConstraint(c: string): Constraint[][] {
  c = rewriteRange(c);
  const ors = c.split("||");
  return ors.map((v) => {
    if (!re.matchString(regexes().valid, v)) throw new SemverError("improper constraint");
    let cs = re.findAllString(regexes().find, v, -1);
    if (cs === null) cs = [v];
    return cs.map(parseConstraint);
  });
}

function check(v: Version, c: Constraint): boolean {
  const f = c.origfunc;
  const preMismatch = v.pre !== "" && c.con.pre === "";
  switch (f) {
    case "":
    case "=":
      if (preMismatch) return false;
      if (c.dirty) return tilde(v, c);
      return compare(v, c.con) === 0;
    case "!=":
      if (c.dirty) {
        if (v.pre !== "" && c.con.pre === "") return false;
        if (c.con.major !== v.major) return true;
        if (c.con.minor !== v.minor && !c.minorDirty) return true;
        else if (c.minorDirty) return false;
        else if (c.con.patch !== v.patch && !c.patchDirty) return true;
        else if (c.patchDirty) {
          if (v.pre !== "" || c.con.pre !== "") return comparePrerelease(v.pre, c.con.pre) !== 0;
          return false;
        }
      }
      return compare(v, c.con) !== 0;
    case ">":
      if (preMismatch) return false;
      if (!c.dirty) return compare(v, c.con) === 1;
      if (v.major > c.con.major) return true;
      if (v.major < c.con.major) return false;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > c.con.minor;
      return compare(v, c.con) === 1;
    case "<":
      if (preMismatch) return false;
      return compare(v, c.con) < 0;
    case ">=":
    case "=>":
      if (preMismatch) return false;
      return compare(v, c.con) >= 0;
    case "<=":
    case "=<":
      if (preMismatch) return false;
      if (!c.dirty) return compare(v, c.con) <= 0;
      if (v.major > c.con.major) return false;
      if (v.major === c.con.major && v.minor > c.con.minor && !c.minorDirty) return false;
      return true;
    case "~":
    case "~>":
      return tilde(v, c);
    case "^":
      if (preMismatch) return false;
      if (compare(v, c.con) < 0) return false;
      if (c.con.major > 0n || c.minorDirty) return v.major === c.con.major;
      if (c.con.major === 0n && v.major > 0n) return false;
      if (c.con.minor > 0n || c.patchDirty) return v.minor === c.con.minor;
      if (c.con.minor === 0n && v.minor > 0n) return false;
      return c.con.patch === v.patch;
  }
  return false;
}

function tilde(v: Version, c: Constraint): boolean {
  if (v.pre !== "" && c.con.pre === "") return false;
  if (compare(v, c.con) < 0) return false;
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== c.con.major) return false;
  if (v.minor !== c.con.minor && !c.minorDirty) return false;
  return true;
}

// ---- Go value representation: *semver.Version --------------------------------------------------

function fromStruct(s: GoStruct): Version {
  const f = s.fields;
  return {
    major: (f[0] as GoInt).v,
    minor: (f[1] as GoInt).v,
    patch: (f[2] as GoInt).v,
    pre: f[3] as string,
    metadata: f[4] as string,
    original: f[5] as string,
  };
}

function toStruct(v: Version): GoStruct {
  return new GoStruct(T_VERSION, [
    new GoInt(T_UINT64, v.major),
    new GoInt(T_UINT64, v.minor),
    new GoInt(T_UINT64, v.patch),
    v.pre,
    v.metadata,
    v.original,
  ]);
}

const vPrefix = (v: Version): string => (v.original !== "" && v.original[0] === "v" ? "v" : "");

function inc(v: Version, which: "patch" | "minor" | "major"): Version {
  const n: Version = { ...v, metadata: "", pre: "" };
  if (which === "patch") {
    if (v.pre === "") n.patch = v.patch + 1n;
  } else if (which === "minor") {
    n.patch = 0n;
    n.minor = v.minor + 1n;
  } else {
    n.patch = 0n;
    n.minor = 0n;
    n.major = v.major + 1n;
  }
  n.original = vPrefix(v) + versionString(n);
  return n;
}

function versionArg(x: GoValue): Version {
  if (x instanceof GoPtr && x.elem) return fromStruct(x.elem);
  throw new GoCallError("runtime error: invalid memory address or nil pointer dereference");
}

const valueMethod = (params: GoType[], impl: (v: Version, a: GoValue[]) => GoValue): MethodDef => ({
  ptr: false,
  params,
  impl: (s, a) => impl(fromStruct(s), a),
});
const ptrMethod = (params: GoType[], impl: (v: Version, a: GoValue[]) => GoValue): MethodDef => ({
  ptr: true,
  params,
  impl: (s, a) => impl(fromStruct(s), a),
});

const methods = new Map<string, MethodDef>();

const T_VERSION: GoType = {
  kind: "struct",
  str: "semver.Version",
  fields: [
    { name: "major", type: T_UINT64 },
    { name: "minor", type: T_UINT64 },
    { name: "patch", type: T_UINT64 },
    { name: "pre", type: T_STRING },
    { name: "metadata", type: T_STRING },
    { name: "original", type: T_STRING },
  ],
  stringer: (s) => versionString(fromStruct(s)),
  marshalJSON: (s) => jsonString(versionString(fromStruct(s)), true),
  methods,
};
const T_VERSION_PTR = ptrTo(T_VERSION);

methods.set(
  "String",
  valueMethod([], (v) => versionString(v)),
);
methods.set(
  "Major",
  valueMethod([], (v) => new GoInt(T_UINT64, v.major)),
);
methods.set(
  "Minor",
  valueMethod([], (v) => new GoInt(T_UINT64, v.minor)),
);
methods.set(
  "Patch",
  valueMethod([], (v) => new GoInt(T_UINT64, v.patch)),
);
methods.set(
  "Prerelease",
  valueMethod([], (v) => v.pre),
);
methods.set(
  "Metadata",
  valueMethod([], (v) => v.metadata),
);
methods.set(
  "Original",
  ptrMethod([], (v) => v.original),
);
methods.set(
  "IncPatch",
  valueMethod([], (v) => toStruct(inc(v, "patch"))),
);
methods.set(
  "IncMinor",
  valueMethod([], (v) => toStruct(inc(v, "minor"))),
);
methods.set(
  "IncMajor",
  valueMethod([], (v) => toStruct(inc(v, "major"))),
);
methods.set(
  "LessThan",
  ptrMethod([T_VERSION_PTR], (v, [o]) => compare(v, versionArg(o!)) < 0),
);
methods.set(
  "LessThanEqual",
  ptrMethod([T_VERSION_PTR], (v, [o]) => compare(v, versionArg(o!)) <= 0),
);
methods.set(
  "GreaterThan",
  ptrMethod([T_VERSION_PTR], (v, [o]) => compare(v, versionArg(o!)) > 0),
);
methods.set(
  "GreaterThanEqual",
  ptrMethod([T_VERSION_PTR], (v, [o]) => compare(v, versionArg(o!)) >= 0),
);
methods.set(
  "Equal",
  ptrMethod([T_VERSION_PTR], (v, [o]) => compare(v, versionArg(o!)) === 0),
);
methods.set(
  "Compare",
  ptrMethod([T_VERSION_PTR], (v, [o]) => goInt(compare(v, versionArg(o!)))),
);

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof SemverError) throw new GoCallError(e.message);
    throw e;
  }
}

export const semverFunctions: Record<string, FuncDef> = {
  semver: def([T_STRING], ([v]) => wrap(() => new GoPtr(T_VERSION_PTR, toStruct(newVersion(v as string))))),
  semverCompare: def([T_STRING, T_STRING], ([c, v]) =>
    wrap(() => {
      const cs = newConstraint(c as string);
      const ver = newVersion(v as string);
      return cs.some((and) => and.every((k) => check(ver, k)));
    }),
  ),
};
