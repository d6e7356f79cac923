/** Helpers shared by the executors that work on manifest objects (apply, delete by manifests). */
import { stringify } from "yaml";
import type { ApiResource, KubeApi, KubeObject } from "../../kube/index.js";
import { UnknownResourceError } from "../../kube/index.js";
import type { SourcedObject } from "../manifests/read-sources.js";
import type { DriftedThing } from "../contract.js";
import { describeFields } from "../../kubectl/applied-drift.js";

export interface ResolvedObject {
  manifest: KubeObject;
  origin: string;
  resource: ApiResource;
  name: string;
  namespace: string | undefined;
}

/** Resolves each manifest's kind and effective namespace (namespace-less namespaced objects get `defaultNamespace`). */
export async function resolveObjects(
  kube: KubeApi,
  objects: readonly SourcedObject[],
  defaultNamespace: string | undefined,
  signal: AbortSignal,
): Promise<(ResolvedObject | UnknownKind)[]> {
  return Promise.all(
    objects.map(async ({ object, origin }) => {
      const manifest = object as KubeObject;
      const name = String(manifest.metadata?.name ?? "");
      try {
        const resource = await kube.resolveKind(String(manifest.apiVersion), String(manifest.kind), { signal });
        const namespace = resource.namespaced
          ? (manifest.metadata?.namespace ?? defaultNamespace ?? kube.contextNamespace)
          : undefined;
        return { manifest, origin, resource, name, namespace };
      } catch (e) {
        if (e instanceof UnknownResourceError)
          return { unknown: true as const, manifest, origin, name, message: e.message };
        throw e;
      }
    }),
  );
}

export interface UnknownKind {
  unknown: true;
  manifest: KubeObject;
  origin: string;
  name: string;
  message: string;
}

export function isUnknownKind(o: ResolvedObject | UnknownKind): o is UnknownKind {
  return "unknown" in o;
}

/** `configmap/x` or `configmap/x -n ns` for progress lines. */
export function objectLabel(o: { resource: { kind: string }; name: string; namespace: string | undefined }): string {
  return `${o.resource.kind.toLowerCase()}/${o.name}${o.namespace ? ` -n ${o.namespace}` : ""}`;
}

/** The fields that change on every write and would drown a diff. */
export function forDiff(obj: KubeObject | undefined): string {
  if (obj === undefined) return "";
  const copy = structuredClone(obj) as KubeObject & { status?: unknown };
  const meta = copy.metadata ?? {};
  for (const k of ["managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink"])
    delete meta[k];
  if (meta.annotations) {
    delete meta.annotations["kubectl.kubernetes.io/last-applied-configuration"];
    if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
  }
  delete copy.status;
  return stringify(copy, { sortMapEntries: true });
}

/**
 * Secret values never reach a diff (kubectl diff does the same): each data/stringData value
 * becomes `***`, or `*** (before)` / `*** (after)` where the two sides differ.
 */
export function maskSecretPair(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): { before: KubeObject | undefined; after: KubeObject | undefined } {
  const isSecret = (o: KubeObject | undefined) => o?.kind === "Secret";
  if (!isSecret(before) && !isSecret(after)) return { before, after };
  const fieldsOf = (o: KubeObject | undefined, field: string): Record<string, unknown> => {
    const v = (o as Record<string, unknown> | undefined)?.[field];
    return v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {};
  };
  const mask = (
    o: KubeObject | undefined,
    other: KubeObject | undefined,
    side: "before" | "after",
  ): KubeObject | undefined => {
    if (o === undefined) return undefined;
    const copy = structuredClone(o) as Record<string, unknown>;
    for (const field of ["data", "stringData"]) {
      const mine = fieldsOf(o, field);
      const theirs = fieldsOf(other, field);
      if (Object.keys(mine).length === 0) continue;
      copy[field] = Object.fromEntries(
        Object.keys(mine).map((k) => [
          k,
          other === undefined || !(k in theirs) || JSON.stringify(theirs[k]) === JSON.stringify(mine[k])
            ? "***"
            : `*** (${side})`,
        ]),
      );
    }
    return copy as KubeObject;
  };
  return { before: mask(before, after, "before"), after: mask(after, before, "after") };
}

/** `3 created, 1 configured, 2 unchanged` — zero counts are left out. */
export function countSummary(counts: Readonly<Record<string, number>>, order: readonly string[]): string {
  const parts = order.filter((k) => (counts[k] ?? 0) > 0).map((k) => `${counts[k]} ${k}`);
  return parts.length > 0 ? parts.join(", ") : "nothing to do";
}

/** `configmap/app -n web changed (data.color); secret/creds -n web is gone`: a drift report's line. */
export function describeDrifted(drifted: readonly DriftedThing[]): string {
  const one = (d: DriftedThing): string => {
    const note = d.note !== undefined ? ` (${d.note})` : "";
    switch (d.change) {
      case "changed":
        return `${d.ref} changed (${describeFields(d.fields ?? [])})${note}`;
      case "gone":
        return `${d.ref} is gone${note}`;
      case "back":
        return `${d.ref} exists again${note}`;
      default:
        return `${d.ref}: ${d.change}${note}`;
    }
  };
  const shown = drifted.slice(0, 5).map(one);
  return drifted.length > 5 ? `${shown.join("; ")}; and ${drifted.length - 5} more` : shown.join("; ");
}
