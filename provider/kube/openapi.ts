/**
 * The server's OpenAPI v3 documents, fetched per group-version and cached.
 * What they mean for kubectl apply (strategic merge or JSON merge patch, and
 * how each field merges) is decided by provider/kubectl/patchplan.ts.
 */
import { parseGvDoc, patchPlanFor, type GvDoc, type PatchPlan } from "../kubectl/patchplan.js";
import { isMap } from "../kubectl/threeway.js";
import type { ResourceType } from "../kubectl/types.js";
import { isNotFound } from "./api-errors.js";
import type { Transport } from "./transport.js";

export type { PatchPlan };

export class OpenApiCache {
  private readonly client: Transport;
  private index: Promise<Record<string, string> | undefined> | undefined;
  private readonly docs = new Map<string, Promise<GvDoc | undefined>>();

  constructor(client: Transport) {
    this.client = client;
  }

  /**
   * How to patch this kind: strategic merge (with its field metadata) when the
   * server's OpenAPI v3 says PATCH accepts `application/strategic-merge-patch+json`,
   * else JSON merge patch (custom resources, aggregated APIs).
   */
  async patchPlan(rt: ResourceType, signal?: AbortSignal): Promise<PatchPlan> {
    return patchPlanFor(rt, await this.gvDoc(rt.group, rt.version, signal));
  }

  /** Forgets everything (after CRDs change, for instance). */
  invalidate(): void {
    this.index = undefined;
    this.docs.clear();
  }

  private async gvDoc(group: string, version: string, signal?: AbortSignal): Promise<GvDoc | undefined> {
    const gv = group === "" ? `api/${version}` : `apis/${group}/${version}`;
    let p = this.docs.get(gv);
    if (!p) {
      p = this.fetchGv(gv, signal);
      this.docs.set(gv, p);
      p.catch(() => this.docs.delete(gv));
    }
    return p;
  }

  private async fetchGv(gv: string, signal?: AbortSignal): Promise<GvDoc | undefined> {
    const index = await this.fetchIndex(signal);
    if (!index) return undefined;
    const url = index[gv];
    if (url === undefined) return undefined;
    const u = new URL(url, "http://x");
    const query: Record<string, string> = {};
    u.searchParams.forEach((v, k) => (query[k] = v));
    const raw = await this.client.requestJson<unknown>({
      path: u.pathname,
      query,
      signal,
      target: { what: `OpenAPI v3 (GET ${u.pathname})` },
    });
    return parseGvDoc(raw);
  }

  private fetchIndex(signal?: AbortSignal): Promise<Record<string, string> | undefined> {
    if (!this.index) {
      this.index = (async () => {
        try {
          const raw = await this.client.requestJson<unknown>({
            path: "/openapi/v3",
            signal,
            target: { what: "OpenAPI v3 (GET /openapi/v3)" },
          });
          const paths = isMap(raw) && isMap(raw["paths"]) ? raw["paths"] : {};
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(paths)) {
            if (isMap(v) && typeof v["serverRelativeURL"] === "string") out[k] = v["serverRelativeURL"];
          }
          return out;
        } catch (e) {
          if (isNotFound(e)) return undefined; // server without OpenAPI v3
          this.index = undefined;
          throw e;
        }
      })();
    }
    return this.index;
  }
}
