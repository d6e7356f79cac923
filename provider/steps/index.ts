/** Every step type's executor, keyed by type. Adding a type adds one line here. */
import type { StepType } from "../spec/types.js";
import { applyExecutor } from "./apply.js";
import { deleteExecutor } from "./delete.js";
import { helmExecutor } from "./helm.js";
import { jobExecutor } from "./job.js";
import { patchExecutor } from "./patch.js";
import { rolloutExecutor } from "./rollout.js";
import type { StepExecutor } from "./types.js";
import { waitExecutor } from "./wait.js";

export const EXECUTORS: ReadonlyMap<StepType, StepExecutor> = new Map<StepType, StepExecutor>([
  ["helm", helmExecutor as unknown as StepExecutor],
  ["apply", applyExecutor as unknown as StepExecutor],
  ["delete", deleteExecutor as unknown as StepExecutor],
  ["patch", patchExecutor as unknown as StepExecutor],
  ["wait", waitExecutor as unknown as StepExecutor],
  ["rollout", rolloutExecutor as unknown as StepExecutor],
  ["job", jobExecutor as unknown as StepExecutor],
]);
