/** What the Pulumi integration tests read from the cluster: objects, their resourceVersions, the journal. */
import fs from "node:fs";
import { parse as parseYaml } from "yaml";
import { KubeClient } from "../../../provider/kube/client.js";
import { statusOf } from "../../../provider/state/secret-store.js";
import { RECORD_KEY, type StateRecord } from "../../../provider/state/record.js";
import type { RecordOwner } from "../../../provider/pulumi/record-owner/owner.js";

/** A record as stored (format 1): the Pulumi resource's owner and the record's moves together under `owner`. */
export type StoredRecordJson = Omit<StateRecord, "owner" | "movedTo" | "movedFrom"> & { owner?: RecordOwner };

export class ClusterView {
  private constructor(private readonly kube: KubeClient) {}

  static async open(kubeconfigPath: string): Promise<ClusterView> {
    return new ClusterView(await KubeClient.connect({ kubeconfigPath }));
  }

  close(): void {
    this.kube.close();
  }

  async get<T = Record<string, unknown>>(apiPath: string): Promise<T | undefined> {
    try {
      return await this.kube.requestJson<T>({ path: apiPath });
    } catch (e) {
      if (statusOf(e) === 404) return undefined;
      throw e;
    }
  }

  configMap(
    namespace: string,
    name: string,
  ): Promise<{ metadata: { resourceVersion: string }; data?: Record<string, string> } | undefined> {
    return this.get(`/api/v1/namespaces/${namespace}/configmaps/${name}`);
  }

  async createConfigMap(namespace: string, name: string, data: Record<string, string>): Promise<void> {
    await this.kube.requestJson({
      method: "POST",
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data },
    });
  }

  async createNamespace(name: string): Promise<void> {
    await this.kube.requestJson({
      method: "POST",
      path: "/api/v1/namespaces",
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name } },
    });
  }

  async deleteNamespace(name: string): Promise<void> {
    await this.kube.requestJson({ method: "DELETE", path: `/api/v1/namespaces/${name}` });
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    await this.kube.requestJson({ method: "DELETE", path: `/api/v1/namespaces/${namespace}/secrets/${name}` });
  }

  /** Replaces a Secret's data with another Secret's (a record written elsewhere, moved as-is). */
  async copySecretData(namespace: string, from: string, to: string): Promise<void> {
    const source = await this.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/secrets/${from}`);
    const target = await this.get<Record<string, unknown>>(`/api/v1/namespaces/${namespace}/secrets/${to}`);
    if (source === undefined || target === undefined)
      throw new Error(`copySecretData: ${from} or ${to} is missing in ${namespace}`);
    await this.kube.requestJson({
      method: "PUT",
      path: `/api/v1/namespaces/${namespace}/secrets/${to}`,
      body: { ...target, data: source.data },
    });
  }

  /** The resourceVersion of each named ConfigMap (undefined when absent). */
  async versions(namespace: string, names: string[]): Promise<Record<string, string | undefined>> {
    const out: Record<string, string | undefined> = {};
    for (const n of names) out[n] = (await this.configMap(namespace, n))?.metadata.resourceVersion;
    return out;
  }

  /** The state record, parsed; undefined when the Secret is absent. */
  async record(namespace: string, name: string): Promise<StoredRecordJson | undefined> {
    const s = await this.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/secrets/${name}`);
    const b64 = s?.data?.[RECORD_KEY];
    return b64 === undefined
      ? undefined
      : (JSON.parse(Buffer.from(b64, "base64").toString("utf8")) as StoredRecordJson);
  }
}

/** The credential strings of a kubeconfig (tokens, keys, passwords): the secrets test greps for them. */
export function kubeconfigSecrets(kubeconfigPath: string): string[] {
  const doc = parseYaml(fs.readFileSync(kubeconfigPath, "utf8")) as { users?: { user?: Record<string, unknown> }[] };
  const out: string[] = [];
  const pem = (text: string): void => {
    for (const line of text.split("\n")) if (line.length >= 16 && !line.startsWith("-----")) out.push(line.trim());
  };
  const visit = (v: unknown, key: string): void => {
    if (typeof v === "string") {
      if (key === "client-key" || key === "tokenFile") {
        if (fs.existsSync(v)) {
          const text = fs.readFileSync(v, "utf8");
          out.push(text.trim());
          pem(text);
        }
      } else if (/token|password|key-data|secret/i.test(key) && v.length >= 16) {
        out.push(v);
        if (key === "client-key-data") pem(Buffer.from(v, "base64").toString("utf8"));
      }
    } else if (Array.isArray(v)) v.forEach((x) => visit(x, key));
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) visit(x, k);
  };
  for (const u of doc.users ?? []) visit(u.user, "");
  return out;
}
