/**
 * The harness pieces the Pulumi integration tests use: the real pulumi CLI
 * (with the nodejs language host and dynamic-provider shim on PATH) and the
 * local test cluster. One place to adapt if the harness changes shape.
 */
import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import * as harness from "../../harness/index.js";
import { builtSea } from "../../harness/sea.js";
import { khookRoot, PulumiProject, type ProjectOptions, type PulumiTools } from "./pulumi-project.js";
import { ClusterView } from "./pulumi-kube.js";

export function pulumiTools(): PulumiTools {
  return { pulumi: harness.toolPath("pulumi"), env: { ...process.env, ...harness.toolEnv() } };
}

/**
 * The two shells around khook's handlers: the dynamic resource of the npm package and the native
 * provider `khook:index:Khook`. A test of a promise both make runs once per shell. `sea` is the
 * native provider served by the single executable (dist/sea/khook under the plugin's name).
 */
export type KhookShell = "dynamic" | "native" | "sea";
export const SHELLS: readonly KhookShell[] = ["dynamic", "native"];

/** A test's name on a shell: the dynamic one keeps its name, the others say which they are. */
export function onShell(shell: KhookShell, name: string): string {
  return {
    dynamic: name,
    native: `native provider: ${name}`,
    sea: `native provider from the single executable: ${name}`,
  }[shell];
}

/** PATH with bin/pulumi-resource-khook first: the executable way the native provider ships. */
export function withLauncher(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, PATH: `${path.join(khookRoot(), "bin")}${path.delimiter}${env.PATH ?? ""}` };
}

/**
 * Points the project's programs at `shell`: for a native one, the engine finds the provider
 * through PATH (bin/'s launcher, or the single executable linked under the plugin's name) and
 * `khook(...)` in the program (DECLARE_KHOOK) declares `khook:index:Khook`.
 */
export function useShell(project: PulumiProject, shell: KhookShell): void {
  if (shell === "dynamic") return;
  if (shell === "native") {
    Object.assign(project.env, withLauncher(project.env));
  } else {
    const dir = path.join(project.stateDir, "sea-plugin");
    fs.mkdirSync(dir, { recursive: true });
    fs.symlinkSync(builtSea(), path.join(dir, "pulumi-resource-khook"));
    project.env.PATH = `${dir}${path.delimiter}${project.env.PATH ?? ""}`;
  }
  project.env.KHOOK_TEST_SHELL = "native";
}

export interface PulumiFixture {
  project: PulumiProject;
  kubeconfig: string;
  namespace: string;
  cluster: ClusterView;
}

/** A project plus the cluster and a fresh namespace; everything is cleaned up when the test ends. `shell`: which Khook the program declares (default dynamic). */
export async function pulumiFixture(
  t: TestContext,
  opts: ProjectOptions & { shell?: KhookShell },
): Promise<PulumiFixture> {
  const { kubeconfig } = await harness.testCluster();
  const namespace = await harness.withNamespace(t, "khook-pulumi");
  const project = new PulumiProject(pulumiTools(), opts);
  useShell(project, opts.shell ?? "dynamic");
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
