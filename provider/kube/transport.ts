/**
 * What the modules of provider/kube need from a connection: raw requests to
 * the API server. KubeClient is the implementation; objects, discovery,
 * OpenAPI, watches and logs take this interface, so none of them imports the
 * client that composes them.
 */
import type * as http from "node:http";
import { abortError, type ErrorTarget } from "./api-errors.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type QueryValue = string | number | boolean | undefined | readonly string[];

export interface RequestOptions {
  method?: HttpMethod;
  /** Absolute API path, e.g. `/apis/apps/v1/namespaces/x/deployments/y`. */
  path: string;
  query?: Record<string, QueryValue>;
  /** Sent as JSON unless it is already a string or Buffer. */
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  /** Names the object in errors, kubectl-style. */
  target?: ErrorTarget;
  /** Socket inactivity timeout; default 60s. 0 disables it (watches). */
  timeoutMs?: number;
  /**
   * When the whole answer must be in (ms since the epoch): a wait's deadline. The request's own
   * timeout is capped to the time left, and a request still unanswered then fails as one the
   * server did not answer (a KubeConnectionError naming the server), never later.
   */
  deadline?: number;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One cluster's API server, as raw REST. */
export interface Transport {
  /** The API server URL, e.g. `https://127.0.0.1:6443`. */
  readonly server: string;
  /** Sends one request and reads the whole response. Failure statuses become KubeApiError. */
  request(opts: RequestOptions): Promise<RawResponse>;
  /** Sends a request and parses the JSON response. */
  requestJson<T = unknown>(opts: RequestOptions): Promise<T>;
  /** Opens a streaming response (watch, follow logs). The caller consumes and destroys it. */
  stream(opts: RequestOptions): Promise<http.IncomingMessage>;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(abortError(signal!));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
