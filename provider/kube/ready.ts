/**
 * Waiting for the cluster itself (`khook apply --wait-for-cluster 10m`, the Pulumi input
 * `waitForCluster`): a fleet job often starts when the cluster object exists, before its API
 * server answers. Until `/readyz` says ok, khook asks again with the engine's backoff (first
 * within 250 ms, capped at 1 s: the caller passes it), says so in one line, and one more when it answers.
 *
 * 401 and 403 count as answers: the server is up and the run will report the credentials
 * problem with its usual message.
 */
import { KhookError } from "../errors.js";
import { abortError } from "./api-errors.js";
import { sleep, type Transport } from "./transport.js";

export interface ClusterWaitOptions {
  /** How long to wait, from now. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** One line for people: when waiting starts, and when the server answers. */
  readonly say: (line: string) => void;
  readonly now?: () => number;
  /** The pause before probe `n` (1-based): the engine's transient backoff. */
  readonly delayMs: (n: number) => number;
}

const PROBE_TIMEOUT_MS = 5_000;

/** Why the server is not ready yet, in a few words, from a failed probe. */
function notReady(e: unknown): { ready: boolean; why: string } {
  const status = (e as { status?: unknown }).status;
  if (status === 401 || status === 403) return { ready: true, why: "" };
  const message = e instanceof Error ? e.message : String(e);
  const code = ((e as { cause?: NodeJS.ErrnoException }).cause?.code ?? "") as string;
  if (typeof status === "number") return { ready: false, why: `/readyz answered HTTP ${status}` };
  return { ready: false, why: code !== "" ? code : message.split("\n")[0]!.slice(0, 200) };
}

/** Resolves when the API server's /readyz answers ok; rejects with the last reason at the deadline. */
export async function waitForCluster(client: Transport, opts: ClusterWaitOptions): Promise<void> {
  const now = opts.now ?? Date.now;
  const start = now();
  const deadline = start + opts.timeoutMs;
  const delay = opts.delayMs;
  let waiting = false;
  let why = "";
  for (let n = 1; ; n++) {
    if (opts.signal?.aborted) throw abortError(opts.signal);
    try {
      await client.request({
        path: "/readyz",
        accept: "text/plain",
        timeoutMs: PROBE_TIMEOUT_MS,
        ...(opts.signal ? { signal: opts.signal } : {}),
        target: { what: "the API server's readiness (GET /readyz)" },
      });
      break;
    } catch (e) {
      if (opts.signal?.aborted) throw abortError(opts.signal);
      const probe = notReady(e);
      if (probe.ready) break;
      why = probe.why;
    }
    if (!waiting) {
      waiting = true;
      opts.say(
        `waiting for the API server at ${client.server} to be ready (${why}); up to ${new Date(deadline).toTimeString().slice(0, 8)}`,
      );
    }
    const pause = delay(n);
    if (now() + pause >= deadline) {
      throw new KhookError(
        "execution",
        `the API server at ${client.server} was not ready within the --wait-for-cluster time (${why}); check that the cluster is running, or wait longer`,
      );
    }
    await sleep(pause, opts.signal);
  }
  if (waiting) opts.say(`the API server at ${client.server} is ready after ${((now() - start) / 1000).toFixed(1)}s`);
}
