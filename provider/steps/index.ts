/**
 * Every step type's executor, keyed by type. Adding a step type adds one line
 * here, and the compiler refuses a registry that misses a type or files an
 * executor under the wrong one.
 */
import { applyExecutor } from "./apply.js";
import { deleteExecutor } from "./delete.js";
import { helmExecutor } from "./helm.js";
import { jobExecutor } from "./job.js";
import { patchExecutor } from "./patch.js";
import { rolloutExecutor } from "./rollout.js";
import type { ExecutorRegistry } from "./types.js";
import { waitExecutor } from "./wait.js";

export const EXECUTORS: ExecutorRegistry = {
  helm: helmExecutor,
  apply: applyExecutor,
  delete: deleteExecutor,
  patch: patchExecutor,
  wait: waitExecutor,
  rollout: rolloutExecutor,
  job: jobExecutor,
};
