/**
 * The cluster as one look sees it, read a list at a time: what `khook plan --live` compares
 * every recorded step with. An object is found in the list of its kind in its namespace, made
 * once for every step that asks (concurrent askers share the one request), so checking a
 * thousand ConfigMaps in one namespace costs one list, not a thousand GETs. A list with a label
 * selector (helm's release Secrets) is made once per namespace and selector.
 *
 * The reads go through KubeApi.list, so a recording fake serves them in unit tests.
 */
import type { KubeApi } from "./api.js";
import type { KubeObject, ResourceType } from "../kubectl/types.js";

export class LiveReads {
  private readonly lists = new Map<string, Promise<KubeObject[]>>();
  private readonly indexes = new Map<string, Promise<Map<string, KubeObject>>>();
  /** List requests made so far (one per kind, namespace and selector asked for). */
  requests = 0;

  constructor(
    private readonly kube: Pick<KubeApi, "list">,
    private readonly signal?: AbortSignal,
  ) {}

  /** The object named `name`, or undefined when its kind's list in its namespace does not hold it. */
  async get(rt: ResourceType, name: string, namespace: string | undefined): Promise<KubeObject | undefined> {
    const ns = rt.namespaced ? (namespace ?? "") : "";
    const key = listKey(rt, ns, "");
    let index = this.indexes.get(key);
    if (index === undefined) {
      index = this.select(rt, ns, undefined).then(
        (items) => new Map(items.map((o) => [String(o.metadata?.name ?? ""), o])),
      );
      this.indexes.set(key, index);
    }
    return (await index).get(name);
  }

  /** Every object of the kind in `namespace` (undefined: all namespaces) that `labelSelector` matches. */
  select(rt: ResourceType, namespace: string | undefined, labelSelector: string | undefined): Promise<KubeObject[]> {
    const ns = rt.namespaced ? (namespace ?? "") : "";
    const key = listKey(rt, ns, labelSelector ?? "");
    let pending = this.lists.get(key);
    if (pending === undefined) {
      this.requests++;
      pending = this.kube
        .list(rt, {
          ...(ns !== "" ? { namespace: ns } : { allNamespaces: true }),
          ...(labelSelector !== undefined && labelSelector !== "" ? { labelSelector } : {}),
          ...(this.signal !== undefined ? { signal: this.signal } : {}),
        })
        .then((l) => l.items);
      // A failed list fails every step that asked; it is not retried here (the next look does).
      this.lists.set(key, pending);
    }
    return pending;
  }
}

function listKey(rt: ResourceType, namespace: string, selector: string): string {
  return `${rt.group}/${rt.version}/${rt.resource}\0${namespace}\0${selector}`;
}
