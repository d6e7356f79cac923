/**
 * The owner marker: where the owning Pulumi resource is kept when the spec turns the journal off
 * (`state.enabled: false`), so renames and replaces are just as safe without a record. One small
 * ConfigMap, `khook-owner-<spec>` in the record's default namespace, labelled like the record,
 * holding the owner (and the records it left) as JSON under `owner.json`; nothing secret. With the
 * journal on, the owner lives in the record itself, and no marker is written.
 */
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SPEC_LABEL, labelValue } from "../../ownership.js";
import { SPEC_DEFAULTS } from "../../dsl/defaults.js";
import type { KubeClient } from "../../kube/client.js";
import type { KubeObject, ResourceType } from "../../kubectl/types.js";
import type { RecordLocation } from "../../state/location.js";
import { ownerAndMoves } from "../../state/record.js";
import { statusOf } from "../../state/secret-store.js";
import { PermanentStoreError, StoreError } from "../../state/store.js";
import { ownerOf, type RecordOwner } from "./owner.js";

export const OWNER_MARKER_KEY = "owner.json";
export const OWNER_MARKER_PREFIX = "khook-owner-";

/** The slice of the kube client the marker needs, like the record's SecretClient. */
export type MarkerClient = Pick<KubeClient, "get" | "create" | "replace" | "delete">;

const CONFIGMAPS: ResourceType = {
  group: "",
  version: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};

interface MarkerObject {
  metadata?: { resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** Where a spec's owner marker lives. */
export function ownerMarkerLocation(specName: string): RecordLocation {
  return { namespace: SPEC_DEFAULTS.stateNamespace, name: `${OWNER_MARKER_PREFIX}${specName}` };
}

export class OwnerMarkerStore {
  readonly namespace: string;
  readonly name: string;
  readonly description: string;

  constructor(
    private readonly kube: MarkerClient,
    private readonly specName: string,
  ) {
    ({ namespace: this.namespace, name: this.name } = ownerMarkerLocation(specName));
    this.description = `ConfigMap "${this.name}" in namespace "${this.namespace}" (the owner marker)`;
  }

  /** The recorded owner; undefined when there is no marker. Refuses an object of that name khook does not manage. */
  async read(signal?: AbortSignal): Promise<RecordOwner | undefined> {
    const obj = await this.get(signal);
    if (obj === undefined) return undefined;
    const text = obj.data?.[OWNER_MARKER_KEY];
    if (text === undefined) return undefined;
    try {
      return ownerOf(ownerAndMoves(JSON.parse(text)));
    } catch {
      return undefined;
    }
  }

  /** Creates or overwrites the marker with `owner`. */
  async write(owner: RecordOwner, signal?: AbortSignal): Promise<void> {
    const existing = await this.get(signal);
    const body = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: this.name,
        namespace: this.namespace,
        ...(existing?.metadata?.resourceVersion ? { resourceVersion: existing.metadata.resourceVersion } : {}),
        labels: {
          ...(existing?.metadata?.labels ?? {}),
          [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
          [SPEC_LABEL]: labelValue(this.specName),
        },
      },
      data: { [OWNER_MARKER_KEY]: JSON.stringify(owner) },
    };
    try {
      if (existing === undefined)
        await this.kube.create(CONFIGMAPS, body as KubeObject, { ...(signal ? { signal } : {}) });
      else await this.kube.replace(CONFIGMAPS, body as KubeObject, { ...(signal ? { signal } : {}) });
    } catch (e) {
      throw new StoreError(`cannot write ${this.description}: ${detail(e)}`);
    }
  }

  /** Removes the marker; absent is fine. */
  async delete(signal?: AbortSignal): Promise<void> {
    try {
      await this.kube.delete(CONFIGMAPS, this.name, this.namespace, { ...(signal ? { signal } : {}) });
    } catch (e) {
      if (statusOf(e) === 404) return;
      throw new StoreError(`cannot delete ${this.description}: ${detail(e)}`);
    }
  }

  private async get(signal?: AbortSignal): Promise<MarkerObject | undefined> {
    let obj: MarkerObject | undefined;
    try {
      obj = (await this.kube.get(CONFIGMAPS, this.name, this.namespace, { ...(signal ? { signal } : {}) })) as
        MarkerObject | undefined;
    } catch (e) {
      throw new StoreError(`cannot read ${this.description}: ${detail(e)}`);
    }
    if (obj === undefined) return undefined;
    if (obj?.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) {
      throw new PermanentStoreError(
        `refusing to use ${this.description}: it exists but is not managed by khook (it lacks the label ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}). ` +
          `Nothing was changed. Rename or delete that ConfigMap, or rename the spec (metadata.name).`,
      );
    }
    return obj;
  }
}

function detail(e: unknown): string {
  const apiMessage = (e as { apiMessage?: unknown } | null)?.apiMessage;
  return typeof apiMessage === "string" && apiMessage !== "" ? apiMessage : e instanceof Error ? e.message : String(e);
}
