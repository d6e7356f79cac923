/**
 * Whether a chart may hold helm hooks, read from its files without rendering it.
 *
 * `helm --wait` runs a chart's post-install and post-upgrade hooks only once the release is
 * ready; khook's own (watch-based) wait runs after helm has finished, hooks included. So khook
 * waits itself only for a chart that has no hooks at all, and the test is deliberately
 * coarse: any occurrence of the annotation's name in any file of the chart or of its
 * subcharts, or anything that cannot be read, counts as "may have hooks".
 *
 * Pure: the caller reads the files (steps/helm/read-chart.ts walks a chart directory).
 */
import { gunzipSync } from "node:zlib";

const HOOK_ANNOTATION = Buffer.from("helm.sh/hook");

/** One file of a chart: a nested chart archive is read through, anything else searched for the annotation. */
export function fileMayHaveHooks(name: string, content: Buffer): boolean {
  return /\.tgz$/i.test(name) ? archiveMayHaveHooks(content) : content.includes(HOOK_ANNOTATION);
}

/** A gzipped tar, as `helm package` writes it; nested chart archives are read too. */
export function archiveMayHaveHooks(gzipped: Buffer): boolean {
  const entries = tarEntries(gunzipSync(gzipped));
  if (entries === undefined) return true;
  return entries.some((e) => fileMayHaveHooks(e.name, e.data));
}

interface TarEntry {
  name: string;
  data: Buffer;
}

/** The regular files of a ustar/GNU/pax tar; undefined when the bytes are not one, or are cut short. */
export function tarEntries(tar: Buffer): TarEntry[] | undefined {
  const out: TarEntry[] = [];
  let longName: string | undefined;
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return out;
    const size = parseInt(cString(header, 124, 12).trim() || "0", 8);
    if (!Number.isSafeInteger(size) || size < 0 || at + 512 + size > tar.length) return undefined;
    const data = tar.subarray(at + 512, at + 512 + size);
    const type = String.fromCharCode(header[156] ?? 0);
    const prefix = cString(header, 257, 6).startsWith("ustar") ? cString(header, 345, 155) : "";
    const name = longName ?? (prefix !== "" ? `${prefix}/${cString(header, 0, 100)}` : cString(header, 0, 100));
    longName = undefined;
    if (type === "L") longName = cString(data, 0, data.length);
    else if (type === "x") longName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString("utf8"))?.[1];
    else if (type === "0" || type === "\0" || type === "7") out.push({ name, data });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined; // no end-of-archive block: cut short
}

function cString(buf: Buffer, start: number, length: number): string {
  const field = buf.subarray(start, start + length);
  const nul = field.indexOf(0);
  return field.subarray(0, nul < 0 ? field.length : nul).toString("utf8");
}
