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
import type { ExecutorRegistry } from "./contract.js";
import type * as HelmModule from "./helm/executor.js";
import type * as ApplyModule from "./apply/executor.js";
import type * as DeleteModule from "./delete/executor.js";
import type * as PatchModule from "./patch/executor.js";
import type * as WaitModule from "./wait/executor.js";
import type * as RolloutModule from "./rollout/executor.js";
import type * as JobModule from "./job/executor.js";

export const EXECUTORS: ExecutorRegistry = {
  get helm() {
    return (require("./helm/executor.js") as typeof HelmModule).helmExecutor;
  },
  get apply() {
    return (require("./apply/executor.js") as typeof ApplyModule).applyExecutor;
  },
  get delete() {
    return (require("./delete/executor.js") as typeof DeleteModule).deleteExecutor;
  },
  get patch() {
    return (require("./patch/executor.js") as typeof PatchModule).patchExecutor;
  },
  get wait() {
    return (require("./wait/executor.js") as typeof WaitModule).waitExecutor;
  },
  get rollout() {
    return (require("./rollout/executor.js") as typeof RolloutModule).rolloutExecutor;
  },
  get job() {
    return (require("./job/executor.js") as typeof JobModule).jobExecutor;
  },
};
