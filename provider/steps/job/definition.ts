/**
 * The job: action block, defined once: the schema editors and the loader read, and the type
 * the code reads. Build time only (typebox): the kind (kind.ts) imports its types only.
 */
import { Type } from "typebox";
import type { KindDefinition } from "../contract.js";
import type { Defaulted } from "../../dsl/defaults.js";
import type { LoadedStepBase } from "../../dsl/loaded.js";
import {
  boolean,
  def,
  messages,
  namespace,
  raw,
  ref,
  subdomainName,
  word,
  type TypeOf,
} from "../../dsl/definitions.js";

export const action = def(
  "jobAction",
  Type.Object(
    {
      image: Type.String({ minLength: 1, description: "Required. The container image to run." }),
      command: Type.Optional(
        Type.Array(Type.String(), {
          description: "Container command (entrypoint override). Default: the image entrypoint.",
        }),
      ),
      args: Type.Optional(Type.Array(Type.String(), { description: "Container args." })),
      env: Type.Optional(
        raw<Record<string, string>>({
          description: "Environment variables, NAME: value (values are strings: quote numbers and booleans).",
          type: "object",
          propertyNames: {
            pattern: "^[-._a-zA-Z][-._a-zA-Z0-9]*$",
            patternErrorMessage:
              "Environment variable names use letters, digits, '_', '-' and '.', not starting with a digit.",
            ...messages({
              pattern:
                "{key} is not a valid environment variable name. Environment variable names use letters, digits, '_', '-' and '.', not starting with a digit.",
            }),
          },
          additionalProperties: { type: "string" },
        }),
      ),
      namespace: Type.Optional(
        ref(namespace, {
          description: 'Namespace the Job runs in. Default "default".',
        }),
      ),
      createNamespace: Type.Optional(
        ref(boolean, {
          description: "Create the namespace if missing. Default false.",
        }),
      ),
      serviceAccount: Type.Optional(
        subdomainName("ServiceAccount name", {
          description: "ServiceAccount for the pod. Default: the namespace's default ServiceAccount.",
        }),
      ),
      skipIf: Type.Optional(
        word(
          "succeeded",
          "Skip (success) if this step's Job already completed successfully.",
          "succeeded: skip the step (as success) if this step's Job already completed successfully.",
        ),
      ),
    },
    {
      description:
        "job: run a container to completion as a batch/v1 Job named after the step (backoffLimit 0, restartPolicy Never; the step timeout is its activeDeadlineSeconds).",
      additionalProperties: false,
    },
  ),
);

export const DEFINITION: KindDefinition = { action, defs: [] };

export type JobAction = TypeOf<typeof action>;
export type JobNormalized = Defaulted<JobAction, "namespace" | "createNamespace">;
export type JobStep = LoadedStepBase<"job", JobNormalized>;
