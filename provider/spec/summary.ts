/** One-line descriptions of what a step targets. Never includes credentials. */
import { classifyChart, describeChartSource, describeChartText } from "../helm/chart.js";
import type { NormalizedTypedAction } from "./defaults.js";
import type { ManifestSource } from "./types.js";

export function summarizeStep(name: string, t: NormalizedTypedAction): string {
  switch (t.type) {
    case "helm": {
      const a = t.action;
      const { source } = classifyChart(a);
      const chart = source ? describeChartSource(source) : describeChartText(a.chart);
      return `release ${a.release} in ${a.namespace}: ${chart}`;
    }
    case "apply": {
      const a = t.action;
      return `apply ${describeSources(a.manifests)}${a.namespace ? ` into ${a.namespace}` : ""}${a.serverSide ? " (server-side)" : ""}${a.waitFor ? `, then wait for ${a.waitFor}` : ""}`;
    }
    case "delete": {
      const a = t.action;
      if ("release" in a) return `uninstall release ${a.release} in ${a.namespace}`;
      if ("resource" in a) {
        const sel = [a.selector ? `-l ${a.selector}` : "", a.fieldSelector ? `--field-selector ${a.fieldSelector}` : ""].filter(Boolean).join(" ");
        return `delete ${a.resource}${sel ? ` ${sel}` : ""} ${where(a.namespace, a.allNamespaces)}`;
      }
      return `delete the objects of ${describeSources(a.manifests)}`;
    }
    case "patch": {
      const a = t.action;
      return `${a.type} patch ${a.target} in ${a.namespace}`;
    }
    case "wait": {
      const a = t.action;
      const sel = a.selector ? ` -l ${a.selector}` : "";
      return `wait for ${a.for} on ${a.on}${sel} ${where(a.namespace, a.allNamespaces)}`;
    }
    case "rollout": {
      const a = t.action;
      return a.restart !== undefined ? `restart ${a.restart} in ${a.namespace}` : `wait for the rollout of ${a.status ?? "?"} in ${a.namespace}`;
    }
    case "job": {
      const a = t.action;
      return `run job ${name} (${a.image}) in ${a.namespace}`;
    }
  }
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
