/**
 * Errors from the cluster. All are KhookErrors with code `execution`, so the
 * engine maps them to exit 1 without knowing about Kubernetes.
 */
import { KhookError } from "../errors.js";
import { describeObject, isObject, type ResourceType } from "../kubectl/types.js";

/** What the request was about, so errors name the object the way kubectl does. */
export interface ErrorTarget {
  resource?: Pick<ResourceType, "group" | "resource">;
  name?: string;
  namespace?: string;
  /** Free text used when there is no resource, e.g. `GET /apis`. */
  what?: string;
}

/** The API server answered with a failure Status. */
export class KubeApiError extends KhookError {
  /** HTTP status code, e.g. 404. */
  readonly status: number;
  /** The Status reason, e.g. `NotFound`, `Conflict`, `Invalid`, `Forbidden`. */
  readonly reason: string;
  /** The API server's own message, unchanged. */
  readonly apiMessage: string;
  /** The Status `details`, when present (causes of an `Invalid`, the kind/name). */
  readonly details: Record<string, unknown> | undefined;
  readonly target: ErrorTarget;

  constructor(
    status: number,
    reason: string,
    apiMessage: string,
    target: ErrorTarget,
    details?: Record<string, unknown>,
  ) {
    super("execution", formatApiError(status, reason, apiMessage, target));
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
    this.apiMessage = apiMessage;
    this.target = target;
    this.details = details;
  }

  get notFound(): boolean {
    return this.status === 404;
  }
  get conflict(): boolean {
    return this.status === 409;
  }
  get alreadyExists(): boolean {
    return this.status === 409 && this.reason === "AlreadyExists";
  }
  get gone(): boolean {
    return this.status === 410;
  }
}

function formatApiError(status: number, reason: string, message: string, t: ErrorTarget): string {
  const who = t.resource ? describeObject(t.resource, t.name, t.namespace) : (t.what ?? "request");
  const why = reason !== "" ? reason : `HTTP ${status}`;
  return `${who}: ${message} (${why})`;
}

/** Builds a KubeApiError from a response body, which is usually a metav1.Status. */
export function apiErrorFromResponse(
  status: number,
  body: unknown,
  rawText: string,
  target: ErrorTarget,
  headers: { readonly "retry-after"?: string | string[] | undefined } = {},
): KubeApiError {
  // The API server's own overload answers (APF, max-in-flight) are plain text with the pace only in
  // the Retry-After header: it goes into the details as retryAfterSeconds, where a Status puts it.
  const after = retryAfterHeader(headers["retry-after"]);
  const pace = (details: Record<string, unknown> | undefined) =>
    after !== undefined && details?.["retryAfterSeconds"] === undefined
      ? { ...details, retryAfterSeconds: after }
      : details;
  // A Status, also without its kind: the API server's timeout filter writes one bare
  // ({"metadata":{},"status":"Failure","message":"Timeout: ...","reason":"Timeout","code":504}).
  if (
    isObject(body) &&
    (body["kind"] === "Status" ||
      (body["kind"] === undefined && body["status"] === "Failure" && typeof body["message"] === "string"))
  ) {
    const reason = typeof body["reason"] === "string" ? body["reason"] : "";
    const message = typeof body["message"] === "string" ? body["message"] : rawText;
    const details = isObject(body["details"]) ? body["details"] : undefined;
    return new KubeApiError(status, reason, message, target, pace(details));
  }
  const text = rawText.trim().slice(0, 500) || httpStatusText(status);
  return new KubeApiError(status, reasonForStatus(status), text, target, pace(undefined));
}

/** Retry-After in seconds (the API server sends seconds; an HTTP date is not used by it and is ignored). */
function retryAfterHeader(v: string | string[] | undefined): number | undefined {
  const text = Array.isArray(v) ? v[0] : v;
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  const n = Number(text);
  return n > 0 ? n : undefined;
}

function reasonForStatus(status: number): string {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

function httpStatusText(status: number): string {
  return `the server responded with HTTP ${status}`;
}

/** The cluster could not be reached at all (DNS, refused, TLS, timeout). */
export class KubeConnectionError extends KhookError {
  readonly server: string;
  override readonly cause: unknown;
  /**
   * The server is not there for khook yet: nothing listens, its name does not resolve, no route, or it
   * never answered (it accepts connections and says nothing). Waiting for the cluster
   * (`--wait-for-cluster`) is the way out; retrying one request within a step is not.
   */
  readonly notUp: boolean;
  constructor(message: string, server: string, cause: unknown, notUp = false) {
    super("execution", message);
    this.name = "KubeConnectionError";
    this.server = server;
    this.cause = cause;
    this.notUp = notUp;
  }
}

/** The kubeconfig could not be loaded or names no usable context. */
export class KubeConfigError extends KhookError {
  constructor(message: string) {
    super("execution", message);
    this.name = "KubeConfigError";
  }
}

/** A wait ran out of time; the message says what was last seen. */
export class WaitTimeoutError extends KhookError {
  readonly lastState: string;
  constructor(message: string, lastState: string) {
    super("execution", message);
    this.name = "WaitTimeoutError";
    this.lastState = lastState;
  }
}

export function isKubeApiError(e: unknown): e is KubeApiError {
  return e instanceof KubeApiError;
}

export function isNotFound(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 404;
}

/** The signal's reason as an error, so cancellation surfaces as the engine expects. */
export function abortError(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r;
  return new KhookError("cancelled", typeof r === "string" ? r : "cancelled");
}
