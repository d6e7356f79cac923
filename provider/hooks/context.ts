/**
 * The context every hook receives: Helm 3's event-driven design's context object (chart, values,
 * release, capabilities, objects), fitted to khook. Secret values never appear
 * in it: every string goes through the run's redactor. Objects that carry a
 * secret value are withheld from webhooks (see `partitionObjects`) and named in
 * `withheld`; functions see every object as applied (docs/hooks.md).
 */
import type { Redactor } from "../redact.js";
import type { HookEvent } from "../dsl/hook-events.js";

export interface HookChart {
  readonly name: string;
  readonly version: string;
  readonly appVersion?: string;
}

export interface HookCapabilities {
  readonly kubernetesVersion?: string;
  readonly apiVersions?: readonly string[];
}

/** What an event knows beyond the step itself. */
export interface HookContextExtras {
  /** helm steps: the chart being installed or upgraded. */
  readonly chart?: HookChart;
  /** helm steps: the release. */
  readonly release?: { readonly name: string; readonly namespace: string; readonly revision?: number };
  /** helm steps: the merged user values (redacted). */
  readonly values?: unknown;
  readonly capabilities?: HookCapabilities;
  /** post-apply: how the step ended. */
  readonly outcome?: { readonly status: "ok" | "failed" | "skipped"; readonly reason: string };
}

export interface HookContext extends HookContextExtras {
  readonly apiVersion: "khook.io/v1";
  readonly kind: "HookContext";
  readonly event: HookEvent;
  readonly hook: { readonly name: string };
  readonly spec: { readonly name: string };
  readonly step: { readonly name: string; readonly type: string; readonly summary: string };
  /** Objects khook did not show a webhook because they carry a secret value; they are sent as declared. Always empty for functions. */
  readonly withheld: readonly string[];
}

export function buildContext(args: {
  event: HookEvent;
  hook: string;
  spec: string;
  step: { name: string; type: string; summary: string };
  extras: HookContextExtras;
  withheld: readonly string[];
  redactor: Redactor;
}): HookContext {
  const context: HookContext = {
    apiVersion: "khook.io/v1",
    kind: "HookContext",
    event: args.event,
    hook: { name: args.hook },
    spec: { name: args.spec },
    step: { ...args.step },
    ...args.extras,
    withheld: args.withheld,
  };
  return args.redactor.redactValue(context);
}

/** `Deployment/web -n apps` — how hooks' messages name an object. */
export function objectKey(o: Record<string, unknown>): string {
  const meta = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const ns = typeof meta.namespace === "string" && meta.namespace !== "" ? ` -n ${meta.namespace}` : "";
  return `${String(o.kind ?? "?")}/${String(meta.name ?? "?")}${ns}`;
}

/**
 * Splits objects into those a webhook may see and those it may not: an object
 * carrying a secret value (a variable from a secret source, or a credential)
 * is withheld and passes through unchanged, so no webhook ever sees a secret and
 * nothing a webhook returns can replace one with a mask.
 */
export function partitionObjects<T extends Record<string, unknown>>(
  objects: readonly T[],
  redactor: Redactor,
): { visible: { index: number; object: T }[]; withheld: { index: number; object: T }[] } {
  const visible: { index: number; object: T }[] = [];
  const withheld: { index: number; object: T }[] = [];
  objects.forEach((object, index) => {
    const text = JSON.stringify(object);
    (redactor.size > 0 && redactor.redact(text) !== text ? withheld : visible).push({ index, object });
  });
  return { visible, withheld };
}
