/**
 * Source text with line/column lookup, and the map from substituted-text
 * offsets back to the original text, so every error points at the line the
 * author wrote even when a substituted value changed lengths or line counts.
 */
import type { SourcePosition } from "../errors.js";

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
}

/** Replacements are recorded in increasing order; between them the two texts align 1:1. */
export class OffsetMap {
  private readonly replacements: Replacement[] = [];

  replaced(outStart: number, origStart: number, outLength: number, origLength: number, secret?: string): void {
    this.replacements.push({ outStart, outLength, origStart, origLength, ...(secret !== undefined ? { secret } : {}) });
  }

  /** The secret variable whose substituted value overlaps [outStart, outEnd), if any. */
  secretWithin(outStart: number, outEnd: number): string | undefined {
    return this.replacements.find((r) => r.secret !== undefined && r.outStart < Math.max(outEnd, outStart + 1) && outStart < r.outStart + r.outLength)?.secret;
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
