/**
 * One report for a fleet run by the CLI (the Indexed Job, the Argo fan-out or the CI matrix of
 * docs/fleet.md): it reads the `khook apply -o json` summary each cluster's run left, and nothing
 * else. Every outcome leaves one (a cluster that did not answer, no usable kubeconfig, invalid
 * input, a failed step, success), so the clusters that failed are in the report as surely as the
 * others, with which server they were and why, without parsing anyone's stderr.
 *
 *   node dist/examples/fleet/summaries.js DIR [--json FILE]
 *
 * DIR holds one summary per cluster, named after it: `prod-a.json`, or `summary-prod-a/summary.json`
 * (the CI matrix's artifacts, downloaded); a file that is not a summary is reported as such.
 * Exit status: 0 when every cluster is ok, 2 when invalid input failed one (a retry cannot help),
 * else 1 when any failed.
 */
import fs from "node:fs";
import path from "node:path";
import { textTable } from "./table.js";

/** The fields of `khook apply -o json` a fleet report reads (docs/cli.md). */
export interface RunSummary {
  spec: string | null;
  status: string;
  outcome: string;
  exitCode: number;
  durationMs?: number;
  error?: string;
  journalError?: string;
  steps: { name: string; status: string; error?: string }[];
  cluster: { server: string | null; kubeSystemUid: string | null };
}

/** One line of the report. */
export interface ClusterLine {
  cluster: string;
  outcome: string;
  exitCode: number;
  server: string | null;
  kubeSystemUid: string | null;
  ok: number;
  failed: number;
  skipped: number;
  /** Why it failed, first line (the summary's error, the record's, or the first failed step's). */
  error?: string;
}

/** The summaries under `dir`, by cluster name: `NAME.json`, or `summary-NAME/summary.json`. */
export function summaryFiles(dir: string): { cluster: string; file: string }[] {
  const out: { cluster: string; file: string }[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.endsWith(".json")) out.push({ cluster: entry.name.slice(0, -5), file: full });
    else if (entry.isDirectory() && fs.existsSync(path.join(full, "summary.json")))
      out.push({ cluster: entry.name.replace(/^summary-/, ""), file: path.join(full, "summary.json") });
  }
  return out;
}

const firstLine = (s: string): string => s.split("\n")[0]!.trim();

/** A report line from one summary's text; a text that is not a summary is a line that says so. */
export function lineOf(cluster: string, text: string): ClusterLine {
  let s: RunSummary;
  try {
    s = JSON.parse(text) as RunSummary;
    if (typeof s.outcome !== "string" || typeof s.exitCode !== "number") throw new Error("no outcome");
  } catch {
    return {
      cluster,
      outcome: "no-summary",
      exitCode: 1,
      server: null,
      kubeSystemUid: null,
      ok: 0,
      failed: 0,
      skipped: 0,
      error: "the run left no khook summary (was it run with -o json?)",
    };
  }
  const count = (status: string) => s.steps.filter((x) => x.status === status).length;
  const failedStep = s.steps.find((x) => x.status === "failed");
  const why =
    s.error ?? s.journalError ?? (failedStep ? `step ${failedStep.name}: ${failedStep.error ?? "failed"}` : undefined);
  return {
    cluster,
    outcome: s.outcome,
    exitCode: s.exitCode,
    server: s.cluster.server,
    kubeSystemUid: s.cluster.kubeSystemUid,
    ok: count("ok"),
    failed: count("failed"),
    skipped: count("skipped"),
    ...(why !== undefined ? { error: firstLine(why) } : {}),
  };
}

export function reportTable(lines: readonly ClusterLine[]): string {
  const head = ["CLUSTER", "OUTCOME", "EXIT", "SERVER", "OK", "FAILED", "SKIPPED", "ERROR"];
  const cells = lines.map((l) => [
    l.cluster,
    l.outcome,
    String(l.exitCode),
    l.server ?? "-",
    String(l.ok),
    String(l.failed),
    String(l.skipped),
    l.error ?? "",
  ]);
  return textTable(head, cells);
}

function main(argv: string[]): number {
  const dir = argv[0];
  const jsonAt = argv.indexOf("--json");
  const json = jsonAt >= 0 ? argv[jsonAt + 1] : undefined;
  if (dir === undefined || dir.startsWith("--") || (jsonAt >= 0 && json === undefined)) {
    process.stderr.write("usage: summaries DIR [--json FILE]\n");
    return 2;
  }
  const lines = summaryFiles(dir).map(({ cluster, file }) => lineOf(cluster, fs.readFileSync(file, "utf8")));
  const failed = lines.filter((l) => l.outcome !== "ok");
  process.stdout.write(
    `${reportTable(lines)}\n\n${lines.length - failed.length} of ${lines.length} clusters ok${failed.length > 0 ? `; failed: ${failed.map((l) => `${l.cluster} (${l.outcome})`).join(", ")}` : ""}\n`,
  );
  if (json !== undefined) fs.writeFileSync(json, `${JSON.stringify({ clusters: lines }, null, 2)}\n`);
  if (failed.length === 0) return 0;
  return failed.some((l) => l.outcome === "invalid-input") ? 2 : 1;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
