/**
 * `delete:` steps, in three exclusive forms: by manifests, by resource (reference or selector) and
 * by release (helm uninstall). What the loader needs of the kind; its executor (executor.ts) is
 * required on first use, and definition.ts defines its block. Rules:
 *
 *   delete-name-or-selector   delete of kind/name takes no selector, fieldSelector or allNamespaces (kubectl refuses them)
 *   delete-type-needs-selector  delete of a bare type needs selector: or fieldSelector: (kubectl demands --all)
 *   resource-reference, namespace-or-all  (dsl/rules.ts), and the manifest sources' (manifests/kind.ts)
 */
import { SPEC_DEFAULTS, withDefaults } from "../../dsl/defaults.js";
import type { HookStepForm } from "../../dsl/hook-events.js";
import { inNamespace, type Pointer, type Report } from "../../dsl/step-kind.js";
import { checkNamedTargetSelection, checkNamespaceOrAll, checkResourceRef } from "../../dsl/rules.js";
import type { Kind } from "../contract.js";
import {
  canonicalManifests,
  checkManifests,
  describeSources,
  manifestCredentials,
  manifestReferences,
} from "../manifests/kind.js";
import type {
  DeleteAction,
  DeleteManifestsAction,
  DeleteNormalized,
  DeleteReleaseAction,
  DeleteResourceAction,
} from "./definition.js";
import type * as Executor from "./executor.js";

/** The defaults of each form of a `delete:` block, by its definition: applied once at load, left out of the hash, and the schema's `default`s. */
const DELETE_DEFAULTS = {
  deleteByManifests: { ignoreNotFound: true } satisfies Partial<DeleteManifestsAction>,
  deleteByResource: { allNamespaces: false, ignoreNotFound: true } satisfies Partial<DeleteResourceAction>,
  deleteByRelease: { namespace: SPEC_DEFAULTS.namespace, ignoreNotFound: true } satisfies Partial<DeleteReleaseAction>,
} as const;

/** The defaults of the form a block is in. */
function defaultsOf(action: DeleteAction): Readonly<Record<string, unknown>> {
  if ("release" in action) return DELETE_DEFAULTS.deleteByRelease;
  if ("manifests" in action) return DELETE_DEFAULTS.deleteByManifests;
  return DELETE_DEFAULTS.deleteByResource;
}

/** Only the manifests form renders objects, so only it has a render point (post-render). */
const BY_MANIFESTS: HookStepForm = {
  applies: (action) => action !== null && typeof action === "object" && "manifests" in action,
  name: "delete (by manifests)",
  otherwise: "a delete step by resource or release, which renders nothing",
};

/**
 * kubectl's selection rules for `delete`: a named object takes no selector (kubectl: "name cannot be
 * provided when a selector is specified"), and a bare type deletes nothing unless a selector narrows
 * it (kubectl demands --all; khook has no --all, so deleting every object of a type is not expressible).
 */
function checkSelection(del: DeleteResourceAction, at: Pointer, report: Report): void {
  if (del.resource.includes("/")) {
    checkNamedTargetSelection(del.resource, "resource", del, at, "delete-name-or-selector", report);
    return;
  }
  if (del.selector === undefined && del.fieldSelector === undefined) {
    const scope = del.allNamespaces === true ? "in every namespace" : "in the namespace";
    report(
      at("resource"),
      `resource: ${del.resource} without selector: or fieldSelector: would delete every ${del.resource} ${scope}; select what to delete with selector: (labels, e.g. app=old) or fieldSelector: (e.g. status.phase=Failed), or name one object as kind/name`,
      "delete-type-needs-selector",
    );
  }
}

export const deleteKind: Kind<"delete", DeleteAction, DeleteNormalized> = {
  name: "delete",
  defaults: DELETE_DEFAULTS,
  normalize: (del) => withDefaults(defaultsOf(del), del) as DeleteNormalized,
  defaultsOf,
  canonical: canonicalManifests,
  summary: (_name, a) => {
    if ("release" in a) return `uninstall release ${a.release} in ${a.namespace}`;
    if ("resource" in a) {
      const sel = [a.selector ? `-l ${a.selector}` : "", a.fieldSelector ? `--field-selector ${a.fieldSelector}` : ""]
        .filter(Boolean)
        .join(" ");
      return `delete ${a.resource}${sel ? ` ${sel}` : ""} ${inNamespace(a.namespace, a.allNamespaces)}`;
    }
    return `delete the objects of ${describeSources(a.manifests)}`;
  },
  rules: (del, at, ctx, report) => {
    if ("manifests" in del) checkManifests(del.manifests, at, ctx, report);
    if ("resource" in del) {
      checkResourceRef(del.resource, at("resource"), "type-or-name", report);
      checkNamespaceOrAll(del, at, report);
      checkSelection(del, at, report);
    }
  },
  files: (del, baseDir) => ("manifests" in del ? manifestReferences(del.manifests, baseDir) : []),
  localFileKeys: ["file", "kustomize"],
  hookPoints: { render: BY_MANIFESTS },
  credentials: manifestCredentials,
  tools: [],
  get executor() {
    return (require("./executor.js") as typeof Executor).deleteExecutor;
  },
};
