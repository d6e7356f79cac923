/**
 * Ownership: khook never replaces or deletes what it does not own.
 *
 * - `khook.io/owned-by: <spec>/<step>` is set when khook *creates* an object, and kept
 *   on later applies. Destroy deletes only objects carrying it for this spec and step.
 * - `khook.io/applied-by: <spec>/<step>` records which step last applied an object,
 *   including objects khook adopted (they existed before), which destroy leaves alone.
 * - Jobs and the state record carry the label `app.kubernetes.io/managed-by: khook`.
 */
import type { KubeObject } from "./kube/index.js";

export const OWNED_BY = "khook.io/owned-by";
export const APPLIED_BY = "khook.io/applied-by";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY_VALUE = "khook";
export const SPEC_LABEL = "khook.io/spec";
export const STEP_LABEL = "khook.io/step";

export function ownerValue(spec: string, step: string): string {
  return `${spec}/${step}`;
}

export function isOwnedBy(obj: KubeObject | undefined, spec: string, step: string): boolean {
  return obj?.metadata?.annotations?.[OWNED_BY] === ownerValue(spec, step);
}

export function isManagedByKhook(obj: KubeObject | undefined): boolean {
  return obj?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
}

/**
 * Who owns a labelled object (a Job): this spec, another khook spec (named by its
 * `khook.io/spec` label), or nobody khook knows. Only "this-spec" may be replaced or deleted.
 */
export type LabelledOwner = { owner: "this-spec" } | { owner: "other-spec"; spec: string } | { owner: "not-khook" };

export function labelledOwner(obj: KubeObject, spec: string): LabelledOwner {
  if (!isManagedByKhook(obj)) return { owner: "not-khook" };
  const label = obj.metadata?.labels?.[SPEC_LABEL];
  return label === labelValue(spec) ? { owner: "this-spec" } : { owner: "other-spec", spec: label ?? "(no khook.io/spec label)" };
}

/** A valid label value: at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric. */
export function labelValue(s: string): string {
  const cleaned = s.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+/, "").replace(/[^A-Za-z0-9]+$/, "");
}
