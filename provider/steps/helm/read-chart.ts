/**
 * The chart of a helm: step, read where it lives: a local chart's files, or helm (credentials
 * registered in the session's private config). What a source means is pure
 * (provider/helm/chart.ts); this module does the reading.
 */
import fs from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { executionError } from "../../errors.js";
import { ociHost, pinnedChart, remoteChartRef, type ChartRef, type ChartSource } from "../../helm/chart.js";
import { archiveMayHaveHooks, fileMayHaveHooks } from "../../helm/chart-hooks.js";
import type { ChartMeta } from "../../helm/release.js";
import type { HelmSession } from "../../tools/helm.js";

/** How helm finds the chart, registering credentials in the session's private config. */
export async function chartRef(session: HelmSession, source: ChartSource, baseDir: string): Promise<ChartRef> {
  if (source.form === "local") {
    const abs = path.resolve(baseDir, source.path);
    if (!fs.existsSync(abs)) throw executionError(`chart ${source.path} does not exist (${abs})`);
    return { chart: abs, flags: [] };
  }
  let privateRepo: string | undefined;
  if (source.form === "repo" && source.credentials !== undefined)
    privateRepo = await session.addRepository(source.repoUrl, source.credentials);
  if (source.form === "oci" && source.credentials !== undefined)
    session.addRegistry(ociHost(source.reference), source.credentials);
  return remoteChartRef(source, { privateRepo, ociTls: process.env["KHOOK_HELM_OCI_TLS"] === "1" });
}

/** The chart (name, version) this step would deploy; resolves "latest", ranges and digests through helm. */
export async function desiredChart(
  session: HelmSession,
  source: ChartSource,
  ref: ChartRef,
  baseDir: string,
): Promise<ChartMeta> {
  const pinned = pinnedChart(source);
  if (pinned !== undefined) return pinned;
  if (source.form === "local" && !source.packaged) {
    const file = path.join(path.resolve(baseDir, source.path), "Chart.yaml");
    try {
      const meta = parseYaml(fs.readFileSync(file, "utf8")) as { name?: unknown; version?: unknown } | null;
      if (
        meta &&
        typeof meta.name === "string" &&
        (typeof meta.version === "string" || typeof meta.version === "number")
      ) {
        return { name: meta.name, version: String(meta.version) };
      }
    } catch {
      // fall through: helm says what is wrong with the chart
    }
  }
  return session.showChart(ref);
}

/** A chart directory or a packaged chart (.tgz): true unless it certainly has no hook (provider/helm/chart-hooks.ts). */
export function chartMayHaveHooks(chartPath: string): boolean {
  try {
    return fs.statSync(chartPath).isDirectory()
      ? directoryMayHaveHooks(chartPath)
      : archiveMayHaveHooks(fs.readFileSync(chartPath));
  } catch {
    return true;
  }
}

function directoryMayHaveHooks(dir: string): boolean {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (directoryMayHaveHooks(file)) return true;
    } else if (entry.isFile()) {
      if (fileMayHaveHooks(entry.name, fs.readFileSync(file))) return true;
    } else {
      return true; // a symlink or device: helm may follow it, khook does not guess
    }
  }
  return false;
}
