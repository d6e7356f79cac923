/**
 * The patch: action block, defined once: the schema editors and the loader read, and the type
 * the code reads. Build time only (typebox): the kind (kind.ts) imports its types only.
 */
import { Type } from "typebox";
import type { KindDefinition } from "../contract.js";
import type { Defaulted } from "../../dsl/defaults.js";
import type { LoadedStepBase } from "../../dsl/loaded.js";
import { def, messages, namespace, noun, orReference, raw, ref, type TypeOf } from "../../dsl/definitions.js";

export const kindName = def(
  "kindName",
  orReference<string>(
    {
      type: "string",
      pattern: "^[A-Za-z][A-Za-z0-9.-]*/[^/\\s]+$",
      patternErrorMessage: "Use kind/name, e.g. daemonset/aws-node.",
    },
    {
      "x-khook-rule": "resource-reference",
      description: "A single resource as kind/name, e.g. daemonset/aws-node.",
      ...messages({ pattern: "{label}: {value} is not kind/name, e.g. daemonset/aws-node" }),
    },
  ),
);

const jsonPointer = (description: string, example: string) =>
  orReference<string>(
    { type: "string", pattern: "^/", patternErrorMessage: `A JSON pointer starts with /, e.g. ${example}.` },
    { "x-khook-rule": "patch-json-pointer", description },
  );

const OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;

export const jsonPatchOperation = def(
  "jsonPatchOperation",
  Type.Object(
    {
      op: orReference<(typeof OPS)[number]>({ type: "string", enum: OPS }, { description: "The operation." }),
      path: jsonPointer(
        "JSON pointer to the target location, e.g. /spec/template/spec/nodeSelector.",
        "/spec/replicas",
      ),
      value: Type.Optional(Type.Unknown({ description: "The value (add, replace, test)." })),
      from: Type.Optional(jsonPointer("JSON pointer to the source location (move, copy).", "/metadata/labels/app")),
    },
    {
      description: "One RFC 6902 operation.",
      additionalProperties: false,
      ...noun("json patch operation"),
      allOf: [
        {
          if: {
            type: "object",
            required: ["op"],
            properties: { op: { anyOf: [{ enum: ["add", "replace", "test"] }, { $ref: "#/$defs/reference" }] } },
          },
          then: { required: ["value"], errorMessage: "add, replace and test operations need a value:" },
        },
        {
          if: {
            type: "object",
            required: ["op"],
            properties: { op: { anyOf: [{ enum: ["move", "copy"] }, { $ref: "#/$defs/reference" }] } },
          },
          then: { required: ["from"], errorMessage: "move and copy operations need from:" },
        },
      ],
    },
  ),
);

export type JsonPatchOperation = TypeOf<typeof jsonPatchOperation>;
export type PatchType = "strategic" | "merge" | "json";

export const action = def(
  "patchAction",
  Type.Object(
    {
      target: ref(kindName, { description: "Required. The resource as kind/name (daemonset/aws-node)." }),
      namespace: Type.Optional(
        ref(namespace, {
          description: 'Namespace of the target; ignored for cluster-scoped kinds. Default "default".',
        }),
      ),
      type: Type.Optional(
        orReference<PatchType>(
          {
            type: "string",
            enum: ["strategic", "merge", "json"],
            enumDescriptions: [
              "Strategic merge patch (kubectl's default): understands list merge keys of built-in types; rejected by custom resources.",
              "JSON merge patch (RFC 7386): works on every kind; replaces lists wholesale.",
              "JSON patch (RFC 6902): a list of op/path/value operations.",
            ],
          },
          {
            description:
              "strategic (default; built-in types only), merge (RFC 7386; works on every kind, replaces lists wholesale) or json (RFC 6902 list of operations).",
          },
        ),
      ),
      patch: raw<Record<string, unknown> | JsonPatchOperation[]>({
        description:
          "Required. The patch body: a mapping for strategic/merge, a list of operations (op/path/value) for json.",
        type: ["object", "array"],
        items: { $ref: `#/$defs/${jsonPatchOperation.name}` },
      }),
    },
    {
      description: "patch: modify a resource in place (kubectl patch). The target must exist.",
      additionalProperties: false,
      allOf: [
        {
          if: {
            type: "object",
            required: ["type", "patch"],
            properties: { type: { const: "json" }, patch: { type: "object" } },
          },
          then: {
            properties: { patch: false },
            "x-khook-rule": "patch-body-shape",
            errorMessage: "type: json needs a list of operations (op/path/value) as the patch body, not a mapping",
          },
        },
        {
          if: {
            type: "object",
            required: ["patch"],
            properties: { type: { enum: ["strategic", "merge"] }, patch: { type: "array" } },
          },
          then: {
            properties: { patch: false },
            "x-khook-rule": "patch-body-shape",
            errorMessage: "a strategic or merge patch body is a mapping; a list of operations needs type: json",
          },
        },
      ],
    },
  ),
);

export const DEFINITION: KindDefinition = { action, defs: [jsonPatchOperation, kindName] };

export type PatchAction = TypeOf<typeof action>;
export type PatchNormalized = Defaulted<PatchAction, "namespace" | "type">;
export type PatchStep = LoadedStepBase<"patch", PatchNormalized>;
