/**
 * A private control plane for one test file: the fault, race and overload tests stop, freeze and
 * restart its components, which the shared test cluster must never see. It starts before the file's
 * tests and stops after them; its directory, with the components' logs, is kept when a test failed.
 *
 *   const { state, cluster, kubectl } = privateCluster("faults");
 *   await killComponent(state(), "kube-apiserver");
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, afterEach, before } from "node:test";
import { startCluster, stopCluster, type ClusterState, type StartClusterOptions } from "./cluster";
import { clusterAt, type TestCluster } from "./index";

export interface PrivateCluster {
  /** The running cluster (server, kubeconfig, pids); fails the test when it did not start. */
  state(): ClusterState;
  /** The harness's kubectl for it. */
  cluster(): TestCluster;
  /** kubectl against it: fails the test on a non-zero exit, else its stdout, trimmed. */
  kubectl(args: string[], input?: string): Promise<string>;
}

/** Registers the file's before/after hooks; `name` prefixes the cluster's directory (with the pid). */
export function privateCluster(
  name: string,
  opts: Omit<StartClusterOptions, "name" | "watchPid"> = {},
): PrivateCluster {
  let started: ClusterState | undefined;
  let client: TestCluster | undefined;
  let allPassed = true;
  before(async () => {
    started = await startCluster({
      ...opts,
      name: `${name}-${process.pid}`,
      watchPid: process.pid,
    });
    client = clusterAt(started.kubeconfig);
  });
  afterEach((t) => {
    if ((t as { passed?: boolean }).passed === false) allPassed = false;
  });
  after(async () => {
    if (started === undefined) return;
    await stopCluster(started);
    if (allPassed) fs.rmSync(started.dir, { recursive: true, force: true });
  });
  const state = (): ClusterState => {
    assert.ok(started, "the private cluster did not start");
    return started;
  };
  const cluster = (): TestCluster => {
    state();
    return client!;
  };
  return {
    state,
    cluster,
    async kubectl(args, input) {
      const r = await cluster().kubectl(args, input !== undefined ? { input } : {});
      assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
      return r.stdout.trim();
    },
  };
}
