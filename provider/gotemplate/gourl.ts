/** A port of Go's net/url parsing and formatting (Go 1.26) for sprig's urlParse/urlJoin and urlquery. */
import { isIP } from "node:net";
import { toJs } from "./gostring.js";

const enum Mode {
  path = 1,
  pathSegment = 2,
  host = 4,
  zone = 8,
  userPassword = 16,
  queryComponent = 32,
  fragment = 64,
}

function shouldEscape(c: number, mode: Mode): boolean {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) return false;
  const ch = String.fromCharCode(c);
  if (mode === Mode.host || mode === Mode.zone) {
    if ("!$&'()*+,;=:[]<>\"".includes(ch)) return false;
  }
  if ("-_.~".includes(ch)) return false;
  if ("$&+,/:;=?@".includes(ch)) {
    switch (mode) {
      case Mode.path:
        return ch === "?";
      case Mode.pathSegment:
        return ch === "/" || ch === ";" || ch === "," || ch === "?";
      case Mode.userPassword:
        return ch === "@" || ch === "/" || ch === "?" || ch === ":";
      case Mode.queryComponent:
        return true;
      case Mode.fragment:
        return false;
    }
  }
  if (mode === Mode.fragment && "!()*".includes(ch)) return false;
  return true;
}

const ishex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
function unhex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return c - 0x41 + 10;
}

export class URLError extends Error {}

function unescape(s: string, mode: Mode): string {
  let n = 0;
  let hasPlus = false;
  for (let i = 0; i < s.length;) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      n++;
      if (i + 2 >= s.length || !ishex(s.charCodeAt(i + 1)) || !ishex(s.charCodeAt(i + 2)))
        throw new URLError("invalid URL escape");
      if (mode === Mode.host && unhex(s.charCodeAt(i + 1)) < 8 && s.slice(i, i + 3) !== "%25")
        throw new URLError("invalid URL escape");
      if (mode === Mode.zone) {
        const v = (unhex(s.charCodeAt(i + 1)) << 4) | unhex(s.charCodeAt(i + 2));
        if (s.slice(i, i + 3) !== "%25" && v !== 0x20 && shouldEscape(v, Mode.host))
          throw new URLError("invalid URL escape");
      }
      i += 3;
    } else if (c === 0x2b) {
      hasPlus = mode === Mode.queryComponent;
      i++;
    } else {
      if ((mode === Mode.host || mode === Mode.zone) && c < 0x80 && shouldEscape(c, mode))
        throw new URLError("invalid character in host name");
      i++;
    }
  }
  if (n === 0 && !hasPlus) return s;
  let t = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      t += String.fromCharCode((unhex(s.charCodeAt(i + 1)) << 4) | unhex(s.charCodeAt(i + 2)));
      i += 2;
    } else if (c === 0x2b) t += mode === Mode.queryComponent ? " " : "+";
    else t += s[i];
  }
  return t;
}

function escape(s: string, mode: Mode): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x20 && mode === Mode.queryComponent) out += "+";
    else if (shouldEscape(c, mode)) out += "%" + c.toString(16).toUpperCase().padStart(2, "0");
    else out += s[i];
  }
  return out;
}

export const queryEscape = (s: string): string => escape(s, Mode.queryComponent);

interface GoURL {
  scheme: string;
  opaque: string;
  user: { username: string; password?: string } | null;
  host: string;
  path: string;
  rawPath: string;
  omitHost: boolean;
  forceQuery: boolean;
  rawQuery: string;
  fragment: string;
  rawFragment: string;
}

function emptyURL(): GoURL {
  return {
    scheme: "",
    opaque: "",
    user: null,
    host: "",
    path: "",
    rawPath: "",
    omitHost: false,
    forceQuery: false,
    rawQuery: "",
    fragment: "",
    rawFragment: "",
  };
}

function getScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z")) continue;
    if ((c >= "0" && c <= "9") || c === "+" || c === "-" || c === ".") {
      if (i === 0) return ["", raw];
      continue;
    }
    if (c === ":") {
      if (i === 0) throw new URLError("missing protocol scheme");
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ["", raw];
  }
  return ["", raw];
}

function validOptionalPort(port: string): boolean {
  if (port === "") return true;
  if (port[0] !== ":") return false;
  return /^[0-9]*$/.test(port.slice(1));
}

function validUserinfo(s: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);
}

function parseHost(scheme: string, host: string): string {
  const open = host.lastIndexOf("[");
  if (open > 0) throw new URLError("invalid IP-literal");
  if (open === 0) {
    const close = host.lastIndexOf("]");
    if (close < 0) throw new URLError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new URLError("invalid port after host");
    const unescapedColonPort = unescape(colonPort, Mode.host);
    const hostname = host.slice(1, close);
    let unescapedHostname: string;
    const zoneIdx = hostname.indexOf("%25");
    if (zoneIdx >= 0)
      unescapedHostname =
        unescape(hostname.slice(0, zoneIdx), Mode.host) + unescape(hostname.slice(zoneIdx), Mode.zone);
    else unescapedHostname = unescape(hostname, Mode.host);
    const kind = isIP(toJs(unescapedHostname));
    if (kind === 0) throw new URLError("invalid host");
    if (kind === 4) throw new URLError("invalid IP-literal");
    return "[" + unescapedHostname + "]" + unescapedColonPort;
  }
  let i = host.indexOf(":");
  if (i !== -1) {
    const lastColon = host.lastIndexOf(":");
    if (lastColon !== i && scheme !== "http" && scheme !== "https") i = lastColon;
    if (!validOptionalPort(host.slice(i))) throw new URLError("invalid port after host");
  }
  return unescape(host, Mode.host);
}

function parseAuthority(u: GoURL, authority: string): void {
  const i = authority.lastIndexOf("@");
  u.host = parseHost(u.scheme, i < 0 ? authority : authority.slice(i + 1));
  if (i < 0) return;
  const userinfo = authority.slice(0, i);
  if (!validUserinfo(userinfo)) throw new URLError("net/url: invalid userinfo");
  const c = userinfo.indexOf(":");
  if (c < 0) u.user = { username: unescape(userinfo, Mode.userPassword) };
  else
    u.user = {
      username: unescape(userinfo.slice(0, c), Mode.userPassword),
      password: unescape(userinfo.slice(c + 1), Mode.userPassword),
    };
}

function setPath(u: GoURL, p: string): void {
  const path = unescape(p, Mode.path);
  u.path = path;
  u.rawPath = escape(path, Mode.path) === p ? "" : p;
}

/** url.Parse; throws URLError. */
export function parseURL(rawURL: string): GoURL {
  const h = rawURL.indexOf("#");
  const u0 = h < 0 ? rawURL : rawURL.slice(0, h);
  const frag = h < 0 ? "" : rawURL.slice(h + 1);
  const url = parse(u0);
  if (frag === "") return url;
  url.fragment = unescape(frag, Mode.fragment);
  url.rawFragment = escape(url.fragment, Mode.fragment) === frag ? "" : frag;
  return url;
}

function parse(rawURL: string): GoURL {
  if (/[\x00-\x1f\x7f]/.test(rawURL)) throw new URLError("net/url: invalid control character in URL");
  const url = emptyURL();
  if (rawURL === "*") {
    url.path = "*";
    return url;
  }
  let rest: string;
  [url.scheme, rest] = getScheme(rawURL);
  url.scheme = url.scheme.toLowerCase();
  if (rest.endsWith("?") && rest.split("?").length - 1 === 1) {
    url.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf("?");
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith("/")) {
    if (url.scheme !== "") {
      url.opaque = rest;
      return url;
    }
    const slash = rest.indexOf("/");
    const segment = slash < 0 ? rest : rest.slice(0, slash);
    if (segment.includes(":")) throw new URLError("first path segment in URL cannot contain colon");
  }
  if ((url.scheme !== "" || !rest.startsWith("///")) && rest.startsWith("//")) {
    let authority = rest.slice(2);
    rest = "";
    const i = authority.indexOf("/");
    if (i >= 0) {
      rest = authority.slice(i);
      authority = authority.slice(0, i);
    }
    parseAuthority(url, authority);
  } else if (url.scheme !== "" && rest.startsWith("/")) {
    url.omitHost = true;
  }
  setPath(url, rest);
  return url;
}

export function hostname(u: GoURL): string {
  let host = u.host;
  const colon = host.lastIndexOf(":");
  if (colon !== -1 && validOptionalPort(host.slice(colon))) host = host.slice(0, colon);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return host;
}

export function userString(u: GoURL): string {
  if (!u.user) return "";
  let s = escape(u.user.username, Mode.userPassword);
  if (u.user.password !== undefined) s += ":" + escape(u.user.password, Mode.userPassword);
  return s;
}

function validEncoded(s: string, mode: Mode): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ("!$&'()*+,;=:@[]%".includes(s[i]!)) continue;
    if (shouldEscape(c, mode)) return false;
  }
  return true;
}

function escapedPath(u: GoURL): string {
  if (u.rawPath !== "" && validEncoded(u.rawPath, Mode.path)) {
    try {
      if (unescape(u.rawPath, Mode.path) === u.path) return u.rawPath;
    } catch {
      // fall through
    }
  }
  if (u.path === "*") return "*";
  return escape(u.path, Mode.path);
}

function escapedFragment(u: GoURL): string {
  if (u.rawFragment !== "" && validEncoded(u.rawFragment, Mode.fragment)) {
    try {
      if (unescape(u.rawFragment, Mode.fragment) === u.fragment) return u.rawFragment;
    } catch {
      // fall through
    }
  }
  return escape(u.fragment, Mode.fragment);
}

/** (*url.URL).String */
export function urlString(u: GoURL): string {
  let buf = "";
  if (u.scheme !== "") buf += u.scheme + ":";
  if (u.opaque !== "") buf += u.opaque;
  else {
    if (u.scheme !== "" || u.host !== "" || u.user !== null) {
      if (!(u.omitHost && u.host === "" && u.user === null)) {
        if (u.host !== "" || u.path !== "" || u.user !== null) buf += "//";
        if (u.user !== null) buf += userString(u) + "@";
        if (u.host !== "") buf += escape(u.host, Mode.host);
      }
    }
    const path = escapedPath(u);
    if (path !== "" && path[0] !== "/" && u.host !== "") buf += "/";
    if (buf.length === 0) {
      const slash = path.indexOf("/");
      const segment = slash < 0 ? path : path.slice(0, slash);
      if (segment.includes(":")) buf += "./";
    }
    buf += path;
  }
  if (u.forceQuery || u.rawQuery !== "") buf += "?" + u.rawQuery;
  if (u.fragment !== "") buf += "#" + escapedFragment(u);
  return buf;
}

export { emptyURL };
