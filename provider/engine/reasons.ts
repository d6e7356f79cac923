/** The reason texts the engine and the planner report, in one place. */
import type { LoadedStep } from "../spec/loaded.js";
import { RESUME_REASON } from "../state/record.js";

export { RESUME_REASON };

export const CANCELLED_REASON = "cancelled";
export const CANCELLED_WHILE_RUNNING_REASON = "cancelled while running";

export function excludedReason(step: Pick<LoadedStep, "when">, redact: (s: string) => string): string {
  return `excluded by when: ${redact(step.when ?? "false")}`;
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
