/**
 * helm's release records, read from the cluster instead of through two helm processes.
 *
 * helm 3 keeps each revision of a release in a Secret (its default "secret" storage driver)
 * named `sh.helm.release.v1.<release>.v<revision>`, labelled `owner=helm,name=<release>`, whose
 * `release` field is base64 of gzip of the release JSON. Deciding install / upgrade / no-op needs
 * the history and the latest revision's user values: `helm history` and `helm get values` read
 * exactly these, at the cost of a helm process each (a few hundred ms of CPU). One list request
 * does the same. Pure decoding here; the list goes through provider/kube like every API call
 * (steps/helm/executor.ts gathers it).
 */
import { gunzipSync } from "node:zlib";
import type { KubeObject, ResourceType } from "../kubectl/types.js";
import type { HelmRevision } from "./release.js";

export const RELEASE_SECRET_TYPE = "helm.sh/release.v1";

/** Where helm's secret driver keeps releases: core/v1 Secrets. */
export const RELEASE_STORAGE: ResourceType = {
  group: "",
  version: "v1",
  resource: "secrets",
  kind: "Secret",
  namespaced: true,
};

/** The label selector of every release's revision Secrets in a namespace. */
export const ALL_RELEASES_SELECTOR = "owner=helm";

/** The revision Secrets of `release` among those ALL_RELEASES_SELECTOR listed. */
export function secretsOfRelease(secrets: readonly KubeObject[], release: string): KubeObject[] {
  return secrets.filter((s) => s.metadata?.labels?.["name"] === release);
}

/** The label selector of one release's revision Secrets. */
export function releaseSelector(release: string): string {
  return `owner=helm,name=${release}`;
}

export interface StoredReleases {
  /** Revisions oldest first, as `helm history -o json` lists them; undefined when there are none. */
  history: HelmRevision[] | undefined;
  /** The user-supplied values of the latest revision (`helm get values`). */
  latestValues: Record<string, unknown>;
  /** The latest revision's manifest (`helm get manifest`), when there is one. */
  latestManifest?: string;
  /** The events the latest revision's chart hooks run at (`post-delete`, ...), each once. */
  latestHookEvents?: string[];
}

interface ReleaseJson {
  name?: unknown;
  version?: unknown;
  config?: unknown;
  manifest?: unknown;
  hooks?: unknown;
  info?: { status?: unknown; last_deployed?: unknown; description?: unknown };
  chart?: { metadata?: { name?: unknown; version?: unknown; appVersion?: unknown } };
}

/** One revision Secret's release JSON, or undefined when the Secret is not one helm wrote. */
export function decodeReleaseSecret(secret: KubeObject): ReleaseJson | undefined {
  if (secret["type"] !== RELEASE_SECRET_TYPE) return undefined;
  const data = secret["data"];
  const field = data !== null && typeof data === "object" ? (data as Record<string, unknown>)["release"] : undefined;
  if (typeof field !== "string") return undefined;
  try {
    // The API's base64 of helm's base64 of the gzipped JSON (helm stores it gzipped when it starts with the gzip magic).
    const inner = Buffer.from(Buffer.from(field, "base64").toString("utf8"), "base64");
    const json = inner[0] === 0x1f && inner[1] === 0x8b ? gunzipSync(inner).toString("utf8") : inner.toString("utf8");
    const parsed = JSON.parse(json) as unknown;
    return parsed !== null && typeof parsed === "object" ? (parsed as ReleaseJson) : undefined;
  } catch {
    return undefined;
  }
}

/** One revision as its Secret holds it: the history entry, its user-supplied values and its manifest. */
export interface StoredRevision {
  readonly revision: HelmRevision;
  /** The user-supplied values (`helm get values --revision N`). */
  readonly config: Record<string, unknown>;
  readonly manifest?: string;
  /** The events its chart's hooks run at (`helm get hooks`: each hook's `events`), each once. */
  readonly hookEvents?: string[];
}

/**
 * Every stored revision of one release, oldest first (empty when there is none), or undefined
 * when any of its Secrets cannot be read as helm wrote it.
 */
export function storedRevisions(secrets: readonly KubeObject[], release: string): StoredRevision[] | undefined {
  const revisions: StoredRevision[] = [];
  for (const s of secrets) {
    const r = decodeReleaseSecret(s);
    if (r === undefined || r.name !== release || typeof r.version !== "number") return undefined;
    const meta = r.chart?.metadata ?? {};
    revisions.push({
      revision: {
        revision: r.version,
        updated: typeof r.info?.last_deployed === "string" ? r.info.last_deployed : "",
        status: typeof r.info?.status === "string" ? r.info.status : "unknown",
        chart: `${String(meta.name ?? "")}-${String(meta.version ?? "")}`,
        app_version: typeof meta.appVersion === "string" ? meta.appVersion : "",
        description: typeof r.info?.description === "string" ? r.info.description : "",
      },
      config:
        r.config !== null && typeof r.config === "object" && !Array.isArray(r.config)
          ? (r.config as Record<string, unknown>)
          : {},
      ...(typeof r.manifest === "string" ? { manifest: r.manifest } : {}),
      hookEvents: hookEvents(r.hooks),
    });
  }
  return revisions.sort((a, b) => a.revision.revision - b.revision.revision);
}

/**
 * The history and latest user values of one release from its revision Secrets, or undefined when
 * any of them cannot be read as helm wrote it (the caller then asks helm itself).
 */
export function storedReleases(secrets: readonly KubeObject[], release: string): StoredReleases | undefined {
  const revisions = storedRevisions(secrets, release);
  if (revisions === undefined) return undefined;
  if (revisions.length === 0) return { history: undefined, latestValues: {} };
  const { config, manifest, hookEvents: events } = revisions[revisions.length - 1]!;
  return {
    // `helm history --max 20`: the latest twenty.
    history: revisions.slice(-20).map((r) => r.revision),
    latestValues: config,
    ...(manifest !== undefined ? { latestManifest: manifest } : {}),
    latestHookEvents: events ?? [],
  };
}

/** The events a release's hooks run at. */
function hookEvents(hooks: unknown): string[] {
  const events = new Set<string>();
  if (Array.isArray(hooks))
    for (const h of hooks) {
      const list = h !== null && typeof h === "object" ? (h as { events?: unknown }).events : undefined;
      if (Array.isArray(list)) for (const e of list) if (typeof e === "string") events.add(e);
    }
  return [...events].sort();
}
