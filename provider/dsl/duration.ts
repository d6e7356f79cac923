/** Go `time.ParseDuration` for the units the spec uses, returning milliseconds. */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "\u00b5s": 1e-3, // micro sign
  "\u03bcs": 1e-3, // Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
// Escaped: the CLI bundle stays ASCII (scripts/bundle-cli.mjs), so it is read as a one-byte string.
const PART = /([0-9]*(?:\.[0-9]*)?)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/** Returns milliseconds, or undefined when the text is not a Go duration. */
export function parseDuration(text: string): number | undefined {
  if (text === "0") return 0;
  if (text === "") return undefined;
  let ms = 0;
  PART.lastIndex = 0;
  let i = 0;
  while (i < text.length) {
    PART.lastIndex = i;
    const m = PART.exec(text);
    if (m === null || m[1] === "" || m[1] === ".") return undefined;
    ms += Number(m[1]) * (UNIT_MS[m[2]!] ?? NaN);
    i = PART.lastIndex;
  }
  return Number.isFinite(ms) ? ms : undefined;
}

/** Go-style duration text for messages: `5m`, `1m30s`, `1h30m`, `1.5s`, `250ms`. The inverse of parseDuration. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "0s";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const totalMs = Math.round(ms);
  const h = Math.floor(totalMs / 3_600_000);
  const m = Math.floor((totalMs % 3_600_000) / 60_000);
  const sMs = totalMs % 60_000;
  let out = "";
  if (h > 0) out += `${h}h`;
  if (m > 0) out += `${m}m`;
  if (sMs > 0) {
    const s = sMs / 1000;
    out += `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, "")}s`;
  }
  return out;
}
