/**
 * The document's defaults (scheduling, the state record, hooks), and how a kind's defaults are
 * applied. Each kind keeps its own table (StepKind `defaults`, in steps/<kind>/kind.ts); the
 * loader applies it once, so the executors read `step.action.namespace`, never `?? "default"`,
 * and the input hash (hash.ts) reads the same normalized block, leaving out the fields equal to
 * their default. The schema generator writes the same values into the schema's `default`s.
 */

/** The document-level defaults: step scheduling (`defaults:`), the state record, hooks. */
export const SPEC_DEFAULTS = {
  timeout: "5m",
  retries: 0,
  retryDelay: "10s",
  onError: "fail" as "fail" | "continue",
  namespace: "default",
  stateEnabled: true,
  stateNamespace: "default",
  stateNamePrefix: "khook-state-",
  hookPriority: 0,
  hookFailurePolicy: "Fail" as "Fail" | "Ignore",
  hookAllowAdd: false,
  hookAllowClusterScoped: false,
  functionTimeout: "30s",
  webhookTimeout: "10s",
} as const;

/** `A` with the fields `K` always present. */
export type Defaulted<A, K extends keyof A> = A & { readonly [P in K]-?: Exclude<A[P], undefined> };

/** The block with `defaults` under what the author wrote (a field left out, or written as null, takes the default). */
export function withDefaults<A extends object, D extends Partial<A>>(defaults: D, action: A): A & D {
  return { ...defaults, ...defined(action) };
}

/** Freezes a JSON-like value and everything inside it: the loaded spec is never mutated. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The object without its undefined (and null) fields, so they do not override a default when spread. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
}
