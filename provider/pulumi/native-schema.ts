/**
 * The Pulumi package schema of the native provider (`khook:index:Khook`):
 * what `pulumi package get-schema` prints and `pulumi package gen-sdk` turns
 * into the Python, Go and .NET SDKs, and what Pulumi YAML type-checks a
 * program against.
 *
 * Inputs are what a program in any language can give: paths instead of the
 * file contents the TypeScript SDK reads at program time (the provider reads
 * them, relative to the program's directory; native.ts). Outputs are the
 * dynamic resource's outputs (wire.ts `KhookOutputs`), so the two shells
 * expose the same resource. Secrets are marked secret in both directions.
 */
import { schemaInputProperties } from "../inputs.js";
import { KHOOK_VERSION } from "../version.js";

export const KHOOK_TOKEN = "khook:index:Khook";

type PropertySpec = Record<string, unknown>;

const str = (description: string, extra: PropertySpec = {}): PropertySpec => ({
  type: "string",
  description,
  ...extra,
});
const stringList = (description: string): PropertySpec => ({ type: "array", items: { type: "string" }, description });

/** Inputs a program gives: the one table of every shell's inputs (provider/inputs.ts). */
const INPUTS: Record<string, PropertySpec> = schemaInputProperties();

/** What a run produces (wire.ts `KhookOutputs` minus the inputs). */
const RESULTS: Record<string, PropertySpec> = {
  specName: str("The spec's metadata.name."),
  steps: { type: "array", items: { $ref: "#/types/khook:index:Step" }, description: "Per step, in document order." },
  runStatus: str("succeeded | failed | cancelled (after a refresh: the record's status)."),
  recordNamespace: str("The state record Secret's namespace; absent when the spec sets `state.enabled: false`."),
  recordName: str("The state record Secret's name."),
  recordUpdatedAt: str("When the record was last written (after a refresh)."),
  engineVersion: str("The khook version that last applied."),
  plan: stringList("The offline plan, one line per step."),
  ownerToken: str(
    "Minted by create, kept by every update: tells this resource's claim on the state record from a successor's.",
  ),
  hashKey: str(
    "The key of the keyed input hashes of steps that use secrets (a secret: with it, a hash could be checked against guesses).",
    { secret: true },
  ),
  drift: {
    type: "array",
    items: { $ref: "#/types/khook:index:Drift" },
    description:
      "After a refresh with `refresh: live`: the completed steps that drifted in the cluster; the next `up` re-runs them.",
  },
};

const DRIFT = {
  type: "object",
  description: "A step a live refresh found drifted.",
  properties: {
    name: str("The step's name."),
    type: str("The step's type."),
    reason: str("What drifted: objects and fields, or the release's revision; never a value."),
  },
  required: ["name", "type", "reason"],
};

const STEP = {
  type: "object",
  description: "One step's outcome.",
  properties: {
    name: str("The step's name."),
    type: str("The step's type (helm, apply, kustomize, wait, job, ...)."),
    status: str("ok | failed | skipped | pending | destroying | destroyed | destroy-failed."),
    reason: str("Why the step has this status."),
    attempts: { type: "integer", description: "Attempts of the last run." },
    durationMs: { type: "number", description: "How long the step took, in milliseconds." },
    inputHash: str("The step's input hash (action after substitution plus local file contents)."),
    when: str("The `when:` outcome decided at load: included | excluded."),
    error: str("The last error, redacted; failed steps only."),
  },
  required: ["name", "type", "status", "reason", "attempts", "durationMs", "inputHash", "when"],
};

/** Stack config (`khook:*`) and explicit provider inputs: the same settings. */
const CONFIG: Record<string, PropertySpec> = {
  kubeconfig: str(
    "Kubeconfig content or path for every Khook of the stack; for destroy and refresh it wins over the stored one.",
    { secret: true },
  ),
  context: str("The kubeconfig context."),
  deleteUnreachable: {
    type: "boolean",
    description:
      "When the cluster cannot be reached, destroy drops the resource from the stack's state without touching any cluster.",
  },
  previewMode: str("The default `previewMode` of every Khook: offline | online."),
};

/** The schema, as the JSON text the engine asks for. */
export function khookSchema(version: string = KHOOK_VERSION): string {
  return JSON.stringify({
    name: "khook",
    displayName: "khook",
    version,
    description:
      "khook: a declarative cluster bootstrap (apiVersion: khook.io/v1, kind: Khook) applied from a Pulumi program.",
    keywords: ["kubernetes", "bootstrap", "helm", "category/utility", "kind/native"],
    license: "Apache-2.0",
    config: { variables: CONFIG },
    provider: {
      description: "The khook provider: where the Khook resources of a stack reach their cluster.",
      inputProperties: CONFIG,
    },
    types: { "khook:index:Step": STEP, "khook:index:Drift": DRIFT },
    resources: {
      [KHOOK_TOKEN]: {
        description:
          "A khook spec applied to a cluster: preview validates and plans it, up applies it with the state journal on, destroy tears down what it created, refresh reads the journal.",
        inputProperties: INPUTS,
        properties: { ...INPUTS, ...RESULTS },
        required: ["steps", "runStatus", "engineVersion", "specName"],
      },
    },
    language: {
      nodejs: { packageName: "@khook/pulumi", dependencies: { "@pulumi/pulumi": "^3.142.0" } },
      python: { packageName: "pulumi_khook", requires: { pulumi: ">=3.142.0,<4.0.0" }, pyproject: { enabled: true } },
      go: { importBasePath: "github.com/khook/pulumi-khook/sdk/go/khook", generateResourceContainerTypes: false },
      csharp: { packageReferences: { Pulumi: "3.*" } },
    },
  });
}
