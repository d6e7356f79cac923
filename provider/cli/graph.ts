/** Mermaid, DOT and JSON renderings of the step graph. Pure. */
import type { LoadedSpec } from "../dsl/loaded.js";

export type GraphFormat = "mermaid" | "dot";

export function renderGraph(spec: LoadedSpec, format: GraphFormat): string {
  return format === "mermaid" ? mermaid(spec) : dot(spec);
}

export interface GraphJson {
  name: string;
  steps: { name: string; type: string; level: number; included: boolean; needs: readonly string[] }[];
  /** `from` must finish before `to` starts. */
  edges: { from: string; to: string }[];
}

export function graphJson(spec: LoadedSpec): GraphJson {
  return {
    name: spec.name,
    steps: spec.steps.map((s) => ({
      name: s.name,
      type: s.type,
      level: s.level,
      included: s.whenHolds,
      needs: s.needs,
    })),
    edges: spec.steps.flatMap((s) => s.needs.map((n) => ({ from: n, to: s.name }))),
  };
}

function mermaid(spec: LoadedSpec): string {
  const id = (name: string): string => `s_${name.replace(/-/g, "_")}`;
  const lines = ["flowchart TD"];
  for (const s of spec.steps) {
    const label = `${s.name}<br/><small>${s.type}${s.whenHolds ? "" : " (excluded by when)"}</small>`;
    lines.push(`  ${id(s.name)}["${escapeMermaid(label)}"]`);
  }
  for (const s of spec.steps) for (const n of s.needs) lines.push(`  ${id(n)} --> ${id(s.name)}`);
  const excluded = spec.steps.filter((s) => !s.whenHolds).map((s) => id(s.name));
  if (excluded.length > 0) {
    lines.push("  classDef excluded stroke-dasharray: 5 5,opacity:0.6");
    lines.push(`  class ${excluded.join(",")} excluded`);
  }
  return lines.join("\n");
}

function escapeMermaid(s: string): string {
  return s.replace(/"/g, "#quot;");
}

function dot(spec: LoadedSpec): string {
  const q = (s: string): string => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  const lines = [`digraph ${q(spec.name)} {`, "  rankdir=TB;", "  node [shape=box, style=rounded];"];
  for (const s of spec.steps) {
    const style = s.whenHolds ? "" : ', style="rounded,dashed"';
    lines.push(`  ${q(s.name)} [label=${q(`${s.name}\n${s.type}`)}${style}];`);
  }
  for (const s of spec.steps) for (const n of s.needs) lines.push(`  ${q(n)} -> ${q(s.name)};`);
  lines.push("}");
  return lines.join("\n");
}
