/**
 * Which failures of the API server are transient: the cluster is still coming
 * up around the request (a webhook whose pod or CA bundle is not ready, a CRD
 * not Established yet, an aggregated API without its pod, an etcd leader
 * change, overload), so the same request succeeds once the cause clears.
 *
 * A pure classification, from the error values this folder makes (and the API
 * server's text another tool relayed, e.g. helm's stderr). It never decides to
 * retry; the engine does (provider/engine/transient-retry.ts), within the step's
 * deadline. What is not listed here is not transient — in particular a
 * webhook's deliberate denial, 400, 401, 403, 422 and everything that is not an
 * API server answer (a Job's own failure, a wait that ran out).
 */
import { UnknownResourceError } from "./discovery.js";
import { KubeApiError, KubeConnectionError } from "./api-errors.js";

/** Why an operation should be tried again, for people: `admission webhook policy.example.com (connection refused)`. */
export interface TransientCause {
  /** What khook waits for: `admission webhook policy.example.com`, `aggregated API metrics.k8s.io/v1beta1`. */
  readonly subject: string;
  /** The short reason: `connection refused`, `x509: certificate signed by unknown authority`. */
  readonly detail: string;
  /** The server's pace (429 / Retry-After), when it set one: the next try waits at least this long. */
  readonly retryAfterMs?: number;
}

/** `subject (detail)`: the cause as the waiting line names it. */
export function describeCause(c: TransientCause): string {
  return `${c.subject} (${c.detail})`;
}

/**
 * An error that carries text the API server produced but another program relayed (helm's stderr):
 * classified by that text. Tools set it on their errors; nothing else is read from them.
 */
export interface RelaysApiServerText {
  readonly apiServerText: string;
}

function relaysText(e: unknown): e is RelaysApiServerText {
  return typeof e === "object" && e !== null && typeof (e as { apiServerText?: unknown }).apiServerText === "string";
}

/** The transient cause of `e`, or undefined when trying again cannot help (or must not be done). */
export function transientCause(e: unknown): TransientCause | undefined {
  if (e instanceof KubeApiError) return apiErrorCause(e);
  if (e instanceof UnknownResourceError) return { subject: "its kind to be served", detail: e.message };
  if (e instanceof KubeConnectionError) return connectionCause(e);
  // ApplyAllError (and any error listing per-object failures): transient only when every failure is.
  const failures = (e as { failures?: unknown } | undefined)?.failures;
  if (e instanceof Error && Array.isArray(failures) && failures.length > 0) {
    const causes = failures.map((f) => transientCause((f as { error?: unknown }).error));
    if (causes.some((c) => c === undefined)) return undefined;
    return causes[0];
  }
  if (relaysText(e)) return textCause(e.apiServerText);
  // An executor's error that wraps the API server's (ES2022 `cause`) is what it wraps.
  if (e instanceof Error && e.cause instanceof Error) return transientCause(e.cause);
  return undefined;
}

const DENIED = /admission webhook "([^"]+)" denied the request/;
const CALLING_WEBHOOK = /failed calling webhook "([^"]+)"/;
const CONVERSION_WEBHOOK = /conversion webhook for ([^:]+?) failed/;
const ETCD = /etcdserver: (request timed out|leader changed|too many requests|no leader)/;

function apiErrorCause(e: KubeApiError): TransientCause | undefined {
  const msg = e.apiMessage;
  // Deliberate answers: a webhook's verdict, bad requests, authentication and authorization, validation.
  if (DENIED.test(msg)) return undefined;
  if (e.status === 400 || e.status === 401 || e.status === 403 || e.status === 422) return undefined;
  if (e.status === 503) {
    const r = e.target.resource;
    const subject = r !== undefined && r.group !== "" ? `aggregated API ${r.group}` : "the API server";
    return { subject, detail: shorten(msg) || "503 ServiceUnavailable" };
  }
  const fromText = textCause(msg);
  if (fromText !== undefined) return fromText;
  if (e.status === 429) {
    const after = retryAfterSeconds(e.details);
    return {
      subject: "the API server",
      detail: "429 TooManyRequests",
      ...(after !== undefined ? { retryAfterMs: after * 1000 } : {}),
    };
  }
  if (e.status === 504) return { subject: "the API server", detail: shorten(msg) || "504 Timeout" };
  // A conflicting update: the object changed under the request; the next try reads it again.
  if (e.status === 409 && e.reason === "Conflict") return { subject: "a conflicting update", detail: shorten(msg) };
  // The resource type itself is not served (yet): a CRD that is not Established, an APIService without its pod.
  if (e.status === 404 && e.reason === "NotFound" && /the server could not find the requested resource/.test(msg)) {
    const r = e.target.resource;
    return {
      subject:
        r !== undefined ? `${r.resource}${r.group !== "" ? `.${r.group}` : ""} to be served` : "its kind to be served",
      detail: "not served yet",
    };
  }
  return undefined;
}

/** Text the API server wrote (its own message, or relayed by a tool). */
export function textCause(text: string): TransientCause | undefined {
  if (DENIED.test(text)) return undefined;
  const hook = CALLING_WEBHOOK.exec(text);
  if (hook) return { subject: `admission webhook ${hook[1]}`, detail: webhookFailure(text.slice(hook.index)) };
  const conversion = CONVERSION_WEBHOOK.exec(text);
  if (conversion)
    return { subject: `conversion webhook for ${conversion[1]}`, detail: webhookFailure(text.slice(conversion.index)) };
  const etcd = ETCD.exec(text);
  if (etcd) return { subject: "the API server", detail: etcd[0] };
  if (/the server is currently unable to handle the request/.test(text))
    return { subject: "the API server", detail: "the server is currently unable to handle the request" };
  // helm's words for a kind not served yet (a CRD another chart installs).
  const kind = /no matches for kind "([^"]+)" in version "([^"]+)"/.exec(text);
  if (kind) return { subject: `kind ${kind[1]} in ${kind[2]} to be served`, detail: "no matches for kind" };
  if (/Operation cannot be fulfilled on .*the object has been modified/.test(text))
    return { subject: "a conflicting update", detail: "the object has been modified" };
  if (/connection reset by peer|http2: client connection lost|TLS handshake timeout/.test(text))
    return { subject: "the API server", detail: webhookFailure(text) };
  return undefined;
}

/** The reason a webhook could not be called, in the few words people search for. */
function webhookFailure(message: string): string {
  // The webhook's URL carries `?timeout=10s`: read only the words around it.
  const text = message.replace(/"https?:\/\/[^"]*"/g, '""');
  if (/connection refused/.test(text)) return "connection refused";
  if (/no endpoints available for service/.test(text)) return "no endpoints available for service";
  const x509 = /x509: [^"\n]*/.exec(text);
  if (x509) return x509[0].replace(/\s*\(.*$/, "").trim();
  const tls = /tls: [^"\n]*/.exec(text);
  if (tls) return tls[0].trim();
  if (/context deadline exceeded|Client\.Timeout exceeded|i\/o timeout|timeout/.test(text)) return "timeout";
  if (/connection reset by peer|EOF/.test(text)) return "connection reset";
  if (/TLS handshake timeout/.test(text)) return "TLS handshake timeout";
  if (/an error on the server|received invalid webhook response/.test(text))
    return "the webhook answered with an error";
  const status = /status code:? (\d{3})|code (\d{3})/.exec(text);
  if (status) return `HTTP ${status[1] ?? status[2]}`;
  return shorten(text.split(": ").slice(-1)[0] ?? text);
}

function connectionCause(e: KubeConnectionError): TransientCause | undefined {
  const code = (e.cause as NodeJS.ErrnoException | undefined)?.code ?? "";
  // A reset or a stalled socket mid-run (an API server restarting, a leader change behind a load
  // balancer). Refused, unresolvable, silent (never answered) or untrusted servers stay errors:
  // --wait-for-cluster is for a cluster that is not up yet.
  if (e.notUp) return undefined;
  if (code === "ECONNRESET" || code === "EPIPE" || code === "ETIMEDOUT")
    return { subject: "the API server", detail: code === "ETIMEDOUT" ? "no response" : "connection reset" };
  return undefined;
}

function retryAfterSeconds(details: Record<string, unknown> | undefined): number | undefined {
  const v = details?.["retryAfterSeconds"];
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : undefined;
}

function shorten(s: string): string {
  const one = s.split("\n")[0]!.trim();
  return one.length > 120 ? `${one.slice(0, 117)}...` : one;
}
