/** The run-state record: pure model, journal, stores. */
import type { LoadedSpec } from "../spec/loaded.js";
import { Journal, type JournalOptions } from "./journal.js";
import { SecretRecordStore, type SecretClient } from "./secret-store.js";

export * from "./record.js";
export * from "./store.js";
export * from "./journal.js";
export * from "./secret-store.js";
export * from "./lease.js";

/** The Secret-backed store for a spec's `state:` settings; undefined when state is disabled. */
export function secretStoreForSpec(spec: LoadedSpec, kube: SecretClient): SecretRecordStore | undefined {
  if (spec.state === undefined) return undefined;
  return new SecretRecordStore(kube, { namespace: spec.state.namespace, name: spec.state.name }, spec.name);
}

/** The journal for a spec; undefined when the spec has no enabled `state:` block. */
export function journalForSpec(spec: LoadedSpec, kube: SecretClient, opts: Partial<JournalOptions> = {}): Journal | undefined {
  const store = secretStoreForSpec(spec, kube);
  return store === undefined ? undefined : Journal.forSpec(spec, store, opts);
}
