/**
 * Unified diffs of text (Myers' O(ND) algorithm), for `plan --diff`.
 * One implementation for every step type.
 */

type Edit = { kind: "same" | "del" | "add"; line: string };

/** The shortest edit script between two line arrays. */
function myers(a: readonly string[], b: readonly string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max;
  const v = new Int32Array(2 * max + 2);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Walk the trace backwards to recover the edits.
  const edits: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[offset + k - 1]! < vd[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = vd[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      edits.push({ kind: "same", line: a[--x]! });
      y--;
    }
    if (d > 0) {
      if (x === prevX) edits.push({ kind: "add", line: b[--y]! });
      else edits.push({ kind: "del", line: a[--x]! });
    }
  }
  return edits.reverse();
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** A unified diff (`--- a`, `+++ b`, `@@` hunks), or "" when the texts are equal. */
export function unifiedDiff(
  oldText: string,
  newText: string,
  labels: { old: string; new: string },
  context = 3,
): string {
  if (oldText === newText) return "";
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const edits = myers(a, b);
  const out: string[] = [`--- ${labels.old}`, `+++ ${labels.new}`];
  let i = 0;
  let aLine = 1;
  let bLine = 1;
  while (i < edits.length) {
    // Find the next change.
    let j = i;
    while (j < edits.length && edits[j]!.kind === "same") j++;
    if (j === edits.length) break;
    const start = Math.max(i, j - context);
    aLine += start - i;
    bLine += start - i;
    // Extend the hunk while changes are within 2*context of each other.
    let end = j;
    let lastChange = j;
    while (end < edits.length) {
      if (edits[end]!.kind !== "same") lastChange = end;
      else if (end - lastChange > 2 * context) break;
      end++;
    }
    const stop = Math.min(edits.length, lastChange + context + 1);
    const hunk = edits.slice(start, stop);
    const aCount = hunk.filter((e) => e.kind !== "add").length;
    const bCount = hunk.filter((e) => e.kind !== "del").length;
    out.push(`@@ -${aCount === 0 ? aLine - 1 : aLine},${aCount} +${bCount === 0 ? bLine - 1 : bLine},${bCount} @@`);
    for (const e of hunk) out.push(`${e.kind === "same" ? " " : e.kind === "del" ? "-" : "+"}${e.line}`);
    aLine += aCount;
    bLine += bCount;
    i = stop;
  }
  return `${out.join("\n")}\n`;
}
