/**
 * `apply:` steps: `kubectl apply` of manifest sources, then optionally a wait on what was applied.
 * What the loader needs of the kind; its executor (executor.ts) is required on first use, and
 * definition.ts defines its block. Rules:
 *
 *   apply-wait-for-grammar    apply.waitFor is wait.for's grammar minus delete
 *   create-namespace-needs-namespace  apply.createNamespace needs apply.namespace
 *   and the manifest sources' (manifests/kind.ts)
 */
import { withDefaults } from "../../dsl/defaults.js";
import { parseWaitFor } from "../../kubectl/waitfor.js";
import type { Kind } from "../contract.js";
import {
  canonicalManifests,
  checkManifests,
  describeSources,
  manifestCredentials,
  manifestReferences,
} from "../manifests/kind.js";
import type { ApplyAction, ApplyNormalized } from "./definition.js";
import type * as Executor from "./executor.js";

/** The defaults of a `apply:` block: applied once at load, left out of the hash, and the schema's `default`s. */
const APPLY_DEFAULTS = { createNamespace: false, serverSide: false } as const satisfies Partial<ApplyAction>;

export const applyKind: Kind<"apply", ApplyAction, ApplyNormalized> = {
  name: "apply",
  defaults: { applyAction: APPLY_DEFAULTS },
  normalize: (apply) => withDefaults(APPLY_DEFAULTS, apply),
  defaultsOf: () => APPLY_DEFAULTS,
  canonical: canonicalManifests,
  summary: (_name, a) =>
    `apply ${describeSources(a.manifests)}${a.namespace ? ` into ${a.namespace}` : ""}${a.serverSide ? " (server-side)" : ""}${a.waitFor ? `, then wait for ${a.waitFor}` : ""}`,
  rules: (apply, at, ctx, report) => {
    checkManifests(apply.manifests, at, ctx, report);
    if (apply.waitFor !== undefined) {
      const r = parseWaitFor(apply.waitFor, { allowDelete: false });
      if (!r.ok) report(at("waitFor"), `waitFor: ${r.message}`, "apply-wait-for-grammar");
    }
    if (apply.createNamespace === true && apply.namespace === undefined) {
      report(
        at("createNamespace"),
        "createNamespace: true needs namespace: (which namespace should be created?)",
        "create-namespace-needs-namespace",
      );
    }
  },
  files: (apply, baseDir) => manifestReferences(apply.manifests, baseDir),
  localFileKeys: ["file", "kustomize"],
  hookPoints: { render: true, send: true, "before-teardown": true },
  credentials: manifestCredentials,
  tools: [],
  get executor() {
    return (require("./executor.js") as typeof Executor).applyExecutor;
  },
};
