/** The reason texts the engine and the planner report, in one place. */
import type { LoadedStep } from "../dsl/loaded.js";
import { RESUME_REASON } from "../state/record.js";

export { RESUME_REASON };

export const CANCELLED_REASON = "cancelled";
export const CANCELLED_WHILE_RUNNING_REASON = "cancelled while running";
/** Every step not started after this run lost its lease on the state record (the journal error names the holder). */
export const LEASE_LOST_REASON = "not started: this run lost its lease on the state record";

/** An excluded step's local files are neither read nor hashed (they may be absent here); the reason says so. */
export function excludedReason(step: Pick<LoadedStep, "when" | "unreadFiles">, redact: (s: string) => string): string {
  const files = step.unreadFiles ?? [];
  const unread =
    files.length === 0
      ? ""
      : `; its local file${files.length === 1 ? "" : "s"} (${files.join(", ")}) ${files.length === 1 ? "was" : "were"} not read`;
  return redact(`excluded by when: ${step.when ?? "false"}${unread}`);
}

/** Every not-yet-run step after a step with `onError: fail` failed. */
export function notStartedReason(failed: string): string {
  return `not started: step "${failed}" failed`;
}

/** A step whose dependency (apply) or dependent (destroy) failed, directly or via a blocked step. */
export function blockedReason(mode: "apply" | "destroy", root: string, via: string | undefined): string {
  const viaText = via !== undefined && via !== root ? ` (via "${via}")` : "";
  return mode === "apply"
    ? `blocked by failed dependency "${root}"${viaText}`
    : `kept: step "${root}", which needs it, failed to destroy${viaText}`;
}

export function failedReason(attempts: number): string {
  return attempts <= 1 ? "failed" : `failed after ${attempts} attempts`;
}
