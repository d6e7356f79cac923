/**
 * What the drift tests do by hand between two khook runs (test/integration/drift.test.ts and
 * pulumi-drift.test.ts), the way a person would: helm and kubectl, never khook.
 */
import assert from "node:assert/strict";
import { helm } from "../../harness/fixtures.js";
import type { CliResult } from "./khook-cli.js";

export interface HandTools {
  kubectl(args: string[]): Promise<CliResult>;
  /** The environment helm runs in (its private home, the cluster's kubeconfig). */
  readonly helmEnv: NodeJS.ProcessEnv;
  readonly namespace: string;
}

/** The revisions of a release, as `helm history` lists them; [] when there is none. */
export async function releaseRevisions(tools: HandTools, release: string): Promise<number[]> {
  const r = await helm(["history", release, "-n", tools.namespace, "-o", "json"], tools.helmEnv);
  if (r.code !== 0) return [];
  return (JSON.parse(r.stdout) as { revision: number }[]).map((h) => h.revision);
}

/**
 * The edits both tests make: `helm rollback cfg 1`, `helm uninstall other`, the ConfigMap
 * `settings` edited (`color: red`), the ConfigMap `extra` deleted, the Secret `creds` given
 * `password: handPassword`, and a label another manager sets on the Deployment `web` (not drift).
 */
export async function editByHand(tools: HandTools, handPassword: string): Promise<void> {
  const ns = tools.namespace;
  const ok = async (r: Promise<CliResult>, what: string): Promise<void> => {
    const done = await r;
    assert.equal(done.code, 0, `${what}: ${done.stderr}`);
  };
  await ok(helm(["rollback", "cfg", "1", "-n", ns], tools.helmEnv), "helm rollback");
  await ok(helm(["uninstall", "other", "-n", ns], tools.helmEnv), "helm uninstall");
  const kubectl = (args: string[]): Promise<void> => ok(tools.kubectl(args), `kubectl ${args.join(" ")}`);
  await kubectl(["patch", "configmap", "settings", "-n", ns, "--type", "merge", "-p", '{"data":{"color":"red"}}']);
  await kubectl(["delete", "configmap", "extra", "-n", ns]);
  await kubectl([
    "patch",
    "secret",
    "creds",
    "-n",
    ns,
    "--type",
    "merge",
    "-p",
    JSON.stringify({ stringData: { password: handPassword } }),
  ]);
  await kubectl(["label", "deployment", "web", "-n", ns, "team=payments"]);
}
