/** Go `time.ParseDuration` for the units the spec uses, returning milliseconds. */

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/y;

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

/** `300000` -> `5m`, `90000` -> `1m30s`: for messages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ""}${m ? `${m}m` : ""}${s || (!h && !m) ? `${s}s` : ""}`;
}
