/**
 * Progress lines for the Pulumi CLI. A dynamic provider's stdout reaches the
 * CLI as stack-level lines, so each line is prefixed with the resource name.
 * Resumed and `when:`-excluded steps are counted, not listed: a re-run of a
 * 100-step spec that changes one step prints that step, not 99 skips.
 */
import { formatDuration } from "../dsl/duration.js";
import type { RunEvent, RunMode } from "../engine/run-types.js";
import { RESUME_REASON } from "../engine/reasons.js";

export type LineSink = (line: string) => void;

export function progressPrinter(
  resourceName: string,
  redact: (s: string) => string,
  sink: LineSink,
): (e: RunEvent) => void {
  const say = (text: string): void => {
    for (const line of redact(text).split("\n")) sink(`[${resourceName}] ${line}`);
  };
  let resumed = 0;
  let excluded = 0;
  return (e) => {
    switch (e.type) {
      case "run-started":
        say(`${verb(e.mode)} ${e.spec}: ${e.steps} step${e.steps === 1 ? "" : "s"}`);
        break;
      case "step-started":
        say(`${e.step}: started (${e.stepType})`);
        break;
      case "attempt-started":
        if (e.attempt > 1) say(`${e.step}: attempt ${e.attempt}/${e.of}`);
        break;
      case "attempt-failed":
        say(
          `${e.step}: attempt ${e.attempt}/${e.of} failed: ${e.error}${e.willRetry ? `; retrying in ${formatDuration(e.retryInMs)}` : ""}`,
        );
        break;
      case "step-log":
        say(`${e.step}: ${e.message}`);
        break;
      case "journal-warning":
        say(`state record: ${e.message}`);
        break;
      case "journal-note":
        say(e.message);
        break;
      case "cluster-warning":
        say(`warning: ${e.message}`);
        break;
      case "step-finished": {
        const r = e.result;
        if (r.status === "skipped" && r.attempts === 0 && r.reason === RESUME_REASON) {
          resumed++;
          break;
        }
        if (r.status === "skipped" && r.attempts === 0 && r.reason.startsWith("excluded by when:")) {
          excluded++;
          break;
        }
        const took = r.attempts > 0 ? ` in ${formatDuration(r.durationMs)}` : "";
        const why = r.status === "failed" ? (r.error ?? r.reason) : r.reason;
        say(`${r.name}: ${r.status === "failed" ? "FAILED" : r.status}${took}${why ? `: ${why}` : ""}`);
        break;
      }
      case "run-finished": {
        const steps = e.result.steps;
        const count = (s: string): number => steps.filter((x) => x.status === s).length;
        const extra = [
          resumed > 0 ? `${resumed} resumed from the state record` : "",
          excluded > 0 ? `${excluded} excluded by when:` : "",
        ]
          .filter(Boolean)
          .join(", ");
        say(
          `${verb(e.result.mode)} ${e.result.status}: ${count("ok")} ok, ${count("skipped")} skipped${extra ? ` (${extra})` : ""}, ${count("failed")} failed in ${formatDuration(e.result.durationMs)}`,
        );
        if (e.result.journalError !== undefined) say(`state record error: ${e.result.journalError}`);
        break;
      }
    }
  };
}

function verb(mode: RunMode): string {
  return mode === "apply" ? "apply" : "destroy";
}
