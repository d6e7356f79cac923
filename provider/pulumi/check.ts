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
import { timeoutMs, waitForClusterMs } from "../inputs.js";
import { summaryFor, type RequiredTool, type SpecSummary } from "./summary.js";
import {
  classifyUnknowns,
  hiddenByUnknown,
  rawSteps,
  showUnknown,
  waitingLine,
  withoutUnknownTargeting,
  KNOWN_AFTER,
} from "./unknowns.js";
import { normalizeInputs, PROVIDER_KEY, UNKNOWN, type InputProblem, type KhookInputs } from "./wire.js";
import type * as HelmModule from "../tools/helm.js";
import type * as KustomizeModule from "../tools/kustomize.js";

export interface CheckFailure {
  property: string;
  reason: string;
}

export interface CheckResult {
  inputs: Record<string, unknown>;
  failures: CheckFailure[];
}

export interface CheckOptions {
  /** Why an external tool cannot be found, or undefined when it can (default: PATH and KHOOK_HELM / KHOOK_KUSTOMIZE). */
  toolMissing?: (tool: RequiredTool["tool"]) => string | undefined;
}

export function check(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
  opts: CheckOptions = {},
): CheckResult {
  return checkSpec(olds, news, opts).result;
}

/** `check`, and when the spec loaded, its summary: what the caller needs of it next (the record key) without loading it again. */
export function checkSpec(
  _olds: Record<string, unknown>,
  news: Record<string, unknown>,
  opts: CheckOptions = {},
): { result: CheckResult; summary?: SpecSummary } {
  const result = (r: CheckResult, summary?: SpecSummary): { result: CheckResult; summary?: SpecSummary } =>
    summary !== undefined ? { result: r, summary } : { result: r };
  const raw: Record<string, unknown> = { ...news };
  delete raw[PROVIDER_KEY];
  delete raw.plan;

  const unknown = classifyUnknowns(raw);
  // The spec itself is not known yet: there is nothing to read.
  if (unknown.opaque.length > 0) return result({ inputs: { ...raw, plan: UNKNOWN }, failures: [] });
  // Unknown targeting inputs are passed through as they are and validated once known.
  const passThrough = Object.fromEntries(unknown.targeting.map((k) => [k, raw[k]]));

  const { inputs, problems } = normalizeInputs(withoutUnknownTargeting(raw, unknown));
  const failures: CheckFailure[] = [...problems];
  // Judged as the CLI judges --wait-for-cluster (provider/inputs.ts): 0s does not wait.
  if (inputs.waitForCluster !== undefined) {
    const wait = waitForClusterMs(inputs.waitForCluster, "waitForCluster");
    if ("problem" in wait) failures.push({ property: "waitForCluster", reason: wait.problem });
  }
  if (inputs.timeout !== undefined) {
    const bound = timeoutMs(inputs.timeout, "timeout");
    if ("problem" in bound) failures.push({ property: "timeout", reason: bound.problem });
  }
  if (inputs.spec === undefined) return result({ inputs: raw, failures });

  // Steps that mention an unknown variable wait for it; every other step is validated and planned.
  const steps = unknown.variables.length > 0 ? rawSteps(inputs.spec, unknown.variables) : [];
  if (steps === undefined) return result({ inputs: { ...raw, plan: UNKNOWN }, failures }); // not YAML as written: nothing to tell apart
  const waiting = new Map(steps.filter((s) => s.unknown.length > 0).map((s) => [s.index, s]));

  // The spec's problems: built from redacted diagnostics, never quoting a secret input.
  const loaded = summaryFor(inputs);
  if (!loaded.ok) {
    const shown = loaded.problems.filter((p: InputProblem) => !hiddenByUnknown(p, new Set(waiting.keys())));
    failures.push(...shown.map((p) => ({ property: p.property, reason: p.reason })));
    if (failures.length > 0 || waiting.size === 0) return result({ inputs: raw, failures });
    // Only steps that wait for values failed to load: name every step, none planned yet.
    const plan = steps.map((s) =>
      waiting.has(s.index)
        ? waitingLine(s)
        : `${s.name}: ${s.type} - planned once the values it waits for exist (${KNOWN_AFTER})`,
    );
    return result({ inputs: { ...inputs, ...passThrough, plan }, failures: [] });
  }
  for (const need of loaded.summary.tools) {
    if (waiting.has(need.index)) continue;
    const why = (opts.toolMissing ?? defaultToolMissing)(need.tool);
    if (why !== undefined)
      failures.push({
        property: `spec.steps[${need.index}]`,
        reason: `step ${need.step} needs ${need.tool}, and apply would fail: ${why}`,
      });
  }
  if (failures.length > 0) return result({ inputs: raw, failures }, loaded.summary);
  const plan = loaded.summary.plan.map((line, i) => {
    const w = waiting.get(i);
    return w !== undefined ? waitingLine(w) : showUnknown(line);
  });
  const normalized: KhookInputs = { ...inputs, plan };
  return result({ inputs: { ...normalized, ...passThrough }, failures: [] }, loaded.summary);
}

function defaultToolMissing(tool: RequiredTool["tool"]): string | undefined {
  if (tool === "helm") return (require("../tools/helm.js") as typeof HelmModule).helmMissing();
  return (require("../tools/kustomize.js") as typeof KustomizeModule).kustomizeMissing();
}
