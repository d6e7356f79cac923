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

export const EXECUTORS: ExecutorRegistry = {
  get helm() {
    return (require("./helm.js") as typeof import("./helm.js")).helmExecutor;
  },
  get apply() {
    return (require("./apply.js") as typeof import("./apply.js")).applyExecutor;
  },
  get delete() {
    return (require("./delete.js") as typeof import("./delete.js")).deleteExecutor;
  },
  get patch() {
    return (require("./patch.js") as typeof import("./patch.js")).patchExecutor;
  },
  get wait() {
    return (require("./wait.js") as typeof import("./wait.js")).waitExecutor;
  },
  get rollout() {
    return (require("./rollout.js") as typeof import("./rollout.js")).rolloutExecutor;
  },
  get job() {
    return (require("./job.js") as typeof import("./job.js")).jobExecutor;
  },
};
