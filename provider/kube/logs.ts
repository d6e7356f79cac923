/** Pod logs, and the pods of a Job (to surface a failed Job's last lines). */
import type { Transport } from "./transport.js";
import { isNotFound } from "./api-errors.js";
import { get, list } from "./objects.js";
import type { KubeObject, ResourceType } from "../kubectl/types.js";

export const PODS: ResourceType = { group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true };
export const JOBS: ResourceType = { group: "batch", version: "v1", resource: "jobs", kind: "Job", namespaced: true };

export interface LogOptions {
  container?: string;
  /** Only the last N lines (kubectl logs --tail). */
  tailLines?: number;
  /** The previous (crashed) container instance. */
  previous?: boolean;
  /** Cap on bytes returned by the server. */
  limitBytes?: number;
  signal?: AbortSignal;
}

/** The pod's log text (`kubectl logs`). A pod or container without logs yet gives "". */
export async function podLogs(
  client: Transport,
  namespace: string,
  pod: string,
  opts: LogOptions = {},
): Promise<string> {
  try {
    const res = await client.request({
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log`,
      query: {
        container: opts.container,
        tailLines: opts.tailLines,
        previous: opts.previous ? "true" : undefined,
        limitBytes: opts.limitBytes,
      },
      accept: "text/plain, */*",
      signal: opts.signal,
      target: { resource: PODS, name: pod, namespace },
    });
    return res.text;
  } catch (e) {
    // "container ... is waiting to start" is a 400; a deleted pod is a 404. Neither has logs to show.
    if (isNotFound(e) || (e instanceof Error && "status" in e && (e as { status: number }).status === 400)) return "";
    throw e;
  }
}

/**
 * The pods a Job created, oldest first. Uses the Job's own selector
 * (controller-uid) when the Job exists, else the `job-name` label.
 */
export async function jobPods(
  client: Transport,
  namespace: string,
  job: string,
  opts: { signal?: AbortSignal } = {},
): Promise<KubeObject[]> {
  const j = await get(client, JOBS, job, namespace, opts);
  let labelSelector = `job-name=${job}`;
  const matchLabels = (j?.["spec"] as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector
    ?.matchLabels;
  if (matchLabels && Object.keys(matchLabels).length > 0) {
    labelSelector = Object.entries(matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
  }
  const { items } = await list(client, PODS, { namespace, labelSelector, signal: opts.signal });
  return items.sort((a, b) =>
    String(a.metadata?.creationTimestamp ?? "").localeCompare(String(b.metadata?.creationTimestamp ?? "")),
  );
}
