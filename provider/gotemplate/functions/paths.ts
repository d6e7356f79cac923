/** Go's path and path/filepath (Unix) functions as sprig exposes them. */
import { def } from "../conv.js";
import { type FuncDef, T_STRING } from "../values.js";

const S = T_STRING;

/** path.Clean */
function clean(path: string): string {
  if (path === "") return ".";
  const rooted = path[0] === "/";
  const n = path.length;
  let out = "";
  let r = 0;
  let dotdot = 0;
  if (rooted) {
    out = "/";
    r = 1;
    dotdot = 1;
  }
  while (r < n) {
    if (path[r] === "/") r++;
    else if (path[r] === "." && (r + 1 === n || path[r + 1] === "/")) r++;
    else if (path[r] === "." && path[r + 1] === "." && (r + 2 === n || path[r + 2] === "/")) {
      r += 2;
      if (out.length > dotdot) {
        let w = out.length - 1;
        while (w > dotdot && out[w] !== "/") w--;
        out = out.slice(0, w);
      } else if (!rooted) {
        if (out.length > 0) out += "/";
        out += "..";
        dotdot = out.length;
      }
    } else {
      if ((rooted && out.length !== 1) || (!rooted && out.length !== 0)) out += "/";
      for (; r < n && path[r] !== "/"; r++) out += path[r];
    }
  }
  return out === "" ? "." : out;
}

function base(path: string): string {
  if (path === "") return ".";
  while (path.length > 0 && path[path.length - 1] === "/") path = path.slice(0, -1);
  const i = path.lastIndexOf("/");
  if (i >= 0) path = path.slice(i + 1);
  return path === "" ? "/" : path;
}

function dir(path: string): string {
  const i = path.lastIndexOf("/");
  return clean(path.slice(0, i + 1));
}

function ext(path: string): string {
  for (let i = path.length - 1; i >= 0 && path[i] !== "/"; i--) if (path[i] === ".") return path.slice(i);
  return "";
}

const isAbs = (path: string): boolean => path.startsWith("/");

export const pathFunctions: Record<string, FuncDef> = {
  base: def([S], ([p]) => base(p as string)),
  dir: def([S], ([p]) => dir(p as string)),
  clean: def([S], ([p]) => clean(p as string)),
  ext: def([S], ([p]) => ext(p as string)),
  isAbs: def([S], ([p]) => isAbs(p as string)),
  osBase: def([S], ([p]) => base(p as string)),
  osClean: def([S], ([p]) => clean(p as string)),
  osDir: def([S], ([p]) => dir(p as string)),
  osExt: def([S], ([p]) => ext(p as string)),
  osIsAbs: def([S], ([p]) => isAbs(p as string)),
};
