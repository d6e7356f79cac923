/**
 * Go-style duration text for messages: `5m`, `1m30s`, `1h30m`, `1.5s`, `250ms`.
 * The inverse of the loader's duration parsing, for output only.
 */
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
