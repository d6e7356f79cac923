/**
 * The helm: action block, defined once: the schema editors and the loader read, and the type
 * the code reads. Build time only (typebox): the kind (kind.ts) imports its types only.
 */
import { Type } from "typebox";
import type { KindDefinition } from "../contract.js";
import type { Defaulted } from "../../dsl/defaults.js";
import type { LoadedStepBase } from "../../dsl/loaded.js";
import {
  boolean,
  def,
  httpUrl,
  localPath,
  namespace,
  noun,
  oneKeyOf,
  raw,
  ref,
  releaseName,
  word,
  type TypeOf,
} from "../../dsl/definitions.js";

export const basicAuth = def(
  "basicAuth",
  Type.Object(
    {
      username: Type.String({ description: "Required. User name (AWS for ECR)." }),
      password: Type.String({ description: "Required. Password or token, e.g. ${ECR_TOKEN}." }),
    },
    {
      description:
        "Credentials for a private chart repository or OCI registry. Raw values, no encoding needed; pass secrets as KHOOK_SECRET_* variables. Mutually exclusive with userinfo in repo:.",
      additionalProperties: false,
      ...noun("helm auth"),
    },
  ),
);

export const valuesSource = def(
  "valuesSource",
  oneKeyOf(
    {
      file: ref(localPath, { description: "A local values file, relative to the spec file." }),
      url: ref(httpUrl, { description: "An HTTP(S) URL of a values file." }),
    },
    {
      description:
        "One external values source: exactly one of file: (local path) or url: (HTTP(S)). Later entries and values: override earlier ones.",
      ...noun("valuesFrom entry"),
    },
    {
      loader: "{subject} must have exactly one source ({keys}); {present}",
      none: "A valuesFrom entry needs one source: file or url.",
      already: (k) =>
        `A valuesFrom entry has exactly one source, and this one already has ${k}: put this source in an entry of its own.`,
    },
  ),
);

/** The chart-source rules editors can check (the loader words them itself: rule chart-source, chart-auth). */
const CHART_RULES = [
  {
    if: {
      type: "object",
      required: ["chart"],
      properties: {
        chart: {
          type: "string",
          not: { type: "string", pattern: "^([a-zA-Z][a-zA-Z0-9+.-]*://|\\./|\\.\\./|/)|\\$\\{" },
        },
      },
    },
    then: {
      required: ["repo"],
      "x-khook-rule": "chart-source",
      errorMessage:
        "a bare chart name needs repo: (the HTTP(S) chart repository URL); use oci://... or a local path (./, ../, /) otherwise",
    },
  },
  {
    if: {
      type: "object",
      required: ["chart", "repo"],
      properties: { chart: { type: "string", pattern: "^(oci://|\\./|\\.\\./|/)" } },
    },
    then: {
      properties: { repo: false },
      "x-khook-rule": "chart-source",
      errorMessage: "repo: is only for bare chart names; an oci:// reference or a local path must not set it",
    },
  },
  {
    if: {
      type: "object",
      required: ["chart"],
      properties: { chart: { type: "string", pattern: "^(\\./|\\.\\./|/)" } },
    },
    then: {
      properties: { version: false, auth: false },
      "x-khook-rule": "chart-source",
      errorMessage:
        "a local chart path takes neither version: (the path already pins the chart) nor auth: (nothing is fetched)",
    },
  },
  {
    if: {
      type: "object",
      required: ["chart", "version"],
      properties: {
        chart: {
          type: "string",
          pattern: "^(?!.*\\$\\{)((?![a-zA-Z][a-zA-Z0-9+.-]*://|\\./|\\.\\./|/)[^:]*:.|oci://.*/[^/]*[:@][^/]*$)",
        },
      },
    },
    then: {
      properties: { version: false },
      "x-khook-rule": "chart-source",
      errorMessage:
        "the chart already carries its version inline (name:version, :tag or @digest); drop version: or the inline version",
    },
  },
  {
    if: {
      type: "object",
      required: ["auth"],
      anyOf: [
        { required: ["repo"], properties: { repo: { type: "string", pattern: "^https?://[^/@]*@" } } },
        { required: ["chart"], properties: { chart: { type: "string", pattern: "^oci://[^/@]*@" } } },
      ],
    },
    then: {
      properties: { auth: false },
      "x-khook-rule": "chart-auth",
      errorMessage: "credentials come either as userinfo in the URL or as an auth: block, never both",
    },
  },
];

export const action = def(
  "helmAction",
  Type.Object(
    {
      chart: Type.String({
        minLength: 1,
        description:
          "Required. The chart source, implied by its shape: a bare name (needs repo:), name:version, an oci:// reference (oci://host/path/name[:tag|@digest]), or a local path starting with ./, ../ or / (directory or .tgz).",
      }),
      repo: Type.Optional(
        ref(httpUrl, {
          description:
            "HTTP(S) chart repository URL; required for bare-name charts, forbidden otherwise. May carry URL-encoded userinfo (https://user:pass@host) instead of auth:.",
        }),
      ),
      version: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            'Exact chart version (recommended: always pin). Default: latest. Mutually exclusive with an inline name:version / oci tag; forbidden for local charts. Quote it: version: "1.20".',
        }),
      ),
      auth: Type.Optional(ref(basicAuth)),
      release: Type.Optional(ref(releaseName, { description: "Helm release name. Default: the step name." })),
      namespace: Type.Optional(
        ref(namespace, {
          description: 'Target namespace. Default "default".',
        }),
      ),
      createNamespace: Type.Optional(
        ref(boolean, {
          description: "Create the namespace if missing. Default false.",
        }),
      ),
      skipIf: Type.Optional(
        word(
          "installed",
          "Skip (success) if the release already exists, any version, any values.",
          "installed: skip the step (as success) if the release already exists, regardless of version or values.",
        ),
      ),
      atomic: Type.Optional(ref(boolean, { description: "Roll back on failure. Default false." })),
      wait: Type.Optional(
        ref(boolean, {
          description: "Wait for the release's resources to be ready before the step succeeds. Default false.",
        }),
      ),
      values: Type.Optional(
        raw<Record<string, unknown>>({
          type: "object",
          description: "Inline values, merged over the chart defaults and over valuesFrom: entries. Free-form.",
        }),
      ),
      valuesFrom: Type.Optional(
        Type.Array(ref(valuesSource), {
          description:
            "Ordered list of external values sources, each exactly one of file: or url:; later entries and values: override earlier ones.",
        }),
      ),
    },
    {
      description: "helm: install or upgrade a chart release (the release history decides which).",
      additionalProperties: false,
      allOf: CHART_RULES,
    },
  ),
);

export const DEFINITION: KindDefinition = { action, defs: [basicAuth, valuesSource] };

export type HelmAction = TypeOf<typeof action>;
export type BasicAuth = TypeOf<typeof basicAuth>;
export type ValuesSource = TypeOf<typeof valuesSource>;
/** A helm: block with its defaults applied (the release is named after the step). */
export type HelmNormalized = Defaulted<HelmAction, "release" | "namespace" | "createNamespace" | "atomic" | "wait">;
export type HelmStep = LoadedStepBase<"helm", HelmNormalized>;
