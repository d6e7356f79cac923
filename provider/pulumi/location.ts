/**
 * Where the Pulumi resource's journal lives: the spec's `state:` block picks the
 * Secret's namespace and name; without one the journal is still on, at the
 * defaults; `state.enabled: false` turns it off.
 *
 * The same rule as `recordLocation(spec, "default-on")` in provider/operations.ts
 * (a unit test keeps them equal), restated here so that check and diff — which
 * run in every preview — never load the cluster-facing code.
 */
import type { LoadedSpec, StateSettings } from "../dsl/loaded.js";
import { SPEC_DEFAULTS } from "../dsl/defaults.js";

export function journalLocation(spec: Pick<LoadedSpec, "name" | "state" | "stateDeclared">): StateSettings | undefined {
  if (spec.state !== undefined) return spec.state;
  if (spec.stateDeclared === "absent")
    return { namespace: SPEC_DEFAULTS.stateNamespace, name: `${SPEC_DEFAULTS.stateNamePrefix}${spec.name}` };
  return undefined;
}
