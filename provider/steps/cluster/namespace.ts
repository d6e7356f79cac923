/** `createNamespace: true`: create the namespace when it is missing, like `helm --create-namespace`. */
import { isKubeApiError, type KubeApi, type ResourceType } from "../../kube/index.js";

export const NAMESPACES: ResourceType = {
  group: "",
  version: "v1",
  resource: "namespaces",
  kind: "Namespace",
  namespaced: false,
};

/** Returns true when it created the namespace. Namespaces are never deleted by destroy (helm does the same). */
export async function ensureNamespace(
  kube: Pick<KubeApi, "get" | "create">,
  name: string,
  signal: AbortSignal,
): Promise<boolean> {
  if ((await kube.get(NAMESPACES, name, undefined, { signal })) !== undefined) return false;
  try {
    await kube.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } }, { signal });
    return true;
  } catch (e) {
    if (isKubeApiError(e) && e.alreadyExists) return false;
    throw e;
  }
}
