/**
 * The plain-text table both fleet reports print (index.ts's per-cluster runs, summaries.ts's
 * aggregate of -o json summaries), the way kubectl prints one: each column padded to its widest
 * cell, two spaces apart, the last column as is.
 */
export function textTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((x, i) => (i === cells.length - 1 ? x : x.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), ...rows.map(line)].join("\n");
}
