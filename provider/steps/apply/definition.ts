/**
 * The apply: action block, defined once: the schema editors and the loader read, and the type
 * the code reads. Build time only (typebox): the kind (kind.ts) imports its types only.
 */
import { Type } from "typebox";
import type { KindDefinition } from "../contract.js";
import type { Defaulted } from "../../dsl/defaults.js";
import type { LoadedStepBase } from "../../dsl/loaded.js";
import {
  boolean,
  CONDITION_SNIPPETS,
  def,
  messages,
  namespace,
  orReference,
  ref,
  type TypeOf,
  word,
} from "../../dsl/definitions.js";
import { manifestList, MANIFEST_DEFS } from "../manifests/definition.js";

export const applyWaitCondition = def(
  "applyWaitCondition",
  orReference<string>(
    {
      type: "string",
      pattern: "^(condition=[^=\\s]+(=.+)?|jsonpath=.+)$",
      patternErrorMessage: "Use condition=<Name>[=<value>] or jsonpath=<expr>[=<value>].",
    },
    {
      "x-khook-rule": "apply-wait-for-grammar",
      ...messages({
        pattern:
          "{label}: {value} is not a wait condition; use condition=<Name>[=<value>] or jsonpath=<expr>[=<value>] (delete is for wait: steps)",
      }),
      description:
        "Block until every applied object meets this: condition=<Name>[=<value>] or jsonpath=<expr>[=<value>] (wait.for's grammar minus delete). Bounded by the step timeout.",
      defaultSnippets: CONDITION_SNIPPETS,
    },
  ),
);

export const action = def(
  "applyAction",
  Type.Object(
    {
      manifests: ref(manifestList, {
        description:
          "Required. Ordered list of sources, each exactly one of inline: (YAML string), file: (path), url: (HTTP(S)) or kustomize: (local kustomization directory).",
      }),
      namespace: Type.Optional(
        ref(namespace, { description: "Default namespace for namespace-less namespaced resources." }),
      ),
      createNamespace: Type.Optional(
        ref(boolean, {
          description: "Create the namespace if missing. Default false.",
        }),
      ),
      skipIf: Type.Optional(
        word(
          "exists",
          "Skip (success) if every manifest resource already exists.",
          "exists: skip the step (as success) if every manifest resource already exists. waitFor still runs.",
        ),
      ),
      serverSide: Type.Optional(ref(boolean, { description: "Use server-side apply. Default false." })),
      waitFor: Type.Optional(ref(applyWaitCondition)),
    },
    {
      description: "apply: declaratively apply manifests (kubectl apply via the dynamic client).",
      additionalProperties: false,
    },
  ),
);

export const DEFINITION: KindDefinition = { action, defs: [applyWaitCondition, ...MANIFEST_DEFS] };

export type ApplyAction = TypeOf<typeof action>;
export type ApplyNormalized = Defaulted<ApplyAction, "createNamespace" | "serverSide">;
export type ApplyStep = LoadedStepBase<"apply", ApplyNormalized>;
