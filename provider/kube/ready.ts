/**
 * Waiting for the cluster itself (`khook apply --wait-for-cluster 10m`, the Pulumi input
 * `waitForCluster`): a fleet job often starts when the cluster object exists, before its API
 * server answers. Until `/readyz` says ok, khook asks again with the engine's backoff (first
 * within 250 ms, capped at 1 s: the caller passes it), says so in one line, and one more when it answers.
 *
 * The wait ends at its deadline, not after it: each probe is bounded by the time left, so a server
 * that accepts connections and never answers costs the wait it was given and no more.
 *
 * 401 and 403 count as answers: the server is up and the run will report the credentials
 * problem with its usual message.
 */
import { KhookError } from "../errors.js";
import { abortError, KubeConnectionError } from "./api-errors.js";
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
  /** How the wait was asked for, as the person wrote it: `--wait-for-cluster 2s`, `waitForCluster "2s"`. */
  readonly setting: string;
  /** The server as errors name it, with its context and kubeconfig (KubeClient.describeServer()); default its URL. */
  readonly where?: string;
}

/** The wait ran out before the API server was ready. */
export class ClusterNotReadyError extends KhookError {
  constructor(message: string) {
    super("execution", message);
    this.name = "ClusterNotReadyError";
  }
}

/** The bound on one probe; the time left to wait bounds it too. */
const PROBE_TIMEOUT_MS = 5_000;

/** Why the server is not ready yet, in a few words, from a failed probe. */
function notReady(e: unknown): { ready: boolean; why: string } {
  const status = (e as { status?: unknown }).status;
  if (status === 401 || status === 403) return { ready: true, why: "" };
  if (typeof status === "number") return { ready: false, why: `/readyz answered HTTP ${status}` };
  const code = ((e as { cause?: NodeJS.ErrnoException }).cause?.code ?? "") as string;
  if (e instanceof KubeConnectionError && e.notUp && code === "ETIMEDOUT")
    return { ready: false, why: "no answer: it accepts connections but does not answer" };
  const message = e instanceof Error ? e.message : String(e);
  return { ready: false, why: code !== "" ? code : message.split("\n")[0]!.slice(0, 200) };
}

/** Resolves when the API server's /readyz answers ok; rejects with the last reason at the deadline. */
export async function waitForCluster(client: Transport, opts: ClusterWaitOptions): Promise<void> {
  const now = opts.now ?? Date.now;
  const start = now();
  const deadline = start + opts.timeoutMs;
  const delay = opts.delayMs;
  const where = opts.where ?? `the API server at ${client.server}`;
  let waiting = false;
  let why = "";
  for (let n = 1; ; n++) {
    if (opts.signal?.aborted) throw abortError(opts.signal);
    try {
      await client.request({
        path: "/readyz",
        accept: "text/plain",
        timeoutMs: PROBE_TIMEOUT_MS,
        deadline,
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
    const left = deadline - now();
    if (left <= 0) {
      throw new ClusterNotReadyError(
        `${where} was not ready within ${opts.setting} (${why}); check that the cluster is running and that the kubeconfig/context point at it, or wait longer`,
      );
    }
    if (!waiting) {
      waiting = true;
      opts.say(
        `waiting for the API server at ${client.server} to be ready (${why}); up to ${new Date(deadline).toTimeString().slice(0, 8)}`,
      );
    }
    await sleep(Math.min(delay(n), left), opts.signal);
  }
  if (waiting) opts.say(`the API server at ${client.server} is ready after ${((now() - start) / 1000).toFixed(1)}s`);
}
