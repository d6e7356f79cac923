#!/usr/bin/env node
// Fails when provider/ or sdk/ has an import cycle: between files, or between rooms (the folders
// directly under provider/, e.g. spec -> kube -> spec). Imports are read with the TypeScript
// compiler's own pre-processor, so type-only imports count too: a cycle of types is still a
// knot a reader has to untie.
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(new URL(import.meta.url).pathname), ".."));
const files = [];
const walk = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) files.push(path.relative(root, p));
  }
};
walk(path.join(root, "provider"));
walk(path.join(root, "sdk"));

/** file -> files it imports (relative imports only; `x.js` names the source `x.ts`). */
const edges = new Map();
for (const f of files) {
  const info = ts.preProcessFile(fs.readFileSync(path.join(root, f), "utf8"), true, true);
  const out = new Set();
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const target = path.normalize(path.join(path.dirname(f), fileName)).replace(/\.js$/, ".ts");
    if (fs.existsSync(path.join(root, target))) out.add(target);
    else if (fs.existsSync(path.join(root, target.replace(/\.ts$/, ""), "index.ts")))
      out.add(path.join(target.replace(/\.ts$/, ""), "index.ts"));
  }
  edges.set(f, out);
}

/** Tarjan's strongly connected components: every component with more than one node is a cycle. */
function cycles(graph) {
  let index = 0;
  const idx = new Map(),
    low = new Map(),
    stack = [],
    on = new Set(),
    out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || graph.get(v)?.has(v)) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The room of a file: `provider/<folder>`, or the file itself when it sits directly in provider/ or sdk/. */
const room = (f) => {
  const parts = f.split(path.sep);
  return parts[0] === "provider" && parts.length > 2 ? `provider/${parts[1]}/` : f;
};
const rooms = new Map();
const why = new Map();
for (const [f, ts_] of edges) {
  const a = room(f);
  if (!rooms.has(a)) rooms.set(a, new Set());
  for (const t of ts_) {
    const b = room(t);
    if (a === b) continue;
    rooms.get(a).add(b);
    if (!why.has(`${a} ${b}`)) why.set(`${a} ${b}`, `${f} -> ${t}`);
  }
}

const fileCycles = cycles(edges);
const roomCycles = cycles(rooms);
for (const c of fileCycles) console.log(`file cycle: ${c.join(", ")}`);
for (const c of roomCycles) {
  console.log(`room cycle: ${c.join(", ")}`);
  for (const a of c) for (const b of c) if (why.has(`${a} ${b}`)) console.log(`  ${why.get(`${a} ${b}`)}`);
}
const edgeCount = [...edges.values()].reduce((n, s) => n + s.size, 0);
console.log(
  `import cycles: ${files.length} files, ${edgeCount} imports, ${rooms.size} rooms: ${fileCycles.length} file cycles, ${roomCycles.length} room cycles`,
);
process.exit(fileCycles.length + roomCycles.length === 0 ? 0 : 1);
