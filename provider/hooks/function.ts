/**
 * KRM functions, exec form (the KRM functions spec): khook writes a ResourceList as YAML to
 * the function's stdin and reads a ResourceList (YAML or JSON) from its stdout.
 *
 * The function runs through provider/tools (the only code that spawns) with:
 * - an environment of PATH and HOME only (HOME is its private directory): no
 *   KHOOK_SECRET_*, no KUBECONFIG, nothing else of khook's environment;
 * - a private, empty temporary directory (0700) as its working directory,
 *   removed afterwards;
 * - its own process group, ended whole when it exits or times out: no child of a
 *   function outlives its step, and none can hold khook open through a pipe;
 * - the hook's timeout, and a cap on its output;
 * - its stderr redacted, and shown only when it fails.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { formatDuration } from "../dsl/duration.js";
import { yamlLibrary } from "../dsl/yaml.js";
import type { LoadedFunctionHandler } from "../dsl/hooks.js";
import type { Redactor } from "../redact.js";
import { lastLines, runTool } from "../tools/exec.js";

/** A function's stdout may not exceed this. */
export const FUNCTION_OUTPUT_CAP_BYTES = 32 * 1024 * 1024;
/** stderr kept for messages (the last bytes). */
const FUNCTION_STDERR_CAP_BYTES = 64 * 1024;

export type Severity = "error" | "warning" | "info";

/** One entry of a ResourceList's `results`. */
export interface FunctionResult {
  readonly message: string;
  readonly severity: Severity;
  readonly resourceRef?: { apiVersion?: string; kind?: string; name?: string; namespace?: string };
  readonly field?: { path?: string; currentValue?: unknown; proposedValue?: unknown };
  readonly file?: { path?: string; index?: number };
}

export interface FunctionRun {
  /** The output items, or undefined when the function failed. */
  readonly items: Record<string, unknown>[] | undefined;
  readonly results: readonly FunctionResult[];
  /** Why the function failed (redacted), or undefined. */
  readonly failure?: string;
}

/**
 * The function's input, as KRM orchestrators write it: a ResourceList
 * in YAML, written in YAML's JSON form. Every YAML parser reads it, and so does a
 * function with no YAML library at all (a shell script with jq, a Python script
 * with only its standard library); it is also the fastest form to write.
 */
export function resourceListYaml(
  items: readonly Record<string, unknown>[],
  functionConfig: unknown,
  contextJson: string,
): string {
  return `${JSON.stringify({
    apiVersion: "config.kubernetes.io/v1",
    kind: "ResourceList",
    // The khook context (Helm's event design's) rides on the ResourceList's own metadata, where KRM tooling ignores it.
    metadata: { annotations: { "khook.io/context": contextJson } },
    items,
    ...(functionConfig !== undefined ? { functionConfig } : {}),
  })}\n`;
}

/** Parses a function's stdout: a ResourceList in YAML or JSON. */
export function parseResourceList(
  text: string,
): { items: Record<string, unknown>[]; results: FunctionResult[] } | { problem: string } {
  let doc: unknown;
  try {
    // JSON first: it is what most functions write back, and far faster to read.
    doc = JSON.parse(text);
  } catch {
    try {
      doc = yamlLibrary().parse(text, { prettyErrors: false, maxAliasCount: 100 });
    } catch (e) {
      return { problem: `its output is not YAML or JSON: ${(e as Error).message.split("\n")[0]}` };
    }
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc))
    return { problem: "its output is not a ResourceList (expected a mapping with kind: ResourceList)" };
  const list = doc as Record<string, unknown>;
  if (list.kind !== "ResourceList")
    return { problem: `its output has kind ${JSON.stringify(list.kind)}, not ResourceList` };
  if (!Array.isArray(list.items)) return { problem: "its output ResourceList has no items list" };
  const items: Record<string, unknown>[] = [];
  for (const [i, item] of list.items.entries()) {
    if (
      item === null ||
      typeof item !== "object" ||
      Array.isArray(item) ||
      typeof (item as Record<string, unknown>).kind !== "string"
    ) {
      return { problem: `its output item ${i + 1} is not a Kubernetes object` };
    }
    items.push(item as Record<string, unknown>);
  }
  const results: FunctionResult[] = [];
  if (Array.isArray(list.results)) {
    for (const r of list.results) {
      if (r === null || typeof r !== "object") continue;
      const x = r as Record<string, unknown>;
      const severity = x.severity === "warning" || x.severity === "info" ? x.severity : "error";
      results.push({
        message: String(x.message ?? ""),
        severity,
        ...(isRecord(x.resourceRef) ? { resourceRef: x.resourceRef as FunctionResult["resourceRef"] } : {}),
        ...(isRecord(x.field) ? { field: x.field as FunctionResult["field"] } : {}),
        ...(isRecord(x.file) ? { file: x.file as FunctionResult["file"] } : {}),
      });
    }
  }
  return { items, results };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Runs one function over `items`. Never throws for the function's own failures: they are values. */
export async function runFunction(
  fn: LoadedFunctionHandler,
  items: readonly Record<string, unknown>[],
  contextJson: string,
  opts: { redactor: Redactor; signal: AbortSignal },
): Promise<FunctionRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-fn-"));
  fs.chmodSync(dir, 0o700);
  const timeout = AbortSignal.timeout(Math.max(1, fn.timeoutMs));
  try {
    const r = await runTool(fn.path, {
      args: [],
      redactor: opts.redactor,
      cleanEnv: true,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: dir },
      cwd: dir,
      stdin: resourceListYaml(items, fn.config, contextJson),
      signal: AbortSignal.any([opts.signal, timeout]),
      maxStdoutBytes: FUNCTION_OUTPUT_CAP_BYTES + 1,
      maxStderrBytes: FUNCTION_STDERR_CAP_BYTES,
      killGraceMs: 1000,
      keepRawStdout: true,
      processGroup: true,
    });
    const stderr = r.stderr.trim() !== "" ? `:\n${lastLines(r.stderr)}` : "";
    if (r.aborted) {
      if (opts.signal.aborted)
        return { items: undefined, results: [], failure: "stopped (the step was cancelled or timed out)" };
      return {
        items: undefined,
        results: [],
        failure: `did not finish within its timeout of ${formatDuration(fn.timeoutMs)}${stderr}`,
      };
    }
    if (r.spawnError)
      return { items: undefined, results: [], failure: `could not start ${fn.exec}: ${r.spawnError.message}` };
    if (Buffer.byteLength(r.rawStdout ?? "") > FUNCTION_OUTPUT_CAP_BYTES) {
      return {
        items: undefined,
        results: [],
        failure: `wrote more than ${FUNCTION_OUTPUT_CAP_BYTES / (1024 * 1024)} MiB to stdout`,
      };
    }
    // Results are read even from a failing function: a validator reports through them and exits 1.
    const parsed = (r.rawStdout ?? "").trim() === "" ? undefined : parseResourceList(r.rawStdout ?? "");
    const results =
      parsed !== undefined && !("problem" in parsed) ? parsed.results.map((x) => redactResult(x, opts.redactor)) : [];
    if (!r.ok) {
      const how = r.exitCode !== null ? `exit code ${r.exitCode}` : `signal ${r.exitSignal ?? "unknown"}`;
      return { items: undefined, results, failure: `failed (${how})${stderr}` };
    }
    if (parsed === undefined)
      return {
        items: undefined,
        results: [],
        failure: `wrote nothing to stdout (a function must write the ResourceList back)${stderr}`,
      };
    if ("problem" in parsed) return { items: undefined, results: [], failure: `${parsed.problem}${stderr}` };
    return { items: parsed.items, results };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function redactResult(r: FunctionResult, redactor: Redactor): FunctionResult {
  return redactor.redactValue(r);
}
