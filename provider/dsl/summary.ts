/** One-line descriptions of what a step targets. Never includes credentials. */
import { classifyChart, describeChartSource, describeChartText } from "../helm/chart.js";
import type { NormalizedActionByType, NormalizedTypedAction } from "./defaults.js";
import type { ManifestSource, StepType } from "./types.js";

/** Per step type, its one-line summary. */
const SUMMARIES = {
  helm: (_name, a) => {
    const { source } = classifyChart(a);
    const chart = source ? describeChartSource(source) : describeChartText(a.chart);
    return `release ${a.release} in ${a.namespace}: ${chart}`;
  },
  apply: (_name, a) =>
    `apply ${describeSources(a.manifests)}${a.namespace ? ` into ${a.namespace}` : ""}${a.serverSide ? " (server-side)" : ""}${a.waitFor ? `, then wait for ${a.waitFor}` : ""}`,
  delete: (_name, a) => {
    if ("release" in a) return `uninstall release ${a.release} in ${a.namespace}`;
    if ("resource" in a) {
      const sel = [a.selector ? `-l ${a.selector}` : "", a.fieldSelector ? `--field-selector ${a.fieldSelector}` : ""]
        .filter(Boolean)
        .join(" ");
      return `delete ${a.resource}${sel ? ` ${sel}` : ""} ${where(a.namespace, a.allNamespaces)}`;
    }
    return `delete the objects of ${describeSources(a.manifests)}`;
  },
  patch: (_name, a) => `${a.type} patch ${a.target} in ${a.namespace}`,
  wait: (_name, a) => {
    const sel = a.selector ? ` -l ${a.selector}` : "";
    return `wait for ${a.for} on ${a.on}${sel} ${where(a.namespace, a.allNamespaces)}`;
  },
  rollout: (_name, a) =>
    a.restart !== undefined
      ? `restart ${a.restart} in ${a.namespace}`
      : `wait for the rollout of ${a.status ?? "?"} in ${a.namespace}`,
  job: (name, a) => `run job ${name} (${a.image}) in ${a.namespace}`,
} satisfies { readonly [T in StepType]: (name: string, action: NormalizedActionByType[T]) => string };

export function summarizeStep(name: string, t: NormalizedTypedAction): string {
  return (SUMMARIES[t.type] as (name: string, action: NormalizedTypedAction["action"]) => string)(name, t.action);
}

function where(namespace: string | undefined, all: boolean | undefined): string {
  return all ? "in all namespaces" : `in ${namespace ?? "the current namespace"}`;
}

function describeSources(manifests: readonly ManifestSource[] | undefined): string {
  const list = manifests ?? [];
  const parts = list.map((m) => {
    if ("inline" in m) return "inline";
    if ("file" in m) return m.file;
    if ("url" in m) return describeChartText(m.url);
    return `kustomize ${m.kustomize}`;
  });
  const shown = parts.length > 3 ? [...parts.slice(0, 3), `${parts.length - 3} more`] : parts;
  return `${list.length} source${list.length === 1 ? "" : "s"} (${shown.join(", ")})`;
}
