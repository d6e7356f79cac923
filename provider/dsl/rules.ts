/**
 * The semantic rules a JSON Schema cannot express (the per-type ones in ACTION_RULES,
 * one entry per step type). Each problem names its rule
 * (the `rule` field), so tests and docs can refer to it:
 *
 *   step-name-unique          step names are unique (they key the record and default the release)
 *   needs-exist               every `needs` entry names a step of this spec
 *   needs-not-self            a step cannot need itself
 *   needs-no-duplicates       a step lists each need once (warning)
 *   needs-acyclic             the graph has no cycle (reported with its path)
 *   chart-source              the chart-source rules (bare name/repo, oci tag/digest/version, local path)
 *   chart-auth                auth: and URL userinfo are exclusive; userinfo is a full user:pass pair
 *   source-url                url: sources are http(s) URLs
 *   local-path                kustomize: and local chart paths start with ./, ../ or /
 *   local-file-exists         referenced local files and directories exist
 *   kustomize-local-only      a kustomization may not reference remote bases
 *   manifest-shape            every manifest document is a mapping with apiVersion, kind and metadata.name
 *   wait-for-grammar          wait.for is condition=..., jsonpath=... or delete
 *   apply-wait-for-grammar    apply.waitFor is wait.for's grammar minus delete
 *   resource-reference        targets are `type` or `kind/name` as each field allows
 *   rollout-kind              rollout targets a deployment, daemonset or statefulset
 *   namespace-or-all          namespace excludes allNamespaces
 *   delete-name-or-selector   delete of kind/name takes no selector, fieldSelector or allNamespaces (kubectl refuses them)
 *   delete-type-needs-selector  delete of a bare type needs selector: or fieldSelector: (kubectl demands --all)
 *   create-namespace-needs-namespace  apply.createNamespace needs apply.namespace
 *   patch-body-shape          a mapping for strategic/merge, a list of operations for json
 *   patch-json-idempotency    a json remove or list-index add fails when re-run (warning)
 *   duration-positive         timeout (a step's or defaults.timeout) is greater than zero
 *   duration-timer-range      timeout and retryDelay fit a Node timer (< 2^31 ms)
 *   values-file-shape         a local valuesFrom file is one YAML mapping
 *   wait-name-excludes-selector  wait.on kind/name takes no selector, fieldSelector or allNamespaces
 *   patch-json-pointer        a json patch operation's path and from are JSON pointers (start with /)
 *   state-name                the record's (derived) name is a valid Secret name
 *   when-cel                  when: type-checks to bool and evaluates (see when.ts)
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Diagnostic, PositionLookup } from "../errors.js";
import { classifyChart, describeChartText, isLocalPath, splitUserinfo } from "../helm/chart.js";
import { findCycles } from "./dag.js";
import { formatDuration, parseDuration } from "./duration.js";
import { findRemoteKustomizeBases } from "./hash.js";
import { checkDnsSubdomain } from "./names.js";
import { pointer } from "./yaml.js";
import { parseYamlStream } from "./yaml-stream.js";
import { parseValuesDocument } from "./values-file.js";
import { parseWaitFor } from "../kubectl/waitfor.js";
import type {
  ActionByType,
  DeleteResourceAction,
  JsonPatchOperation,
  KhookDocument,
  ManifestSource,
  StepSpec,
  StepType,
} from "./types.js";
import { ACTION_DEFAULTS, SPEC_DEFAULTS } from "./defaults.js";
import { STEP_TYPES, stepTypeOf } from "./types.js";

export interface RuleContext {
  baseDir: string;
  positionOf: PositionLookup;
  /** Steps whose own subtree already failed the schema: their action is not inspected. */
  schemaInvalidSteps: ReadonlySet<number>;
  /** Steps excluded by `when:`: their local files are not looked at (only the paths' form is checked). */
  excludedSteps?: ReadonlySet<number>;
}

/** What one step's checks may do: excluded steps' files are not read. */
interface StepRuleContext extends RuleContext {
  readFiles: boolean;
}

type Report = (path: string, message: string, rule: string, severity?: "error" | "warning") => void;

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
    const types = STEP_TYPES.filter((t) => t in step);
    if (types.length !== 1) return;
    checkDurations(step, ["steps", i], report);
    checkAction(step, i, { ...ctx, readFiles: !(ctx.excludedSteps?.has(i) ?? false) }, report);
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

/** Helm caps release names at 53 characters; a step name (up to 63) is the release name unless release: is set. */
const HELM_RELEASE_NAME_MAX = 53;

function checkDefaultReleaseName(step: StepSpec, helm: { release?: unknown }, i: number, report: Report): void {
  if (helm.release !== undefined || typeof step.name !== "string" || step.name.length <= HELM_RELEASE_NAME_MAX) return;
  report(
    pointer("steps", i, "name"),
    `step name "${step.name}" (${step.name.length} characters) is also this helm step's release name (release: defaults to the step name), and Helm allows at most ${HELM_RELEASE_NAME_MAX}: shorten the step name or set release:`,
    "helm-release-name",
  );
}

/** `pointer` of a field inside the step's action block. */
type ActionPointer = (...rest: (string | number)[]) => string;

/** One step type's rules over its (schema-valid) action block. */
type ActionRules<T extends StepType> = (
  action: ActionByType[T],
  at: ActionPointer,
  ctx: StepRuleContext,
  report: Report,
) => void;

/** Per step type, the rules of its action block. */
const ACTION_RULES = {
  helm: (helm, at, ctx, report) => {
    const { problems, source } = classifyChart(helm);
    for (const p of problems) {
      const rule = p.field === "auth" || /credentials/.test(p.message) ? "chart-auth" : "chart-source";
      report(at(p.field === "auth" && helm.auth === undefined ? "chart" : p.field), p.message, rule);
    }
    if (source?.form === "local") checkLocalPath(helm.chart, at("chart"), ctx, report, "directory-or-file");
    helm.valuesFrom?.forEach((v, j) => {
      if ("url" in v) checkUrl(v.url, at("valuesFrom", j, "url"), report);
      if ("file" in v) {
        const resolved = checkLocalPath(v.file, at("valuesFrom", j, "file"), ctx, report, "file", false);
        const parsed =
          resolved === undefined ? undefined : parseValuesDocument(fs.readFileSync(resolved, "utf8"), v.file);
        if (parsed?.ok === false) report(at("valuesFrom", j, "file"), parsed.message, "values-file-shape");
      }
    });
  },
  apply: (apply, at, ctx, report) => {
    checkManifests(apply.manifests, at, ctx, report);
    if (apply.waitFor !== undefined) {
      const r = parseWaitFor(apply.waitFor, { allowDelete: false });
      if (!r.ok) report(at("waitFor"), `waitFor: ${r.message}`, "apply-wait-for-grammar");
    }
    if (apply.createNamespace === true && apply.namespace === undefined) {
      report(
        at("createNamespace"),
        "createNamespace: true needs namespace: (which namespace should be created?)",
        "create-namespace-needs-namespace",
      );
    }
  },
  delete: (del, at, ctx, report) => {
    if ("manifests" in del) checkManifests(del.manifests, at, ctx, report);
    if ("resource" in del) {
      checkResourceRef(del.resource, at("resource"), "type-or-name", report);
      checkNamespaceOrAll(del, at, report);
      checkDeleteSelection(del, at, report);
    }
  },
  patch: (patch, at, _ctx, report) => {
    checkResourceRef(patch.target, at("target"), "name", report);
    checkPatchBody(patch.type ?? ACTION_DEFAULTS.patch.type, patch.patch, at, report);
  },
  wait: (wait, at, _ctx, report) => {
    const r = parseWaitFor(wait.for, { allowDelete: true });
    if (!r.ok) report(at("for"), `for: ${r.message}`, "wait-for-grammar");
    checkResourceRef(wait.on, at("on"), "type-or-name", report);
    checkNamespaceOrAll(wait, at, report);
    checkNamedTargetSelection(wait.on, "on", wait, at, "wait-name-excludes-selector", report);
  },
  rollout: (rollout, at, _ctx, report) => {
    const which = rollout.restart !== undefined ? "restart" : "status";
    const target = rollout.restart ?? rollout.status;
    if (rollout.restart !== undefined && rollout.status !== undefined) {
      report(at("status"), "rollout takes exactly one of restart: or status:, not both", "rollout-kind");
    } else if (typeof target === "string") {
      const kind = checkResourceRef(target, at(which), "name", report);
      if (kind !== undefined && !ROLLOUT_KINDS.has(kind.toLowerCase())) {
        report(
          at(which),
          `rollout ${which} works on deployment/<name>, daemonset/<name> or statefulset/<name>, not ${kind}`,
          "rollout-kind",
        );
      }
    }
  },
  // The schema says all there is to say about a job.
  job: () => undefined,
} satisfies { readonly [T in StepType]: ActionRules<T> };

function checkAction(step: StepSpec, i: number, ctx: StepRuleContext, report: Report): void {
  const type = stepTypeOf(step);
  const at: ActionPointer = (...rest) => pointer("steps", i, type, ...rest);
  if (type === "helm") checkDefaultReleaseName(step, (step as Extract<StepSpec, { helm: unknown }>).helm, i, report);
  (ACTION_RULES[type] as ActionRules<StepType>)((step as unknown as ActionByType)[type], at, ctx, report);
}

const ROLLOUT_KINDS = new Set([
  "deployment",
  "deployments",
  "deploy",
  "deployment.apps",
  "deployments.apps",
  "daemonset",
  "daemonsets",
  "ds",
  "daemonset.apps",
  "daemonsets.apps",
  "statefulset",
  "statefulsets",
  "sts",
  "statefulset.apps",
  "statefulsets.apps",
]);

/**
 * A kind/name target names one object in one namespace, so, as in kubectl ("name cannot be
 * provided when a selector is specified"), it takes no selector and no allNamespaces.
 */
function checkNamedTargetSelection(
  target: string,
  field: string,
  block: { selector?: string; fieldSelector?: string; allNamespaces?: boolean },
  at: (...r: (string | number)[]) => string,
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

function checkNamespaceOrAll(
  block: { namespace?: string; allNamespaces?: boolean },
  at: (...r: (string | number)[]) => string,
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

/**
 * kubectl's selection rules for `delete`: a named object takes no selector (kubectl: "name cannot be
 * provided when a selector is specified"), and a bare type deletes nothing unless a selector narrows
 * it (kubectl demands --all; khook has no --all, so deleting every object of a type is not expressible).
 */
function checkDeleteSelection(
  del: DeleteResourceAction,
  at: (...r: (string | number)[]) => string,
  report: Report,
): void {
  if (del.resource.includes("/")) {
    checkNamedTargetSelection(del.resource, "resource", del, at, "delete-name-or-selector", report);
    return;
  }
  if (del.selector === undefined && del.fieldSelector === undefined) {
    const scope = del.allNamespaces === true ? "in every namespace" : "in the namespace";
    report(
      at("resource"),
      `resource: ${del.resource} without selector: or fieldSelector: would delete every ${del.resource} ${scope}; select what to delete with selector: (labels, e.g. app=old) or fieldSelector: (e.g. status.phase=Failed), or name one object as kind/name`,
      "delete-type-needs-selector",
    );
  }
}

/** Checks `type` or `kind/name`; returns the type part. */
function checkResourceRef(
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

function checkManifests(
  manifests: readonly ManifestSource[] | undefined,
  at: (...r: (string | number)[]) => string,
  ctx: StepRuleContext,
  report: Report,
): void {
  manifests?.forEach((m, j) => {
    if ("inline" in m) checkManifestText(m.inline, at("manifests", j, "inline"), report);
    if ("url" in m) checkUrl(m.url, at("manifests", j, "url"), report);
    if ("file" in m) {
      const resolved = checkLocalPath(m.file, at("manifests", j, "file"), ctx, report, "file", false);
      if (resolved !== undefined)
        checkManifestText(fs.readFileSync(resolved, "utf8"), at("manifests", j, "file"), report, m.file);
    }
    if ("kustomize" in m) {
      const resolved = checkLocalPath(m.kustomize, at("manifests", j, "kustomize"), ctx, report, "directory");
      if (resolved !== undefined) {
        for (const remote of findRemoteKustomizeBases(resolved)) {
          report(
            at("manifests", j, "kustomize"),
            `the kustomization in ${path.relative(ctx.baseDir, remote.dir) || "."} references a remote base (${remote.ref}); kustomize: sources must be local, because remote bases need git. Vendor the base into the repository and reference it by a relative path`,
            "kustomize-local-only",
          );
        }
      }
    }
  });
}

/** Each document must be a Kubernetes object; empty documents are allowed (like kubectl). */
function checkManifestText(text: string, p: string, report: Report, file?: string): void {
  const where = file ? ` in ${file}` : "";
  parseYamlStream(text).forEach((d, k) => {
    if (d.error !== undefined) {
      report(p, `manifest document ${k + 1}${where} is not valid YAML: ${d.error}`, "manifest-shape");
      return;
    }
    const v = d.value;
    if (v === null || v === undefined) return;
    if (typeof v !== "object" || Array.isArray(v)) {
      report(p, `manifest document ${k + 1}${where} is not a mapping`, "manifest-shape");
      return;
    }
    const o = v as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; generateName?: unknown } };
    const missing = [
      typeof o.apiVersion !== "string" ? "apiVersion" : undefined,
      typeof o.kind !== "string" ? "kind" : undefined,
      typeof o.metadata?.name !== "string" && o.kind !== "List" ? "metadata.name" : undefined,
    ].filter((x): x is string => x !== undefined);
    if (missing.length > 0)
      report(p, `manifest document ${k + 1}${where} has no ${missing.join(", ")}`, "manifest-shape");
  });
}

function checkUrl(url: string, p: string, report: Report): void {
  const { url: bare } = splitUserinfo(url);
  if (!/^https?:\/\/[^/]/.test(bare))
    report(p, `"${describeChartText(url)}" is not an http:// or https:// URL`, "source-url");
}

/** Returns the resolved path when it exists with the expected kind. */
function checkLocalPath(
  written: string,
  p: string,
  ctx: StepRuleContext,
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

function checkPatchBody(type: string, body: unknown, at: (...r: (string | number)[]) => string, report: Report): void {
  if (type === "json") {
    if (!Array.isArray(body)) {
      report(
        at("patch"),
        `a json patch (RFC 6902) is a list of operations like - {op: replace, path: /spec/replicas, value: 2}; got a ${body === null ? "null" : typeof body}. For a mapping use type: merge or strategic`,
        "patch-body-shape",
      );
      return;
    }
    (body as JsonPatchOperation[]).forEach((op, k) => {
      if (op === null || typeof op !== "object" || typeof op.op !== "string" || typeof op.path !== "string") {
        report(at("patch", k), "each json patch operation needs op: and path:", "patch-body-shape");
        return;
      }
      if ((op.op === "move" || op.op === "copy") && typeof op.from !== "string")
        report(at("patch", k), `a json patch ${op.op} needs from:`, "patch-body-shape");
      for (const field of ["path", "from"] as const) {
        const pointerText = op[field];
        if (typeof pointerText === "string" && !pointerText.startsWith("/")) {
          report(
            at("patch", k, field),
            `${field}: "${pointerText}" is not a JSON pointer; write /${pointerText.replace(/^\.?\/*/, "")} (JSON patch paths start with /, like /spec/replicas)`,
            "patch-json-pointer",
          );
        }
      }
      if ((op.op === "add" || op.op === "replace" || op.op === "test") && !("value" in op))
        report(at("patch", k), `a json patch ${op.op} needs value:`, "patch-body-shape");
      if (op.op === "remove") {
        report(
          at("patch", k),
          `the json patch removes ${op.path}; re-running the step fails once the path is gone. Prefer a merge patch with null, or order it so it runs once`,
          "patch-json-idempotency",
          "warning",
        );
      } else if (op.op === "add" && /\/[0-9]+$/.test(op.path)) {
        report(
          at("patch", k),
          `the json patch adds at list index ${op.path}; every re-run inserts again. Prefer - (append) with a guard, or a strategic/merge patch`,
          "patch-json-idempotency",
          "warning",
        );
      }
    });
    return;
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    report(
      at("patch"),
      `a ${type} patch body is a mapping of the fields to change; a list of operations needs type: json`,
      "patch-body-shape",
    );
  }
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
