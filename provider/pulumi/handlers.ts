/**
 * The Pulumi resource's handlers (check, diff, create, update, delete, read), shared by the dynamic
 * resource and the native provider. The serialized dynamic provider (sdk/provider.ts) requires this
 * module at run time and delegates, so the engine is never frozen into the state's `__provider`.
 * Each call that reaches the cluster opens one Session for all its operations; the cluster-facing
 * code is required lazily, so a preview never loads it (with a warm summary memo, summary.ts, not
 * even the spec loader). Read with `refresh: live` also checks every completed step against the
 * cluster (the `drift` output, which diff shows and update repairs). Credentials: `target` and
 * CredentialPrecedence; ownership: record-owner/.
 */
// First, so the modules below and the ones required lazily come from V8's compile cache.
import "../compile-cache.js";
import path from "node:path";
import type { LoadedSpec } from "../dsl/loaded.js";
import { parseDuration, formatDuration } from "../dsl/duration.js";
import { waitSetting } from "../inputs.js";
import type { LoadedKubeconfig } from "../kube/kubeconfig.js";
import { checkSpec, type CheckResult } from "./check.js";
import { diff as diffInputs, type DiffResult } from "./diff.js";
import { cancellation, installCancellation } from "./cancel.js";
import { locationText, recordLocation, type RecordLocation } from "../state/location.js";
import {
  decideClaim,
  decideDelete,
  describeOwnerLocation,
  mintOwner,
  ownStepsNote,
  withMovedFrom,
  type RecordOwner,
  type Replacement,
  type StackIdentity,
} from "./record-owner/owner.js";
import { ownerMarkerLocation } from "./record-owner/marker.js";
import { claimRecord } from "./record-owner/siblings.js";
import { recordKey, recordKeyOf } from "./bundle.js";
import type { SpecSummary } from "./summary.js";
import { driftOutputs, driftedToRepair, failureMessage, refreshedOutputs, runOutputs } from "./outputs.js";
import { hasKeyedSteps, newHashKey } from "../dsl/keyed-hash.js";
import { progressPrinter, type LineSink } from "./progress.js";
import { classifyUnknowns } from "./unknowns.js";
import {
  isKubeconfigContent,
  normalizeInputs,
  PROVIDER_KEY,
  UNKNOWN,
  type KhookInputs,
  type KhookOutputs,
  type PreviewMode,
} from "./wire.js";
import type * as pulumi from "@pulumi/pulumi";
import type * as OperationsExports from "./record-owner/resource-operations.js";
import type * as LoadExports from "./load.js";
import type * as KubeconfigExports from "../kube/kubeconfig.js";

// ---- the operations layer the CLI shares (provider/operations.ts), with the owner's bookkeeping, loaded lazily ----

type OperationsModule = typeof OperationsExports;
export type Operations = Pick<
  OperationsModule,
  | "openSession"
  | "applyOperation"
  | "destroyOperation"
  | "statusOperation"
  | "ownerOperation"
  | "heldRecordOperation"
  | "releaseRecordsOperation"
  | "dropReleasedRecordsOperation"
> &
  Partial<Pick<OperationsModule, "reachOperation" | "planOperation" | "clusterReadyOperation" | "driftOperation">>;
type ClusterTarget = import("../kube/client.js").ClusterTarget;
type Session = import("../session.js").Session;
type RunResult = import("../engine/run-types.js").RunResult;

let operationsOverride: Operations | undefined;

function operations(): Operations {
  return operationsOverride ?? (require("./record-owner/resource-operations.js") as Operations);
}

/** Tests swap in fakes for the cluster-facing layer, and capture the progress lines. */
export function setTestHooks(hooks: { operations?: Operations; sink?: LineSink } = {}): void {
  operationsOverride = hooks.operations;
  checkedRecords.clear();
  createdHere.clear();
  sink = hooks.sink ?? defaultSink;
}

const defaultSink: LineSink = (line) => console.log(line);
let sink: LineSink = defaultSink;

/** Where progress and plan lines go: stdout for the dynamic provider (shown under the stack); the native provider (native.ts) sends them to the engine's log under the resource. */
export function setLineSink(lines: LineSink): void {
  sink = lines;
}

// ---- configure ----

interface ConfigureRequest {
  config: { get(key: string): string | undefined };
}

/** The stack config the provider reads (`khook:*`), through `configure`. */
export interface StackConfig {
  kubeconfig?: string;
  context?: string;
  /** `khook:deleteUnreachable: true`: destroy drops the resource from state when the cluster cannot be reached. */
  deleteUnreachable?: boolean;
  /** `khook:previewMode`: the default for the `previewMode` input. */
  previewMode?: string;
}

let configured: StackConfig = {};

export async function configure(req: ConfigureRequest): Promise<void> {
  const get = (key: string): string | undefined => {
    const v = req.config.get(`khook:${key}`);
    return v === undefined || v === "" ? undefined : v;
  };
  const kubeconfig = get("kubeconfig");
  const context = get("context");
  const deleteUnreachable = get("deleteUnreachable");
  const previewMode = get("previewMode");
  configured = {
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(context !== undefined ? { context } : {}),
    ...(deleteUnreachable !== undefined ? { deleteUnreachable: /^(true|1|yes)$/i.test(deleteUnreachable.trim()) } : {}),
    ...(previewMode !== undefined ? { previewMode } : {}),
  };
}

// ---- check / diff: offline unless online preview is asked for ----

/**
 * The records the resources checked by this provider process use, by stack and record key. The
 * engine starts providers per operation and checks every resource of the program, so a second
 * resource on one record is a sibling, never a rename (whose old resource is not in the program):
 * this is where a program in any language (YAML, Python, the native provider) and a record name
 * built from an Output are told apart, as the TypeScript SDK does at program time.
 */
const checkedRecords = new Map<string, string>();

/**
 * The resources this provider process created, by stack and spec name: where each journals. Pulumi
 * creates a rename's or a replace's new resource before it deletes the old one, in the same process;
 * when the new one journals elsewhere (its `state:` changed too), it has just applied the same spec
 * there, and the old one's delete must leave the cluster alone (decideDelete's `replacement`).
 */
const createdHere = new Map<string, Replacement>();

function createdKey(identity: StackIdentity, specName: string): string {
  return JSON.stringify([identity.project, identity.stack, specName]);
}

export async function check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<CheckResult> {
  const { result, summary } = checkSpec(olds ?? {}, news ?? {});
  const sibling = result.failures.length === 0 ? siblingFailure(result.inputs, summary) : undefined;
  if (sibling !== undefined) return { inputs: result.inputs, failures: [sibling] };
  // A create has no diff call: the plan is printed here. An update prints it from diff, with the reasons.
  const isCreate = olds === undefined || olds === null || Object.keys(olds).length === 0;
  if (isCreate && result.failures.length === 0) printPlan(result.inputs, []);
  return result;
}

export async function diff(
  _id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<DiffResult> {
  const result = diffInputs(olds ?? {}, news ?? {});
  if (result.changes) printPlan(news ?? {}, result.reasons);
  if (previewMode(news ?? {}) === "online") await onlinePreview(news ?? {});
  return result;
}

/** A failure when another resource checked by this process uses the same record. */
function siblingFailure(
  raw: Record<string, unknown>,
  summary: SpecSummary | undefined,
): CheckResult["failures"][number] | undefined {
  const { inputs } = normalizeInputs(raw);
  if (typeof inputs.spec !== "string" || inputs.spec === UNKNOWN || inputs.resourceName === undefined) return undefined;
  // The check loaded the spec (or found it in the memo): its name and journal location are the key.
  // Without a summary (values still unknown) the key is read from the spec text.
  const record =
    summary !== undefined
      ? recordKeyOf(summary.name, summary.location)
      : recordKey(inputs.spec, {
          set: Object.entries(inputs.vars ?? {}),
          varFiles: inputs.varFiles ?? [],
          secretVars: inputs.secretVars ?? {},
          envVars: inputs.envVars ?? {},
        });
  const scoped =
    record === undefined
      ? undefined
      : { ...record, key: `${inputs.pulumiProject ?? ""}/${inputs.pulumiStack ?? ""}/${record.key}` };
  const refused = claimRecord(checkedRecords, inputs.resourceName, scoped);
  return refused === undefined ? undefined : { property: "spec", reason: refused };
}

/** The `previewMode` input, else the stack config `khook:previewMode`, else offline. */
export function previewMode(news: Record<string, unknown>): PreviewMode {
  const chosen = typeof news.previewMode === "string" ? news.previewMode : configured.previewMode;
  return chosen === "online" ? "online" : "offline";
}

/** How long an online preview may take before it falls back to the offline plan. */
const ONLINE_PREVIEW_BOUND_MS = 120_000;

/**
 * The online preview: the CLI's read-only live plan (`khook plan --diff`,
 * operations.planOperation) against the cluster, printed as one line per step
 * with its live action and reason, then each changing step's unified diff,
 * masked by the spec's redactor like the CLI's. It never writes. When the
 * cluster is not known yet or cannot be reached, one warning line says so and
 * the offline plan stands.
 */
async function onlinePreview(news: Record<string, unknown>): Promise<void> {
  const name = typeof news.resourceName === "string" ? news.resourceName : "khook";
  const fallback = (why: string): void => sink(`[${name}] warning: online preview: ${why}; showing the offline plan`);
  const plan = operations().planOperation;
  if (plan === undefined) return fallback("the cluster-facing layer has no live plan");
  const unknown = classifyUnknowns(news);
  if (unknown.opaque.length > 0 || unknown.variables.length > 0)
    return fallback("some of the spec's inputs are not known yet");
  if (unknown.targeting.includes("kubeconfig") || unknown.targeting.includes("context"))
    return fallback("the cluster is not known yet");
  let prepared: ReturnType<typeof prepare>;
  try {
    prepared = prepare(news);
  } catch {
    return; // check reported the problems
  }
  const { inputs, spec, kubeconfigs } = prepared;
  let report: Awaited<ReturnType<NonNullable<Operations["planOperation"]>>>;
  let session: Session | undefined;
  // Until the session is open, the spec's redactor (with the kubeconfig text's credentials, see prepare).
  let redactor = spec.redactor;
  try {
    session = await operations().openSession(spec, {
      target: target(inputs, "inputs-first", kubeconfigs),
      journal: "default-on",
    });
    redactor = session.redactor;
    report = await plan(spec, {
      session,
      diff: true,
      signal: AbortSignal.timeout(ONLINE_PREVIEW_BOUND_MS),
      ...(inputs.parallelism !== undefined ? { parallelism: inputs.parallelism } : {}),
    });
  } catch (e) {
    return fallback(`cannot read the cluster: ${redactor.redact((e as Error).message.split("\n")[0] ?? "")}`);
  } finally {
    session?.close();
  }
  const say = (text: string): void => sink(`[${name}] ${redactor.redact(text)}`);
  for (const s of report.steps) say(`live: ${s.name}: ${s.action} - ${s.reason.split("\n")[0] ?? ""}`);
  for (const s of report.steps) {
    const d = report.diffs.get(s.name);
    if (d === undefined || d.trim() === "") continue;
    say(`diff: ${s.name}:`);
    for (const line of d.trimEnd().split("\n")) say(`  ${line}`);
  }
  const changing = report.steps.filter((s) => s.action !== "skip" && s.action !== "no-op").length;
  say(
    `live plan: ${changing} step${changing === 1 ? "" : "s"} to run, ${report.steps.length - changing} to skip or no-op; nothing was changed`,
  );
}

/** The plan in the preview's output (not only in the `plan` property): why the resource changes, then one line per step. */
function printPlan(inputs: Record<string, unknown>, reasons: readonly string[]): void {
  const name = typeof inputs.resourceName === "string" ? inputs.resourceName : "khook";
  for (const r of reasons) sink(`[${name}] change: ${r}`);
  const plan = inputs.plan;
  if (Array.isArray(plan)) for (const line of plan) sink(`[${name}] plan: ${String(line)}`);
  else if (plan !== undefined) sink(`[${name}] plan: known after the spec's inputs exist`);
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
  const { outs, id } = await applyRun(undefined, news, undefined, undefined);
  return { id, outs };
}

export async function update(
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<{ outs: KhookOutputs }> {
  // A resource created before owners existed gets its token now.
  const token = typeof olds?.ownerToken === "string" ? olds.ownerToken : undefined;
  const hashKey = typeof olds?.hashKey === "string" ? olds.hashKey : undefined;
  // The record the last run used: a `state:` that now names another one leaves it (record-owner/owner.ts).
  const lastRecord =
    typeof olds?.recordNamespace === "string" && typeof olds?.recordName === "string"
      ? locationText({ namespace: olds.recordNamespace, name: olds.recordName })
      : undefined;
  const { outs } = await applyRun(id, news, token, hashKey, lastRecord, olds?.drift);
  return { outs };
}

async function applyRun(
  existingId: string | undefined,
  news: Record<string, unknown>,
  token: string | undefined,
  oldHashKey: string | undefined,
  lastRecord?: string,
  drift?: unknown,
): Promise<{ id: string; outs: KhookOutputs }> {
  const { inputs, spec, name, kubeconfigs } = prepare(news);
  // The steps a live refresh found drifted: run again although the record would resume them.
  const rerun = driftedToRepair(spec, drift);
  // Steps whose inputs hold a secret are hashed under a key the resource keeps in its state (as a secret).
  const hashKey = hasKeyedSteps(spec) ? (oldHashKey ?? newHashKey()) : undefined;
  const where = target(inputs, "inputs-first", kubeconfigs);
  const ops = operations();
  const location = recordLocation(spec, "default-on");
  const id = existingId ?? resourceId(spec, location);
  const say = (text: string): void => sink(`[${name}] ${spec.redactor.redact(text)}`);
  for (const w of spec.warnings) say(`warning: ${w.path ? `${w.path}: ` : ""}${w.message}`);
  if (location === undefined) {
    say(
      "warning: state.enabled is false, so the journal is off: every update re-runs every step, and a failed run starts over instead of resuming",
    );
  }
  let owner: RecordOwner = { ...mintOwner(stackOf(inputs)), ...(token !== undefined ? { token } : {}) };
  // One session for the owner check and the run: one client, one exec-plugin run.
  const session = await ops.openSession(spec, { target: where, journal: "default-on" });
  let result: RunResult;
  let stopReason: () => string;
  try {
    const stop = runSignal(inputs);
    stopReason = stop.stopReason;
    // The owner check reads the cluster: a cluster that is not up yet is waited for before it.
    await awaitCluster(ops, session, inputs, (text) => sink(`[${name}] ${session.redactor.redact(text)}`), stop.signal);
    const current = await ops.ownerOperation(spec, { session });
    const claim = decideClaim(current, owner, ownerLocation(spec, location), name);
    if (!claim.ok) throw new Error(claim.message);
    if (claim.note !== undefined) say(claim.note);
    // A create that takes the record over succeeds its claim (a rename, a replace); an update keeps what its own claim succeeded.
    const succeeds =
      existingId === undefined ? claim.succeeds : current?.token === owner.token ? current.succeeds : undefined;
    if (succeeds !== undefined) owner = { ...owner, succeeds };
    // With the journal off the owner lives in the owner marker, which keeps what it left just as well.
    owner = withMovedFrom(owner, current, lastRecord, location !== undefined ? locationText(location) : "");
    if (rerun.size > 0) say(`repairing the steps a live refresh found drifted: ${[...rerun].join(", ")}`);
    result = await cancellation.track(
      ops.applyOperation(spec, {
        session,
        owner,
        ...(rerun.size > 0 ? { rerun } : {}),
        onEvent: progressPrinter(name, (s) => session.redactor.redact(s), sink),
        ...(inputs.parallelism !== undefined ? { parallelism: inputs.parallelism } : {}),
        ...(hashKey !== undefined ? { hashKey } : {}),
        signal: stop.signal,
      }),
    );
    // A rename's or a replace's new resource: the old one's delete, in this process, must leave what this run applied.
    if (result.status === "succeeded" && existingId === undefined) {
      createdHere.set(createdKey(owner, spec.name), { resourceName: name, where: ownerLocation(spec, location) });
    }
    // The records this resource left are released once a run here succeeds (not before: a failed run resumes here, or its resource is destroyed from there).
    if (result.status === "succeeded" && owner.movedFrom !== undefined) {
      const released = await ops.releaseRecordsOperation(spec, {
        session,
        locations: owner.movedFrom,
        token: owner.token,
        movedTo: ownerLocation(spec, location),
      });
      for (const left of released)
        say(
          `left the state record ${left} for ${ownerLocation(spec, location)}: it is marked as left, and this resource's delete removes it`,
        );
    }
  } finally {
    session.close();
  }
  const outs: KhookOutputs = {
    ...runOutputs(inputs, spec, result, location),
    ownerToken: owner.token,
    ...(hashKey !== undefined ? { hashKey } : {}),
  };
  if (result.status !== "succeeded") {
    let message = failureMessage(name, spec, result, "apply");
    if (result.status === "cancelled") message += stopReason();
    if (location !== undefined)
      message += "\nthe journal keeps the completed steps: fix the cause and run `pulumi up` again to resume";
    throw new PartialFailure(id, { ...outs, [PROVIDER_KEY]: news[PROVIDER_KEY] }, message);
  }
  return { id, outs };
}

export async function del(_id: string, props: Record<string, unknown>): Promise<void> {
  const raw = props ?? {};
  if (typeof raw.spec !== "string") return; // nothing was ever applied from this state
  const { inputs, spec, name, kubeconfigs } = prepare(raw);
  const ops = operations();
  const where = target(inputs, "stack-config-first", kubeconfigs);
  // One session for the reachability probe, the owner check and the teardown: one client, one exec-plugin run.
  const reached = await openReachable(ops, spec, where, inputs, (text) =>
    sink(`[${name}] ${spec.redactor.redact(text)}`),
  );
  if ("unreachable" in reached) {
    const { kind, message } = reached.unreachable;
    const why = spec.redactor.redact(message);
    const escape = deleteUnreachableSource();
    if (kind === "unreachable" && escape !== undefined) {
      sink(
        `[${name}] ${spec.redactor.redact(`warning: the cluster cannot be reached (${why}); ${escape} is true, so this resource is dropped from the stack's state and nothing in the cluster was touched`)}`,
      );
      return;
    }
    throw new Error(destroyBlockedMessage(name, kind, why));
  }
  const session = reached.session;
  const say = (text: string): void => sink(`[${name}] ${session.redactor.redact(text)}`);
  let result: RunResult;
  let stopReason: () => string;
  try {
    const token = typeof raw.ownerToken === "string" ? raw.ownerToken : undefined;
    // One read of the record: who holds it, and which steps it holds with this spec's inputs (for "own-steps").
    const held = await ops.heldRecordOperation(spec, { session });
    const current = held.owner;
    const location = recordLocation(spec, "default-on");
    const where = ownerLocation(spec, location);
    const created = createdHere.get(createdKey(stackOf(inputs), spec.name));
    const replacement = created !== undefined && created.where !== where ? created : undefined;
    const decision = decideDelete(current, token, where, stackOf(inputs), replacement);
    if (decision.teardown === "none") {
      say(decision.note);
      if (decision.dropRecord === true && location !== undefined && token !== undefined && replacement !== undefined) {
        // Its record, and the records it had left on its way there (the replacement's claim does not carry them).
        const here = locationText(location);
        await ops.releaseRecordsOperation(spec, { session, locations: [here], token, movedTo: replacement.where });
        await dropLeftRecords(ops, spec, session, [here, ...(current?.movedFrom ?? [])], token, say);
      }
      return;
    }
    const stop = runSignal(inputs);
    stopReason = stop.stopReason;
    const common = {
      session,
      onEvent: progressPrinter(name, (s: string) => session.redactor.redact(s), sink),
      ...(inputs.parallelism !== undefined ? { parallelism: inputs.parallelism } : {}),
      signal: stop.signal,
    };
    if (decision.teardown === "own-steps") {
      // Another resource of this stack holds the record: tear down what only this one made.
      const shared = held.sameInputSteps;
      const included = spec.steps.filter((s) => s.whenHolds).map((s) => s.name);
      say(
        ownStepsNote(
          where,
          decision.owner,
          included.filter((n) => !shared.has(n)),
          included.filter((n) => shared.has(n)),
        ),
      );
      const leave = new Map(
        [...shared].map(
          (n) =>
            [
              n,
              "left standing: the Khook resource that holds the state record applied this step with the same inputs, and its delete removes it",
            ] as const,
        ),
      );
      result = await cancellation.track(ops.destroyOperation(spec, { ...common, withoutRecord: { leave } }));
      // The owner left this record for another: nobody holds it now, so it goes with this resource.
      if (result.status === "succeeded" && decision.dropRecord && location !== undefined) {
        await dropLeftRecords(ops, spec, session, [locationText(location)], decision.owner.token, say);
      }
    } else {
      result = await cancellation.track(
        ops.destroyOperation(spec, { ...common, owner: current ?? { ...stackOf(inputs), token: token ?? "" } }),
      );
      // The records this resource left on its way here go with it (unless another resource took one up since).
      if (
        result.status === "succeeded" &&
        current?.movedFrom !== undefined &&
        token !== undefined &&
        current.token === token
      ) {
        await dropLeftRecords(ops, spec, session, current.movedFrom, token, say);
      }
    }
  } finally {
    session.close();
  }
  if (result.status !== "succeeded") {
    let message = failureMessage(name, spec, result, "destroy");
    if (result.status === "cancelled") message += stopReason();
    throw new Error(message);
  }
}
export { del as delete };

/**
 * The dynamic provider's methods, which sdk/provider.ts forwards here one by one: held to
 * Pulumi's ResourceProvider, so a handler whose signature drifts from it does not compile.
 */
export const handlers = {
  configure,
  check,
  diff,
  create,
  update,
  delete: del,
  read,
} satisfies Required<pulumi.dynamic.ResourceProvider>;

export async function read(
  id: string,
  props: Record<string, unknown>,
): Promise<{ id: string; props: Record<string, unknown> }> {
  const raw = props ?? {};
  if (typeof raw.spec !== "string") return { id, props: raw };
  const { inputs, spec, kubeconfigs } = prepare(raw);
  const location = recordLocation(spec, "default-on");
  if (location === undefined) return { id, props: raw }; // no journal: nothing to read
  const ops = operations();
  const session = await ops.openSession(spec, {
    target: target(inputs, "stack-config-first", kubeconfigs),
    journal: "default-on",
  });
  let report: Awaited<ReturnType<Operations["statusOperation"]>>;
  let drift: Awaited<ReturnType<NonNullable<Operations["driftOperation"]>>> | undefined;
  try {
    report = await ops.statusOperation(spec, { session });
    // `refresh: live` only: the default refresh reads the record and nothing else.
    if (inputs.refresh === "live") {
      if (ops.driftOperation === undefined) throw new Error("the cluster-facing layer has no live check");
      drift = await ops.driftOperation(spec, {
        session,
        ...(inputs.parallelism !== undefined ? { parallelism: inputs.parallelism } : {}),
      });
    }
  } finally {
    session.close();
  }
  const previous = { ...raw } as unknown as KhookOutputs;
  delete (previous as unknown as Record<string, unknown>)[PROVIDER_KEY];
  const outs = refreshedOutputs(previous, spec, report, location);
  delete outs.drift;
  if (drift !== undefined) {
    outs.drift = driftOutputs(spec, drift);
    const name = inputs.resourceName ?? spec.name;
    const say = (text: string): void => sink(`[${name}] ${session.redactor.redact(text)}`);
    for (const d of outs.drift) say(`drift: ${d.name}: ${d.reason}`);
    say(
      outs.drift.length === 0
        ? "live refresh: every completed step is in sync with the cluster"
        : `live refresh: ${outs.drift.length} step${outs.drift.length === 1 ? "" : "s"} drifted; the next \`pulumi up\` re-runs ${outs.drift.length === 1 ? "it" : "them"}`,
    );
  }
  return { id, props: outs as unknown as Record<string, unknown> };
}

// ---- helpers ----

async function dropLeftRecords(
  ops: Operations,
  spec: LoadedSpec,
  session: Session,
  locations: readonly string[],
  token: string,
  say: (text: string) => void,
): Promise<void> {
  const dropped = await ops.dropReleasedRecordsOperation(spec, { session, locations, token });
  for (const left of dropped) say(`removed the state record ${left}, which its owner had left for another`);
}

type Unreachable = { kind: "unreachable" | "rejected"; message: string };

/**
 * A session whose cluster answers, or why there is none: a session that cannot be opened (no usable
 * kubeconfig, a failing exec plugin) is "unreachable", and so is one whose API server did not
 * become ready within `waitForCluster`.
 */
async function openReachable(
  ops: Operations,
  spec: LoadedSpec,
  where: ClusterTarget,
  inputs: KhookInputs,
  say: (text: string) => void,
): Promise<{ session: Session } | { unreachable: Unreachable }> {
  let session: Session;
  try {
    session = await ops.openSession(spec, { target: where, journal: "default-on" });
  } catch (e) {
    return { unreachable: { kind: "unreachable", message: (e as Error).message } };
  }
  try {
    await awaitCluster(ops, session, inputs, say, cancellation.signal, { advise: false });
  } catch (e) {
    session.close();
    return { unreachable: { kind: "unreachable", message: (e as Error).message } };
  }
  const unreachable = await ops.reachOperation?.(session);
  if (unreachable === undefined) return { session };
  session.close();
  return { unreachable };
}

/**
 * Where the deleteUnreachable escape hatch was turned on, if it was: the stack
 * config `khook:deleteUnreachable`, or the environment variable
 * KHOOK_DELETE_UNREACHABLE (which a plain `pulumi destroy` sees at once,
 * like @pulumi/kubernetes's PULUMI_K8S_DELETE_UNREACHABLE; a stack config set
 * after the last `up` needs `pulumi destroy --run-program`).
 */
function deleteUnreachableSource(): string | undefined {
  if (configured.deleteUnreachable === true) return "khook:deleteUnreachable";
  if (/^(true|1|yes)$/i.test((process.env.KHOOK_DELETE_UNREACHABLE ?? "").trim())) return "KHOOK_DELETE_UNREACHABLE";
  return undefined;
}

/** Why destroy cannot tear down, and the ways out. */
export function destroyBlockedMessage(name: string, kind: "unreachable" | "rejected", why: string): string {
  const fresh =
    "set fresh credentials with `pulumi config set --secret khook:kubeconfig <kubeconfig>` (the stack config wins over the stored kubeconfig for destroy and refresh) " +
    "and run `pulumi destroy --run-program` (without --run-program, Pulumi uses the provider configuration recorded at the last `up`)";
  if (kind === "rejected")
    return `[${name}] cannot tear down: the cluster rejected the credentials (${why}).\nThe stored kubeconfig may hold an expired token: ${fresh}.`;
  return (
    `[${name}] cannot tear down: the cluster cannot be reached (${why}).\n` +
    `If the credentials changed, ${fresh}.\n` +
    "If the cluster is gone for good (deleted before this resource), run `KHOOK_DELETE_UNREACHABLE=true pulumi destroy` " +
    "(or `pulumi config set khook:deleteUnreachable true` and `pulumi destroy --run-program`): the resource is then dropped from the stack's state without touching any cluster."
  );
}

/**
 * Which credentials win. "inputs-first" (create, update): the program's
 * `kubeconfig`/`context`, else the stack config. "stack-config-first" (delete,
 * read): the stack config, else the stored inputs, because a stored token may
 * have expired long before `pulumi destroy` runs. Without either, the ambient
 * environment (KUBECONFIG, ~/.kube/config, in-cluster). Credentials live in
 * this module's memory only.
 */
export type CredentialPrecedence = "inputs-first" | "stack-config-first";

function prepare(raw: Record<string, unknown>): {
  inputs: KhookInputs;
  spec: LoadedSpec;
  name: string;
  kubeconfigs: LoadedContents;
} {
  const bag = { ...raw };
  delete bag[PROVIDER_KEY];
  const { inputs, problems } = normalizeInputs(bag);
  if (problems.length > 0)
    throw new Error(problems.map((p) => `${p.property ? `${p.property}: ` : ""}${p.reason}`).join("\n"));
  const { loadFromInputs } = require("./load.js") as typeof LoadExports;
  const loaded = loadFromInputs(inputs);
  if (!loaded.ok) throw new Error(loaded.message);
  const spec = loaded.spec;
  // Each kubeconfig text is parsed once: its credentials are masked from the parsed form, and target() hands the same parse to the operation.
  const kubeconfigs = new Map<string, LoadedKubeconfig>();
  for (const kubeconfig of [inputs.kubeconfig, configured.kubeconfig]) {
    if (kubeconfig === undefined || !isKubeconfigContent(kubeconfig) || kubeconfigs.has(kubeconfig)) continue;
    const parsed = parseKubeconfigContent(kubeconfig);
    if (parsed === undefined) continue; // connecting reports what is wrong with it
    kubeconfigs.set(kubeconfig, parsed);
    // Masked from here on, also in what is printed before the session (which masks them too) is open.
    for (const credential of credentialsToMask(parsed.config)) spec.redactor.add(credential);
  }
  return { inputs, spec, name: inputs.resourceName ?? spec.name, kubeconfigs };
}

/** Kubeconfig texts already parsed, by text. */
type LoadedContents = ReadonlyMap<string, LoadedKubeconfig>;

function parseKubeconfigContent(content: string): LoadedKubeconfig | undefined {
  const { loadKubeconfig } = kubeconfigModule();
  try {
    return loadKubeconfig({ kubeconfigContent: content });
  } catch {
    return undefined;
  }
}

function stackOf(inputs: KhookInputs): { project: string; stack: string } {
  return { project: inputs.pulumiProject ?? "", stack: inputs.pulumiStack ?? "" };
}

/** Where the owner is kept, for messages: the record, or the owner marker when the journal is off. */
function ownerLocation(spec: LoadedSpec, location: RecordLocation | undefined): string {
  return describeOwnerLocation(location, ownerMarkerLocation(spec.name));
}

export function resourceId(spec: LoadedSpec, location: RecordLocation | undefined): string {
  return location ? `${location.namespace}/${location.name}` : spec.name;
}

export function target(
  inputs: KhookInputs,
  precedence: CredentialPrecedence = "inputs-first",
  parsed: LoadedContents = new Map(),
): ClusterTarget {
  let kubeconfig: string | undefined;
  let context: string | undefined;
  if (precedence === "inputs-first") {
    kubeconfig = inputs.kubeconfig ?? configured.kubeconfig;
    context = inputs.context ?? configured.context;
  } else {
    kubeconfig = configured.kubeconfig ?? inputs.kubeconfig;
    // A kubeconfig from the stack config goes with khook:context, else its own current-context:
    // the stored context names a context of the stored kubeconfig.
    context = configured.context ?? (configured.kubeconfig === undefined ? inputs.context : undefined);
  }
  return {
    ...(kubeconfig !== undefined
      ? isKubeconfigContent(kubeconfig)
        ? { kubeconfigContent: kubeconfig }
        : { kubeconfigPath: path.resolve(kubeconfig) }
      : {}),
    ...(kubeconfig !== undefined && parsed.has(kubeconfig) ? { loaded: parsed.get(kubeconfig)! } : {}),
    ...(context !== undefined ? { context } : {}),
  };
}

/**
 * The `waitForCluster` input: wait for the API server's /readyz, one line through the resource's
 * log. Without it, an API server that is not up yet fails the update with an error that names the
 * input (`advise`; delete has its own ways out, destroyBlockedMessage).
 */
async function awaitCluster(
  ops: Operations,
  session: Session,
  inputs: KhookInputs,
  say: (text: string) => void,
  signal: AbortSignal,
  opts: { advise?: boolean } = {},
): Promise<void> {
  const ms = inputs.waitForCluster === undefined ? undefined : parseDuration(inputs.waitForCluster);
  // 0s does not wait, as when the input is not given (provider/inputs.ts).
  if (ms !== undefined && ms > 0) {
    if (IN_PROVIDER_PROCESS) installCancellation(); // Ctrl-C ends the wait too
    const setting = waitSetting("pulumi", inputs.waitForCluster!);
    await ops.clusterReadyOperation?.(session, { timeoutMs: ms, say, setting }, signal);
  } else if (opts.advise !== false) {
    session.kube.notUpAdvice =
      'if the cluster is still starting, set the Khook input waitForCluster (e.g. "10m") to wait until it answers';
  }
}

/**
 * What stops a run: the `timeout` input running out, or the command being
 * stopped (Ctrl-C, cancel.ts); `stopReason` says which, for the rejection.
 */
function runSignal(inputs: KhookInputs): { signal: AbortSignal; stopReason: () => string } {
  if (IN_PROVIDER_PROCESS) installCancellation();
  const ms = inputs.timeout === undefined ? undefined : parseDuration(inputs.timeout);
  const timeout = ms !== undefined && ms > 0 ? AbortSignal.timeout(ms) : undefined;
  return {
    signal: timeout === undefined ? cancellation.signal : AbortSignal.any([cancellation.signal, timeout]),
    stopReason: () => {
      if (cancellation.reason !== undefined)
        return `\nstopped by ${cancellation.reason === "Cancel" ? "pulumi's cancellation (Ctrl-C)" : cancellation.reason}: running steps were aborted and the journal written`;
      if (timeout?.aborted) return `\nthe overall timeout (${formatDuration(ms!)}) ran out`;
      return "";
    },
  };
}

/** Signal handlers belong to the dynamic provider's own process only, never to a process that merely loads this module (tests). */
const IN_PROVIDER_PROCESS = /[\\/]cmd[\\/]dynamic-provider[\\/]/.test(require.main?.filename ?? "");

type KubeconfigModule = typeof KubeconfigExports;

function kubeconfigModule(): KubeconfigModule {
  return require("../kube/kubeconfig.js") as KubeconfigModule;
}

/** Credentials inside a kubeconfig are masked in everything khook prints, like KHOOK_SECRET_* values (kube/kubeconfig.ts says which). */
function credentialsToMask(config: LoadedKubeconfig["config"]): string[] {
  return kubeconfigModule().credentialsToMask(config);
}
