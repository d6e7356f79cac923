/**
 * How kubectl apply patches a kind, decided from the server's OpenAPI v3
 * group-version document: which kinds accept strategic merge patches, and how
 * each field merges (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`).
 */
import { OpenApiV3PatchMeta, type PatchMeta, isMap } from "./threeway.js";
import type { ResourceType } from "./types.js";

/** How kubectl apply must patch a kind. */
export type PatchPlan = { type: "strategic"; meta: PatchMeta } | { type: "merge" };

export interface GvDoc {
  schemas: Record<string, unknown>;
  /** `group/version/kind` → schema name. */
  byGvk: Map<string, string>;
  /** `group/version/kind` → whether its PATCH accepts strategic merge patches. */
  smp: Map<string, boolean>;
}

/** API groups built into kube-apiserver: the fallback when OpenAPI v3 is unavailable (kubectl's scheme check). */
const BUILTIN_GROUPS = new Set([
  "",
  "admissionregistration.k8s.io",
  "apiextensions.k8s.io",
  "apiregistration.k8s.io",
  "apps",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "autoscaling",
  "batch",
  "certificates.k8s.io",
  "coordination.k8s.io",
  "discovery.k8s.io",
  "events.k8s.io",
  "flowcontrol.apiserver.k8s.io",
  "internal.apiserver.k8s.io",
  "networking.k8s.io",
  "node.k8s.io",
  "policy",
  "rbac.authorization.k8s.io",
  "resource.k8s.io",
  "scheduling.k8s.io",
  "storage.k8s.io",
  "storagemigration.k8s.io",
]);

/**
 * Strategic merge (with its field metadata) when the document says the kind's
 * PATCH accepts `application/strategic-merge-patch+json`, else JSON merge patch
 * (custom resources, aggregated APIs). Without a document (no OpenAPI v3),
 * kubectl's scheme check: built-in groups are strategic.
 */
export function patchPlanFor(rt: ResourceType, doc: GvDoc | undefined): PatchPlan {
  const key = `${rt.group}/${rt.version}/${rt.kind}`;
  if (!doc) {
    return BUILTIN_GROUPS.has(rt.group) ? { type: "strategic", meta: noMetaFallback() } : { type: "merge" };
  }
  const smp = doc.smp.get(key);
  const schemaName = doc.byGvk.get(key);
  if (smp === undefined) {
    // The kind has no PATCH operation in this document; decide by group like kubectl's scheme fallback.
    if (!BUILTIN_GROUPS.has(rt.group)) return { type: "merge" };
  } else if (!smp) {
    return { type: "merge" };
  }
  const schema =
    schemaName !== undefined && isMap(doc.schemas[schemaName])
      ? (doc.schemas[schemaName] as Record<string, unknown>)
      : undefined;
  return { type: "strategic", meta: new OpenApiV3PatchMeta(doc.schemas, schema) };
}

/** Indexes an OpenAPI v3 group-version document. */
export function parseGvDoc(raw: unknown): GvDoc {
  const schemas =
    isMap(raw) && isMap(raw["components"]) && isMap(raw["components"]["schemas"]) ? raw["components"]["schemas"] : {};
  const byGvk = new Map<string, string>();
  for (const [name, s] of Object.entries(schemas)) {
    if (!isMap(s)) continue;
    const gvks = s["x-kubernetes-group-version-kind"];
    if (!Array.isArray(gvks)) continue;
    for (const g of gvks) {
      if (isMap(g))
        byGvk.set(`${String(g["group"] ?? "")}/${String(g["version"] ?? "")}/${String(g["kind"] ?? "")}`, name);
    }
  }
  const smp = new Map<string, boolean>();
  const paths = isMap(raw) && isMap(raw["paths"]) ? raw["paths"] : {};
  for (const p of Object.values(paths)) {
    if (!isMap(p) || !isMap(p["patch"])) continue;
    const op = p["patch"];
    const g = op["x-kubernetes-group-version-kind"];
    if (!isMap(g)) continue;
    const key = `${String(g["group"] ?? "")}/${String(g["version"] ?? "")}/${String(g["kind"] ?? "")}`;
    if (smp.get(key) === true) continue;
    const content =
      isMap(op["requestBody"]) && isMap(op["requestBody"]["content"]) ? op["requestBody"]["content"] : undefined;
    smp.set(key, content !== undefined && "application/strategic-merge-patch+json" in content);
  }
  return { schemas, byGvk, smp };
}

function noMetaFallback(): PatchMeta {
  // Without OpenAPI there is no field metadata: lists are replaced, which is safe (never partial).
  return new OpenApiV3PatchMeta({}, undefined);
}
