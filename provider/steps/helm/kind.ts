/**
 * `helm:` steps: install or upgrade a chart release. What the loader needs of the kind: its
 * defaults (a release is named after its step), rules, summary, files and credentials; its
 * executor (executor.ts) is required on first use, and definition.ts defines its block. Rules:
 *
 *   chart-source              the chart-source rules (bare name/repo, oci tag/digest/version, local path)
 *   chart-auth                auth: and URL userinfo are exclusive; userinfo is a full user:pass pair
 *   helm-release-name         a step name standing for the release fits Helm's 53 characters
 *   values-file-shape         a local valuesFrom file is one YAML mapping
 *   source-url, local-path, local-file-exists  (dsl/rules.ts)
 */
import fs from "node:fs";
import path from "node:path";
import { SPEC_DEFAULTS, withDefaults } from "../../dsl/defaults.js";
import type { FileReference, KindRuleContext, Pointer, Report } from "../../dsl/step-kind.js";
import { checkLocalPath, checkUrl } from "../../dsl/rules.js";
import { parseValuesDocument } from "../../dsl/values-file.js";
import { classifyChart, describeChartSource, describeChartText, splitUserinfo } from "../../helm/chart.js";
import type { Kind } from "../contract.js";
import type { HelmAction, HelmNormalized } from "./definition.js";
import type * as Executor from "./executor.js";

/** The defaults of a `helm:` block: applied once at load, left out of the hash, and the schema's `default`s. */
const HELM_DEFAULTS = {
  namespace: SPEC_DEFAULTS.namespace,
  createNamespace: false,
  atomic: false,
  wait: false,
} as const satisfies Partial<HelmAction>;

/** Helm caps release names at 53 characters; a step name (up to 63) is the release name unless release: is set. */
const HELM_RELEASE_NAME_MAX = 53;

function rules(helm: HelmAction, at: Pointer, ctx: KindRuleContext, report: Report): void {
  const stepName = ctx.step.name;
  if (helm.release === undefined && stepName !== undefined && stepName.length > HELM_RELEASE_NAME_MAX) {
    report(
      ctx.step.at("name"),
      `step name "${stepName}" (${stepName.length} characters) is also this helm step's release name (release: defaults to the step name), and Helm allows at most ${HELM_RELEASE_NAME_MAX}: shorten the step name or set release:`,
      "helm-release-name",
    );
  }
  const { problems, source } = classifyChart(helm);
  for (const p of problems) {
    const rule = p.field === "auth" || /credentials/.test(p.message) ? "chart-auth" : "chart-source";
    report(at(p.field === "auth" && helm.auth === undefined ? "chart" : p.field), p.message, rule);
  }
  if (source?.form === "local") checkLocalPath(helm.chart, at("chart"), ctx, report, "directory-or-file");
  helm.valuesFrom?.forEach((v, j) => {
    if ("url" in v) checkUrl(v.url, at("valuesFrom", j, "url"), report);
    if ("file" in v) {
      const resolved = checkLocalPath(v.file, at("valuesFrom", j, "file"), ctx, report, "file", false);
      const parsed =
        resolved === undefined ? undefined : parseValuesDocument(fs.readFileSync(resolved, "utf8"), v.file);
      if (parsed?.ok === false) report(at("valuesFrom", j, "file"), parsed.message, "values-file-shape");
    }
  });
}

function files(helm: HelmNormalized, baseDir: string): FileReference[] {
  const refs: FileReference[] = [];
  helm.valuesFrom?.forEach((v, i) => {
    if ("file" in v)
      refs.push({
        role: "values",
        written: v.file,
        resolved: path.resolve(baseDir, v.file),
        field: `/valuesFrom/${i}/file`,
      });
  });
  const chart = classifyChart(helm).source;
  if (chart?.form === "local")
    refs.push({ role: "chart", written: chart.path, resolved: path.resolve(baseDir, chart.path), field: "/chart" });
  return refs;
}

/** In the hash, the release left to its default and the chart's inline version sugar (`name:1.2.3`, `oci://...:1.2.3`) spell nothing new. */
function canonical(block: Record<string, unknown>, stepName: string): void {
  if (block["release"] === stepName) delete block["release"];
  const chart = String(block["chart"]);
  const classified = classifyChart({
    chart,
    repo: block["repo"] as string | undefined,
    version: block["version"] as string | undefined,
  });
  const source = classified.source;
  if (source?.form === "repo" && chart.includes(":")) {
    block["chart"] = source.name;
    if (source.version !== undefined) block["version"] = source.version;
  } else if (source?.form === "oci" && source.tag !== undefined && source.version === undefined) {
    // `ref:tag@digest` -> chart `ref@digest`, version `tag`: the digest is what gets pulled, so it stays in.
    const digest = source.digest !== undefined ? `@${source.digest}` : "";
    const withTag = chart.slice(0, chart.length - digest.length);
    block["chart"] = `${withTag.slice(0, withTag.length - source.tag.length - 1)}${digest}`;
    block["version"] = source.tag;
  }
}

/** The auth: password and any password in the chart's, the repository's or a values URL's userinfo. */
function credentials(block: unknown): string[] {
  if (block === null || typeof block !== "object") return [];
  const helm = block as Record<string, unknown>;
  const out: string[] = [];
  const auth = helm["auth"] as Record<string, unknown> | null | undefined;
  if (typeof auth?.["password"] === "string") out.push(auth["password"]);
  const urls = [helm["repo"], helm["chart"]];
  if (Array.isArray(helm["valuesFrom"]))
    for (const v of helm["valuesFrom"] as unknown[]) urls.push((v as { url?: unknown } | null)?.url);
  for (const u of urls) {
    const password = typeof u === "string" ? splitUserinfo(u).password : undefined;
    if (password) out.push(password);
  }
  return out;
}

export const helmKind: Kind<"helm", HelmAction, HelmNormalized> = {
  name: "helm",
  defaults: { helmAction: HELM_DEFAULTS },
  normalize: (helm, stepName) => withDefaults({ ...HELM_DEFAULTS, release: stepName }, helm),
  defaultsOf: () => HELM_DEFAULTS,
  canonical,
  summary: (_name, a) => {
    const { source } = classifyChart(a);
    const chart = source ? describeChartSource(source) : describeChartText(a.chart);
    return `release ${a.release} in ${a.namespace}: ${chart}`;
  },
  rules,
  files,
  localFileKeys: ["file", "chart"],
  hookPoints: { render: true, send: true, "before-teardown": true },
  credentials,
  tools: ["helm"],
  get executor() {
    return (require("./executor.js") as typeof Executor).helmExecutor;
  },
};
