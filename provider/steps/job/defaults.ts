/**
 * The defaults of a `job:` block: the loader applies them once (kind.ts), the hash leaves out
 * the fields equal to them, and the definition writes them into the schema's `default`s.
 */
import { SPEC_DEFAULTS } from "../../dsl/defaults.js";

export const JOB_DEFAULTS = { namespace: SPEC_DEFAULTS.namespace, createNamespace: false } as const;
