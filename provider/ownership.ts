/**
 * Ownership: khook never replaces or deletes what it does not own.
 *
 * - `khook.io/owned-by: <spec>/<step>` is set when khook *creates* an object, and kept
 *   on later applies. Destroy deletes only objects carrying it for this spec and step.
 * - `khook.io/applied-by: <spec>/<step>` records which step last applied an object,
 *   including objects khook adopted (they existed before), which destroy leaves alone.
 * - Jobs and the state record carry the label `app.kubernetes.io/managed-by: khook`
 *   (MANAGED_BY_LABEL, Kubernetes' recommended label on objects).
 * - helm releases khook installs carry the release labels `khook.io/managed-by: khook`
 *   (RELEASE_MANAGED_BY_LABEL: a release label, not an object's) and `khook.io/spec`;
 *   destroy uninstalls only releases carrying both for this spec.
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "./kube/index.js";

export const OWNED_BY = "khook.io/owned-by";
export const APPLIED_BY = "khook.io/applied-by";
/** On objects khook creates outright (Jobs, the state record). */
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
  return label === labelValue(spec)
    ? { owner: "this-spec" }
    : { owner: "other-spec", spec: label ?? "(no khook.io/spec label)" };
}

/** A valid label value: at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric. */
export function labelValue(s: string): string {
  const cleaned = s.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+/, "").replace(/[^A-Za-z0-9]+$/, "");
}

// ------------------------------------------------------------------ helm releases

/** On helm releases khook installed (a release label, `helm install --labels`). */
export const RELEASE_MANAGED_BY_LABEL = "khook.io/managed-by";

/**
 * The value of the `khook.io/spec` release label: a valid label value (63 characters,
 * alphanumerics plus `-_.`). Unlike labelValue, a longer or altered name is cut and suffixed
 * with a hash, so two specs never share a value; releases already carry it, so it stays.
 */
export function specLabelValue(specName: string): string {
  let v = specName.replace(/[^A-Za-z0-9_.-]/g, "-").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  if (v !== specName || v.length > 63) {
    const hash = createHash("sha256").update(specName).digest("hex").slice(0, 8);
    v = `${v.slice(0, 54).replace(/[^A-Za-z0-9]+$/, "")}-${hash}`;
  }
  return v === "" ? "spec" : v;
}

/** The release labels that mark a release as installed by khook for this spec. */
export function releaseOwnershipLabels(specName: string): Record<string, string> {
  return { [RELEASE_MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SPEC_LABEL]: specLabelValue(specName) };
}
