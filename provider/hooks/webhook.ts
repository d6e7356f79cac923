/**
 * The webhook client: the Scoby hooks API v1 contract. The only code
 * in khook that calls webhooks.
 *
 * Request: POST JSON `{phase, object, children, context}`. A 2xx answer may carry
 * `children` (the changed set; absent or empty means "no changes"); any other
 * status carries `{message, permanent, continue}`.
 *
 * - HTTPS with certificate verification (Node's defaults; NODE_EXTRA_CA_CERTS adds
 *   a private CA); plain http only to loopback addresses (checked at load, and
 *   again here). Redirects are not followed: a redirect could leave TLS.
 * - Every request is bounded by the hook's timeout, every answer by a size cap.
 * - Header values and everything the hook answers pass through the redactor
 *   before anyone sees them.
 */
import type { LoadedWebhookHandler } from "../dsl/hooks.js";
import { webhookUrlProblem } from "../dsl/hooks.js";
import { formatDuration } from "../dsl/duration.js";
import type { Redactor } from "../redact.js";

/** A webhook's answer may not exceed this. */
export const WEBHOOK_RESPONSE_CAP_BYTES = 8 * 1024 * 1024;

export interface WebhookRequest {
  readonly phase: string;
  readonly object: unknown;
  readonly children: Readonly<Record<string, unknown>>;
  readonly context: unknown;
}

export type WebhookAnswer =
  /** 2xx. `children` is undefined when the hook asked for no changes. */
  | {
      readonly kind: "ok";
      readonly children: Record<string, Record<string, unknown>> | undefined;
      readonly status: number;
    }
  /** A non-2xx answer in the contract's error shape (or without a body: then permanent and continue are false). */
  | {
      readonly kind: "error";
      readonly status: number;
      readonly message: string;
      readonly permanent: boolean;
      readonly continue: boolean;
    }
  /** The hook could not be reached or answered outside the contract: failurePolicy decides. */
  | { readonly kind: "unreachable"; readonly message: string };

export async function callWebhook(
  hook: LoadedWebhookHandler,
  request: WebhookRequest,
  opts: { redactor: Redactor; signal: AbortSignal },
): Promise<WebhookAnswer> {
  const redact = (s: string): string => opts.redactor.redact(s);
  const problem = webhookUrlProblem(hook.url);
  if (problem !== undefined) return { kind: "unreachable", message: redact(`webhook url ${problem}`) };
  const where = redact(describeUrl(hook.url));
  const timeout = AbortSignal.timeout(Math.max(1, hook.timeoutMs));
  let response: Response;
  try {
    response = await fetch(hook.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...hook.headers },
      body: JSON.stringify(request),
      redirect: "manual",
      signal: AbortSignal.any([opts.signal, timeout]),
    });
  } catch (e) {
    if (opts.signal.aborted) throw e;
    const reason = timeout.aborted ? `no answer within ${formatDuration(hook.timeoutMs)}` : causeOf(e);
    return { kind: "unreachable", message: redact(`cannot reach ${where}: ${reason}`) };
  }
  let text: string;
  try {
    text = await readCapped(response, WEBHOOK_RESPONSE_CAP_BYTES);
  } catch (e) {
    if (opts.signal.aborted) throw e;
    return {
      kind: "unreachable",
      message: redact(
        `${where} answered HTTP ${response.status}, but ${timeout.aborted ? `the body did not arrive within ${formatDuration(hook.timeoutMs)}` : (e as Error).message}`,
      ),
    };
  }
  if (response.status >= 300 && response.status < 400) {
    return {
      kind: "unreachable",
      message: redact(
        `${where} answered with a redirect (HTTP ${response.status}); khook does not follow webhook redirects`,
      ),
    };
  }
  const body = parseJson(text);
  if (response.status >= 200 && response.status < 300) {
    if (text.trim() === "") return { kind: "ok", children: undefined, status: response.status };
    if (body === undefined || typeof body !== "object" || body === null || Array.isArray(body)) {
      return {
        kind: "unreachable",
        message: redact(`${where} answered HTTP ${response.status} with a body that is not a JSON object`),
      };
    }
    const children = (body as Record<string, unknown>).children;
    if (children === undefined || children === null)
      return { kind: "ok", children: undefined, status: response.status };
    if (typeof children !== "object" || Array.isArray(children))
      return { kind: "unreachable", message: redact(`${where}: children must be a map of name to object`) };
    const map: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(children as Record<string, unknown>)) {
      if (
        v === null ||
        typeof v !== "object" ||
        Array.isArray(v) ||
        typeof (v as Record<string, unknown>).kind !== "string"
      ) {
        return {
          kind: "unreachable",
          message: redact(`${where}: child ${JSON.stringify(k)} is not a Kubernetes object`),
        };
      }
      map[k] = v as Record<string, unknown>;
    }
    return { kind: "ok", children: Object.keys(map).length === 0 ? undefined : map, status: response.status };
  }
  const err =
    body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const message =
    typeof err.message === "string" && err.message !== ""
      ? err.message
      : `HTTP ${response.status} ${response.statusText}`.trim();
  return {
    kind: "error",
    status: response.status,
    message: redact(message),
    permanent: err.permanent === true,
    continue: err.continue === true,
  };
}

/** scheme://host[:port]/path, without query or credentials, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "<invalid url>";
  }
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function readCapped(response: Response, cap: number): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`its answer is larger than ${cap / (1024 * 1024)} MiB`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
