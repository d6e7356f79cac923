/**
 * The harness's own small API client, for the parts of the harness that act as cluster machinery
 * (the cluster's start-up checks, the lab's launcher): JSON requests and watches over HTTPS with the
 * cluster's admin certificate. Not khook's client: the harness must keep working whatever the
 * product's kube/ layer does.
 */
import fs from "node:fs";
import https from "node:https";
import path from "node:path";

export interface ApiResponse {
  status: number;
  body: string;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: Record<string, unknown>;
}

export class ApiClient {
  private readonly agent: https.Agent;

  constructor(
    readonly server: string,
    certsDir: string,
  ) {
    this.agent = new https.Agent({
      ca: fs.readFileSync(path.join(certsDir, "ca.crt")),
      cert: fs.readFileSync(path.join(certsDir, "admin.crt")),
      key: fs.readFileSync(path.join(certsDir, "admin.key")),
      keepAlive: true,
    });
  }

  request(
    method: string,
    p: string,
    body?: unknown,
    contentType = "application/json",
    timeoutMs = 10_000,
  ): Promise<ApiResponse> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(
        `${this.server}${p}`,
        {
          method,
          agent: this.agent,
          headers: data ? { "content-type": contentType, "content-length": Buffer.byteLength(data) } : {},
          timeout: timeoutMs,
        },
        (res) => {
          let out = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => (out += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: out }));
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${p}: request timed out`)));
      req.on("error", reject);
      req.end(data);
    });
  }

  /** GET that must answer 200, parsed. */
  async getJson<T = Record<string, unknown>>(p: string): Promise<T> {
    const r = await this.request("GET", p);
    if (r.status !== 200) throw new ApiError(r.status, `GET ${p}: ${r.status} ${r.body.slice(0, 300)}`);
    return JSON.parse(r.body) as T;
  }

  /**
   * Streams a watch (`p` with `watch=1` added) from `resourceVersion` until the server ends it, the
   * signal aborts it, or it fails. Resolves with the last resourceVersion seen.
   */
  watch(p: string, resourceVersion: string, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<string> {
    const sep = p.includes("?") ? "&" : "?";
    const url = `${this.server}${p}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`;
    let rv = resourceVersion;
    return new Promise((resolve, reject) => {
      const req = https.request(url, { method: "GET", agent: this.agent, signal }, (res) => {
        if (res.statusCode !== 200) {
          let out = "";
          res.on("data", (d: Buffer) => (out += d.toString()));
          res.on("end", () => reject(new ApiError(res.statusCode ?? 0, `watch ${p}: ${res.statusCode} ${out}`)));
          return;
        }
        let buf = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          buf += d;
          for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            const e = JSON.parse(line) as WatchEvent;
            if (e.type === "ERROR") {
              const code = Number((e.object as { code?: number }).code ?? 0);
              req.destroy();
              reject(new ApiError(code, `watch ${p}: ${JSON.stringify(e.object)}`));
              return;
            }
            const v = (e.object["metadata"] as { resourceVersion?: string } | undefined)?.resourceVersion;
            if (v) rv = v;
            onEvent(e);
          }
        });
        res.on("end", () => resolve(rv));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  }
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
