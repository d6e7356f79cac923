/**
 * Where a spec's state record lives (its location: the Secret's namespace and name), under each
 * shell's journal policy (the CLI journals only when the spec has an enabled `state:` block; the
 * Pulumi resource journals unless `state.enabled` is false), and the location written as text
 * ("namespace/name") where a record names another one. A pure rule with no cluster code behind it,
 * so the Pulumi provider's check and diff (which run in every preview) read it without loading the
 * session and the kube client.
 */
import { SPEC_DEFAULTS } from "../dsl/defaults.js";
import type { LoadedSpec } from "../dsl/loaded.js";

export interface RecordLocation {
  readonly namespace: string;
  readonly name: string;
}

/**
 * "spec": journal only when the spec has an enabled `state:` block (the CLI).
 * "default-on": journal unless `state.enabled` is false (the Pulumi resource).
 */
export type JournalPolicy = "spec" | "default-on";

/** Where the record lives under a policy; undefined when there is no journal. */
export function recordLocation(
  spec: Pick<LoadedSpec, "name" | "state" | "stateDeclared">,
  policy: JournalPolicy = "spec",
): RecordLocation | undefined {
  if (spec.state !== undefined) return spec.state;
  if (policy === "default-on" && spec.stateDeclared === "absent") {
    return { namespace: SPEC_DEFAULTS.stateNamespace, name: `${SPEC_DEFAULTS.stateNamePrefix}${spec.name}` };
  }
  return undefined;
}

/** "namespace/name": how one record names another (the records a spec moved from). */
export function locationText(location: RecordLocation): string {
  return `${location.namespace}/${location.name}`;
}

/** The location "namespace/name" names; undefined for anything else. */
export function parseLocationText(text: string): RecordLocation | undefined {
  const [namespace, name, ...rest] = text.split("/");
  return namespace && name && rest.length === 0 ? { namespace, name } : undefined;
}

/** `the state record (Secret "name" in namespace "ns")`, for messages. */
export function describeRecord(location: RecordLocation): string {
  return `the state record (Secret "${location.name}" in namespace "${location.namespace}")`;
}
