/**
 * Where a spec's state record lives, under each shell's journal policy: the CLI journals only when
 * the spec has an enabled `state:` block; the Pulumi resource journals unless `state.enabled` is
 * false. A pure rule with no cluster code behind it, so the Pulumi provider's check and diff (which
 * run in every preview) read it without loading the session and the kube client.
 */
import { SPEC_DEFAULTS } from "../dsl/defaults.js";
import type { LoadedSpec, StateSettings } from "../dsl/loaded.js";

/**
 * "spec": journal only when the spec has an enabled `state:` block (the CLI).
 * "default-on": journal unless `state.enabled` is false (the Pulumi resource).
 */
export type JournalPolicy = "spec" | "default-on";

/** Where the record lives under a policy; undefined when there is no journal. */
export function recordLocation(
  spec: Pick<LoadedSpec, "name" | "state" | "stateDeclared">,
  policy: JournalPolicy = "spec",
): StateSettings | undefined {
  if (spec.state !== undefined) return spec.state;
  if (policy === "default-on" && spec.stateDeclared === "absent") {
    return { namespace: SPEC_DEFAULTS.stateNamespace, name: `${SPEC_DEFAULTS.stateNamePrefix}${spec.name}` };
  }
  return undefined;
}
