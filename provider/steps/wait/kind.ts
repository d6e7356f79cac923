/**
 * `wait:` steps: `kubectl wait`, watch-driven. What the loader needs of the kind; its executor
 * (executor.ts) is required on first use, and definition.ts defines its block. Rules:
 *
 *   wait-for-grammar          wait.for is condition=..., jsonpath=... or delete
 *   wait-name-excludes-selector  wait.on kind/name takes no selector, fieldSelector or allNamespaces
 *   resource-reference, namespace-or-all  (dsl/rules.ts)
 */
import { withDefaults } from "../../dsl/defaults.js";
import { inNamespace } from "../../dsl/step-kind.js";
import { checkNamedTargetSelection, checkNamespaceOrAll, checkResourceRef } from "../../dsl/rules.js";
import { parseWaitFor } from "../../kubectl/waitfor.js";
import type { Kind } from "../contract.js";
import type { WaitAction, WaitNormalized } from "./definition.js";
import type * as Executor from "./executor.js";

/** The defaults of a `wait:` block: applied once at load, left out of the hash, and the schema's `default`s. */
const WAIT_DEFAULTS = { allNamespaces: false } as const satisfies Partial<WaitAction>;

export const waitKind: Kind<"wait", WaitAction, WaitNormalized> = {
  name: "wait",
  defaults: { waitAction: WAIT_DEFAULTS },
  normalize: (wait) => withDefaults(WAIT_DEFAULTS, wait),
  defaultsOf: () => WAIT_DEFAULTS,
  summary: (_name, a) => {
    const sel = a.selector ? ` -l ${a.selector}` : "";
    return `wait for ${a.for} on ${a.on}${sel} ${inNamespace(a.namespace, a.allNamespaces)}`;
  },
  rules: (wait, at, _ctx, report) => {
    const r = parseWaitFor(wait.for, { allowDelete: true });
    if (!r.ok) report(at("for"), `for: ${r.message}`, "wait-for-grammar");
    checkResourceRef(wait.on, at("on"), "type-or-name", report);
    checkNamespaceOrAll(wait, at, report);
    checkNamedTargetSelection(wait.on, "on", wait, at, "wait-name-excludes-selector", report);
  },
  files: () => [],
  localFileKeys: [],
  hookPoints: {},
  tools: [],
  get executor() {
    return (require("./executor.js") as typeof Executor).waitExecutor;
  },
};
