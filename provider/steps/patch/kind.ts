/**
 * `patch:` steps: `kubectl patch` of one existing object (strategic, merge or json). What the
 * loader needs of the kind; its executor (executor.ts) is required on first use, and definition.ts
 * defines its block. Rules:
 *
 *   patch-body-shape          a mapping for strategic/merge, a list of operations for json
 *   patch-json-pointer        a json patch operation's path and from are JSON pointers (start with /)
 *   patch-json-idempotency    a json remove or list-index add fails when re-run (warning)
 *   resource-reference        (dsl/rules.ts)
 */
import { SPEC_DEFAULTS, withDefaults } from "../../dsl/defaults.js";
import type { Pointer, Report } from "../../dsl/step-kind.js";
import { checkResourceRef } from "../../dsl/rules.js";
import type { Kind } from "../contract.js";
import type { JsonPatchOperation, PatchAction, PatchNormalized } from "./definition.js";
import type * as Executor from "./executor.js";

/** The defaults of a `patch:` block: applied once at load, left out of the hash, and the schema's `default`s. */
const PATCH_DEFAULTS = {
  namespace: SPEC_DEFAULTS.namespace,
  type: "strategic",
} as const satisfies Partial<PatchAction>;

function checkPatchBody(type: string, body: unknown, at: Pointer, report: Report): void {
  if (type === "json") {
    if (!Array.isArray(body)) {
      report(
        at("patch"),
        `a json patch (RFC 6902) is a list of operations like - {op: replace, path: /spec/replicas, value: 2}; got a ${body === null ? "null" : typeof body}. For a mapping use type: merge or strategic`,
        "patch-body-shape",
      );
      return;
    }
    (body as JsonPatchOperation[]).forEach((op, k) => {
      if (op === null || typeof op !== "object" || typeof op.op !== "string" || typeof op.path !== "string") {
        report(at("patch", k), "each json patch operation needs op: and path:", "patch-body-shape");
        return;
      }
      if ((op.op === "move" || op.op === "copy") && typeof op.from !== "string")
        report(at("patch", k), `a json patch ${op.op} needs from:`, "patch-body-shape");
      for (const field of ["path", "from"] as const) {
        const pointerText = op[field];
        if (typeof pointerText === "string" && !pointerText.startsWith("/")) {
          report(
            at("patch", k, field),
            `${field}: "${pointerText}" is not a JSON pointer; write /${pointerText.replace(/^\.?\/*/, "")} (JSON patch paths start with /, like /spec/replicas)`,
            "patch-json-pointer",
          );
        }
      }
      if ((op.op === "add" || op.op === "replace" || op.op === "test") && !("value" in op))
        report(at("patch", k), `a json patch ${op.op} needs value:`, "patch-body-shape");
      if (op.op === "remove") {
        report(
          at("patch", k),
          `the json patch removes ${op.path}; re-running the step fails once the path is gone. Prefer a merge patch with null, or order it so it runs once`,
          "patch-json-idempotency",
          "warning",
        );
      } else if (op.op === "add" && /\/[0-9]+$/.test(op.path)) {
        report(
          at("patch", k),
          `the json patch adds at list index ${op.path}; every re-run inserts again. Prefer - (append) with a guard, or a strategic/merge patch`,
          "patch-json-idempotency",
          "warning",
        );
      }
    });
    return;
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    report(
      at("patch"),
      `a ${type} patch body is a mapping of the fields to change; a list of operations needs type: json`,
      "patch-body-shape",
    );
  }
}

export const patchKind: Kind<"patch", PatchAction, PatchNormalized> = {
  name: "patch",
  defaults: { patchAction: PATCH_DEFAULTS },
  normalize: (patch) => withDefaults(PATCH_DEFAULTS, patch),
  defaultsOf: () => PATCH_DEFAULTS,
  summary: (_name, a) => `${a.type} patch ${a.target} in ${a.namespace}`,
  rules: (patch, at, _ctx, report) => {
    checkResourceRef(patch.target, at("target"), "name", report);
    checkPatchBody(patch.type ?? PATCH_DEFAULTS.type, patch.patch, at, report);
  },
  files: () => [],
  localFileKeys: [],
  hookPoints: {},
  tools: [],
  get executor() {
    return (require("./executor.js") as typeof Executor).patchExecutor;
  },
};
