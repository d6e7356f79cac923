/**
 * The manifest sources that apply: and delete: share (inline, file, url, kustomize), defined
 * once: the schema editors and the loader read, and the type the code reads. Build time only.
 */
import {
  def,
  httpUrl,
  localPath,
  messages,
  noun,
  oneKeyOf,
  orReference,
  ref,
  raw,
  type TypeOf,
} from "../../dsl/definitions.js";
import { Type } from "typebox";

export const kustomizePath = def(
  "kustomizePath",
  orReference<string>(
    {
      type: "string",
      pattern: "^(\\./|\\.\\./|/)",
      patternErrorMessage:
        "kustomize: sources must be local paths starting with ./, ../ or / (remote bases are not supported).",
    },
    {
      "x-khook-rule": "local-path",
      description:
        "A local kustomization directory: must start with ./, ../ or / (remote bases are not supported; they would need git).",
      ...messages({
        pattern:
          "kustomize: {value} is not a local path; kustomize sources must start with ./, ../ or / (remote bases are not supported)",
      }),
    },
  ),
);

export const manifestSource = def(
  "manifestSource",
  oneKeyOf(
    {
      inline: Type.String({ minLength: 1, description: "Manifest YAML written in the spec (multi-document allowed)." }),
      file: ref(localPath, {
        description: "A local manifest file, relative to the spec file (multi-document allowed).",
      }),
      url: ref(httpUrl, { description: "An HTTP(S) URL of a manifest file (multi-document allowed)." }),
      kustomize: ref(kustomizePath, {
        description:
          "A local kustomization directory (./, ../ or /), rendered in-process. Remote bases are not supported.",
      }),
    },
    {
      description:
        "One manifest source: exactly one of inline: (YAML string), file: (path), url: (HTTP(S)) or kustomize: (local kustomization directory). Multi-document YAML is supported in every source.",
      ...noun("manifest entry"),
    },
    {
      loader: "{subject} must have exactly one source ({keys}); {present}",
      none: "A manifest entry needs one source: inline, file, url or kustomize.",
      already: (k) =>
        `A manifest entry has exactly one source, and this one already has ${k}: put this source in an entry of its own.`,
    },
  ),
);

export const manifestList = def(
  "manifestList",
  raw<ManifestSource[]>({
    description: "Ordered list of manifest sources, each exactly one of inline:, file:, url: or kustomize:.",
    type: "array",
    minItems: 1,
    ...messages({ minItems: "{label} must list at least one source (inline, file, url or kustomize)" }),
    items: { $ref: `#/$defs/${manifestSource.name}` },
  }),
);

export type ManifestSource = TypeOf<typeof manifestSource>;

export const MANIFEST_DEFS = [manifestSource, manifestList, kustomizePath];
