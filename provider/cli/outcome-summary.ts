/**
 * The one JSON document `apply`, `destroy`, `status` and `plan` print with `-o json`, whatever the outcome:
 * a fleet runner reads one summary per cluster, and the clusters that matter are those that failed.
 * It always carries the outcome (a word a program can branch on), the exit code and which cluster it
 * was (`cluster`, with null for what could not be known), and, when the command failed before or
 * outside its steps, the error and, for invalid input, every problem.
 *
 * Pure: which outcome an error or a run result is, and the fields that say so. The command decides
 * what else goes in (provider/cli/commands/cluster.ts).
 */
import type { RunResult } from "../engine/run.js";
import { EXIT_CODES, isKhookError, type Diagnostic } from "../errors.js";
import { KubeConfigError, KubeConnectionError } from "../kube/api-errors.js";
import { ClusterNotReadyError } from "../kube/ready.js";

/**
 * What happened, in one word:
 * - `ok`: the command did what it was asked;
 * - `step-failed`: a step failed (apply, destroy);
 * - `cancelled`: interrupted (Ctrl-C, SIGTERM);
 * - `invalid-input`: the spec, a variable, a var file or a flag (exit 2: a retry cannot help);
 * - `no-kubeconfig`: no usable kubeconfig or context (nothing was asked of any cluster);
 * - `unreachable`: the API server did not answer: nothing listens, its name does not resolve, no
 *   route, or it accepts connections and says nothing;
 * - `cluster-not-ready`: `--wait-for-cluster` ran out before the API server was ready;
 * - `error`: anything else (the state record locked by another run or not writable, credentials
 *   refused, a tool missing); `error` says which.
 */
export type Outcome =
  | "ok"
  | "step-failed"
  | "cancelled"
  | "invalid-input"
  | "no-kubeconfig"
  | "unreachable"
  | "cluster-not-ready"
  | "error";

/** Which cluster the command talked to, as far as it is known (operations.ts ClusterIdentity). */
export interface ClusterFields {
  readonly server: string | null;
  readonly kubeSystemUid: string | null;
}

/** What the command learnt of the connection: whether the API server ever answered, and its last failure to reach it. */
export interface Reach {
  /** Whether the command's session opened: not tried yet, failed (the kubeconfig was not usable), or open. */
  readonly session: "not-tried" | "failed" | "open";
  readonly answered: boolean;
  readonly lastNotUp: KubeConnectionError | undefined;
}

export const NOT_TRIED: Reach = { session: "not-tried", answered: false, lastNotUp: undefined };

/** The outcome of an error that ended the command. */
export function outcomeOfError(e: unknown, reach: Reach): Outcome {
  if (isKhookError(e) && e.code === "invalid-input") return "invalid-input";
  if (isKhookError(e) && e.code === "cancelled") return "cancelled";
  if (e instanceof ClusterNotReadyError) return "cluster-not-ready";
  if (e instanceof KubeConfigError || reach.session === "failed") return "no-kubeconfig";
  if ((e instanceof KubeConnectionError && e.notUp) || unreachable(reach)) return "unreachable";
  return "error";
}

/** The outcome of a run that finished (possibly before its first step, e.g. its record unreadable). */
export function outcomeOfRun(result: RunResult, reach: Reach): Outcome {
  if (result.status === "succeeded") return "ok";
  if (result.status === "cancelled") return "cancelled";
  if (result.steps.some((s) => s.status === "failed")) return "step-failed";
  return unreachable(reach) ? "unreachable" : "error";
}

/** The server never answered this command, and the last try to reach it failed for want of a server. */
function unreachable(reach: Reach): boolean {
  return !reach.answered && reach.lastNotUp !== undefined;
}

/** The exit status of an outcome (what the process exits with). */
export function exitCodeOf(outcome: Outcome): number {
  switch (outcome) {
    case "ok":
      return 0;
    case "invalid-input":
      return EXIT_CODES["invalid-input"];
    case "cancelled":
      return EXIT_CODES.cancelled;
    default:
      return EXIT_CODES.execution;
  }
}

/**
 * The fields a failed command adds: `error`, the message printed on stderr too, and for invalid
 * input `problems`, each with its path and position in the spec (a flag's problem has neither).
 */
export function failureFields(e: unknown, outcome: Outcome): { error: string; problems?: Diagnostic[] } {
  const error = e instanceof Error ? e.message : String(e);
  if (outcome !== "invalid-input") return { error };
  const diagnostics = isKhookError(e) ? e.diagnostics : [];
  return {
    error,
    problems: diagnostics.length > 0 ? [...diagnostics] : [{ severity: "error", path: "", message: error }],
  };
}

/**
 * The one document of a command that ended in an error: what it says of itself (`head`, e.g. the
 * spec's name or null), the outcome, the error and any problems, `tail`, what is known of the
 * cluster, and the exit code, which the command exits with.
 */
export function failureSummary(
  e: unknown,
  outcome: Outcome,
  fields: { head: Record<string, unknown>; tail?: Record<string, unknown>; cluster: ClusterFields },
): { document: Record<string, unknown>; exitCode: number } {
  const exitCode = exitCodeOf(outcome);
  return {
    document: {
      ...fields.head,
      outcome,
      ...failureFields(e, outcome),
      ...fields.tail,
      cluster: fields.cluster,
      exitCode,
    },
    exitCode,
  };
}

/**
 * `-o json` asked for, read leniently from the raw arguments: for a command line that does not
 * parse (a misspelt flag), so that even that answer is one JSON document.
 */
export function jsonRequested(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === "-o" || a === "--output") && argv[i + 1] === "json") return true;
    if (a === "-ojson" || a === "--output=json" || a === "-o=json") return true;
  }
  return false;
}
