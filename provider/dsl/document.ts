/**
 * The khook v1 document's types, as its definitions (definitions.ts) validate it: the frame,
 * the hooks and a step's common fields. A step's action block is its kind's
 * (provider/steps/<kind>/definition.ts); here it is just the one key a kind claims.
 */
import type { Static } from "typebox";
import type { TypeOf } from "./definitions.js";
import type * as Definitions from "./definitions.js";

/** Go-style duration text such as `90s`, `5m`, `1h30m`. */
export type DurationText = string;
export type OnError = TypeOf<typeof Definitions.onError>;
export type FailurePolicy = NonNullable<HookSpec["failurePolicy"]>;

export type Metadata = TypeOf<typeof Definitions.metadata>;
export type StepDefaults = TypeOf<typeof Definitions.defaults>;
export type StateConfig = TypeOf<typeof Definitions.state>;

/** Fields every step shares. Only `name` is an input to the step's hash. */
export type StepCommon = Static<typeof Definitions.stepCommon>;

/** A step: its common fields and exactly one action key, whose block its kind defines. */
export type StepSpec = StepCommon & { readonly [actionKey: string]: unknown };

export type KhookDocument = Omit<Static<typeof Definitions.documentFrame>, "hooks" | "steps"> & {
  hooks?: HookSpec[];
  steps: StepSpec[];
};

/** A lifecycle hook: one handler (a KRM exec function or a webhook) on one or more events. */
export type HookSpec = TypeOf<typeof Definitions.hook>;
/** Which steps a hook applies to: a step matches when it is in `steps` (if given) and of one of `types` (if given). */
export type HookMatch = Definitions.HookMatchType;
/** A KRM function (exec form): ResourceList YAML on stdin, a ResourceList back on stdout. */
export type HookFunction = TypeOf<typeof Definitions.hookFunction>;
/** A webhook speaking the Scoby hooks v1 contract. */
export type HookWebhook = TypeOf<typeof Definitions.hookWebhook>;
/** What a pre-apply webhook may add beyond the step's declared objects (nothing by default). */
export type HookAllow = TypeOf<typeof Definitions.hookAllow>;
