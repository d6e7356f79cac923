/**
 * Loads a khook spec: the DSL's loader (dsl/loader.ts) with khook's step kinds (steps/index.ts).
 * The CLI, the Pulumi shells and the SDK load through here; the DSL itself names no kind.
 */
import { loadSpecWith, type LoadOptions } from "./dsl/loader.js";
import type { LoadedSpec } from "./dsl/loaded.js";
import { LOADER_KINDS } from "./steps/index.js";

export type { LoadOptions } from "./dsl/loader.js";

/** Loads and validates a spec. Throws a KhookError (invalid-input) listing every problem. */
export function loadSpec(options: LoadOptions): LoadedSpec {
  return loadSpecWith(LOADER_KINDS, options);
}
