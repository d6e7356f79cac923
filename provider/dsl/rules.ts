/**
 * The semantic rules a JSON Schema cannot express that concern the document as a whole, and
 * the checks step kinds share in their own rules (steps/<kind>/kind.ts: each kind lists its
 * rules in its header). Each problem names its rule (the `rule` field), so tests and docs can
 * refer to it:
 *
 *   step-name-unique          step names are unique (they key the record and default the release)
 *   needs-exist               every `needs` entry names a step of this spec
 *   needs-not-self            a step cannot need itself
 *   needs-no-duplicates       a step lists each need once (warning)
 *   needs-acyclic             the graph has no cycle (reported with its path)
 *   duration-positive         timeout (a step's or defaults.timeout) is greater than zero
 *   duration-timer-range      timeout and retryDelay fit a Node timer (< 2^31 ms)
 *   state-name                the record's (derived) name is a valid Secret name
 *   when-cel                  when: type-checks to bool and evaluates (see when.ts)
 *
 * and, for the kinds: source-url (url: sources are http(s) URLs), local-path (paths start with
 * ./, ../ or /), local-file-exists, resource-reference (`type` or `kind/name` as each field
 * allows), namespace-or-all (namespace excludes allNamespaces), and the name-or-selector rules.
 */
import fs from "node:fs";
import path from "node:path";
import type { Diagnostic, PositionLookup } from "../errors.js";
import { describeChartText, isLocalPath, splitUserinfo } from "../helm/chart.js";
import { findCycles } from "./dag.js";
import { formatDuration, parseDuration } from "./duration.js";
import { kindOf, type KindRuleContext, type KindSet, type Pointer, type Report } from "./step-kind.js";
import { checkDnsSubdomain } from "./names.js";
import { pointer } from "./yaml.js";
import type { KhookDocument, StepSpec } from "./document.js";
import { SPEC_DEFAULTS } from "./defaults.js";

export interface RuleContext {
  kinds: KindSet;
  baseDir: string;
  positionOf: PositionLookup;
  /** Steps whose own subtree already failed the schema: their action is not inspected. */
  schemaInvalidSteps: ReadonlySet<number>;
  /** Steps excluded by `when:`: their local files are not looked at (only the paths' form is checked). */
  excludedSteps?: ReadonlySet<number>;
}

export function checkRules(doc: KhookDocument, ctx: RuleContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  const report: Report = (p, message, rule, severity = "error") => {
    out.push({ severity, path: p, message, rule, position: ctx.positionOf(p) });
  };
  const steps = Array.isArray(doc.steps) ? doc.steps : [];
  checkNames(steps, report);
  checkNeeds(steps, report);
  checkState(doc, report);
  checkDurations(doc.defaults, ["defaults"], report);
  steps.forEach((step, i) => {
    if (ctx.schemaInvalidSteps.has(i) || step === null || typeof step !== "object") return;
    const kind = kindOf(step, ctx.kinds);
    if (kind === undefined) return;
    checkDurations(step, ["steps", i], report);
    const stepContext: KindRuleContext = {
      baseDir: ctx.baseDir,
      positionOf: ctx.positionOf,
      readFiles: !(ctx.excludedSteps?.has(i) ?? false),
      step: {
        name: typeof step.name === "string" ? step.name : undefined,
        at: (...rest) => pointer("steps", i, ...rest),
      },
    };
    kind.rules(step[kind.name], (...rest) => pointer("steps", i, kind.name, ...rest), stepContext, report);
  });
  return out;
}

function checkNames(steps: readonly StepSpec[], report: Report): void {
  const first = new Map<string, number>();
  steps.forEach((s, i) => {
    if (typeof s?.name !== "string") return;
    const prev = first.get(s.name);
    if (prev !== undefined)
      report(
        pointer("steps", i, "name"),
        `step name "${s.name}" is already used by step ${prev + 1}; step names must be unique (they key the state record and default the helm release)`,
        "step-name-unique",
      );
    else first.set(s.name, i);
  });
}

function checkNeeds(steps: readonly StepSpec[], report: Report): void {
  const named = steps.map((s, index) => ({ s, index })).filter(({ s }) => typeof s?.name === "string");
  const names = new Set(named.map(({ s }) => s.name));
  const firstIndex = new Map<string, number>();
  for (const { s, index } of named) if (!firstIndex.has(s.name)) firstIndex.set(s.name, index);
  // Per step (by index, so duplicate names still point at the right step).
  for (const { s, index } of named) {
    const seen = new Set<string>();
    (Array.isArray(s.needs) ? s.needs : []).forEach((need, i) => {
      if (typeof need !== "string") return;
      const at = pointer("steps", index, "needs", i);
      if (need === s.name) report(at, `step "${s.name}" needs itself`, "needs-not-self");
      else if (!names.has(need)) {
        const hint = closest(need, [...names]);
        report(
          at,
          `step "${s.name}" needs "${need}", which is not a step in this spec${hint ? ` (did you mean "${hint}"?)` : ""}`,
          "needs-exist",
        );
      } else if (seen.has(need))
        report(at, `step "${s.name}" lists "${need}" in needs more than once`, "needs-no-duplicates", "warning");
      seen.add(need);
    });
  }
  const nodes = named.map(({ s }) => ({
    name: s.name,
    needs: Array.isArray(s.needs) ? s.needs.filter((n): n is string => typeof n === "string") : [],
  }));
  for (const path of findCycles(nodes)) {
    report(
      pointer("steps", firstIndex.get(path[0]!)!, "needs"),
      `needs form a cycle: ${path.join(" -> ")}; steps run in dependency order, so a cycle can never start`,
      "needs-acyclic",
    );
  }
}

function checkState(doc: KhookDocument, report: Report): void {
  const state = doc.state;
  if (state === undefined || state === null || typeof state !== "object") return;
  if (state.name === undefined && typeof doc.metadata?.name === "string") {
    const derived = `${SPEC_DEFAULTS.stateNamePrefix}${doc.metadata.name}`;
    const problem = checkDnsSubdomain(derived, "the derived state record name");
    if (problem) report("/state", `${problem}; set state.name`, "state-name");
  }
}

/**
 * Node holds a timer delay in a signed 32-bit integer: from 2^31 ms on, setTimeout fires after
 * 1 ms (with a warning), so a longer timeout would expire at once and a longer retryDelay would
 * not wait at all.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** timeout and retryDelay of a step or of defaults: (the schema already checked the syntax). */
function checkDurations(
  block: { timeout?: unknown; retryDelay?: unknown } | null | undefined,
  at: readonly (string | number)[],
  report: Report,
): void {
  if (block === null || typeof block !== "object") return;
  for (const field of ["timeout", "retryDelay"] as const) {
    const text = block[field];
    if (typeof text !== "string") continue;
    const ms = parseDuration(text);
    if (ms === undefined) continue;
    if (field === "timeout" && ms === 0)
      report(pointer(...at, field), "timeout must be greater than 0", "duration-positive");
    if (ms > MAX_TIMER_MS) {
      report(
        pointer(...at, field),
        `${field} ${text} is longer than khook can wait; the limit is ${formatDuration(MAX_TIMER_MS)} (about 24.8 days)`,
        "duration-timer-range",
      );
    }
  }
}

/**
 * A kind/name target names one object in one namespace, so, as in kubectl ("name cannot be
 * provided when a selector is specified"), it takes no selector and no allNamespaces.
 */
export function checkNamedTargetSelection(
  target: string,
  field: string,
  block: { selector?: string; fieldSelector?: string; allNamespaces?: boolean },
  at: Pointer,
  rule: string,
  report: Report,
): void {
  const slash = target.indexOf("/");
  if (slash === -1) return;
  const type = target.slice(0, slash);
  for (const selector of ["selector", "fieldSelector"] as const) {
    if (block[selector] !== undefined) {
      report(
        at(selector),
        `${field}: ${target} names one object; ${selector}: cannot be combined with a name (kubectl refuses it too). To select objects, write ${field}: ${type} with ${selector}:, or drop ${selector}:`,
        rule,
      );
    }
  }
  if (block.allNamespaces === true) {
    report(
      at("allNamespaces"),
      `${field}: ${target} names one object, and a name is looked up in one namespace; set namespace: instead of allNamespaces: true`,
      rule,
    );
  }
}

export function checkNamespaceOrAll(
  block: { namespace?: string; allNamespaces?: boolean },
  at: Pointer,
  report: Report,
): void {
  if (block.namespace !== undefined && block.allNamespaces === true) {
    report(
      at("allNamespaces"),
      "namespace: and allNamespaces: true are mutually exclusive; keep one",
      "namespace-or-all",
    );
  }
}

/** Checks `type` or `kind/name`; returns the type part. */
export function checkResourceRef(
  ref: string,
  p: string,
  allowed: "name" | "type-or-name",
  report: Report,
): string | undefined {
  const parts = ref.split("/");
  const typePart = parts[0] ?? "";
  const okType = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z0-9-]+)*$/.test(typePart);
  if (
    parts.length > 2 ||
    !okType ||
    (parts.length === 2 && !/^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$/.test(parts[1] ?? ""))
  ) {
    report(
      p,
      `"${ref}" is not a resource reference; write ${allowed === "name" ? "kind/name, e.g. daemonset/aws-node" : "a type (pods) or kind/name (deployment/argocd-server)"}`,
      "resource-reference",
    );
    return undefined;
  }
  if (allowed === "name" && parts.length !== 2) {
    report(p, `"${ref}" names a type but not an object; write kind/name, e.g. ${ref}/my-object`, "resource-reference");
    return undefined;
  }
  return typePart;
}

/** url: sources are http(s) URLs (rule source-url). */
export function checkUrl(url: string, p: string, report: Report): void {
  const { url: bare } = splitUserinfo(url);
  if (!/^https?:\/\/[^/]/.test(bare))
    report(p, `"${describeChartText(url)}" is not an http:// or https:// URL`, "source-url");
}

/** A local path (rules local-path, local-file-exists); returns the resolved path when it exists with the expected kind. */
export function checkLocalPath(
  written: string,
  p: string,
  ctx: Pick<KindRuleContext, "baseDir" | "readFiles">,
  report: Report,
  kind: "file" | "directory" | "directory-or-file",
  mustLookLocal = true,
): string | undefined {
  if (mustLookLocal && !isLocalPath(written)) {
    report(p, `"${written}" must be a local path starting with ./, ../ or /`, "local-path");
    return undefined;
  }
  if (!ctx.readFiles) return undefined;
  const resolved = path.resolve(ctx.baseDir, written);
  let st: fs.Stats;
  try {
    st = fs.statSync(resolved);
  } catch {
    report(
      p,
      `${written} does not exist (looked for ${resolved}; relative paths resolve against the spec file's directory)`,
      "local-file-exists",
    );
    return undefined;
  }
  if (kind === "file" && !st.isFile()) {
    report(p, `${written} is not a file`, "local-file-exists");
    return undefined;
  }
  if (kind === "directory" && !st.isDirectory()) {
    report(p, `${written} is not a directory`, "local-file-exists");
    return undefined;
  }
  return resolved;
}

function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
