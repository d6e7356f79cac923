/**
 * kubectl rollout status / restart, as pure functions over objects: the exact
 * completeness rules of kubectl's StatusViewers, and restart's patch.
 */
import { isObject, type KubeObject } from "./types.js";

export type RolloutKind = "Deployment" | "DaemonSet" | "StatefulSet";

export const ROLLOUT_KINDS: readonly RolloutKind[] = ["Deployment", "DaemonSet", "StatefulSet"];

export type RolloutStatus =
  | { state: "done"; message: string }
  | { state: "progressing"; message: string }
  /** Terminal: waiting longer cannot help (ProgressDeadlineExceeded, unsupported strategy). */
  | { state: "failed"; message: string };

const RESTARTED_AT = "kubectl.kubernetes.io/restartedAt";

function num(v: unknown): number {
  return typeof v === "number" ? v : 0;
}

function sub(o: unknown, key: string): Record<string, unknown> {
  return isObject(o) && isObject(o[key]) ? o[key] : {};
}

/** kubectl's DeploymentStatusViewer / DaemonSetStatusViewer / StatefulSetStatusViewer. */
export function rolloutStatus(obj: KubeObject): RolloutStatus {
  const name = obj.metadata?.name ?? "";
  const generation = num(obj.metadata?.generation);
  const spec = sub(obj, "spec");
  const status = sub(obj, "status");
  switch (obj.kind) {
    case "Deployment": {
      if (generation <= num(status["observedGeneration"])) {
        const conds = Array.isArray(status["conditions"]) ? status["conditions"] : [];
        const progressing = conds.find((c) => isObject(c) && c["type"] === "Progressing");
        if (isObject(progressing) && progressing["reason"] === "ProgressDeadlineExceeded") {
          return { state: "failed", message: `deployment "${name}" exceeded its progress deadline` };
        }
        const replicas = typeof spec["replicas"] === "number" ? spec["replicas"] : undefined;
        const updated = num(status["updatedReplicas"]);
        if (replicas !== undefined && updated < replicas) {
          return {
            state: "progressing",
            message: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`,
          };
        }
        if (num(status["replicas"]) > updated) {
          return {
            state: "progressing",
            message: `Waiting for deployment "${name}" rollout to finish: ${num(status["replicas"]) - updated} old replicas are pending termination...`,
          };
        }
        if (num(status["availableReplicas"]) < updated) {
          return {
            state: "progressing",
            message: `Waiting for deployment "${name}" rollout to finish: ${num(status["availableReplicas"])} of ${updated} updated replicas are available...`,
          };
        }
        return { state: "done", message: `deployment "${name}" successfully rolled out` };
      }
      return { state: "progressing", message: "Waiting for deployment spec update to be observed..." };
    }
    case "DaemonSet": {
      const strategy = sub(spec, "updateStrategy");
      if (strategy["type"] !== "RollingUpdate") {
        return {
          state: "failed",
          message: `rollout status is only available for RollingUpdate strategy type (daemon set "${name}" uses ${String(strategy["type"] ?? "none")})`,
        };
      }
      if (generation <= num(status["observedGeneration"])) {
        const desired = num(status["desiredNumberScheduled"]);
        const updated = num(status["updatedNumberScheduled"]);
        if (updated < desired) {
          return {
            state: "progressing",
            message: `Waiting for daemon set "${name}" rollout to finish: ${updated} out of ${desired} new pods have been updated...`,
          };
        }
        const available = num(status["numberAvailable"]);
        if (available < desired) {
          return {
            state: "progressing",
            message: `Waiting for daemon set "${name}" rollout to finish: ${available} of ${desired} updated pods are available...`,
          };
        }
        return { state: "done", message: `daemon set "${name}" successfully rolled out` };
      }
      return { state: "progressing", message: "Waiting for daemon set spec update to be observed..." };
    }
    case "StatefulSet": {
      const strategy = sub(spec, "updateStrategy");
      if (strategy["type"] !== "RollingUpdate") {
        return {
          state: "failed",
          message: `rollout status is only available for RollingUpdate strategy type (statefulset "${name}" uses ${String(strategy["type"] ?? "none")})`,
        };
      }
      const og = num(status["observedGeneration"]);
      if (og === 0 || generation > og)
        return { state: "progressing", message: "Waiting for statefulset spec update to be observed..." };
      const replicas = typeof spec["replicas"] === "number" ? spec["replicas"] : undefined;
      const ready = num(status["readyReplicas"]);
      if (replicas !== undefined && ready < replicas) {
        return { state: "progressing", message: `Waiting for ${replicas - ready} pods to be ready...` };
      }
      const ru = isObject(strategy["rollingUpdate"]) ? strategy["rollingUpdate"] : undefined;
      if (ru) {
        const updated = num(status["updatedReplicas"]);
        if (replicas !== undefined && typeof ru["partition"] === "number") {
          const want = replicas - ru["partition"];
          if (updated < want) {
            return {
              state: "progressing",
              message: `Waiting for partitioned roll out to finish: ${updated} out of ${want} new pods have been updated...`,
            };
          }
        }
        return { state: "done", message: `partitioned roll out complete: ${updated} new pods have been updated...` };
      }
      if (status["updateRevision"] !== status["currentRevision"]) {
        return {
          state: "progressing",
          message: `waiting for statefulset rolling update to complete ${num(status["updatedReplicas"])} pods at revision ${String(status["updateRevision"] ?? "")}...`,
        };
      }
      return {
        state: "done",
        message: `statefulset rolling update complete ${num(status["currentReplicas"])} pods at revision ${String(status["currentRevision"] ?? "")}...`,
      };
    }
    default:
      return { state: "failed", message: `no status viewer has been implemented for ${obj.kind ?? "this kind"}` };
  }
}

/** kubectl rollout restart's strategic merge patch: a new restartedAt annotation on the pod template. */
export function restartPatch(now: Date = new Date()): Record<string, unknown> {
  return { spec: { template: { metadata: { annotations: { [RESTARTED_AT]: rfc3339(now) } } } } };
}

/** RFC 3339 in UTC with second precision, as Go's time.RFC3339 prints it. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

export { RESTARTED_AT };
