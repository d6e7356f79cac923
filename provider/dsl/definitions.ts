/**
 * The khook v1 document, defined once: each definition is the JSON Schema that editors and the
 * loader validate with and, through typebox's `Static`, the TypeScript type the code reads.
 * This module holds the document's frame (apiVersion, metadata, defaults, state, hooks, a
 * step's common fields) and the field types the step kinds share (durations, names,
 * references); each kind defines its own action block beside its code (provider/steps/<kind>/).
 *
 * Build time only: typebox is loaded by the schema generator (steps/generate-schema.ts) and
 * read by the compiler; nothing at run time imports a value from here.
 */
import { Type, type Static, type TSchema, type TUnsafe } from "typebox";
import { SPEC_DEFAULTS } from "./defaults.js";
import { HOOK_EVENT_DEFINITIONS, HOOK_EVENTS, type HookEvent } from "./hook-events.js";

export const API_VERSION = "khook.io/v1";
export const KIND = "Khook";

/** Keywords a schema node may carry besides JSON Schema's own (editors read some; the loader others). */
export type SchemaOptions = Record<string, unknown>;

/** A named definition: written once under `$defs`, referred to by `ref`. */
export interface Def<T = unknown> {
  readonly name: string;
  readonly schema: TSchema;
  /** Carries the type only. */
  readonly type?: T;
}

export function def<S extends TSchema>(name: string, schema: S): Def<Static<S>> {
  return { name, schema };
}

/** A JSON Schema fragment written as is, with the TypeScript type it validates. */
export function raw<T>(json: SchemaOptions): TUnsafe<T> {
  return Type.Unsafe<T>(json);
}

/**
 * The loader's wording for a node's failures, by JSON Schema keyword (`unknown:<field>` for a
 * field it refuses): the errors are translated from the same definition that states the rule.
 * dsl/schema.ts fills in `{label}` (the field), `{value}` (the value as JSON; `{short}` cut at
 * 80 characters), `{found}` (the value in words), `{shown}`, `{length}` and `{limit}` (a string
 * too long), `{key}` (a property name) and, for "exactly one of", `{subject}`, `{keys}`, `{present}`.
 */
export function messages(byKeyword: Record<string, string>): SchemaOptions {
  return { "x-khook-messages": byKeyword };
}

/** What an object is, in the loader's messages (`unknown field "x" in <noun>`). */
export function noun(what: string): SchemaOptions {
  return { "x-khook-noun": what };
}

/** A reference to a named definition, with the annotations of the field that uses it. */
export function ref<T>(d: Def<T>, options: SchemaOptions = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ $ref: `#/$defs/${d.name}`, ...options });
}

/** The `${NAME}` reference: editors accept one wherever substitution can put a value. */
export const reference = def(
  "reference",
  raw<string>({
    description:
      "A ${NAME} variable reference. Variables are substituted as text before khook validates the spec, so a reference can stand for any scalar; khook checks the substituted value. Write references in block style (key: ${NAME}), not inside flow-style braces.",
    type: "string",
    pattern: "\\$\\{[^}]*\\}",
  }),
);

/**
 * A typed scalar that editors also accept as a `${NAME}` reference; the loader, which sees
 * the spec after substitution, validates the strict form only (dsl/schema.ts derives it).
 */
export function orReference<T>(strict: SchemaOptions, options: SchemaOptions = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ ...options, anyOf: [strict, { $ref: `#/$defs/${reference.name}` }] });
}

/** A one-word enum (skipIf): its value, or a reference. */
export function word<W extends string>(value: W, meaning: string, description: string): TUnsafe<W> {
  return orReference<W>({ type: "string", enum: [value], enumDescriptions: [meaning] }, { description });
}

/**
 * The editor's half of "exactly one of these keys": a message when none is there, and once
 * one is, every other key refused with a message on it (yaml-language-server reports
 * `errorMessage` on the failing node). The loader turns `x-khook-exactly-one` into its own
 * check (dsl/schema.ts), and drops these branches.
 */
export function exactlyOne(keys: readonly string[], wording: ExactlyOneWording): SchemaOptions {
  return {
    "x-khook-exactly-one": keys,
    ...(wording.loader !== undefined ? messages({ oneOf: wording.loader }) : {}),
    allOf: [
      { "x-khook-editor": true, anyOf: keys.map((k) => ({ required: [k], errorMessage: wording.none })) },
      ...keys.map((k) => ({
        "x-khook-editor": true,
        if: { required: [k] },
        then: {
          properties: Object.fromEntries(keys.filter((o) => o !== k).map((o) => [o, false])),
          errorMessage: wording.already(k),
        },
      })),
    ],
  };
}

/** How "exactly one of these keys" is said: to editors (none, already) and by the loader. */
export interface ExactlyOneWording {
  /** The editor's message when no key is there. */
  none: string;
  /** The editor's message on a second key, once `key` is there. */
  already: (key: string) => string;
  /** The loader's message (default: `{subject} must have exactly one of {keys}; {present}`). */
  loader?: string;
}

/** `{a} | {b} | ...`: exactly one key of `properties`, as an object the editor can complete. */
type OneKeyOf<P extends Record<string, TSchema>> = { [K in keyof P]: { [Q in K]: Static<P[K]> } }[keyof P];

/** An object with exactly one of its keys (a manifest source, a values source). */
export function oneKeyOf<P extends Record<string, TSchema>>(
  properties: P,
  options: SchemaOptions,
  wording: ExactlyOneWording,
): TUnsafe<OneKeyOf<P>> {
  return Type.Unsafe<OneKeyOf<P>>({
    ...options,
    type: "object",
    additionalProperties: false,
    properties,
    ...exactlyOne(Object.keys(properties), wording),
  });
}

// ---------------------------------------------------------------------------
// Field types the document and the kinds share

const RFC1123_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const RFC1123_SUBDOMAIN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

export const boolean = def(
  "boolean",
  orReference<boolean>({ type: "boolean" }, { description: "true or false, or a ${NAME} reference." }),
);

export const count = def(
  "count",
  orReference<number>({ type: "integer", minimum: 0 }, { description: "A whole number >= 0, or a ${NAME} reference." }),
);

/** Go-style duration text such as `90s`, `5m`, `1h30m`. */
export const duration = def(
  "duration",
  orReference<string>(
    {
      type: "string",
      pattern: "^(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$",
      patternErrorMessage: "Not a duration: use Go syntax like 90s, 5m, 1h30m.",
    },
    {
      description:
        "A Go duration: a sequence of decimal numbers with a unit (ns, us, µs, ms, s, m, h), e.g. 90s, 5m, 1h30m; or 0.",
      ...messages({
        pattern: "{value} is not a duration; use Go syntax like 90s, 5m, 1h30m",
        type: "{label} must be a duration string like 90s, 5m, 1h30m; found {found}",
      }),
    },
  ),
);

export const onError = def(
  "onError",
  orReference<"fail" | "continue">(
    {
      type: "string",
      enum: ["fail", "continue"],
      enumDescriptions: [
        "Stop scheduling new steps; running steps finish and every not-yet-run step is reported skipped.",
        "Mark the step failed and keep going (its dependents still do not run).",
      ],
    },
    {
      description:
        "fail: stop scheduling new steps (running steps finish; every not-yet-run step is reported skipped). continue: mark the step failed and keep going.",
    },
  ),
);

const LABEL_RULE = "lowercase letters, digits and '-', starting and ending with a letter or digit";
const SUBDOMAIN_RULE =
  "dot-separated parts of lowercase letters, digits and '-', each starting and ending with a letter or digit";

/** A name with Kubernetes' (or Helm's) rules; the loader's messages say which name and which rule. */
function rfc1123(name: {
  pattern: string;
  maxLength: number;
  patternErrorMessage: string;
  description: string;
  /** What the name is, in the loader's messages. */
  noun: string;
  /** The rule, in the loader's messages. */
  rule: string;
  /** Why the limit is what it is, when it is not Kubernetes' own. */
  limitNote?: string;
}): TUnsafe<string> {
  const { pattern, maxLength, patternErrorMessage, description, noun: called, rule, limitNote } = name;
  return orReference<string>(
    { type: "string", pattern, minLength: 1, maxLength, patternErrorMessage },
    {
      description,
      ...messages({
        pattern: `{value} is not a valid ${called}: use ${rule}`,
        maxLength: `${called} "{shown}" is {length} characters; the limit is {limit}${limitNote ? ` (${limitNote})` : ""}`,
      }),
    },
  );
}

export const stepName = def(
  "stepName",
  rfc1123({
    pattern: RFC1123_LABEL,
    maxLength: 63,
    patternErrorMessage:
      "Use an RFC 1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (at most 63 characters).",
    description:
      "An RFC 1123 label of at most 63 characters: lowercase letters, digits and '-', starting and ending with a letter or digit. A helm step without release: has its name as the release name, which Helm caps at 53.",
    noun: "step name",
    rule: `an RFC 1123 label: ${LABEL_RULE}, at most 63 characters`,
  }),
);

export const namespace = def(
  "namespace",
  rfc1123({
    pattern: RFC1123_LABEL,
    maxLength: 63,
    patternErrorMessage:
      "Use an RFC 1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (at most 63 characters).",
    description:
      "A Kubernetes namespace: an RFC 1123 label of at most 63 characters (lowercase letters, digits and '-', starting and ending with a letter or digit).",
    noun: "namespace",
    rule: `an RFC 1123 label: ${LABEL_RULE}, at most 63 characters`,
  }),
);

/** An object's name (an RFC 1123 subdomain), named in messages as `noun`. */
export function subdomainName(noun: string, options: SchemaOptions): TUnsafe<string> {
  const schema = rfc1123({
    pattern: RFC1123_SUBDOMAIN,
    maxLength: 253,
    patternErrorMessage:
      "Use an RFC 1123 subdomain: dot-separated lowercase letters, digits and '-', each part starting and ending with a letter or digit (at most 253 characters).",
    description: "",
    noun,
    rule: `an RFC 1123 subdomain: ${SUBDOMAIN_RULE}, at most 253 characters`,
  });
  return Type.Unsafe<string>({ ...schema, ...options });
}

export const specName = def(
  "specName",
  rfc1123({
    pattern: RFC1123_SUBDOMAIN,
    maxLength: 241,
    patternErrorMessage:
      "Use an RFC 1123 subdomain: dot-separated lowercase letters, digits and '-', each part starting and ending with a letter or digit (at most 241 characters).",
    description:
      "The spec's name: an RFC 1123 subdomain of at most 241 characters, so that the default state record name khook-state-<name> stays within the 253-character limit.",
    noun: "metadata.name",
    rule: `an RFC 1123 subdomain: ${SUBDOMAIN_RULE}, at most 241 characters`,
    limitNote: "so that khook-state-<name> fits in 253",
  }),
);

export const releaseName = def(
  "releaseName",
  rfc1123({
    pattern: RFC1123_SUBDOMAIN,
    maxLength: 53,
    patternErrorMessage:
      "Use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (at most 53 characters).",
    description:
      "A Helm release name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 53 characters.",
    noun: "Helm release name",
    rule: `${SUBDOMAIN_RULE}, at most 53 characters`,
  }),
);

export const httpUrl = def(
  "httpUrl",
  orReference<string>(
    { type: "string", pattern: "^https?://[^\\s]+$", patternErrorMessage: "Use an http:// or https:// URL." },
    {
      "x-khook-rule": "source-url",
      description: "An http:// or https:// URL.",
      ...messages({ pattern: "{label}: {value} is not an http:// or https:// URL" }),
    },
  ),
);

export const localPath = def(
  "localPath",
  orReference<string>(
    {
      type: "string",
      pattern: "^(?![a-zA-Z][a-zA-Z0-9+.-]*://)",
      minLength: 1,
      patternErrorMessage: "A file: source is a local path; use url: for remote sources.",
    },
    {
      description: "A local file path, relative to the spec file's directory or absolute.",
      ...messages({ pattern: "{label}: {value} is a URL, not a local path; use url: for remote sources" }),
    },
  ),
);

export const resourceRef = def(
  "resourceRef",
  orReference<string>(
    {
      type: "string",
      pattern: "^[A-Za-z][A-Za-z0-9.-]*(/[^/\\s]+)?$",
      patternErrorMessage: "Use a resource type (pods) or kind/name (daemonset/aws-node).",
    },
    {
      "x-khook-rule": "resource-reference",
      description: "A resource type (pods) or kind/name (daemonset/aws-node).",
      ...messages({ pattern: "{label}: {value} is not a resource type (pods) or kind/name (daemonset/aws-node)" }),
    },
  ),
);

export const selector = def(
  "selector",
  raw<string>({ description: "A label selector, e.g. app=web,tier!=cache.", type: "string", minLength: 1 }),
);

export const fieldSelector = def(
  "fieldSelector",
  raw<string>({ description: "A field selector, e.g. status.phase=Running.", type: "string", minLength: 1 }),
);

/** Which objects of a type a step selects: one namespace or all, narrowed by label and field selectors. */
export const selectionFields = {
  namespace: Type.Optional(
    ref(namespace, { description: "Namespace of the resources; mutually exclusive with allNamespaces." }),
  ),
  allNamespaces: Type.Optional(
    ref(boolean, { description: "Match in every namespace; mutually exclusive with namespace." }),
  ),
  selector: Type.Optional(ref(selector)),
  fieldSelector: Type.Optional(ref(fieldSelector)),
};

/** namespace: and allNamespaces: true exclude each other (the loader words it: namespace-or-all). */
export const NAMESPACE_OR_ALL = {
  if: { type: "object", required: ["allNamespaces", "namespace"], properties: { allNamespaces: { const: true } } },
  then: {
    properties: { namespace: false },
    "x-khook-rule": "namespace-or-all",
    errorMessage: "namespace and allNamespaces: true are mutually exclusive",
  },
};

/** Completions for a wait condition (wait.for, apply.waitFor). */
export const CONDITION_SNIPPETS = [
  {
    label: "condition=<Name>",
    description: 'status.conditions[type==Name].status is "True"',
    body: "condition=${1:Ready}",
  },
  {
    label: "jsonpath=<expr>=<value>",
    description: "the JSONPath expression yields <value>",
    body: "jsonpath={${1:.status.phase}}=${2:Running}",
  },
];

/** The shared field types, in the order the schema lists them (before the document's own definitions). */
export const SHARED_DEFS: readonly Def[] = [
  reference,
  boolean,
  count,
  duration,
  onError,
  stepName,
  namespace,
  specName,
  releaseName,
  httpUrl,
  localPath,
  resourceRef,
  selector,
  fieldSelector,
];

// ---------------------------------------------------------------------------
// The document's frame

export const metadata = def(
  "metadata",
  Type.Object(
    {
      name: ref(specName, {
        description:
          "Required. The spec's name, used in logs and in the state record (default record name khook-state-<name>). An RFC 1123 subdomain.",
      }),
    },
    {
      description: "Identifies the spec; the name is used in logs and in the state record.",
      additionalProperties: false,
    },
  ),
);

export const defaults = def(
  "defaults",
  Type.Object(
    {
      timeout: Type.Optional(
        ref(duration, {
          description: `Per-step execution timeout (Go duration). Default ${SPEC_DEFAULTS.timeout}.`,
          default: SPEC_DEFAULTS.timeout,
        }),
      ),
      retries: Type.Optional(
        ref(count, {
          description: `Retry attempts after a failed try. Default ${SPEC_DEFAULTS.retries}.`,
          default: SPEC_DEFAULTS.retries,
        }),
      ),
      retryDelay: Type.Optional(
        ref(duration, {
          description: `Pause between tries (Go duration). Default ${SPEC_DEFAULTS.retryDelay}.`,
          default: SPEC_DEFAULTS.retryDelay,
        }),
      ),
      onError: Type.Optional(
        ref(onError, {
          description: "fail (default) stops scheduling new steps; continue marks the step failed and keeps going.",
          default: SPEC_DEFAULTS.onError,
        }),
      ),
    },
    { description: "Fallbacks for the per-step fields of the same name.", additionalProperties: false },
  ),
);

export const state = def(
  "state",
  Type.Object(
    {
      enabled: Type.Optional(
        ref(boolean, {
          description:
            "Whether the state record is used. Default true when the state: block is present (e.g. `enabled: ${USE_STATE:-false}` toggles it per environment).",
          default: SPEC_DEFAULTS.stateEnabled,
        }),
      ),
      namespace: Type.Optional(
        ref(namespace, {
          description: `Namespace of the record Secret (RFC 1123 label). Default "${SPEC_DEFAULTS.stateNamespace}".`,
          default: SPEC_DEFAULTS.stateNamespace,
        }),
      ),
      name: Type.Optional(
        subdomainName("state record name", {
          description: `Name of the record Secret (RFC 1123 subdomain). Default ${SPEC_DEFAULTS.stateNamePrefix}<metadata.name>.`,
        }),
      ),
    },
    {
      description:
        "The run-state record: when present, khook journals the run (per-step input hash and outcome) in an in-cluster Secret and a re-run resumes, skipping steps whose inputs are unchanged since they last succeeded. Absent = disabled; `state: {}` opts in.",
      additionalProperties: false,
    },
  ),
);

// ---------------------------------------------------------------------------
// Hooks

export const hookEvent = def(
  "hookEvent",
  orReference<HookEvent>(
    {
      type: "string",
      enum: HOOK_EVENTS,
      enumDescriptions: HOOK_EVENT_DEFINITIONS.map((e) => e.description),
    },
    { description: "A lifecycle event." },
  ),
);

/** Which steps a hook applies to; `types` lists the step kinds, which the generator supplies. */
export function hookMatch(kindNames: readonly string[]): Def<HookMatchType> {
  return def(
    "hookMatch",
    Type.Object(
      {
        steps: Type.Optional(
          Type.Array(ref(stepName), {
            minItems: 1,
            uniqueItems: true,
            description: "Step names; each must name a step of this spec.",
          }),
        ),
        types: Type.Optional(
          Type.Array(orReference<string>({ type: "string", enum: kindNames }), {
            minItems: 1,
            uniqueItems: true,
            description: "Step types; every event of the hook must apply to each of them.",
          }),
        ),
      },
      {
        description:
          "The steps a hook applies to: a step matches when it is listed in steps (if given) and is of one of types (if given). Absent: every step the hook's events apply to.",
        additionalProperties: false,
      },
    ),
  );
}

export const hookAllow = def(
  "hookAllow",
  Type.Object(
    {
      add: Type.Optional(
        orReference<boolean>(
          { type: "boolean" },
          { description: "Allow the webhook to add objects. Default false.", default: SPEC_DEFAULTS.hookAllowAdd },
        ),
      ),
      clusterScoped: Type.Optional(
        orReference<boolean>(
          { type: "boolean" },
          {
            description: "Allow added objects that are cluster-scoped (a ClusterRole, a CRD). Default false.",
            default: SPEC_DEFAULTS.hookAllowClusterScoped,
          },
        ),
      ),
      namespaces: Type.Optional(
        Type.Array(
          raw<string>({
            type: "string",
            pattern: "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
            patternErrorMessage: "A namespace is an RFC 1123 label.",
          }),
          {
            description:
              "The namespaces added objects may be in. Default: the step's own namespaces (its namespace: and those of its declared objects).",
            minItems: 1,
            uniqueItems: true,
          },
        ),
      ),
    },
    {
      description:
        "What a pre-apply webhook may add to a step beyond its declared objects. By default nothing: a returned object the step does not declare fails the step, naming it. Added objects are created owned by the step, listed in the state record, and removed by destroy like declared ones.",
      additionalProperties: false,
    },
  ),
);

/** A KRM function (exec form). `exec` is required through a rule the loader words itself (hook-function-exec). */
export const hookFunction = def(
  "hookFunction",
  raw<{ exec: string; config?: Record<string, unknown>; timeout?: string }>({
    description:
      "A KRM function, exec form: a local executable that reads a ResourceList (YAML) on stdin and writes a ResourceList (YAML or JSON) on stdout. It runs with only PATH and HOME in its environment, in a private temporary directory, bounded by its timeout and an output cap. Container functions (image:) are not supported: use exec:.",
    type: "object",
    additionalProperties: false,
    allOf: [
      { "x-khook-rule": "hook-function-exec", required: ["exec"] },
      {
        if: { required: ["image"] },
        then: {
          properties: { image: false },
          "x-khook-rule": "hook-function-exec",
          errorMessage:
            "container functions (image:) are not supported: khook runs no container runtime; build the function as a local executable and point exec: at it",
        },
      },
    ],
    properties: {
      exec: {
        description:
          "Required. Path to the executable, relative to the spec file (./, ../ or /). Its content is an input of every step the hook matches.",
        anyOf: [
          {
            type: "string",
            pattern: "^(\\./|\\.\\./|/)",
            patternErrorMessage: "exec: is a local path starting with ./, ../ or /.",
          },
          { $ref: `#/$defs/${reference.name}` },
        ],
      },
      image: {
        description: "Not supported: container functions need a container runtime. Use exec: with a local executable.",
        doNotSuggest: true,
      },
      config: {
        type: "object",
        description: "The function's functionConfig: a Kubernetes-style object passed in the ResourceList.",
      },
      timeout: {
        $ref: `#/$defs/${duration.name}`,
        description: `Bound on one run of the function (Go duration). Default ${SPEC_DEFAULTS.functionTimeout}.`,
        default: SPEC_DEFAULTS.functionTimeout,
      },
    },
  }),
);

export const hookWebhook = def(
  "hookWebhook",
  Type.Object(
    {
      url: orReference<string>(
        {
          type: "string",
          pattern: "^https?://[^\\s]+$",
          patternErrorMessage: "A webhook url is an https:// URL (http:// only to a loopback address).",
        },
        { description: "Required. https://... (plain http:// only to 127.0.0.0/8, ::1 or localhost)." },
      ),
      timeout: Type.Optional(
        ref(duration, {
          description: `Bound on one request (Go duration), at most 60s. Default ${SPEC_DEFAULTS.webhookTimeout}.`,
          default: SPEC_DEFAULTS.webhookTimeout,
        }),
      ),
      headers: Type.Optional(
        raw<Record<string, string>>({
          type: "object",
          description:
            "Request headers; values may use variables. Names are HTTP tokens; values are one line of visible ASCII, spaces and tabs. The values of Authorization, Proxy-Authorization and Cookie, and any value from a secret source (KHOOK_SECRET_*, Pulumi secretVars), are redacted everywhere; other values are not secret: put a credential in a secret variable.",
          additionalProperties: { type: "string" },
        }),
      ),
    },
    {
      description:
        "A webhook speaking the Scoby hooks v1 contract: POST JSON {phase, object, children, context}; a 2xx answer may carry changed children; an error answer is {message, permanent, continue}. HTTPS with certificate verification; plain http only to loopback addresses.",
      additionalProperties: false,
    },
  ),
);

/** Which steps a hook applies to, as the code reads it. */
export interface HookMatchType {
  steps?: string[];
  types?: string[];
}

export const hook = def(
  "hook",
  Type.Object(
    {
      name: ref(stepName, { description: "Required, unique among hooks. An RFC 1123 label." }),
      on: Type.Array(ref(hookEvent), {
        description: `Required. The lifecycle events this hook handles: ${HOOK_EVENT_DEFINITIONS.map((e) => `${e.name} (${e.handles})`).join(", ")}.`,
        minItems: 1,
        uniqueItems: true,
      }),
      match: Type.Optional(raw<HookMatchType>({ $ref: "#/$defs/hookMatch" })),
      priority: Type.Optional(
        orReference<number>(
          { type: "integer" },
          {
            description: "Lower runs first; equal priorities run in document order. Default 0.",
            default: SPEC_DEFAULTS.hookPriority,
          },
        ),
      ),
      failurePolicy: Type.Optional(
        orReference<"Fail" | "Ignore">(
          { type: "string", enum: ["Fail", "Ignore"] },
          {
            description:
              "What an unreachable or misbehaving webhook does to the step, as Kubernetes admission webhooks say it: Fail (default) fails the step; Ignore logs and skips the hook. An explicit error answer ({message, permanent, continue}) is always honoured.",
            default: SPEC_DEFAULTS.hookFailurePolicy,
          },
        ),
      ),
      function: Type.Optional(ref(hookFunction)),
      webhook: Type.Optional(ref(hookWebhook)),
      allow: Type.Optional(ref(hookAllow)),
    },
    {
      description:
        "One lifecycle hook: a name, the events it handles, the steps it matches, and exactly one handler (function: or webhook:).",
      additionalProperties: false,
      ...exactlyOne(["function", "webhook"], {
        none: "A hook needs one handler: function or webhook.",
        already: (k) =>
          `A hook has exactly one handler, and this one already has ${k}: define the other handler in a hook of its own.`,
      }),
    },
  ),
);

// ---------------------------------------------------------------------------
// A step's common fields

/** The fields every step has besides its one action key. */
export const stepCommon = Type.Object({
  name: ref(stepName, {
    description:
      "Required, unique. Keys the state record and names the step's Job; also the default Helm release name. An RFC 1123 label of at most 63 characters (53 for a helm step without release:, whose release it names).",
  }),
  needs: Type.Optional(
    Type.Array(ref(stepName), {
      description:
        "Steps that must succeed before this one runs (DAG edges; must reference existing step names). Ordering only: no data flows between steps.",
      uniqueItems: true,
    }),
  ),
  when: Type.Optional(
    Type.String({
      description:
        'A CEL condition over the variable map, decided at load time; the step runs only when it is true. Use vars.NAME, vars.get("NAME", "default") or has(vars.NAME); every value is a string, e.g. vars.get("ENABLE_ARGOCD", "false") == "true". A step excluded by when: is reported skipped but satisfies needs.',
      minLength: 1,
    }),
  ),
  timeout: Type.Optional(
    ref(duration, {
      description: `Per-step execution timeout (Go duration); overrides defaults.timeout (${SPEC_DEFAULTS.timeout}).`,
    }),
  ),
  retries: Type.Optional(
    ref(count, {
      description: `Retry attempts after a failed try; overrides defaults.retries (${SPEC_DEFAULTS.retries}).`,
    }),
  ),
  retryDelay: Type.Optional(
    ref(duration, {
      description: `Pause between tries (Go duration); overrides defaults.retryDelay (${SPEC_DEFAULTS.retryDelay}).`,
    }),
  ),
  onError: Type.Optional(
    ref(onError, {
      description: `fail stops scheduling new steps; continue marks the step failed and keeps going. Overrides defaults.onError (${SPEC_DEFAULTS.onError}).`,
    }),
  ),
});

/** `helm, apply, ..., rollout or job`: how the schema's sentences list the step kinds. */
export function spoken(names: readonly string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} or ${names.at(-1)!}`;
}

/**
 * The step: its common fields and exactly one action key, one per kind. Each action key is a
 * pattern property, so that an editor completes it only where no other key is yet (the
 * last branch offers them all); the loader reads them as plain properties.
 */
export function step(kinds: readonly { name: string; action: Def }[]): Def {
  const names = kinds.map((k) => k.name);
  const actionRef = (k: { action: Def }): SchemaOptions => ({ $ref: `#/$defs/${k.action.name}` });
  const editor = exactlyOne(names, {
    loader: "{subject} must have exactly one action key ({keys}); {present}",
    none: `A step needs one action key: ${spoken(names)}.`,
    already: (k) =>
      `A step has exactly one action key, and this step already has ${k}: put this action in a step of its own.`,
  });
  return def(
    "step",
    raw({
      description: `One step: a name, optional scheduling fields, and exactly one action key (${spoken(names)}) that determines its type.`,
      ...stepCommon,
      additionalProperties: false,
      "x-khook-exactly-one": names,
      ...messages((editor["x-khook-messages"] as Record<string, string>) ?? {}),
      patternProperties: Object.fromEntries(kinds.map((k) => [`^${k.name}$`, actionRef(k)])),
      allOf: [
        ...(editor["allOf"] as unknown[]),
        {
          "x-khook-editor": true,
          if: { not: { anyOf: names.map((n) => ({ required: [n] })) } },
          then: { properties: Object.fromEntries(kinds.map((k) => [k.name, actionRef(k)])) },
        },
      ],
    }),
  );
}

/** The events a handler kind takes, as the schema's sentences list them. */
function eventsHandledBy(handler: "function" | "webhook"): string {
  const names = HOOK_EVENT_DEFINITIONS.filter((e) => e.handler === handler).map((e) => e.name);
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)!}`;
}

/** The document's frame: its top-level fields (a step's definition depends on the kinds: `step`). */
export const documentFrame = Type.Object(
  {
    apiVersion: raw<typeof API_VERSION>({ description: "The DSL version. Always khook.io/v1.", const: API_VERSION }),
    kind: raw<typeof KIND>({ description: "The document kind. Always Khook.", const: KIND }),
    metadata: ref(metadata),
    defaults: Type.Optional(ref(defaults)),
    state: Type.Optional(ref(state)),
    hooks: Type.Optional(
      Type.Array(ref(hook), {
        description: `Lifecycle hooks: KRM exec functions on ${eventsHandledBy("function")}, and webhooks (the Scoby hooks v1 contract) on ${eventsHandledBy("webhook")}. Each hook runs on the steps it matches, ordered by priority, then document order. A hook's definition and its exec file are inputs of every step it matches. See docs/hooks.md.`,
      }),
    ),
    steps: Type.Array(raw<unknown>({ $ref: "#/$defs/step" }), { minItems: 1 }),
  },
  { additionalProperties: false },
);

/** The document's schema root, with the sentences that list the kinds. */
export function documentRoot(kindNames: readonly string[]): SchemaOptions {
  const frame = JSON.parse(JSON.stringify(documentFrame)) as SchemaOptions & {
    properties: Record<string, SchemaOptions>;
  };
  frame.properties["steps"] = {
    description: `The steps to run, at least one. Steps are topologically sorted by needs: and run in parallel levels. Each step has exactly one action key: ${spoken(kindNames)}.`,
    ...frame.properties["steps"],
    ...messages({ minItems: "steps must list at least one step" }),
  };
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://khook.io/schema/v1/khook.json",
    title: "khook v1 spec",
    description: `A declarative Kubernetes cluster bootstrap: a DAG of steps (${kindNames.join(", ")}). apiVersion: khook.io/v1, kind: Khook. \${NAME} variables are substituted before validation.`,
    ...frame,
  };
}

/** The TypeScript type a definition validates. */
export type TypeOf<D> = D extends Def<infer T> ? T : never;
