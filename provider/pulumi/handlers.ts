/**
 * The dynamic provider's handlers. The serialized provider object (sdk/provider.ts)
 * is a thin loader whose every method does `require("khook/provider/pulumi/handlers")`
 * and delegates here, so the engine is resolved from the installed package at
 * run time and never frozen into the state's `__provider`.
 *
 * - check / diff: pure and offline (they run in every preview).
 * - create / update: apply with the journal on by default; a failed run rejects
 *   with a partial state, so the next `pulumi up` calls update and resumes.
 * - delete: destroy, which removes the record when it fully succeeds.
 * - read (`pulumi refresh`): the record's per-step outcomes.
 *
 * Credentials come from the `kubeconfig` / `context` inputs, else the stack
 * config (`khook:kubeconfig`, `khook:context`, through `configure`), else the
 * ambient environment (KUBECONFIG, ~/.kube/config, in-cluster). They live in
 * this module's memory only.
 *
 * The cluster-facing code (operations, the kube client) is required lazily, so
 * a preview never loads it; with a warm summary memo (summary.ts) a preview
 * does not even load the spec loader.
 */
// First, so the modules below and the ones required lazily come from V8's compile cache.
import "../compile-cache.js";
import * as path from "node:path";
import type { LoadedSpec } from "../spec/loaded.js";
import { parseDuration, formatDuration } from "../spec/duration.js";
import type { Redactor } from "../redact.js";
import { check as checkInputs, type CheckResult } from "./check.js";
import { diff as diffInputs, type DiffResult } from "./diff.js";
import { journalLocation } from "./location.js";
import { failureMessage, refreshedOutputs, runOutputs } from "./outputs.js";
import { progressPrinter, type LineSink } from "./progress.js";
import { isKubeconfigContent, normalizeInputs, PROVIDER_KEY, type KhookInputs, type KhookOutputs } from "./wire.js";

// ---- the operations layer the CLI shares (provider/operations.ts), loaded lazily ----

type OperationsModule = typeof import("../operations.js");
export type Operations = Pick<OperationsModule, "applyOperation" | "destroyOperation" | "statusOperation">;
export type ClusterTarget = import("../operations.js").ClusterTarget;

let operationsOverride: Operations | undefined;

function operations(): Operations {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return operationsOverride ?? (require("../operations.js") as Operations);
}

/** Tests swap in fakes for the cluster-facing layer, and capture the progress lines. */
export function setTestHooks(hooks: { operations?: Operations; sink?: LineSink } = {}): void {
  operationsOverride = hooks.operations;
  sink = hooks.sink ?? defaultSink;
}

const defaultSink: LineSink = (line) => console.log(line);
let sink: LineSink = defaultSink;

// ---- configure ----

interface ConfigureRequest {
  config: { get(key: string): string | undefined };
}

let configured: { kubeconfig?: string; context?: string } = {};

export async function configure(req: ConfigureRequest): Promise<void> {
  const kubeconfig = req.config.get("khook:kubeconfig");
  const context = req.config.get("khook:context");
  configured = {
    ...(kubeconfig !== undefined && kubeconfig !== "" ? { kubeconfig } : {}),
    ...(context !== undefined && context !== "" ? { context } : {}),
  };
}

// ---- check / diff: pure ----

export async function check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<CheckResult> {
  return checkInputs(olds ?? {}, news ?? {});
}

export async function diff(_id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<DiffResult> {
  return diffInputs(olds ?? {}, news ?? {});
}

// ---- create / update / delete / read ----

/** What a dynamic provider rejects with to store a partial state (the next `up` calls update). */
export class PartialFailure extends Error {
  readonly id: string;
  readonly properties: Record<string, unknown>;
  readonly reasons: string[];

  constructor(id: string, properties: Record<string, unknown>, message: string) {
    super(message);
    this.name = "PartialFailure";
    this.id = id;
    this.properties = properties;
    this.reasons = message.split("\n");
  }
}

export async function create(news: Record<string, unknown>): Promise<{ id: string; outs: KhookOutputs }> {
  const { outs, id } = await applyRun(undefined, news);
  return { id, outs };
}

export async function update(id: string, _olds: Record<string, unknown>, news: Record<string, unknown>): Promise<{ outs: KhookOutputs }> {
  const { outs } = await applyRun(id, news);
  return { outs };
}

async function applyRun(existingId: string | undefined, news: Record<string, unknown>): Promise<{ id: string; outs: KhookOutputs }> {
  const { inputs, spec, name } = prepare(news);
  const ops = operations();
  const location = journalLocation(spec);
  const id = existingId ?? resourceId(spec, location);
  const say = (text: string): void => sink(`[${name}] ${spec.redactor.redact(text)}`);
  for (const w of spec.warnings) say(`warning: ${w.path ? `${w.path}: ` : ""}${w.message}`);
  if (location === undefined) {
    say("warning: state.enabled is false, so the journal is off: every update re-runs every step, and a failed run starts over instead of resuming");
  }
  const { signal, timeoutMs } = deadline(inputs);
  const result = await ops.applyOperation(spec, {
    target: target(inputs),
    journal: "default-on",
    onEvent: progressPrinter(name, (s) => spec.redactor.redact(s), sink),
    ...(inputs.parallelism !== undefined ? { parallelism: inputs.parallelism } : {}),
    ...(signal !== undefined ? { signal } : {}),
  });
  const outs = runOutputs(inputs, spec, result, location);
  if (result.status !== "succeeded") {
    let message = failureMessage(name, spec, result, "apply");
    if (result.status === "cancelled" && signal?.aborted && timeoutMs !== undefined) message += `\nthe overall timeout (${formatDuration(timeoutMs)}) ran out`;
    if (location !== undefined) message += "\nthe journal keeps the completed steps: fix the cause and run `pulumi up` again to resume";
    throw new PartialFailure(id, { ...outs, [PROVIDER_KEY]: news[PROVIDER_KEY] }, message);
  }
  return { id, outs };
}

export async function del(_id: string, props: Record<string, unknown>): Promise<void> {
  const raw = props ?? {};
  if (typeof raw.spec !== "string") return; // nothing was ever applied from this state
  const { inputs, spec, name } = prepare(raw);
  const { signal, timeoutMs } = deadline(inputs);
  const result = await operations().destroyOperation(spec, {
    target: target(inputs),
    journal: "default-on",
    onEvent: progressPrinter(name, (s) => spec.redactor.redact(s), sink),
    ...(inputs.parallelism !== undefined ? { parallelism: inputs.parallelism } : {}),
    ...(signal !== undefined ? { signal } : {}),
  });
  if (result.status !== "succeeded") {
    let message = failureMessage(name, spec, result, "destroy");
    if (result.status === "cancelled" && signal?.aborted && timeoutMs !== undefined) message += `\nthe overall timeout (${formatDuration(timeoutMs)}) ran out`;
    throw new Error(message);
  }
}
export { del as delete };

export async function read(id: string, props: Record<string, unknown>): Promise<{ id: string; props: Record<string, unknown> }> {
  const raw = props ?? {};
  if (typeof raw.spec !== "string") return { id, props: raw };
  const { inputs, spec } = prepare(raw);
  const location = journalLocation(spec);
  if (location === undefined) return { id, props: raw }; // no journal: nothing to read
  const ops = operations();
  const report = await ops.statusOperation(spec, { target: target(inputs), journal: "default-on" });
  const previous = { ...raw } as unknown as KhookOutputs;
  delete (previous as unknown as Record<string, unknown>)[PROVIDER_KEY];
  return { id, props: refreshedOutputs(previous, spec, report, location) as unknown as Record<string, unknown> };
}

// ---- helpers ----

function prepare(raw: Record<string, unknown>): { inputs: KhookInputs; spec: LoadedSpec; name: string } {
  const bag = { ...raw };
  delete bag[PROVIDER_KEY];
  const { inputs, problems } = normalizeInputs(bag);
  if (problems.length > 0) throw new Error(problems.map((p) => `${p.property ? `${p.property}: ` : ""}${p.reason}`).join("\n"));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadFromInputs } = require("./load.js") as typeof import("./load.js");
  const loaded = loadFromInputs(inputs);
  if (!loaded.ok) throw new Error(loaded.message);
  const spec = loaded.spec;
  const kubeconfig = inputs.kubeconfig ?? configured.kubeconfig;
  if (kubeconfig !== undefined && isKubeconfigContent(kubeconfig)) registerKubeconfigSecrets(spec.redactor, kubeconfig);
  return { inputs, spec, name: inputs.resourceName ?? spec.name };
}

export function resourceId(spec: LoadedSpec, location: { namespace: string; name: string } | undefined): string {
  return location ? `${location.namespace}/${location.name}` : spec.name;
}

export function target(inputs: KhookInputs): ClusterTarget {
  const kubeconfig = inputs.kubeconfig ?? configured.kubeconfig;
  const context = inputs.context ?? configured.context;
  return {
    ...(kubeconfig !== undefined ? (isKubeconfigContent(kubeconfig) ? { kubeconfigContent: kubeconfig } : { kubeconfigPath: path.resolve(kubeconfig) }) : {}),
    ...(context !== undefined ? { context } : {}),
  };
}

function deadline(inputs: KhookInputs): { signal?: AbortSignal; timeoutMs?: number } {
  if (inputs.timeout === undefined) return {};
  const ms = parseDuration(inputs.timeout);
  if (ms === undefined || ms <= 0) return {};
  return { signal: AbortSignal.timeout(ms), timeoutMs: ms };
}

/** Credentials inside a kubeconfig are masked in everything khook prints, like KHOOK_SECRET_* values. */
export function registerKubeconfigSecrets(redactor: Pick<Redactor, "add">, content: string): void {
  let doc: unknown;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    doc = (require("yaml") as typeof import("yaml")).parse(content);
  } catch {
    return;
  }
  const users = (doc as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) return;
  const visit = (v: unknown, key: string): void => {
    if (typeof v === "string") {
      if (/token|password|key|secret|certificate-data/i.test(key) && v.length >= 8) redactor.add(v);
    } else if (Array.isArray(v)) v.forEach((x) => visit(x, key));
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) visit(x, k);
  };
  for (const u of users) visit((u as { user?: unknown } | null)?.user, "");
}
