/**
 * `rollout:` steps: `kubectl rollout restart` or `status` of a Deployment, DaemonSet or
 * StatefulSet. What the loader needs of the kind; its executor (executor.ts) is required on first
 * use, and definition.ts defines its block. Rules:
 *
 *   rollout-kind              rollout targets a deployment, daemonset or statefulset, with one of restart: or status:
 *   resource-reference        (dsl/rules.ts)
 */
import { withDefaults } from "../../dsl/defaults.js";
import { checkResourceRef } from "../../dsl/rules.js";
import type { Kind } from "../contract.js";
import type { RolloutAction } from "./definition.js";
import type * as Executor from "./executor.js";

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

export const rolloutKind: Kind<"rollout", RolloutAction, RolloutAction> = {
  name: "rollout",
  defaults: {},
  normalize: (rollout) => withDefaults({}, rollout),
  defaultsOf: () => ({}),
  summary: (_name, a) =>
    a.restart !== undefined
      ? `restart ${a.restart} in ${a.namespace}`
      : `wait for the rollout of ${a.status ?? "?"} in ${a.namespace}`,
  rules: (rollout, at, _ctx, report) => {
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
  files: () => [],
  localFileKeys: [],
  hookPoints: {},
  tools: [],
  get executor() {
    return (require("./executor.js") as typeof Executor).rolloutExecutor;
  },
};
