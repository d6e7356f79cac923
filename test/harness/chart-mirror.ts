/**
 * The lab's chart mirror, as a closed network runs one: the real charts the toolchain fetched
 * (lab-charts.ts) served on loopback by a helm repository over HTTP (index.yaml and the packaged
 * charts), and, when asked, pushed to the toolchain's OCI registry too. A spec names the mirror
 * through a variable whose default is the public repository
 * (`repo: ${CHART_MIRROR:-https://charts.jetstack.io}`), so the same file runs online and here
 * (docs/air-gapped.md).
 */
import fs from "node:fs";
import path from "node:path";
import {
  startHttpServer,
  startOciRegistry,
  type BasicAuth,
  type OciRegistryFixture,
  type RecordedRequest,
} from "./fixtures";
import { labChartsDir, toolPath } from "./toolchain";
import { run } from "./util";

/** The variable a spec names its chart repository by (default: the chart's public repository). */
export const CHART_MIRROR_VAR = "CHART_MIRROR";

export interface ChartMirror {
  /** The helm repository's URL (`helm repo add mirror <url>`; a step's `repo:`). */
  repoUrl: string;
  /** Chart files served, e.g. `cert-manager-v1.21.2.tgz`. */
  charts: string[];
  requests: RecordedRequest[];
  /** The OCI registry holding the same charts at `oci://<host>/charts/<chart>:<version>`, when asked for. */
  oci?: OciRegistryFixture;
  close(): Promise<void>;
}

/** Serves the lab's charts from a loopback helm repository (and an OCI registry, given its credentials). */
export async function startChartMirror(opts: { oci?: BasicAuth } = {}): Promise<ChartMirror> {
  const dir = path.join(labChartsDir(), "charts");
  const files: Record<string, Buffer> = {};
  const charts: string[] = [];
  for (const f of fs.readdirSync(dir)) {
    if (f === "index.yaml" || f.endsWith(".tgz")) files[`/${f}`] = fs.readFileSync(path.join(dir, f));
    if (f.endsWith(".tgz")) charts.push(f);
  }
  const repo = await startHttpServer(files);
  const oci = opts.oci
    ? await startOciRegistry({ ...opts.oci, chartsDir: dir }).catch(async (e: Error) => {
        await repo.close();
        throw e;
      })
    : undefined;
  return {
    repoUrl: repo.url,
    charts: charts.sort(),
    requests: repo.requests,
    ...(oci ? { oci } : {}),
    close: async () => {
      await Promise.all([repo.close(), oci?.close()]);
    },
  };
}

/**
 * Takes cert-manager out of a cluster, as a test or benchmark that installs it afresh needs it
 * gone: the release; its namespace, while the CRDs still serve the objects in it (deleted after
 * them, the namespace controller meets a group discovery no longer knows and finishes only at its
 * next resync, minutes later); the CRDs its chart keeps on uninstall (`helm.sh/resource-policy:
 * keep`); and the leader-election leases (an uninstall removes the RBAC before the pods stop, so
 * they cannot release them, and a new install would wait out their 60 s).
 */
export async function removeCertManager(kubeconfig: string): Promise<void> {
  const kubectl = (args: string[]) => run(toolPath("kubectl"), ["--kubeconfig", kubeconfig, ...args]);
  await run(toolPath("helm"), [
    "--kubeconfig",
    kubeconfig,
    "uninstall",
    "cert-manager",
    "-n",
    "cert-manager",
    "--ignore-not-found",
    "--wait",
  ]);
  await kubectl(["delete", "namespace", "cert-manager", "--ignore-not-found", "--timeout=120s"]);
  await kubectl(["delete", "crd", "-l", "app.kubernetes.io/name=cert-manager", "--ignore-not-found"]);
  await kubectl([
    "delete",
    "lease",
    "-n",
    "kube-system",
    "cert-manager-controller",
    "cert-manager-cainjector-leader-election",
    "--ignore-not-found",
  ]);
}
