/**
 * The load-time half of the manifest sources apply: and delete: share (inline, file, url,
 * kustomize): their rules, their one-line description, the files they reference, their
 * hash's canonical form and the credentials their URLs may carry. read-sources.ts reads them
 * at run time. Rules:
 *
 *   manifest-shape            every manifest document is a mapping with apiVersion, kind and metadata.name
 *   kustomize-local-only      a kustomization may not reference remote bases
 *   source-url, local-path, local-file-exists  (dsl/rules.ts)
 */
import fs from "node:fs";
import path from "node:path";
import { describeChartText, splitUserinfo } from "../../helm/chart.js";
import { findRemoteKustomizeBases } from "../../dsl/hash.js";
import type { FileReference, KindRuleContext, Pointer, Report } from "../../dsl/step-kind.js";
import { checkLocalPath, checkUrl } from "../../dsl/rules.js";
import { parseYamlStream } from "../../dsl/yaml-stream.js";
import type { ManifestSource } from "./definition.js";

export function checkManifests(
  manifests: readonly ManifestSource[] | undefined,
  at: Pointer,
  ctx: KindRuleContext,
  report: Report,
): void {
  manifests?.forEach((m, j) => {
    if ("inline" in m) checkManifestText(m.inline, at("manifests", j, "inline"), report);
    if ("url" in m) checkUrl(m.url, at("manifests", j, "url"), report);
    if ("file" in m) {
      const resolved = checkLocalPath(m.file, at("manifests", j, "file"), ctx, report, "file", false);
      if (resolved !== undefined)
        checkManifestText(fs.readFileSync(resolved, "utf8"), at("manifests", j, "file"), report, m.file);
    }
    if ("kustomize" in m) {
      const resolved = checkLocalPath(m.kustomize, at("manifests", j, "kustomize"), ctx, report, "directory");
      if (resolved !== undefined) {
        for (const remote of findRemoteKustomizeBases(resolved)) {
          report(
            at("manifests", j, "kustomize"),
            `the kustomization in ${path.relative(ctx.baseDir, remote.dir) || "."} references a remote base (${remote.ref}); kustomize: sources must be local, because remote bases need git. Vendor the base into the repository and reference it by a relative path`,
            "kustomize-local-only",
          );
        }
      }
    }
  });
}

/** Each document must be a Kubernetes object; empty documents are allowed (like kubectl). */
function checkManifestText(text: string, p: string, report: Report, file?: string): void {
  const where = file ? ` in ${file}` : "";
  parseYamlStream(text).forEach((d, k) => {
    if (d.error !== undefined) {
      report(p, `manifest document ${k + 1}${where} is not valid YAML: ${d.error}`, "manifest-shape");
      return;
    }
    const v = d.value;
    if (v === null || v === undefined) return;
    if (typeof v !== "object" || Array.isArray(v)) {
      report(p, `manifest document ${k + 1}${where} is not a mapping`, "manifest-shape");
      return;
    }
    const o = v as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; generateName?: unknown } };
    const missing = [
      typeof o.apiVersion !== "string" ? "apiVersion" : undefined,
      typeof o.kind !== "string" ? "kind" : undefined,
      typeof o.metadata?.name !== "string" && o.kind !== "List" ? "metadata.name" : undefined,
    ].filter((x): x is string => x !== undefined);
    if (missing.length > 0)
      report(p, `manifest document ${k + 1}${where} has no ${missing.join(", ")}`, "manifest-shape");
  });
}

/** `2 sources (inline, ./crds.yaml)`, for summaries. Never a credential. */
export function describeSources(manifests: readonly ManifestSource[] | undefined): string {
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

/** The local files and kustomize directories of the sources, in order. */
export function manifestReferences(manifests: readonly ManifestSource[] | undefined, baseDir: string): FileReference[] {
  const refs: FileReference[] = [];
  manifests?.forEach((m, i) => {
    if ("file" in m)
      refs.push({
        role: "manifest",
        written: m.file,
        resolved: path.resolve(baseDir, m.file),
        field: `/manifests/${i}/file`,
      });
    if ("kustomize" in m)
      refs.push({
        role: "kustomize",
        written: m.kustomize,
        resolved: path.resolve(baseDir, m.kustomize),
        field: `/manifests/${i}/kustomize`,
      });
  });
  return refs;
}

/** In the hash, inline manifests are data: comments, key order and quoting inside them do not count. */
export function canonicalManifests(block: Record<string, unknown>): void {
  if (!Array.isArray(block["manifests"])) return;
  block["manifests"] = (block["manifests"] as ManifestSource[]).map((m) =>
    "inline" in m
      ? {
          inline: parseYamlStream(m.inline)
            .map((d) => d.value)
            .filter((v) => v !== null && v !== undefined),
        }
      : m,
  );
}

/** The passwords in the sources' URLs (read before validation: `block` may be anything). */
export function manifestCredentials(block: unknown): string[] {
  const manifests = (block as { manifests?: unknown } | null)?.manifests;
  if (!Array.isArray(manifests)) return [];
  return manifests.flatMap((m: unknown) => {
    const url = (m as { url?: unknown } | null)?.url;
    const password = typeof url === "string" ? splitUserinfo(url).password : undefined;
    return password ? [password] : [];
  });
}
