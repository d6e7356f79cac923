/**
 * `check`: the full offline validation, and the plan.
 *
 * Runs in every `pulumi preview` and in the preview pass of `pulumi up`, so it
 * is pure: no cluster, no network, the same inputs give the same result. Every
 * problem becomes a CheckFailure, so a preview fails listing all of them at
 * once. On success the normalized inputs come back with a `plan` property (one
 * line per step: action, type, target, `when:` outcome, input hash and
 * reason), which is how `pulumi preview --diff` shows what will run and which
 * steps an edit touches.
 */
import { parseDuration } from "../spec/duration.js";
import type { LoadedSpec } from "../spec/loaded.js";
import { planOffline } from "../engine/plan.js";
import { loadFromInputs } from "./load.js";
import { containsUnknown, normalizeInputs, PROVIDER_KEY, UNKNOWN, type InputProblem, type KhookInputs } from "./wire.js";

export interface CheckFailure {
  property: string;
  reason: string;
}

export interface CheckResult {
  inputs: Record<string, unknown>;
  failures: CheckFailure[];
}

/** The number of hex digits of a step's input hash shown in the plan. */
export const PLAN_HASH_DIGITS = 12;

export function check(_olds: Record<string, unknown>, news: Record<string, unknown>): CheckResult {
  const raw: Record<string, unknown> = { ...news };
  delete raw[PROVIDER_KEY];
  delete raw.plan;

  // Preview with values not known yet (e.g. a secret another resource creates): nothing to validate yet.
  if (containsUnknown(raw)) return { inputs: { ...raw, plan: UNKNOWN }, failures: [] };

  const { inputs, problems } = normalizeInputs(raw);
  const failures: CheckFailure[] = [...problems];
  if (inputs.timeout !== undefined) {
    const ms = parseDuration(inputs.timeout);
    if (ms === undefined || ms <= 0) failures.push({ property: "timeout", reason: `timeout must be a positive duration such as 30m or 1h30m, not "${inputs.timeout}"` });
  }
  if (inputs.spec === undefined) return { inputs: raw, failures };

  const loaded = loadFromInputs(inputs);
  if (!loaded.ok) {
    failures.push(...loaded.problems.map(redactProblem(inputs)));
    return { inputs: raw, failures };
  }
  if (failures.length > 0) return { inputs: raw, failures };
  return { inputs: { ...(inputs as unknown as Record<string, unknown>), plan: planLines(loaded.spec) }, failures: [] };
}

/** Problems are built from redacted diagnostics already; the SDK-level ones never quote secret inputs. */
function redactProblem(_inputs: KhookInputs): (p: InputProblem) => CheckFailure {
  return (p) => ({ property: p.property, reason: p.reason });
}

/**
 * One line per step, in document order, e.g.
 * `cilium: run (helm: release cilium in kube-system: ...) - always runs [when: included] [inputs: 3f2a9c1b7d4e]`.
 * Deterministic and redacted.
 */
export function planLines(spec: LoadedSpec): string[] {
  return planOffline(spec).map((s) => {
    const hash = s.inputHash.replace(/^sha256:/, "").slice(0, PLAN_HASH_DIGITS);
    return spec.redactor.redact(`${s.name}: ${s.action} (${s.type}: ${s.summary}) - ${s.reason} [when: ${s.when}] [inputs: ${hash}]`);
  });
}
