/** The plan property: one line per step, from the offline plan. */
import { planOffline } from "../engine/plan.js";
import { shortHash } from "../dsl/keyed-hash.js";
import type { LoadedSpec } from "../dsl/loaded.js";

/** The number of hex digits of a step's input hash shown in the plan. */
export const PLAN_HASH_DIGITS = 12;

/**
 * One line per step, in document order, what matters first (the CLI truncates
 * long output values), e.g.
 * `cilium: run helm [inputs 3f2a9c1b7d4e, when included] release cilium in kube-system: ... - always runs`.
 * Deterministic and redacted.
 */
export function planLines(spec: LoadedSpec): string[] {
  return planOffline(spec).map((s) => {
    const hash = shortHash(s.inputHash, PLAN_HASH_DIGITS);
    // Hooks, in run order; plan (and so preview) never calls the webhooks among them.
    const hooks = s.hooks.length > 0 ? `; hooks: ${s.hooks.join(", ")}` : "";
    return spec.redactor.redact(
      `${s.name}: ${s.action} ${s.type} [inputs ${hash}, when ${s.when}] ${s.summary} - ${s.reason}${hooks}`,
    );
  });
}
