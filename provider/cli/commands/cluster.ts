/** Commands that talk to a cluster: plan (online, --diff, --live), apply (--repair), destroy, status, unlock. */
import { EXIT_CODES, formatDiagnostic, invalidInput } from "../../errors.js";
import type { RunResult } from "../../engine/run.js";
import type { DriftReport, DriftStep } from "../../engine/drift.js";
import {
  applyOperation,
  clusterIdentityOperation,
  clusterReadyOperation,
  destroyOperation,
  driftOperation,
  planOperation,
  repairRun,
  recordLocation,
  statusOperation,
  unlockOperation,
  withSession,
  type ClusterIdentity,
  type ClusterWait,
  type PlanReport,
  type Session,
  type SessionOptions,
  type StatusReport,
} from "../../operations.js";
import type { ClusterTarget, KubeClient } from "../../kube/client.js";
import { loadKubeconfig, selectContext } from "../../kube/kubeconfig.js";
import { waitForClusterMs, waitSetting } from "../../inputs.js";
import { describeLease, describeLeaseHolder } from "../../state/lease.js";
import { formatDuration } from "../../dsl/duration.js";
import type { LoadedSpec, StateSettings } from "../../dsl/loaded.js";
import {
  CLUSTER_OPTIONS,
  COMMON_OPTIONS,
  outputFormat,
  parseCommandArgs,
  parsePositiveInt,
  type OutputFormat,
} from "../args.js";
import { table, type Output } from "../output.js";
import { createProgressView, runJson, summaryTable } from "../progress.js";
import { loadFromFlags } from "../spec-input.js";
import {
  exitCodeOf,
  failureSummary,
  jsonRequested,
  NOT_TRIED,
  outcomeOfError,
  outcomeOfRun,
  type Reach,
} from "../outcome-summary.js";

const OPTIONS = { ...COMMON_OPTIONS, ...CLUSTER_OPTIONS } as const;

/** The cluster flags, checked: which cluster, and how long to wait for it first (`--wait-for-cluster`). */
interface ClusterFlags {
  readonly kubeconfig?: string | undefined;
  readonly context?: string | undefined;
  readonly wait: ClusterWait | undefined;
}

/**
 * What a command learns of its cluster, kept for its summary also when it fails: whether its
 * session opened, and through the client, whether the API server ever answered.
 */
class CommandCluster {
  private state: Reach["session"] = NOT_TRIED.session;
  private kube: KubeClient | undefined;

  /** The session is being opened: until it is, a failure is the kubeconfig's. */
  opening(): void {
    this.state = "failed";
  }

  opened(session: Session): void {
    this.state = "open";
    this.kube = session.kube;
  }

  get reach(): Reach {
    return { session: this.state, answered: this.kube?.answered ?? false, lastNotUp: this.kube?.lastNotUp };
  }

  /** The API server URL: the client's, else the kubeconfig's as far as it loads (nothing is asked of any cluster); null when it does not. */
  server(flags: Pick<ClusterFlags, "kubeconfig" | "context"> | undefined): string | null {
    if (this.kube !== undefined) return this.kube.server;
    if (flags === undefined) return null;
    try {
      return selectContext(loadKubeconfig(targetOf(flags)), flags.context).server;
    } catch {
      return null;
    }
  }
}

function targetOf(flags: Pick<ClusterFlags, "kubeconfig" | "context">): ClusterTarget {
  return {
    ...(flags.kubeconfig !== undefined ? { kubeconfigPath: flags.kubeconfig } : {}),
    ...(flags.context !== undefined ? { context: flags.context } : {}),
  };
}

/**
 * The command's one session: its kubeconfig read once, one client (an exec plugin runs once),
 * and its redactor, which masks the kubeconfig's credentials, is the one the CLI prints through.
 * With `--wait-for-cluster` it first waits for the API server; without it, an API server that is
 * not up fails the command naming the flag.
 */
function inCommandSession<T>(
  command: string,
  spec: LoadedSpec | undefined,
  flags: ClusterFlags,
  out: Output,
  cluster: CommandCluster,
  fn: (session: Session) => Promise<T>,
  extra: Pick<SessionOptions, "record"> & { signal?: AbortSignal } = {},
): Promise<T> {
  cluster.opening();
  const { signal, ...options } = extra;
  return withSession(spec, { target: targetOf(flags), journal: "spec", ...options }, async (session) => {
    cluster.opened(session);
    out.redactor = session.redactor;
    if (flags.wait === undefined)
      session.kube.notUpAdvice = `if the cluster is still starting, run khook ${command} with --wait-for-cluster 10m to wait until it answers`;
    else await clusterReadyOperation(session, flags.wait, signal);
    return fn(session);
  });
}

function parallelismFlag(values: { parallelism?: string | undefined }, command: string): number {
  return parsePositiveInt(values.parallelism, "--parallelism", command, 8);
}

/**
 * Ctrl-C / SIGTERM: the first one stops starting steps, cancels running attempts and lets
 * the journal be written; a second one exits at once.
 */
function interruptible(out: Output): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let count = 0;
  const onSignal = (name: NodeJS.Signals): void => {
    count++;
    if (count === 1) {
      out.err(
        `\n${name}: stopping — no new steps start, running steps are cancelled, and the state record is written. Press Ctrl-C again to exit at once.`,
      );
      controller.abort(new Error(`interrupted by ${name}`));
    } else {
      out.err(`${name} again: exiting now; the state record may miss the steps that were running.`);
      process.exit(EXIT_CODES.cancelled);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

function printWarnings(spec: LoadedSpec, out: Output): void {
  for (const w of spec.warnings) out.err(formatDiagnostic(w, spec.file));
}

/**
 * The cluster flags, checked before anything is read. `--wait-for-cluster 10m`: how long to wait
 * for the API server's /readyz first; `0s`, like no flag, does not wait (provider/inputs.ts).
 */
function clusterFlags(
  values: { kubeconfig?: string | undefined; context?: string | undefined; "wait-for-cluster"?: string | undefined },
  command: string,
  out: Output,
): ClusterFlags {
  const text = values["wait-for-cluster"];
  let wait: ClusterWait | undefined;
  if (text !== undefined) {
    const parsed = waitForClusterMs(text, "--wait-for-cluster");
    if ("problem" in parsed) throw invalidInput(`khook ${command}: ${parsed.problem}`, []);
    if (parsed.ms > 0) wait = { timeoutMs: parsed.ms, say: (line) => out.err(line), setting: waitSetting("cli", text) };
  }
  return { kubeconfig: values.kubeconfig, context: values.context, wait };
}

/**
 * A command with `-o json` that ended in an error still prints its one JSON document on stdout (and
 * the error on stderr, for people): the outcome, the error, the problems of invalid input, and
 * what is known of the cluster. Returns the exit status.
 */
function printFailure(
  out: Output,
  e: unknown,
  fields: {
    head: Record<string, unknown>;
    /** After the error, before `cluster`. */
    tail?: Record<string, unknown>;
    cluster: CommandCluster;
    flags: ClusterFlags | undefined;
    cancelled: boolean;
  },
): number {
  const outcome = fields.cancelled ? "cancelled" : outcomeOfError(e, fields.cluster.reach);
  const { document, exitCode } = failureSummary(e, outcome, {
    head: fields.head,
    ...(fields.tail !== undefined ? { tail: fields.tail } : {}),
    cluster: { server: fields.cluster.server(fields.flags), kubeSystemUid: null },
  });
  out.json(document);
  out.err(`Error: ${e instanceof Error ? e.message : String(e)}`);
  return exitCode;
}

/** Which cluster answered, for the summary: read when the API server has answered; not asked again when it never did. */
function identityOf(session: Session): Promise<ClusterIdentity> {
  if (!session.kube.answered && session.kube.lastNotUp !== undefined)
    return Promise.resolve({ server: session.kube.server, kubeSystemUid: null });
  return clusterIdentityOperation({ session });
}

/** `plan --live` exits 3 when a step drifted and `--exit-code` asks (0: none did; 1 and 2 keep their meanings). */
export const DRIFTED_EXIT_CODE = 3;

/** The spec's record, which the live check compares with: without one, invalid input (nothing is recorded as completed). */
function requireRecord(spec: LoadedSpec, command: string): void {
  if (recordLocation(spec, "spec") !== undefined) return;
  throw invalidInput(
    `khook ${command}: ${spec.file ?? "the spec"} has no enabled state: block, so khook keeps no record of which steps completed, and there is nothing to compare with the cluster. Add "state: {}" to journal runs.`,
    [],
  );
}

const DRIFT_WORDS: Record<DriftStep["state"], string> = {
  "in-sync": "in sync",
  drifted: "drifted",
  "not-checkable": "not checkable",
};

function driftTable(report: DriftReport): string {
  return table(
    ["LEVEL", "STEP", "TYPE", "DRIFT", "REASON"],
    report.steps.map((s) => [String(s.level), s.name, s.type, DRIFT_WORDS[s.state], s.reason.split("\n")[0] ?? ""]),
  );
}

function driftCounts(report: DriftReport): Record<DriftStep["state"], number> {
  const counts = { "in-sync": 0, drifted: 0, "not-checkable": 0 };
  for (const s of report.steps) counts[s.state]++;
  return counts;
}

function driftJson(report: DriftReport): Record<string, unknown>[] {
  return report.steps.map((s) => ({
    name: s.name,
    type: s.type,
    level: s.level,
    drift: s.state,
    reason: s.reason,
    ...(s.drifted !== undefined ? { drifted: s.drifted } : {}),
    decidedBy: s.decidedBy,
  }));
}

/**
 * `khook plan --live`: one line per step, in sync / drifted (naming what) / not checkable (and
 * why), for every step the state record calls completed. Read-only.
 */
export async function livePlanCommand(argv: string[], out: Output): Promise<number> {
  const cluster = new CommandCluster();
  let format: OutputFormat = jsonRequested(argv) ? "json" : "text";
  let spec: LoadedSpec | undefined;
  let flags: ClusterFlags | undefined;
  let found: { report: DriftReport; exitOnDrift: boolean; identity: ClusterIdentity | undefined };
  const t0 = Date.now();
  try {
    const { values } = parseCommandArgs("plan", argv, {
      ...OPTIONS,
      live: { type: "boolean" },
      "exit-code": { type: "boolean" },
    });
    format = outputFormat(values.output, "plan");
    flags = clusterFlags(values, "plan", out);
    const loaded = (spec = await loadFromFlags("plan", values, out));
    requireRecord(loaded, "plan --live");
    printWarnings(loaded, out);
    const parallelism = parallelismFlag(values, "plan");
    found = await inCommandSession("plan", loaded, flags, out, cluster, async (session) => ({
      report: await driftOperation(loaded, { session, parallelism }),
      exitOnDrift: values["exit-code"] === true,
      identity: format === "json" ? await identityOf(session) : undefined,
    }));
  } catch (e) {
    if (format !== "json") throw e;
    const head = { name: spec?.name ?? null, specHash: spec?.specHash ?? null, live: true, steps: [] };
    return printFailure(out, e, { head, cluster, flags, cancelled: false });
  }
  const { report, identity } = found;
  const counts = driftCounts(report);
  const exitCode = found.exitOnDrift && counts.drifted > 0 ? DRIFTED_EXIT_CODE : 0;
  if (format === "json") {
    out.json({
      name: spec.name,
      specHash: spec.specHash,
      live: true,
      steps: driftJson(report),
      counts,
      lists: report.lists,
      outcome: "ok",
      cluster: identity,
      exitCode,
    });
    return exitCode;
  }
  out.out(driftTable(report));
  out.out(
    `\nLive check: ${counts.drifted} drifted, ${counts["in-sync"]} in sync, ${counts["not-checkable"]} not checkable (${report.lists} list request${report.lists === 1 ? "" : "s"}, ${formatDuration(Date.now() - t0)}). Nothing was changed.`,
  );
  if (counts.drifted > 0)
    out.out(
      `Run khook apply --repair -f ${spec.file ?? "<spec>"} to re-run the drifted step${counts.drifted === 1 ? "" : "s"} and nothing else.`,
    );
  return exitCode;
}

async function runCommand(name: "apply" | "destroy", argv: string[], out: Output): Promise<number> {
  const startedAt = Date.now();
  const cluster = new CommandCluster();
  let format: OutputFormat = jsonRequested(argv) ? "json" : "text";
  let spec: LoadedSpec | undefined;
  let flags: ClusterFlags | undefined;
  let interrupt: { signal: AbortSignal; dispose(): void } | undefined;
  let result: RunResult;
  /** Which cluster the run talked to (-o json), read in the command's session. */
  let identity: ClusterIdentity | undefined;
  try {
    const { values } = parseCommandArgs(name, argv, {
      ...OPTIONS,
      ...(name === "apply" ? { repair: { type: "boolean" } } : {}),
    } as typeof OPTIONS & { repair: { type: "boolean" } });
    format = outputFormat(values.output, name);
    flags = clusterFlags(values, name, out);
    spec = await loadFromFlags(name, values, out);
    if (values.repair === true) return await repairCommand(values, out, { spec, flags, cluster });
    printWarnings(spec, out);
    const parallelism = parallelismFlag(values, name);
    const loaded = spec;
    // With -o json, stdout holds only the JSON; progress still goes to stderr, one line per event.
    const view = createProgressView(
      out,
      loaded.steps,
      name === "apply" ? "Applying" : "Destroying",
      format === "json" ? "lines" : "auto",
    );
    const stop = (interrupt = interruptible(out));
    try {
      const run = name === "apply" ? applyOperation : destroyOperation;
      ({ result, identity } = await inCommandSession(
        name,
        loaded,
        flags,
        out,
        cluster,
        async (session) => {
          const ran = await run(loaded, {
            session,
            followMoves: true,
            parallelism,
            signal: stop.signal,
            onEvent: (e) => view.onEvent(e),
          });
          return { result: ran, identity: format === "json" ? await identityOf(session) : undefined };
        },
        { signal: stop.signal },
      ));
    } finally {
      view.finish();
      stop.dispose();
    }
  } catch (e) {
    if (format !== "json") throw e;
    const cancelled = interrupt?.signal.aborted === true;
    return printFailure(out, e, {
      head: { spec: spec?.name ?? null, mode: name, status: cancelled ? "cancelled" : "failed" },
      // Nothing ran: no step has a result.
      tail: { durationMs: Date.now() - startedAt, steps: [] },
      cluster,
      flags,
      cancelled,
    });
  }
  const outcome = outcomeOfRun(result, cluster.reach);
  if (format === "json") {
    const { spec: specName, mode, status, ...rest } = runJson(result, spec.name);
    out.json({ spec: specName, mode, status, outcome, ...rest, cluster: identity, exitCode: exitCodeOf(outcome) });
    // stdout is the JSON; the record's problem (e.g. a lease held by another run) still reaches the person on stderr.
    if (result.journalError !== undefined) out.err(`Error: ${result.journalError}`);
  } else {
    out.out(summaryTable(result));
    const counts = { ok: 0, failed: 0, skipped: 0 };
    for (const s of result.steps) counts[s.status]++;
    const headline =
      result.status === "succeeded"
        ? `${name === "apply" ? "Apply" : "Destroy"} complete`
        : result.status === "cancelled"
          ? `${name === "apply" ? "Apply" : "Destroy"} interrupted`
          : `${name === "apply" ? "Apply" : "Destroy"} failed`;
    out.out(
      `\n${headline} in ${formatDuration(result.durationMs)}: ${counts.ok} ok, ${counts.failed} failed, ${counts.skipped} skipped.`,
    );
    // Each journal error is a sentence naming the state record (cannot write it, locked by another run, ...).
    if (result.journalError !== undefined) out.err(`Error: ${result.journalError}`);
    const failed = result.steps.filter((s) => s.status === "failed");
    for (const s of failed) out.err(`Error: step ${s.name} failed: ${s.error ?? s.reason}`);
    if (result.status === "cancelled")
      out.err(
        `The run was interrupted. Run khook ${name} again to ${spec.state ? "resume from the state record" : "continue"}.`,
      );
    else if (failed.length > 0 && name === "apply")
      out.err(
        spec.state
          ? "Fix the cause and run khook apply again: steps that succeeded resume from the state record."
          : "Fix the cause and run khook apply again.",
      );
  }
  return exitCodeOf(outcome);
}

type ApplyFlags = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>["values"];

/**
 * `khook apply --repair`: the live check (printed as `plan --live` prints it), then a run of
 * exactly the drifted steps, in the DAG's order; every other step is left as it is. Nothing
 * drifted: nothing runs and the record is not written.
 */
async function repairCommand(
  values: ApplyFlags,
  out: Output,
  { spec, flags, cluster: commandCluster }: { spec: LoadedSpec; flags: ClusterFlags; cluster: CommandCluster },
): Promise<number> {
  const format = outputFormat(values.output, "apply");
  requireRecord(spec, "apply --repair");
  printWarnings(spec, out);
  const parallelism = parallelismFlag(values, "apply");
  const interrupt = interruptible(out);
  let drift: DriftReport;
  let result: RunResult | undefined;
  let cluster: ClusterIdentity | undefined;
  try {
    ({ drift, result, cluster } = await inCommandSession(
      "apply",
      spec,
      flags,
      out,
      commandCluster,
      async (session) => {
        const checked = await driftOperation(spec, { session, parallelism, signal: interrupt.signal });
        if (format !== "json") out.out(driftTable(checked));
        const { rerun, leave } = repairRun(spec, checked);
        if (rerun.size === 0)
          return {
            drift: checked,
            result: undefined,
            cluster: format === "json" ? await identityOf(session) : undefined,
          };
        const repaired = spec.steps.filter((s) => rerun.has(s.name));
        const view = createProgressView(out, repaired, "Repairing", format === "json" ? "lines" : "auto");
        try {
          const ran = await applyOperation(spec, {
            session,
            parallelism,
            signal: interrupt.signal,
            // The progress is the repaired steps': the ones left as they are say nothing.
            onEvent: (e) => {
              if (e.type === "run-started") view.onEvent({ ...e, steps: rerun.size });
              else if (e.type !== "step-finished" || !leave.has(e.result.name)) view.onEvent(e);
            },
            rerun,
            leave,
          });
          return {
            drift: checked,
            result: ran,
            cluster: format === "json" ? await identityOf(session) : undefined,
          };
        } finally {
          view.finish();
        }
      },
      { signal: interrupt.signal },
    ));
  } finally {
    interrupt.dispose();
  }
  const repaired = new Set(drift.steps.filter((s) => s.state === "drifted").map((s) => s.name));
  const outcome =
    result === undefined ? "ok" : outcomeOfRun(result, { session: "open", answered: true, lastNotUp: undefined });
  const exitCode = exitCodeOf(outcome);
  if (format === "json") {
    out.json({
      ...(result !== undefined
        ? runJson({ ...result, steps: result.steps.filter((s) => repaired.has(s.name)) }, spec.name)
        : { spec: spec.name, mode: "apply", status: "succeeded", durationMs: 0, steps: [] }),
      outcome,
      repair: { repaired: [...repaired], drift: driftJson(drift) },
      cluster,
      exitCode,
    });
    if (result?.journalError !== undefined) out.err(`Error: ${result.journalError}`);
    return exitCode;
  }
  if (result === undefined) {
    out.out("\nNothing drifted: nothing to repair. Nothing was changed.");
    return 0;
  }
  const ran = result.steps.filter((s) => repaired.has(s.name));
  out.out(`\n${summaryTable({ ...result, steps: ran })}`);
  const ok = ran.filter((s) => s.status === "ok").length;
  const failed = ran.filter((s) => s.status === "failed");
  const headline =
    result.status === "succeeded"
      ? "Repair complete"
      : result.status === "cancelled"
        ? "Repair interrupted"
        : "Repair failed";
  out.out(
    `\n${headline} in ${formatDuration(result.durationMs)}: ${ok} of ${ran.length} drifted step${ran.length === 1 ? "" : "s"} re-run, ${failed.length} failed; the other steps were left as they are.`,
  );
  if (result.journalError !== undefined) out.err(`Error: ${result.journalError}`);
  for (const s of failed) out.err(`Error: step ${s.name} failed: ${s.error ?? s.reason}`);
  return exitCode;
}

export async function onlinePlanCommand(argv: string[], out: Output): Promise<number> {
  const cluster = new CommandCluster();
  let format: OutputFormat = jsonRequested(argv) ? "json" : "text";
  let spec: LoadedSpec | undefined;
  let flags: ClusterFlags | undefined;
  let found: { report: PlanReport; diff: boolean; identity: ClusterIdentity | undefined };
  try {
    const { values } = parseCommandArgs("plan", argv, {
      ...OPTIONS,
      offline: { type: "boolean" },
      diff: { type: "boolean" },
    });
    format = outputFormat(values.output, "plan");
    flags = clusterFlags(values, "plan", out);
    const loaded = (spec = await loadFromFlags("plan", values, out));
    printWarnings(loaded, out);
    const parallelism = parallelismFlag(values, "plan");
    const diff = values.diff === true;
    found = await inCommandSession("plan", loaded, flags, out, cluster, async (session) => ({
      report: await planOperation(loaded, { session, parallelism, diff }),
      diff,
      identity: format === "json" ? await identityOf(session) : undefined,
    }));
  } catch (e) {
    if (format !== "json") throw e;
    const head = { name: spec?.name ?? null, specHash: spec?.specHash ?? null, offline: false, steps: [] };
    return printFailure(out, e, { head, cluster, flags, cancelled: false });
  }
  const { report, identity } = found;
  if (format === "json") {
    out.json({
      name: spec.name,
      specHash: spec.specHash,
      offline: false,
      steps: report.steps.map((s) => ({
        ...s,
        ...(report.diffs.has(s.name) ? { diff: report.diffs.get(s.name) } : {}),
      })),
      outcome: "ok",
      cluster: identity,
      exitCode: 0,
    });
    return 0;
  }
  out.out(
    table(
      ["LEVEL", "STEP", "TYPE", "ACTION", "REASON"],
      report.steps.map((s) => [String(s.level), s.name, s.type, s.action, s.reason.split("\n")[0] ?? ""]),
    ),
  );
  if (found.diff) {
    for (const s of report.steps) {
      const d = report.diffs.get(s.name);
      if (d !== undefined && d !== "") out.out(`\n# ${s.name}\n${d.trimEnd()}`);
    }
  }
  const changing = report.steps.filter((s) => s.action !== "skip" && s.action !== "no-op").length;
  out.out(
    `\nPlan: ${changing} step${changing === 1 ? "" : "s"} to run, ${report.steps.length - changing} to skip or no-op. Nothing was changed.`,
  );
  return 0;
}

export async function statusCommand(argv: string[], out: Output): Promise<number> {
  const cluster = new CommandCluster();
  let format: OutputFormat = jsonRequested(argv) ? "json" : "text";
  let spec: LoadedSpec | undefined;
  let location: StateSettings | undefined;
  let flags: ClusterFlags | undefined;
  let found: { report: StatusReport | undefined; identity: ClusterIdentity | undefined };
  try {
    const { values } = parseCommandArgs("status", argv, OPTIONS);
    format = outputFormat(values.output, "status");
    flags = clusterFlags(values, "status", out);
    spec = await loadFromFlags("status", values, out);
    location = recordLocation(spec, "spec");
    if (location === undefined) {
      throw invalidInput(
        `khook status: ${spec.file ?? "the spec"} has no enabled state: block, so khook keeps no record of its runs. Add "state: {}" to journal runs.`,
        [],
      );
    }
    parallelismFlag(values, "status"); // a cluster flag: checked by every cluster command, used by those that run steps
    const loaded = spec;
    found = await inCommandSession("status", loaded, flags, out, cluster, async (session) => ({
      report: await statusOperation(loaded, { session }),
      identity: format === "json" ? await identityOf(session) : undefined,
    }));
  } catch (e) {
    if (format !== "json") throw e;
    const head = {
      spec: spec?.name ?? null,
      namespace: location?.namespace ?? null,
      name: location?.name ?? null,
      record: null,
    };
    return printFailure(out, e, { head, cluster, flags, cancelled: false });
  }
  const { report, identity } = found;
  if (report === undefined) {
    if (format === "json")
      out.json({
        spec: spec.name,
        namespace: location.namespace,
        name: location.name,
        record: null,
        outcome: "ok",
        cluster: identity,
        exitCode: 0,
      });
    else
      out.out(
        `No state record secret/${location.name} in namespace ${location.namespace}: khook apply has not run with this spec (or destroy removed the record).`,
      );
    return 0;
  }
  const s = report.summary;
  if (format === "json") {
    out.json({
      namespace: report.namespace,
      name: report.name,
      ...s,
      ...(report.leaseHolder !== undefined ? { leaseHolder: report.leaseHolder.state } : {}),
      outcome: "ok",
      cluster: identity,
      exitCode: 0,
    });
    return 0;
  }
  out.out(`Record:   secret/${report.name} in namespace ${report.namespace}`);
  out.out(`Spec:     ${s.spec}${s.specChanged ? " (the spec changed since the last run)" : ""}`);
  out.out(
    `Last run: ${s.command}, ${s.runStatus}, started ${s.startedAt}${s.finishedAt ? `, finished ${s.finishedAt}` : ""} (khook ${s.khookVersion})`,
  );
  if (s.lease !== undefined && report.leaseHolder !== undefined)
    out.out(`Locked:   by ${describeLeaseHolder(s.lease, report.leaseHolder)}`);
  if (s.movedTo !== undefined)
    out.out(`Left:     for ${s.movedTo}: no step resumes from this record, and khook destroy removes it`);
  if (s.repair !== undefined) out.out(`Repaired: ${s.repair.steps.join(", ")} (apply --repair started ${s.repair.at})`);
  out.out("");
  out.out(
    table(
      ["STEP", "STATUS", "ATTEMPTS", "TRANSIENT RETRIES", "DURATION", "NEXT APPLY", "REASON"],
      s.steps.map((x) => [
        x.name,
        x.status,
        String(x.attempts),
        String(x.transientRetries),
        formatDuration(x.durationMs),
        x.inSpec === false ? "not in spec" : x.resumable ? "resume" : x.changed ? "re-run (changed)" : "re-run",
        (x.error ?? x.reason).split("\n")[0] ?? "",
      ]),
    ),
  );
  if (s.unrecorded.length > 0) out.out(`\nNot yet recorded: ${s.unrecorded.join(", ")}`);
  return 0;
}

/**
 * `khook unlock -f spec.yaml` (or `--record NAMESPACE/NAME`, for a record without a spec file at
 * hand, e.g. a Pulumi resource's): clears the lease on the state record and says whose it was.
 * The record's steps are kept. The run that held it, if it still runs, stops writing the record.
 */
export async function unlockCommand(argv: string[], out: Output): Promise<number> {
  const { values } = parseCommandArgs("unlock", argv, { ...OPTIONS, record: { type: "string" } });
  const format = outputFormat(values.output, "unlock");
  let location: { namespace: string; name: string };
  let spec: LoadedSpec | undefined;
  if (values.record !== undefined) {
    if (values.filename !== undefined)
      throw invalidInput("khook unlock: pass either -f FILE or --record NAMESPACE/NAME, not both", []);
    const m = /^([a-z0-9][a-z0-9-]*)\/([a-z0-9][a-z0-9.-]*)$/.exec(values.record);
    if (m === null)
      throw invalidInput(
        `khook unlock: --record expects NAMESPACE/NAME of the state record Secret, got "${values.record}"`,
        [],
      );
    location = { namespace: m[1]!, name: m[2]! };
  } else {
    spec = await loadFromFlags("unlock", values, out);
    const settings = recordLocation(spec, "spec");
    if (settings === undefined) {
      throw invalidInput(
        `khook unlock: ${spec.file ?? "the spec"} has no enabled state: block, so there is no state record and nothing to unlock.`,
        [],
      );
    }
    location = settings;
  }
  parallelismFlag(values, "unlock"); // checked, as by every cluster command
  const flags = clusterFlags(values, "unlock", out);
  const report = await inCommandSession(
    "unlock",
    spec,
    flags,
    out,
    new CommandCluster(),
    (session) => unlockOperation(location, spec?.name, { session }),
    { record: location },
  );
  if (format === "json") {
    out.json({ namespace: report.namespace, name: report.name, cleared: report.cleared ?? null });
    return 0;
  }
  const where = `secret/${report.name} in namespace ${report.namespace}`;
  if (report.cleared === undefined) out.out(`The state record ${where} is not locked; nothing to do.`);
  else {
    const live = Date.parse(report.cleared.renewDeadline) > Date.now();
    out.out(
      `Unlocked the state record ${where}: the lease was held by ${describeLease(report.cleared)}, renewed until ${report.cleared.renewDeadline}.`,
    );
    if (live)
      out.err(
        `warning: that lease had not expired; if that run is still going, it stops writing the record at its next write and fails.`,
      );
  }
  return 0;
}

export const clusterCommands = {
  apply: (argv: string[], out: Output): Promise<number> => runCommand("apply", argv, out),
  destroy: (argv: string[], out: Output): Promise<number> => runCommand("destroy", argv, out),
  status: statusCommand,
  unlock: unlockCommand,
};
