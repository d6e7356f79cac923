/** Commands that never touch a cluster: validate, plan --offline, graph, schema, version. */
import { formatDiagnostic, invalidInput, isKhookError, type Diagnostic } from "../../errors.js";
import { firesIn } from "../../dsl/hooks.js";
import { HOOK_EVENTS, lifecycleOf } from "../../dsl/hook-events.js";
import { schemaText } from "../../dsl/schema.js";
import { shortHash } from "../../dsl/keyed-hash.js";
import { KHOOK_VERSION } from "../../version.js";
import { DEFAULT_PARALLELISM } from "../../engine/run-types.js";
import { COMMON_OPTIONS, outputFormat, parseCommandArgs, parsePositiveInt } from "../args.js";
import { graphJson, renderGraph } from "../graph.js";
import { table, type Output } from "../output.js";
import { loadFromFlags } from "../spec-input.js";
import type * as PlanModule from "../../engine/plan.js";
import type * as VersionsModule from "../../tools/versions.js";

export async function validateCommand(argv: string[], out: Output): Promise<number> {
  const { values } = parseCommandArgs("validate", argv, COMMON_OPTIONS);
  const format = outputFormat(values.output, "validate");
  let spec;
  try {
    spec = await loadFromFlags("validate", values, out);
  } catch (e) {
    if (format !== "json" || !isKhookError(e) || e.code !== "invalid-input") throw e;
    // -o json: the problems as JSON on stdout, like the valid case, so tools parse one shape.
    const problems: readonly Diagnostic[] =
      e.diagnostics.length > 0 ? e.diagnostics : [{ severity: "error", path: "", message: e.message }];
    out.json({ valid: false, problems });
    return e.exitCode;
  }
  if (format === "json") {
    out.json({ valid: true, name: spec.name, steps: spec.steps.length, warnings: spec.warnings });
  } else {
    for (const w of spec.warnings) out.err(formatDiagnostic(w, spec.file));
    out.out(
      `${spec.file ?? "spec"} is valid: Khook "${spec.name}" with ${spec.steps.length} step${spec.steps.length === 1 ? "" : "s"} in ${spec.levels.length} level${spec.levels.length === 1 ? "" : "s"}`,
    );
  }
  return 0;
}

/** `khook plan --offline`; the online plan lives in the cluster commands. */
export async function offlinePlanCommand(
  argv: string[],
  out: Output,
  values: Parameters<typeof loadFromFlags>[1] & { output?: string | undefined; parallelism?: string | undefined },
): Promise<number> {
  void argv;
  const format = outputFormat(values.output, "plan");
  // Taken by plan (online) and so by plan --offline: validated the same, though nothing runs here.
  parsePositiveInt(values.parallelism, "--parallelism", "plan", DEFAULT_PARALLELISM);
  const spec = await loadFromFlags("plan", values, out);
  // Required here: the planner brings the engine's step runner, the record and the kube error
  // types, which validate and graph never use.
  const { planOffline } = require("../../engine/plan.js") as typeof PlanModule;
  const plan = planOffline(spec);
  if (format === "json") {
    out.json({ name: spec.name, specHash: spec.specHash, offline: true, steps: plan });
    return 0;
  }
  for (const w of spec.warnings) out.err(formatDiagnostic(w, spec.file));
  out.out(
    table(
      ["LEVEL", "STEP", "TYPE", "ACTION", "HASH", "TARGET / REASON"],
      plan.map((p) => [
        String(p.level),
        p.name,
        p.type,
        p.action,
        shortHash(p.inputHash, 12),
        p.action === "skip" ? p.reason : p.summary,
      ]),
    ),
  );
  const withHooks = plan.filter((p) => p.hooks.length > 0);
  if (withHooks.length > 0) {
    out.out("\nHooks, in the order they run:");
    for (const p of withHooks) {
      out.out(`  ${p.name}:`);
      for (const h of p.hooks) out.out(`    ${h}`);
    }
    if (spec.hooks.some((h) => !firesIn(h, "plan")))
      out.out(
        `  (plan never calls webhooks; plan --diff runs ${HOOK_EVENTS.filter((e) => lifecycleOf(e).runs.includes("plan")).join(", ")} functions)`,
      );
  }
  const skipped = plan.filter((p) => p.action === "skip").length;
  out.out(
    `\nPlan (offline): ${plan.length - skipped} to run, ${skipped} excluded by when:. Live state is not consulted; run khook plan without --offline for install/upgrade decisions.`,
  );
  return 0;
}

export async function graphCommand(argv: string[], out: Output): Promise<number> {
  const { values } = parseCommandArgs("graph", argv, { ...COMMON_OPTIONS, format: { type: "string" } });
  const json = outputFormat(values.output, "graph") === "json";
  if (json && values.format !== undefined)
    throw invalidInput(`khook graph: -o json and --format ${values.format} both choose the output; give one`, []);
  const format = values.format ?? "mermaid";
  if (format !== "mermaid" && format !== "dot")
    throw invalidInput(`khook graph: unknown --format "${format}"; use mermaid or dot (or -o json)`, []);
  const spec = await loadFromFlags("graph", values, out);
  if (json) out.json(graphJson(spec));
  else out.out(renderGraph(spec, format));
  return 0;
}

export async function schemaCommand(argv: string[], out: Output): Promise<number> {
  parseCommandArgs("schema", argv, { help: { type: "boolean", short: "h" } });
  out.verbatim(schemaText());
  return 0;
}

export async function versionCommand(argv: string[], out: Output): Promise<number> {
  const { values } = parseCommandArgs("version", argv, { output: { type: "string", short: "o" } });
  const format = outputFormat(values.output, "version");
  // Required here: it runs child processes, which no other offline command loads.
  const { toolVersions } = require("../../tools/versions.js") as typeof VersionsModule;
  const tools = await toolVersions(out.streams.env);
  if (format === "json") {
    out.json({
      version: KHOOK_VERSION,
      apiVersion: "khook.io/v1",
      node: process.version,
      tools: Object.fromEntries(tools.map(({ tool, ...rest }) => [tool, rest])),
    });
  } else {
    out.out(`khook ${KHOOK_VERSION} (khook.io/v1, node ${process.version})`);
    for (const t of tools)
      out.out(t.version !== undefined ? `${t.tool} ${t.version} (${t.path})` : `${t.tool}: ${t.problem}`);
  }
  return 0;
}
