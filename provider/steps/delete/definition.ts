/**
 * The delete: action block, defined once: the schema editors and the loader read, and the type
 * the code reads. Three exclusive forms: by manifests, by resource, by release. Build time only
 * (typebox): the kind (kind.ts) imports its types only.
 */
import { Type } from "typebox";
import type { KindDefinition } from "../contract.js";
import type { Defaulted } from "../../dsl/defaults.js";
import type { LoadedStepBase } from "../../dsl/loaded.js";
import {
  boolean,
  def,
  namespace,
  NAMESPACE_OR_ALL,
  raw,
  ref,
  releaseName,
  resourceRef,
  selectionFields,
  type TypeOf,
} from "../../dsl/definitions.js";
import { manifestList, MANIFEST_DEFS } from "../manifests/definition.js";

const ignoreNotFound = (absent: string) =>
  Type.Optional(ref(boolean, { description: `${absent} success, not failure. Default true.` }));

export const byManifests = def(
  "deleteByManifests",
  Type.Object(
    {
      manifests: ref(manifestList, {
        description:
          "Required. The sources whose objects are deleted, each exactly one of inline:, file:, url: or kustomize:.",
      }),
      namespace: Type.Optional(
        ref(namespace, {
          description: "Default namespace for namespace-less namespaced resources (kubectl delete -f -n).",
        }),
      ),
      ignoreNotFound: ignoreNotFound("Absent resources are"),
    },
    {
      description: "delete: by manifests — delete what these sources define (same source list as apply.manifests).",
      additionalProperties: false,
    },
  ),
);

export const byResource = def(
  "deleteByResource",
  Type.Object(
    {
      resource: ref(resourceRef, { description: "Required. A type (pods) or kind/name (daemonset/aws-node)." }),
      ...selectionFields,
      ignoreNotFound: ignoreNotFound("Absent resources are"),
    },
    {
      description: "delete: by reference or selector — e.g. removing daemonset/aws-node before installing Cilium.",
      additionalProperties: false,
      ...NAMESPACE_OR_ALL,
    },
  ),
);

export const byRelease = def(
  "deleteByRelease",
  Type.Object(
    {
      release: ref(releaseName, { description: "Required. The Helm release name." }),
      namespace: Type.Optional(
        ref(namespace, {
          description: 'The release\'s namespace. Default "default".',
        }),
      ),
      ignoreNotFound: ignoreNotFound("An absent release is"),
    },
    {
      description: "delete: by release — helm uninstall. The step waits until the release's resources are gone.",
      additionalProperties: false,
    },
  ),
);

export type DeleteManifestsAction = TypeOf<typeof byManifests>;
export type DeleteResourceAction = TypeOf<typeof byResource>;
export type DeleteReleaseAction = TypeOf<typeof byRelease>;

export const action = def(
  "deleteAction",
  raw<DeleteManifestsAction | DeleteResourceAction | DeleteReleaseAction>({
    description:
      "delete: remove resources. Exactly one of three forms: manifests: (what these sources define), resource: (by reference/selector) or release: (helm uninstall). Absent resources are success by default.",
    type: "object",
    oneOf: [byManifests, byResource, byRelease].map((d) => ({ $ref: `#/$defs/${d.name}` })),
  }),
);

export const DEFINITION: KindDefinition = { action, defs: [byManifests, byResource, byRelease, ...MANIFEST_DEFS] };

export type DeleteAction = TypeOf<typeof action>;
export type DeleteManifestsNormalized = Defaulted<DeleteManifestsAction, "ignoreNotFound">;
export type DeleteResourceNormalized = Defaulted<DeleteResourceAction, "allNamespaces" | "ignoreNotFound">;
export type DeleteReleaseNormalized = Defaulted<DeleteReleaseAction, "namespace" | "ignoreNotFound">;
export type DeleteNormalized = DeleteManifestsNormalized | DeleteResourceNormalized | DeleteReleaseNormalized;
export type DeleteStep = LoadedStepBase<"delete", DeleteNormalized>;
