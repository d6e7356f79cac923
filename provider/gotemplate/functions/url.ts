/** sprig's urlParse and urlJoin. */
import { def, nilDeref } from "../conv.js";
import { emptyURL, hostname, parseURL, URLError, urlString, userString } from "../gourl.js";
import { type FuncDef, GoCallError, GoMap, type GoValue, kindOf, T_MAP_ANY, T_STRING } from "../values.js";

function dictGetOrEmpty(d: GoMap, key: string): string {
  if (!d.m.has(key)) return "";
  const v = d.m.get(key) ?? null;
  if (v === null) nilDeref();
  if (typeof v !== "string")
    throw new GoCallError(`unable to parse ${key} key, must be of type string, but ${kindOf(v)} found`);
  return v;
}

export const urlFunctions: Record<string, FuncDef> = {
  urlParse: def([T_STRING], ([v]) => {
    let u;
    try {
      u = parseURL(v as string);
    } catch (e) {
      if (e instanceof URLError) throw new GoCallError("unable to parse url: " + e.message);
      throw e;
    }
    const m = new Map<string, GoValue>([
      ["scheme", u.scheme],
      ["host", u.host],
      ["hostname", hostname(u)],
      ["path", u.path],
      ["query", u.rawQuery],
      ["opaque", u.opaque],
      ["fragment", u.fragment],
      ["userinfo", userString(u)],
    ]);
    return new GoMap(T_MAP_ANY, m);
  }),
  urlJoin: def([T_MAP_ANY], ([dv]) => {
    const d = dv as GoMap;
    const u = emptyURL();
    u.scheme = dictGetOrEmpty(d, "scheme");
    u.host = dictGetOrEmpty(d, "host");
    u.path = dictGetOrEmpty(d, "path");
    u.rawQuery = dictGetOrEmpty(d, "query");
    u.opaque = dictGetOrEmpty(d, "opaque");
    u.fragment = dictGetOrEmpty(d, "fragment");
    const userinfo = dictGetOrEmpty(d, "userinfo");
    if (userinfo !== "") {
      try {
        u.user = parseURL("proto://" + userinfo + "@host").user;
      } catch (e) {
        if (e instanceof URLError) throw new GoCallError("unable to parse userinfo in dict: " + e.message);
        throw e;
      }
    }
    return urlString(u);
  }),
};
