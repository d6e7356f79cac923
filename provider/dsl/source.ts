/**
 * Source text with line/column lookup, and the map from substituted-text
 * offsets back to the original text, so every error points at the line the
 * author wrote even when a substituted value changed lengths or line counts.
 */
import { isUtf8 } from "node:buffer";
import { diagnosticsError, type SourcePosition } from "../errors.js";

/**
 * A file's bytes as text. Not valid UTF-8 is invalid input naming the first bad line (decoding
 * would silently turn the bytes into U+FFFD, which then reach the cluster). A multi-byte
 * sequence never holds a newline byte, so checking line by line is exact.
 */
export function decodeUtf8(bytes: Buffer, file: string, what: string): string {
  if (isUtf8(bytes)) return bytes.toString("utf8");
  let start = 0;
  for (let line = 1; ; line++) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl;
    const text = bytes.subarray(start, end);
    if (!isUtf8(text)) {
      // The column of the first bad byte, in characters of the valid text before it.
      let good = 0;
      while (good < text.length && isUtf8(text.subarray(0, good + 1))) good++;
      while (good > 0 && !isUtf8(text.subarray(0, good))) good--;
      const column = text.subarray(0, good).toString("utf8").length + 1;
      throw diagnosticsError(
        [
          {
            severity: "error",
            path: "",
            message: `${what} is not valid UTF-8 (byte 0x${text[good]!.toString(16).padStart(2, "0")} on this line); save it as UTF-8`,
            position: { line, column },
            rule: "utf8",
          },
        ],
        file,
      );
    }
    if (nl === -1) return bytes.toString("utf8");
    start = nl + 1;
  }
}

export class SourceText {
  private lineStarts: number[] | undefined;

  constructor(
    readonly text: string,
    readonly file: string | undefined,
  ) {}

  positionAt(offset: number): SourcePosition {
    const starts = (this.lineStarts ??= computeLineStarts(this.text));
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= clamped) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: clamped - (starts[lo] ?? 0) + 1 };
  }
}

function computeLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

interface Replacement {
  outStart: number;
  outLength: number;
  origStart: number;
  origLength: number;
  /** The secret variable whose value this is, if it is one. */
  secret?: string;
  /** The variable whose value this is (secret or not); absent for `$${`. */
  variable?: string;
}

/** Replacements are recorded in increasing order; between them the two texts align 1:1. */
export class OffsetMap {
  private readonly replacements: Replacement[] = [];

  replaced(
    outStart: number,
    origStart: number,
    outLength: number,
    origLength: number,
    secret?: string,
    variable?: string,
  ): void {
    this.replacements.push({
      outStart,
      outLength,
      origStart,
      origLength,
      ...(secret !== undefined ? { secret } : {}),
      ...(variable !== undefined ? { variable } : {}),
    });
  }

  /** The secret variable whose substituted value overlaps [outStart, outEnd), if any. */
  secretWithin(outStart: number, outEnd: number): string | undefined {
    return this.replacements.find((r) => r.secret !== undefined && this.overlaps(r, outStart, outEnd))?.secret;
  }

  /** The variable whose substituted value overlaps [outStart, outEnd), if any. */
  variableWithin(outStart: number, outEnd: number): string | undefined {
    return this.replacements.find((r) => r.variable !== undefined && this.overlaps(r, outStart, outEnd))?.variable;
  }

  private overlaps(r: Replacement, outStart: number, outEnd: number): boolean {
    return r.outStart < Math.max(outEnd, outStart + 1) && outStart < r.outStart + r.outLength;
  }

  toOriginal(outOffset: number): number {
    let lo = 0;
    let hi = this.replacements.length - 1;
    let prev: Replacement | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = this.replacements[mid]!;
      if (r.outStart <= outOffset) {
        prev = r;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (prev === undefined) return outOffset;
    // Inside a substituted value: point at the start of its `${`.
    if (outOffset < prev.outStart + prev.outLength) return prev.origStart;
    return prev.origStart + prev.origLength + (outOffset - prev.outStart - prev.outLength);
  }
}
