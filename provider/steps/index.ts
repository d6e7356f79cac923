/**
 * Every step type's executor, keyed by type. Adding a step type adds one line
 * here, and the compiler refuses a registry that misses a type or files an
 * executor under the wrong one.
 *
 * Each executor's module is required the first time its type is asked for: a run
 * pays only for the step types it executes, and a resumed re-run, which executes
 * none, loads none of them (nor what they load: helm's tooling, the `yaml` library
 * for diffs, kustomize). test/integration/resume-startup.test.ts counts it.
 */
import type { ExecutorRegistry } from "./types.js";
import type * as HelmModule from "./helm.js";
import type * as ApplyModule from "./apply.js";
import type * as DeleteModule from "./delete.js";
import type * as PatchModule from "./patch.js";
import type * as WaitModule from "./wait.js";
import type * as RolloutModule from "./rollout.js";
import type * as JobModule from "./job.js";

export const EXECUTORS: ExecutorRegistry = {
  get helm() {
    return (require("./helm.js") as typeof HelmModule).helmExecutor;
  },
  get apply() {
    return (require("./apply.js") as typeof ApplyModule).applyExecutor;
  },
  get delete() {
    return (require("./delete.js") as typeof DeleteModule).deleteExecutor;
  },
  get patch() {
    return (require("./patch.js") as typeof PatchModule).patchExecutor;
  },
  get wait() {
    return (require("./wait.js") as typeof WaitModule).waitExecutor;
  },
  get rollout() {
    return (require("./rollout.js") as typeof RolloutModule).rolloutExecutor;
  },
  get job() {
    return (require("./job.js") as typeof JobModule).jobExecutor;
  },
};
