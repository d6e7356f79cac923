/**
 * The record as an in-cluster Secret: one JSON blob in data["record.json"],
 * labelled app.kubernetes.io/managed-by=khook and khook.io/spec=<name>.
 *
 * API calls: one GET when the journal opens; then one PUT (or one POST when
 * the Secret does not exist yet) per write. Every PUT carries the
 * resourceVersion the caller last saw, and every DELETE a resourceVersion
 * precondition: a write that loses the race (409), or finds the Secret gone
 * (404), is a RecordConflictError for the journal to resolve — never a blind
 * overwrite. khook refuses — without writing — a Secret of that name that
 * does not carry its label.
 */
import type { KubeClient } from "../kube/client.js";
import type { KubeObject, ResourceType } from "../kubectl/types.js";
import { parseRecord, RECORD_KEY } from "./record.js";
import type { RecordLocation } from "./location.js";
import type { FoundRecord } from "./moves.js";
import { PermanentStoreError, RecordConflictError, StoreError, type RecordStore, type StoredRecord } from "./store.js";

import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SPEC_LABEL, labelValue } from "../ownership.js";

export { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SPEC_LABEL, labelValue };

/**
 * The slice of the kube client this store needs (provider/kube/client.ts), so
 * tests can fake it. Failures reject with an error carrying the HTTP `status`
 * (KubeApiError); `get` resolves undefined for a missing Secret.
 */
export type SecretClient = Pick<KubeClient, "get" | "create" | "replace" | "delete"> &
  Partial<Pick<KubeClient, "watch">>;

/** The slice of the kube client findRecords needs. */
export type SecretLister = Pick<KubeClient, "list">;

/** How long a broken watch on the record waits before it re-connects. */
const REWATCH_DELAY_MS = 1_000;

const SECRETS: ResourceType = { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true };

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

export class SecretRecordStore implements RecordStore {
  readonly description: string;
  /** The Secret as last read or written: a write keeps its labels, annotations and type. */
  private last: SecretObject | undefined;
  /** API calls made, by verb; tests assert the call budget with it. */
  readonly calls = { get: 0, create: 0, update: 0, delete: 0 };

  constructor(
    private readonly kube: SecretClient,
    readonly location: RecordLocation,
    /** For the khook.io/spec label; undefined keeps the Secret's own (khook unlock --record). */
    private readonly specName: string | undefined,
  ) {
    this.description = `Secret "${location.name}" in namespace "${location.namespace}"`;
  }

  async read(signal?: AbortSignal): Promise<StoredRecord | undefined> {
    const secret = await this.refresh(signal);
    if (secret === undefined) return undefined;
    const b64 = secret.data?.[RECORD_KEY];
    return {
      json: b64 === undefined ? undefined : Buffer.from(b64, "base64").toString("utf8"),
      version: secret.metadata?.resourceVersion ?? "",
    };
  }

  async write(json: string, version: string | undefined, signal?: AbortSignal): Promise<string> {
    if (version === undefined) {
      try {
        this.calls.create++;
        const created = (await this.kube.create(SECRETS, this.secretBody(json, undefined, undefined), {
          signal,
        })) as SecretObject;
        this.last = created;
        return created.metadata?.resourceVersion ?? "";
      } catch (e) {
        if (statusOf(e) === 409)
          throw new RecordConflictError(`${this.description} was created by someone else`, "exists");
        throw this.explain("create", e);
      }
    }
    try {
      this.calls.update++;
      const updated = (await this.kube.replace(SECRETS, this.secretBody(json, this.last, version), {
        signal,
      })) as SecretObject;
      this.last = updated;
      return updated.metadata?.resourceVersion ?? "";
    } catch (e) {
      const status = statusOf(e);
      // The resourceVersion precondition failed: someone else wrote since we read.
      if (status === 409) throw new RecordConflictError(`${this.description} was changed by someone else`, "changed");
      if (status === 404) throw new RecordConflictError(`${this.description} was deleted by someone else`, "gone");
      throw this.explain("update", e);
    }
  }

  async delete(version: string | undefined, signal?: AbortSignal): Promise<void> {
    if (version === undefined) {
      // Never delete unseen: read first (which refuses a Secret that is not khook's).
      const seen = await this.refresh(signal);
      if (seen === undefined) return;
      version = seen.metadata?.resourceVersion;
    }
    try {
      this.calls.delete++;
      // A missing Secret is "not-found" here, not an error: either way it is gone.
      await this.kube.delete(SECRETS, this.location.name, this.location.namespace, {
        signal,
        ...(version ? { resourceVersion: version } : {}),
      });
      this.last = undefined;
    } catch (e) {
      const status = statusOf(e);
      if (status === 404) return;
      if (status === 409) throw new RecordConflictError(`${this.description} was changed by someone else`, "changed");
      throw this.explain("delete", e);
    }
  }

  /** A watch on this one Secret (field selector on its name), re-connected until `signal` aborts. */
  watch(onChange: (json: string) => void, signal: AbortSignal): void {
    const kube = this.kube;
    if (kube.watch === undefined) return;
    const watchOnce = kube.watch.bind(kube);
    const loop = async (): Promise<void> => {
      let resourceVersion = this.last?.metadata?.resourceVersion;
      while (!signal.aborted) {
        try {
          for await (const ev of watchOnce(SECRETS, {
            namespace: this.location.namespace,
            fieldSelector: `metadata.name=${this.location.name}`,
            ...(resourceVersion ? { resourceVersion } : {}),
            signal,
          })) {
            const secret = ev.object as SecretObject;
            if (ev.type === "ERROR") {
              resourceVersion = undefined; // e.g. 410 Gone: start from now
              break;
            }
            if (secret.metadata?.resourceVersion) resourceVersion = secret.metadata.resourceVersion;
            if (ev.type !== "ADDED" && ev.type !== "MODIFIED") continue;
            const b64 = secret.data?.[RECORD_KEY];
            if (b64 !== undefined) onChange(Buffer.from(b64, "base64").toString("utf8"));
          }
        } catch {
          // Unreachable or aborted: the conditional writes still guard the record; try again shortly.
        }
        if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, REWATCH_DELAY_MS).unref());
      }
    };
    void loop();
  }

  /** GET, with the ownership check. */
  private async refresh(signal: AbortSignal | undefined): Promise<SecretObject | undefined> {
    let secret: SecretObject | undefined;
    try {
      this.calls.get++;
      secret = (await this.kube.get(SECRETS, this.location.name, this.location.namespace, { signal })) as
        SecretObject | undefined;
    } catch (e) {
      throw this.explain("get", e);
    }
    if (secret === undefined) {
      this.last = undefined;
      return undefined;
    }
    if (secret?.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) {
      this.last = undefined;
      throw new PermanentStoreError(
        `refusing to use ${this.description} as the state record: it exists but is not managed by khook ` +
          `(it lacks the label ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}), so khook will not read or overwrite it. ` +
          `Nothing was written. Rename or delete that Secret, or set state.name (or state.namespace) in the spec to a Secret khook can own.`,
      );
    }
    this.last = secret;
    return secret;
  }

  /** The Secret to write; `version` is the resourceVersion precondition (absent on create). */
  private secretBody(
    json: string,
    existing: SecretObject | undefined,
    version: string | undefined,
  ): KubeObject & SecretObject {
    const meta = existing?.metadata;
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: this.location.name,
        namespace: this.location.namespace,
        ...(version !== undefined ? { resourceVersion: version } : {}),
        labels: {
          ...(meta?.labels ?? {}),
          [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
          ...(this.specName !== undefined ? { [SPEC_LABEL]: labelValue(this.specName) } : {}),
        },
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
    const detail =
      typeof apiMessage === "string" && apiMessage !== "" ? apiMessage : e instanceof Error ? e.message : String(e);
    if (status === 403) {
      return new PermanentStoreError(
        `forbidden to ${verb} Secret "${name}" in namespace "${namespace}" (the state record): ` +
          `the identity khook runs as needs get, create and update on secrets in namespace "${namespace}" ` +
          `(and delete, for destroy) — grant them, or remove the spec's state: block. API server said: ${detail}`,
      );
    }
    if (status === 401) {
      return new PermanentStoreError(
        `unauthorized to ${verb} Secret "${name}" in namespace "${namespace}" (the state record): ${detail}`,
      );
    }
    if (status === 404 && verb === "create") {
      return new PermanentStoreError(
        `cannot create Secret "${name}" in namespace "${namespace}" (the state record): namespace "${namespace}" does not exist — ` +
          `create it (kubectl create namespace ${namespace}), or set state.namespace to an existing namespace. API server said: ${detail}`,
      );
    }
    return new StoreError(`cannot ${verb} Secret "${name}" in namespace "${namespace}" (the state record): ${detail}`);
  }
}

/**
 * The records of spec `specName`, found by the labels every record carries (a label value may
 * shorten a long name, so the record's own `spec` decides): in every namespace or, where listing
 * them all is forbidden, in each of `namespaces` that may be listed. `searched` says where it
 * looked. Records that cannot be parsed are left out: they resume nothing.
 */
export async function findRecords(
  kube: SecretLister,
  specName: string,
  namespaces: readonly string[],
  signal?: AbortSignal,
): Promise<{ records: FoundRecord[]; searched: "every namespace" | string[] }> {
  const labelSelector = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${SPEC_LABEL}=${labelValue(specName)}`;
  const list = async (namespace: string | undefined): Promise<SecretObject[] | undefined> => {
    const opts = { labelSelector, ...(signal ? { signal } : {}) };
    try {
      const found = await kube.list(
        SECRETS,
        namespace === undefined ? { ...opts, allNamespaces: true } : { ...opts, namespace },
      );
      return found.items as SecretObject[];
    } catch (e) {
      if (statusOf(e) === 403) return undefined;
      throw e;
    }
  };
  let items = await list(undefined);
  let searched: "every namespace" | string[] = "every namespace";
  if (items === undefined) {
    items = [];
    searched = [];
    for (const namespace of new Set(namespaces)) {
      const listed = await list(namespace);
      if (listed === undefined) continue;
      items.push(...listed);
      searched.push(namespace);
    }
  }
  const records: FoundRecord[] = [];
  for (const secret of items) {
    const b64 = secret.data?.[RECORD_KEY];
    const { name, namespace } = secret.metadata ?? {};
    if (b64 === undefined || name === undefined || namespace === undefined) continue;
    const parsed = parseRecord(Buffer.from(b64, "base64").toString("utf8"));
    if (parsed.ok && parsed.record.spec === specName)
      records.push({ location: { namespace, name }, record: parsed.record });
  }
  return { records, searched };
}

/** The HTTP status of a kube error (KubeApiError.status), if any. */
export function statusOf(e: unknown): number | undefined {
  if (e === null || typeof e !== "object") return undefined;
  const o = e as { status?: unknown; statusCode?: unknown; code?: unknown };
  for (const v of [o.status, o.statusCode, o.code]) if (typeof v === "number") return v;
  return undefined;
}

/** A valid label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends. */
