/**
 * The record as an in-cluster Secret: one JSON blob in data["record.json"],
 * labelled app.kubernetes.io/managed-by=khook and khook.io/spec=<name>.
 *
 * API calls: one GET when the journal opens; then one PUT (or one POST when
 * the Secret does not exist yet) per write. A write that loses an optimistic
 * concurrency race (409) re-reads and writes again: last write wins, as the
 * spec says for concurrent runners. khook refuses — without writing — a Secret
 * of that name that does not carry its label.
 */
import type { KubeClient } from "../kube/client.js";
import type { KubeObject, ResourceType } from "../kubectl/types.js";
import { RECORD_KEY } from "./record.js";
import { PermanentStoreError, StoreError, type RecordStore, type StoredRecord } from "./store.js";

import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SPEC_LABEL, labelValue } from "../ownership.js";

export { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SPEC_LABEL, labelValue };

/**
 * The slice of the kube client this store needs (provider/kube/client.ts), so
 * tests can fake it. Failures reject with an error carrying the HTTP `status`
 * (KubeApiError); `get` resolves undefined for a missing Secret.
 */
export type SecretClient = Pick<KubeClient, "get" | "create" | "replace" | "delete">;

const SECRETS: ResourceType = { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true };

export interface SecretLocation {
  readonly namespace: string;
  readonly name: string;
}

interface SecretObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  type?: string;
  data?: Record<string, string>;
}

type Known = { state: "unknown" } | { state: "absent" } | { state: "present"; secret: SecretObject };

/** How many 409s in a row a single write or delete tolerates before giving up. */
const MAX_CONFLICTS = 5;

export class SecretRecordStore implements RecordStore {
  readonly description: string;
  private known: Known = { state: "unknown" };
  /** API calls made, by verb; tests assert the call budget with it. */
  readonly calls = { get: 0, create: 0, update: 0, delete: 0 };

  constructor(
    private readonly kube: SecretClient,
    readonly location: SecretLocation,
    private readonly specName: string,
  ) {
    this.description = `Secret "${location.name}" in namespace "${location.namespace}"`;
  }

  async read(signal?: AbortSignal): Promise<StoredRecord | undefined> {
    const secret = await this.refresh(signal);
    if (secret === undefined) return undefined;
    const b64 = secret.data?.[RECORD_KEY];
    return { json: b64 === undefined ? undefined : Buffer.from(b64, "base64").toString("utf8") };
  }

  async write(json: string, signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < MAX_CONFLICTS; i++) {
      if (this.known.state === "unknown") await this.refresh(signal);
      const known = this.known;
      if (known.state === "absent") {
        try {
          this.calls.create++;
          const created = await this.kube.create(SECRETS, this.secretBody(json, undefined), { signal });
          this.known = { state: "present", secret: created as SecretObject };
          return;
        } catch (e) {
          if (statusOf(e) === 409) {
            this.known = { state: "unknown" };
            continue;
          }
          throw this.explain("create", e);
        }
      } else if (known.state === "present") {
        try {
          this.calls.update++;
          const updated = await this.kube.replace(SECRETS, this.secretBody(json, known.secret), { signal });
          this.known = { state: "present", secret: updated as SecretObject };
          return;
        } catch (e) {
          const status = statusOf(e);
          if (status === 409) {
            // Someone else wrote since we read: re-read (re-checking ownership), then overwrite.
            this.known = { state: "unknown" };
            continue;
          }
          if (status === 404) {
            this.known = { state: "absent" };
            continue;
          }
          throw this.explain("update", e);
        }
      }
    }
    throw new StoreError(`gave up writing ${this.description} after ${MAX_CONFLICTS} write conflicts in a row`);
  }

  async delete(signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < MAX_CONFLICTS; i++) {
      if (this.known.state === "unknown") await this.refresh(signal);
      const known = this.known;
      if (known.state !== "present") return;
      const rv = known.secret.metadata?.resourceVersion;
      try {
        this.calls.delete++;
        // A missing Secret is "not-found" here, not an error: either way it is gone.
        await this.kube.delete(SECRETS, this.location.name, this.location.namespace, { signal, ...(rv ? { resourceVersion: rv } : {}) });
        this.known = { state: "absent" };
        return;
      } catch (e) {
        const status = statusOf(e);
        if (status === 404) {
          this.known = { state: "absent" };
          return;
        }
        if (status === 409) {
          this.known = { state: "unknown" };
          continue;
        }
        throw this.explain("delete", e);
      }
    }
    throw new StoreError(`gave up deleting ${this.description} after ${MAX_CONFLICTS} conflicts in a row`);
  }

  /** GET, with the ownership check. */
  private async refresh(signal: AbortSignal | undefined): Promise<SecretObject | undefined> {
    let secret: SecretObject | undefined;
    try {
      this.calls.get++;
      secret = (await this.kube.get(SECRETS, this.location.name, this.location.namespace, { signal })) as SecretObject | undefined;
    } catch (e) {
      throw this.explain("get", e);
    }
    if (secret === undefined) {
      this.known = { state: "absent" };
      return undefined;
    }
    if (secret?.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) {
      this.known = { state: "unknown" };
      throw new PermanentStoreError(
        `refusing to use ${this.description} as the state record: it exists but is not managed by khook ` +
          `(it lacks the label ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}), so khook will not read or overwrite it. ` +
          `Nothing was written. Rename or delete that Secret, or set state.name (or state.namespace) in the spec to a Secret khook can own.`,
      );
    }
    this.known = { state: "present", secret };
    return secret;
  }

  private secretBody(json: string, existing: SecretObject | undefined): KubeObject & SecretObject {
    const meta = existing?.metadata;
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: this.location.name,
        namespace: this.location.namespace,
        ...(meta?.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
        labels: { ...(meta?.labels ?? {}), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SPEC_LABEL]: labelValue(this.specName) },
        ...(meta?.annotations ? { annotations: meta.annotations } : {}),
      },
      // A Secret's type is immutable: keep whatever it is.
      type: existing?.type ?? "Opaque",
      data: { [RECORD_KEY]: Buffer.from(json, "utf8").toString("base64") },
    };
  }

  /** Turns an API error into a sentence naming the verb, the Secret and the namespace. */
  private explain(verb: "get" | "create" | "update" | "delete", e: unknown): Error {
    const status = statusOf(e);
    const { name, namespace } = this.location;
    const apiMessage = (e as { apiMessage?: unknown } | null)?.apiMessage;
    const detail = typeof apiMessage === "string" && apiMessage !== "" ? apiMessage : e instanceof Error ? e.message : String(e);
    if (status === 403) {
      return new PermanentStoreError(
        `forbidden to ${verb} Secret "${name}" in namespace "${namespace}" (the state record): ` +
          `the identity khook runs as needs get, create and update on secrets in namespace "${namespace}" ` +
          `(and delete, for destroy) — grant them, or remove the spec's state: block. API server said: ${detail}`,
      );
    }
    if (status === 401) {
      return new PermanentStoreError(`unauthorized to ${verb} Secret "${name}" in namespace "${namespace}" (the state record): ${detail}`);
    }
    if (status === 404 && verb === "create") {
      return new PermanentStoreError(
        `cannot create Secret "${name}" in namespace "${namespace}" (the state record): namespace "${namespace}" does not exist — ` +
          `create it, or set state.namespace to an existing namespace. API server said: ${detail}`,
      );
    }
    return new StoreError(`cannot ${verb} Secret "${name}" in namespace "${namespace}" (the state record): ${detail}`);
  }
}

/** The HTTP status of a kube error (KubeApiError.status), if any. */
export function statusOf(e: unknown): number | undefined {
  if (e === null || typeof e !== "object") return undefined;
  const o = e as { status?: unknown; statusCode?: unknown; code?: unknown };
  for (const v of [o.status, o.statusCode, o.code]) if (typeof v === "number") return v;
  return undefined;
}

/** A valid label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends. */
