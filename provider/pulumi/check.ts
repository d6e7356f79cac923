/**
 * `check`: the full offline validation, and the plan.
 *
 * Runs in every `pulumi preview` and in the preview pass of `pulumi up`, so it
 * is pure: no cluster, no network, the same inputs give the same result. Every
 * problem becomes a CheckFailure, so a preview fails listing all of them at
 * once. On success the normalized inputs come back with a `plan` property (one
 * line per step: action, type, input hash, `when:` outcome, target and
 * reason), which is how `pulumi preview --diff` shows what will run and which
 * steps an edit touches.
 */
import { parseDuration } from "../spec/duration.js";
import { summaryFor } from "./summary.js";
import { containsUnknown, normalizeInputs, PROVIDER_KEY, UNKNOWN, type InputProblem, type KhookInputs } from "./wire.js";

export interface CheckFailure {
  property: string;
  reason: string;
}

export interface CheckResult {
  inputs: Record<string, unknown>;
  failures: CheckFailure[];
}

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

  // The spec's problems: built from redacted diagnostics, never quoting a secret input.
  const loaded = summaryFor(inputs);
  if (!loaded.ok) {
    failures.push(...loaded.problems.map((p: InputProblem) => ({ property: p.property, reason: p.reason })));
    return { inputs: raw, failures };
  }
  if (failures.length > 0) return { inputs: raw, failures };
  const normalized: KhookInputs = { ...inputs, plan: loaded.summary.plan };
  return { inputs: normalized as unknown as Record<string, unknown>, failures: [] };
}
