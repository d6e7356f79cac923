/**
 * The harness pieces the Pulumi integration tests use: the real pulumi CLI
 * (with the nodejs language host and dynamic-provider shim on PATH) and the
 * local test cluster. One place to adapt if the harness changes shape.
 */
import type { TestContext } from "node:test";
import * as harness from "../../harness/index.js";
import { PulumiProject, type ProjectOptions, type PulumiTools } from "./pulumi-project.js";
import { ClusterView } from "./pulumi-kube.js";

export function pulumiTools(): PulumiTools {
  return { pulumi: harness.toolPath("pulumi"), env: { ...process.env, ...harness.toolEnv() } };
}

export interface PulumiFixture {
  project: PulumiProject;
  kubeconfig: string;
  namespace: string;
  cluster: ClusterView;
}

/** A project plus the cluster and a fresh namespace; everything is cleaned up when the test ends. */
export async function pulumiFixture(t: TestContext, opts: ProjectOptions): Promise<PulumiFixture> {
  const { kubeconfig } = await harness.testCluster();
  const namespace = await harness.withNamespace(t, "khook-pulumi");
  const project = new PulumiProject(pulumiTools(), opts);
  const cluster = await ClusterView.open(kubeconfig);
  t.after(async () => {
    cluster.close();
    if (process.env.KHOOK_KEEP_PULUMI_PROJECTS) {
      t.diagnostic(`kept ${project.dir}`);
      return;
    }
    await project.cleanup();
  });
  return { project, kubeconfig, namespace, cluster };
}
