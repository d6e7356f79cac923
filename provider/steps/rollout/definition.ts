/**
 * The rollout: action block, defined once: the schema editors and the loader read, and the type
 * the code reads. Build time only (typebox): the kind (kind.ts) imports its types only.
 */
import { Type } from "typebox";
import type { KindDefinition } from "../contract.js";
import type { LoadedStepBase } from "../../dsl/loaded.js";
import { def, exactlyOne, messages, namespace, orReference, ref, type TypeOf } from "../../dsl/definitions.js";

export const rolloutTarget = def(
  "rolloutTarget",
  orReference<string>(
    {
      type: "string",
      pattern:
        "^(deployments?|deploy|Deployment|daemonsets?|ds|DaemonSet|statefulsets?|sts|StatefulSet)(\\.apps)?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
      patternErrorMessage: "Use deployment/<name>, daemonset/<name> or statefulset/<name>.",
    },
    {
      "x-khook-rule": "rollout-kind",
      description: "A workload as kind/name: deployment/x, daemonset/x or statefulset/x.",
      ...messages({
        pattern:
          "{label}: {value} is not a rollout target; use deployment/<name>, daemonset/<name> or statefulset/<name>",
      }),
    },
  ),
);

export const action = def(
  "rolloutAction",
  Type.Object(
    {
      restart: Type.Optional(
        ref(rolloutTarget, { description: "Restart a workload: deployment/x, daemonset/x or statefulset/x." }),
      ),
      status: Type.Optional(
        ref(rolloutTarget, {
          description:
            "Block until the workload's rollout completes (bounded by the step timeout): deployment/x, daemonset/x or statefulset/x.",
        }),
      ),
      namespace: ref(namespace, { description: "Required. The workload's namespace." }),
    },
    {
      description: "rollout: kubectl rollout restart or status — exactly one of restart: / status:.",
      additionalProperties: false,
      ...exactlyOne(["restart", "status"], {
        none: "rollout needs one of restart: or status:.",
        already: (k) =>
          `rollout takes exactly one of restart: or status:, and this one already has ${k}: use two rollout steps.`,
      }),
    },
  ),
);

export const DEFINITION: KindDefinition = { action, defs: [rolloutTarget] };

export type RolloutAction = TypeOf<typeof action>;
export type RolloutStep = LoadedStepBase<"rollout", RolloutAction>;
