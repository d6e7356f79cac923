/**
 * helm's release records, read from the cluster instead of through two helm processes.
 *
 * helm 3 keeps each revision of a release in a Secret (its default "secret" storage driver)
 * named `sh.helm.release.v1.<release>.v<revision>`, labelled `owner=helm,name=<release>`, whose
 * `release` field is base64 of gzip of the release JSON. Deciding install / upgrade / no-op needs
 * the history and the latest revision's user values: `helm history` and `helm get values` read
 * exactly these, at the cost of a helm process each (a few hundred ms of CPU). One list request
 * does the same. Pure decoding here; the list goes through provider/kube like every API call
 * (steps/helm.ts gathers it).
 */
import { gunzipSync } from "node:zlib";
import type { KubeObject } from "../kubectl/types.js";
import type { HelmRevision } from "./release.js";

export const RELEASE_SECRET_TYPE = "helm.sh/release.v1";

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

/**
 * The history and latest user values of one release from its revision Secrets, or undefined when
 * any of them cannot be read as helm wrote it (the caller then asks helm itself).
 */
export function storedReleases(secrets: readonly KubeObject[], release: string): StoredReleases | undefined {
  const revisions: { revision: HelmRevision; config: unknown; manifest: unknown; hooks: unknown }[] = [];
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
      config: r.config,
      manifest: r.manifest,
      hooks: r.hooks,
    });
  }
  if (revisions.length === 0) return { history: undefined, latestValues: {} };
  revisions.sort((a, b) => a.revision.revision - b.revision.revision);
  const { config, manifest, hooks } = revisions[revisions.length - 1]!;
  return {
    // `helm history --max 20`: the latest twenty.
    history: revisions.slice(-20).map((r) => r.revision),
    latestValues:
      config !== null && typeof config === "object" && !Array.isArray(config)
        ? (config as Record<string, unknown>)
        : {},
    ...(typeof manifest === "string" ? { latestManifest: manifest } : {}),
    latestHookEvents: hookEvents(hooks),
  };
}

/** The events a release's hooks run at (`helm get hooks` lists the hooks; each has `events`). */
function hookEvents(hooks: unknown): string[] {
  const events = new Set<string>();
  if (Array.isArray(hooks))
    for (const h of hooks) {
      const list = h !== null && typeof h === "object" ? (h as { events?: unknown }).events : undefined;
      if (Array.isArray(list)) for (const e of list) if (typeof e === "string") events.add(e);
    }
  return [...events].sort();
}
