/**
 * The secrets in a helm release's manifest diff (plan --diff), masked as kubectl diff masks them.
 */
import { parseAllDocuments, stringify as stringifyYaml } from "yaml";
import type { KubeObject } from "../../kube/index.js";
import { maskSecretPair } from "../cluster/resolve-objects.js";

/**
 * Like `kubectl diff`, never shows a Secret's data: each value becomes `***`,
 * or `*** (before)` / `*** (after)` where it changed. Other documents are kept
 * as they are.
 */
export function maskSecretData(before: string, after: string): { before: string; after: string } {
  const a = splitManifest(before);
  const b = splitManifest(after);
  const secretsOf = (docs: ManifestDoc[]): Map<string, Record<string, unknown>> =>
    new Map(
      docs.flatMap((d) =>
        d.secretKey !== undefined && d.parsed !== undefined ? [[d.secretKey, d.parsed] as const] : [],
      ),
    );
  const av = secretsOf(a);
  const bv = secretsOf(b);
  const render = (docs: ManifestDoc[], other: Map<string, Record<string, unknown>>, side: "before" | "after"): string =>
    docs
      .map((d) => {
        if (d.secretKey === undefined || d.parsed === undefined) return d.text;
        const theirs = other.get(d.secretKey) as KubeObject | undefined;
        const mine = d.parsed as KubeObject;
        const masked = side === "before" ? maskSecretPair(mine, theirs).before : maskSecretPair(theirs, mine).after;
        return `${d.header}${stringifyYaml(masked)}`;
      })
      .join("");
  return { before: render(a, bv, "before"), after: render(b, av, "after") };
}

interface ManifestDoc {
  text: string;
  header: string;
  parsed: Record<string, unknown> | undefined;
  secretKey: string | undefined;
}

function splitManifest(text: string): ManifestDoc[] {
  if (text === "") return [];
  const parts = text.split(/(?=^---[ \t]*$)/m);
  return parts.map((part) => {
    const doc: ManifestDoc = { text: part, header: "", parsed: undefined, secretKey: undefined };
    let parsed: unknown;
    try {
      const docs = parseAllDocuments(part);
      if (!Array.isArray(docs) || docs.length !== 1 || docs[0]!.errors.length > 0) return doc;
      parsed = docs[0]!.toJS();
    } catch {
      return doc;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return doc;
    const o = parsed as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    if (o.kind !== "Secret") return doc;
    // Keep the `---` line and helm's `# Source:` comment above the object.
    const lines = part.split("\n");
    let i = 0;
    while (i < lines.length && (/^---/.test(lines[i]!) || /^\s*#/.test(lines[i]!) || lines[i]!.trim() === "")) i++;
    doc.header = lines.slice(0, i).join("\n") + (i > 0 ? "\n" : "");
    doc.parsed = parsed as Record<string, unknown>;
    doc.secretKey = `${String(o.metadata?.namespace ?? "")}/${String(o.metadata?.name ?? "")}`;
    return doc;
  });
}
