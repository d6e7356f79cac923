/**
 * The wait: action block, defined once: the schema editors and the loader read, and the type
 * the code reads. Build time only (typebox): the kind (kind.ts) imports its types only.
 */
import { Type } from "typebox";
import type { KindDefinition } from "../contract.js";
import type { Defaulted } from "../../dsl/defaults.js";
import type { LoadedStepBase } from "../../dsl/loaded.js";
import {
  CONDITION_SNIPPETS,
  def,
  messages,
  NAMESPACE_OR_ALL,
  orReference,
  ref,
  resourceRef,
  selectionFields,
  type TypeOf,
} from "../../dsl/definitions.js";

export const waitCondition = def(
  "waitCondition",
  orReference<string>(
    {
      type: "string",
      pattern: "^(condition=[^=\\s]+(=.+)?|jsonpath=.+|delete)$",
      patternErrorMessage: "Use condition=<Name>[=<value>], jsonpath=<expr>[=<value>] or delete.",
    },
    {
      "x-khook-rule": "wait-for-grammar",
      ...messages({
        pattern:
          "{label}: {value} is not a wait condition; use condition=<Name>[=<value>], jsonpath=<expr>[=<value>] or delete",
      }),
      description:
        'condition=<Name>[=<value>] (status.conditions[type==Name].status is "True", or <value>), jsonpath=<expr>[=<value>] (the expression yields a non-empty value, or one equal to <value>), or delete (every matching resource is gone).',
      defaultSnippets: [
        ...CONDITION_SNIPPETS,
        { label: "delete", description: "every matching resource is gone", body: "delete" },
      ],
    },
  ),
);

export const action = def(
  "waitAction",
  Type.Object(
    {
      for: ref(waitCondition),
      on: ref(resourceRef, {
        description: "Required. A resource type (pods) or kind/name (deployment/argocd-server).",
      }),
      ...selectionFields,
    },
    {
      description: "wait: block until a condition holds (kubectl wait), bounded by the step timeout.",
      additionalProperties: false,
      ...NAMESPACE_OR_ALL,
    },
  ),
);

export const DEFINITION: KindDefinition = { action, defs: [waitCondition] };

export type WaitAction = TypeOf<typeof action>;
export type WaitNormalized = Defaulted<WaitAction, "allNamespaces">;
export type WaitStep = LoadedStepBase<"wait", WaitNormalized>;
