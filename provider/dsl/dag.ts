/**
 * The step graph: cycles (reported with their path) and levels.
 * Level = 0 without needs, else 1 + the highest level among needs.
 */

export interface GraphNode {
  name: string;
  needs: readonly string[];
}

/** Each distinct cycle once, as `a -> b -> c -> a`, starting from its first step in document order. */
export function findCycles(nodes: readonly GraphNode[]): string[][] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const state = new Map<string, 1 | 2>(); // 1 on stack, 2 done
  const stack: string[] = [];
  const cycles: string[][] = [];
  const seenCycles = new Set<string>();

  // Iterative DFS: 5,000-step specs must not overflow the call stack.
  for (const root of nodes) {
    if (state.has(root.name)) continue;
    const frames: { name: string; next: number }[] = [{ name: root.name, next: 0 }];
    state.set(root.name, 1);
    stack.push(root.name);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const needs = byName.get(frame.name)?.needs ?? [];
      if (frame.next >= needs.length) {
        state.set(frame.name, 2);
        stack.pop();
        frames.pop();
        continue;
      }
      const need = needs[frame.next++]!;
      if (!byName.has(need) || need === frame.name) continue;
      const s = state.get(need);
      if (s === 1) {
        const cycle = stack.slice(stack.indexOf(need));
        const key = [...cycle].sort().join("\0");
        if (!seenCycles.has(key)) {
          seenCycles.add(key);
          // `needs` point backwards in time: print the run order, dependency first.
          const ordered = [...cycle].reverse();
          cycles.push([...ordered, ordered[0]!]);
        }
      } else if (s === undefined) {
        state.set(need, 1);
        stack.push(need);
        frames.push({ name: need, next: 0 });
      }
    }
  }
  return cycles;
}

/** Levels for an acyclic graph with known needs. */
export function computeLevels(nodes: readonly GraphNode[]): Map<string, number> {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const level = new Map<string, number>();
  const visit = (start: string): void => {
    const frames: { name: string; next: number; max: number }[] = [{ name: start, next: 0, max: -1 }];
    while (frames.length > 0) {
      const f = frames[frames.length - 1]!;
      const needs = byName.get(f.name)?.needs ?? [];
      if (f.next < needs.length) {
        const need = needs[f.next++]!;
        const known = level.get(need);
        if (known !== undefined) f.max = Math.max(f.max, known);
        else if (byName.has(need)) {
          f.next--; // revisit this need once it has a level
          frames.push({ name: need, next: 0, max: -1 });
        }
        continue;
      }
      level.set(f.name, f.max + 1);
      frames.pop();
    }
  };
  for (const n of nodes) if (!level.has(n.name)) visit(n.name);
  return level;
}
