/**
 * `job:` steps: run a container to completion as a batch/v1 Job named after the step. What the
 * loader needs of the kind; its executor (executor.ts) is required on first use, and definition.ts
 * defines its block. The schema states every rule of a job: block.
 */
import { SPEC_DEFAULTS, withDefaults } from "../../dsl/defaults.js";
import type { Kind } from "../contract.js";
import type { JobAction, JobNormalized } from "./definition.js";
import type * as Executor from "./executor.js";

/** The defaults of a `job:` block: applied once at load, left out of the hash, and the schema's `default`s. */
const JOB_DEFAULTS = {
  namespace: SPEC_DEFAULTS.namespace,
  createNamespace: false,
} as const satisfies Partial<JobAction>;

export const jobKind: Kind<"job", JobAction, JobNormalized> = {
  name: "job",
  defaults: { jobAction: JOB_DEFAULTS },
  normalize: (job) => withDefaults(JOB_DEFAULTS, job),
  defaultsOf: () => JOB_DEFAULTS,
  summary: (name, a) => `run job ${name} (${a.image}) in ${a.namespace}`,
  rules: () => undefined,
  files: () => [],
  localFileKeys: [],
  // A Job is removed by destroy, so finalize hooks run before it goes.
  hookPoints: { "before-teardown": true },
  tools: [],
  get executor() {
    return (require("./executor.js") as typeof Executor).jobExecutor;
  },
};
