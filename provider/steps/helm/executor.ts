/**
 * `helm:` steps: declarative install-or-upgrade of a chart release, driven
 * through the helm CLI (provider/tools/helm.ts).
 *
 * Gather facts, decide, act (as steps/patch/executor.ts): the release's history comes
 * from helm's storage Secrets (or helm), and the rule that turns the facts into
 * install / upgrade / no-op / skip is provider/helm/decide.ts, which asks for
 * each costlier fact (values, the deployed values, the chart, a dry run) only
 * when it needs it. A pending release stops the step with the recovery command,
 * unless the state record proves that khook's own dead run left it
 * (provider/helm/recover.ts): then khook waits for that run's helm if it may
 * still run, recovers the release, says so in one line, and goes on.
 *
 * Every release khook installs carries the release labels
 * `khook.io/managed-by=khook` and `khook.io/spec=<spec name>`; destroy
 * uninstalls only such releases (of this spec), so a release that
 * `skipIf: installed` found is left alone.
 */
import fs from "node:fs";
import { unifiedDiff } from "../../text-diff.js";
import { executionError } from "../../errors.js";
import { classifyChart, describeChartSource, type ChartRef, type ChartSource } from "../../helm/chart.js";
import {
  decideRelease,
  normalizeManifest,
  type ReleaseDecision,
  type ReleaseFact,
  type ReleaseFacts,
} from "../../helm/decide.js";
import { decidePendingRecovery } from "../../helm/recover.js";
import {
  chartLabel,
  describeRevision,
  historyState,
  pendingMessage,
  type HelmRevision,
  type HistoryState,
} from "../../helm/release.js";
import { ALL_RELEASES_SELECTOR, RELEASE_STORAGE, secretsOfRelease, storedRevisions } from "../../helm/storage.js";
import { decideReleaseDrift } from "../../helm/release-drift.js";
import type { Values } from "../../helm/release-values.js";
import { RELEASE_MANAGED_BY_LABEL, releaseOwnershipLabels, SPEC_LABEL } from "../../ownership.js";
import type { HelmStep } from "./definition.js";
import { pidAlive } from "../../state/journal.js";
import { HelmSession, locateHelm, type HelmBinary } from "../../tools/helm.js";
import { computeValues, registerPreviousSecrets } from "./read-values.js";
import { manifestObjects, objectsManifest, startPostRenderer, type PostRenderer } from "../../hooks/post-renderer.js";
import { isPermanent } from "../../hooks/step-hooks.js";
import { sha256Hex } from "../../dsl/hash.js";
import { objectHooksFor } from "../../dsl/hooks.js";
import { chartMayHaveHooks, chartRef, desiredChart } from "./read-chart.js";
import { waitForRelease } from "./release-wait.js";
import {
  goneOrLeft,
  helmTimeoutMs,
  readsStorageSecrets,
  storedReleasesOf,
  uninstallAndWait,
} from "./release-storage.js";
import { maskSecretData } from "./masked-diff.js";
import type {
  Assessment,
  AssessOptions,
  DestroyOutcome,
  DriftContext,
  DriftFinding,
  StepContext,
  StepExecutor,
  StepOutcome,
} from "../contract.js";

/** The release name and namespace a helm: step targets. */
function releaseOf(step: HelmStep): { release: string; namespace: string } {
  return { release: step.action.release, namespace: step.action.namespace };
}

interface Target {
  source: ChartSource;
  /** Credential-free description: `cilium@1.18.4 from https://helm.cilium.io/`. */
  described: string;
  release: string;
  namespace: string;
}

function target(step: HelmStep, ctx: StepContext): Target {
  const { source, problems } = classifyChart(step.action);
  if (source === undefined || problems.length > 0) {
    throw executionError(ctx.redactor.redact(`chart source: ${problems.map((p) => p.message).join("; ")}`));
  }
  // Inline or auth: credentials are masked everywhere from now on, secret variable or not.
  if (source.form !== "local" && source.credentials !== undefined) ctx.redactor.add(source.credentials.password);
  return { source, described: describeChartSource(source), ...releaseOf(step) };
}

interface Prepared {
  session: HelmSession;
  t: Target;
  /** What deciding gathered: the values, the chart, and for a local chart both manifests (the diff reuses them). */
  facts: ReleaseFacts;
  /** How helm finds the chart; undefined when deciding did not need it (a skip). */
  ref: ChartRef | undefined;
  decision: Exclude<ReleaseDecision, { action: "pending" }>;
  /** The latest revision's manifest when helm's storage gave it: a no-op `wait: true` step checks its objects. */
  deployedManifest?: string;
}

async function openSession(ctx: StepContext): Promise<HelmSession> {
  // Located (and its version checked) on the first helm run: a step that decides no-op runs none.
  const helm = (): Promise<HelmBinary> =>
    locateHelm({ explicit: ctx.tools?.helm, redactor: ctx.redactor, signal: ctx.signal });
  return HelmSession.open({ helm, connection: ctx.connection, redactor: ctx.redactor, signal: ctx.signal });
}

/**
 * Opens a session and decides install / upgrade / no-op / skip: gathers the facts the rule
 * (decideRelease) asks for, one at a time, until it decides. The caller closes the session.
 */
async function prepare(step: HelmStep, ctx: StepContext, mode: "assess" | "apply"): Promise<Prepared> {
  const t = target(step, ctx);
  const session = await openSession(ctx);
  try {
    let stored = await storedReleasesOf(ctx, t);
    const history = stored !== undefined ? stored.history : await session.history(t.release, t.namespace);
    const initial: ReleaseFacts = {
      release: t.release,
      namespace: t.namespace,
      history,
      skipIfInstalled: step.action.skipIf === "installed",
      specHasHooks: ctx.spec.hooks.length > 0,
      localChart: t.source.form === "local",
    };
    let facts = initial;
    let ref: ChartRef | undefined;
    const chart = async (): Promise<ChartRef> => (ref ??= await chartRef(session, t.source, ctx.spec.baseDir));
    const gather = async (fact: ReleaseFact): Promise<ReleaseFacts> => {
      switch (fact) {
        case "values":
          return {
            ...facts,
            values: await computeValues(step.action, {
              baseDir: ctx.spec.baseDir,
              signal: ctx.signal,
              redactor: ctx.redactor,
              deadline: ctx.deadline,
            }),
          };
        case "deployedValues": {
          const deployedValues = stored?.latestValues ?? (await session.userValues(t.release, t.namespace));
          registerPreviousSecrets(ctx.redactor, facts.values ?? {}, deployedValues);
          return { ...facts, deployedValues };
        }
        case "desiredChart":
          return { ...facts, desiredChart: await desiredChart(session, t.source, await chart(), ctx.spec.baseDir) };
        case "hooksMatch":
          return {
            ...facts,
            hooksMatch: await session.hasLabels(t.release, t.namespace, {
              [HOOKS_LABEL]: renderHooksFingerprint(step) ?? null,
            }),
          };
        case "manifests": {
          const deployed = await session.rawManifest(t.release, t.namespace);
          return {
            ...facts,
            manifests: {
              deployed,
              rendered: await dryRun(session, t, await chart(), facts.values ?? {}, "upgrade", step, ctx),
            },
          };
        }
      }
    };
    // Waiting for a dead run's helm, then recovering, is at most two rounds; a third pending is refused.
    for (let pendingRounds = 0; ;) {
      const decision = decideRelease(facts);
      if (decision.action === "pending") {
        const outcome =
          mode === "apply" && pendingRounds++ < 2
            ? await recoverPending(session, t, decision.state.last, facts.history ?? [], ctx)
            : undefined;
        if (outcome === undefined || outcome.action === "refuse")
          throw executionError(`${decision.reason}${outcome?.note ?? ""}`);
        // The release changed under us: start again from its storage.
        stored = await storedReleasesOf(ctx, t);
        facts = {
          ...initial,
          history: stored !== undefined ? stored.history : await session.history(t.release, t.namespace),
        };
        continue;
      }
      if (decision.action !== "need") {
        const deployedManifest = decision.action === "no-op" ? stored?.latestManifest : undefined;
        return { session, t, facts, ref, decision, ...(deployedManifest !== undefined ? { deployedManifest } : {}) };
      }
      facts = await gather(decision.fact);
    }
  } catch (e) {
    session.close();
    throw e;
  }
}

function valuesFile(session: HelmSession, values: Values): string | undefined {
  return Object.keys(values).length === 0 ? undefined : session.privateFile("values.json", JSON.stringify(values));
}

/** The release label holding the fingerprint of the step's post-render and pre-apply hooks. */
export const HOOKS_LABEL = "khook.io/hooks";

/** A short fingerprint of the hooks that change a release's objects, or undefined when none does. */
export function renderHooksFingerprint(step: HelmStep): string | undefined {
  const hooks = objectHooksFor(step);
  return hooks.length === 0 ? undefined : sha256Hex(hooks.map((h) => `${h.name} ${h.digest}`).join("\n")).slice(0, 32);
}

/**
 * helm runs the chart's manifest through the step's hooks via `--post-renderer`
 * (provider/hooks/post-renderer.ts). A hook's own error is kept, so the step fails
 * with it (and its retry semantics) rather than with helm's wrapping of it.
 */
async function hookRenderer(
  session: HelmSession,
  ctx: StepContext,
  send: boolean,
): Promise<{ renderer: PostRenderer; hookError: () => unknown } | undefined> {
  const hooks = ctx.hooks;
  if (hooks === undefined || !hooks.transformsObjects) return undefined;
  let failure: unknown;
  const renderer = await startPostRenderer(session.dir, async (manifest) => {
    try {
      return objectsManifest(await hooks.render(manifestObjects(manifest), { send }));
    } catch (e) {
      failure = e;
      throw e;
    }
  });
  return { renderer, hookError: () => failure };
}

/** Runs a helm install/upgrade with the hook renderer; a hook's failure wins over helm's report of it. */
async function withHookRenderer<T>(
  session: HelmSession,
  ctx: StepContext,
  send: boolean,
  run: (postRenderer: string | undefined) => Promise<T>,
): Promise<T> {
  const hooked = await hookRenderer(session, ctx, send);
  try {
    return await run(hooked?.renderer.executable);
  } catch (e) {
    const hookError = hooked?.hookError();
    if (hookError !== undefined && (isPermanent(hookError) || hookError instanceof Error)) throw hookError;
    throw e;
  } finally {
    await hooked?.renderer.close();
  }
}

async function dryRun(
  session: HelmSession,
  t: Target,
  ref: ChartRef,
  values: Values,
  mode: "install" | "upgrade",
  step: HelmStep,
  ctx: StepContext,
): Promise<string> {
  const r = await withHookRenderer(session, ctx, false, (postRenderer) =>
    session.installOrUpgrade({
      postRenderer,
      mode,
      release: t.release,
      namespace: t.namespace,
      chart: ref,
      valuesFile: valuesFile(session, values),
      // On a missing namespace a server-side dry-run install fails; createNamespace makes helm tolerate it.
      createNamespace: step.action.createNamespace,
      timeoutMs: helmTimeoutMs(ctx.deadline),
      dryRun: true,
    }),
  );
  return r.rawManifest;
}

/**
 * Where helm installs from, and who waits. A `wait: true` step waits with khook's watches
 * (helm --wait polls every 2 s) unless the chart may have hooks, whose post-install and
 * post-upgrade phases helm --wait runs only once the release is ready, or the step is
 * `atomic`, whose rollback on a failed wait is helm's. A repository or OCI chart is pulled
 * first so its files can be read; helm then installs from that archive (one download either way).
 */
async function installSource(
  session: HelmSession,
  ref: ChartRef,
  t: Target,
  step: HelmStep,
  ctx: StepContext,
): Promise<{ chart: ChartRef; khookWaits: boolean }> {
  if (!step.action.wait || step.action.atomic) return { chart: ref, khookWaits: false };
  if (t.source.form === "local") return { chart: ref, khookWaits: !chartMayHaveHooks(ref.chart) };
  let archive: string;
  try {
    archive = await session.pull(ref);
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    // helm's own install reports what is wrong with the chart source, with its --wait.
    return { chart: ref, khookWaits: false };
  }
  return { chart: { chart: archive, flags: [] }, khookWaits: !chartMayHaveHooks(archive) };
}

/**
 * A pending release: refused, unless the state record proves khook's own dead run left it
 * (provider/helm/recover.ts). Then wait for that run's helm while it may still run, or recover
 * the release (rollback or uninstall), saying so in one line.
 */
async function recoverPending(
  session: HelmSession,
  t: Target,
  last: HelmRevision,
  history: readonly HelmRevision[],
  ctx: StepContext,
): Promise<{ action: "refuse"; note: string } | { action: "waited" | "recovered" }> {
  const previous = ctx.record?.previousHelm();
  const mark = previous?.mark;
  const thisHost = ctx.record?.run.host ?? "";
  const decision = decidePendingRecovery({
    release: t.release,
    namespace: t.namespace,
    history,
    mark,
    thisRun: ctx.record?.run.id ?? "",
    thisHost,
    markRunEnded: previous?.runEnded,
    helmHere: mark !== undefined && mark.host === thisHost ? helmProcess(mark.pid, mark.processStart) : undefined,
    now: Date.now(),
  });
  switch (decision.action) {
    case "refuse":
      // Today's refusal; when a khook run did leave it, also why khook would not recover it itself.
      return {
        action: "refuse",
        note: mark !== undefined ? `. khook did not recover ${describeRevision(last)} itself: ${decision.why}` : "",
      };
    case "wait":
      ctx.log(decision.line);
      await waitWhileRunning(decision.pid, mark?.processStart, decision.until, ctx.signal);
      return { action: "waited" };
    case "recover": {
      ctx.log(decision.line);
      const r = decision.recovery;
      if (r.action === "rollback")
        await session.rollback(r.release, r.namespace, r.toRevision, helmTimeoutMs(ctx.deadline));
      else await session.uninstall(r.release, r.namespace, helmTimeoutMs(ctx.deadline));
      return { action: "recovered" };
    }
  }
}

/**
 * A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined
 * where there is no /proc: with the pid, it names one process, never a later one given its pid.
 */
function processStart(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** /proc/<pid>/stat's fields after the command name (state first), or undefined when unreadable. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * Whether the helm `pid` (started at `start`, if known) still runs on this host, and whether that
 * is certain. A killed helm whose khook died is reparented, and where nobody reaps it (a
 * container's init that does not) it stays a zombie, which signal 0 still finds: /proc says so.
 */
function helmProcess(pid: number, start: string | undefined): { running: boolean; identified: boolean } {
  if (!pidAlive(pid)) return { running: false, identified: true };
  const fields = procStat(pid);
  if (fields === undefined) {
    // Gone meanwhile; or no /proc (not Linux), where a live pid is all there is to know.
    return fs.existsSync("/proc/self/stat")
      ? { running: false, identified: true }
      : { running: true, identified: false };
  }
  if (fields[0] === "Z" || fields[0] === "X") return { running: false, identified: true };
  if (start === undefined) return { running: true, identified: false };
  return fields[19] === start ? { running: true, identified: true } : { running: false, identified: true };
}

/** How often a dead run's helm is checked: a pid has no watch, and signal 0 is one cheap syscall. */
const PID_POLL_MS = 250;

/** Until `pid` (on this host) is gone, or `until` passes; without a pid (another host), until `until`. Abortable. */
async function waitWhileRunning(
  pid: number | undefined,
  start: string | undefined,
  until: number,
  signal: AbortSignal,
): Promise<void> {
  while (Date.now() < until && (pid === undefined || helmProcess(pid, start).running)) {
    signal.throwIfAborted();
    const ms = pid === undefined ? until - Date.now() : Math.min(PID_POLL_MS, until - Date.now());
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }
  signal.throwIfAborted();
}

/**
 * helm may outlive khook (`kill -9` of khook leaves its helm child running until its own
 * --timeout), and an atomic step's failed wait is followed by a rollback with the same timeout.
 * After this long from its start it has certainly finished or given up.
 */
function helmMayRunMs(timeoutMs: number, atomic: boolean): number {
  return timeoutMs * (atomic ? 2 : 1) + 60_000;
}

/**
 * A helm that dies mid-operation (killed, out of memory, its node gone) leaves
 * the release pending-install/-upgrade, and every later helm call refuses it.
 * Say so with the failure, and the exact recovery command, rather than only on
 * the next run. This run does not recover the release itself: helm records no
 * owner for a pending operation, and only a later run, through the state record,
 * can prove that khook's helm is gone (recoverPending).
 */
async function withPendingHint<T>(session: HelmSession, t: Target, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    let state: HistoryState;
    try {
      state = historyState(await session.history(t.release, t.namespace), t.release, t.namespace);
    } catch {
      throw e; // the original failure is the news; the history is only a hint
    }
    if (state.kind !== "pending") throw e;
    throw executionError(`${(e as Error).message}. It left ${pendingMessage(state, t.release, t.namespace)}`);
  }
}

// ------------------------------------------------------------------ executor

async function assess(step: HelmStep, ctx: StepContext, opts?: AssessOptions): Promise<Assessment> {
  const p = await prepare(step, ctx, "assess");
  try {
    const assessment = { action: p.decision.action, reason: p.decision.reason };
    if (opts?.diff !== true) return assessment;
    return {
      ...assessment,
      diff: await releaseDiff(step, ctx, p).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))),
    };
  } finally {
    p.session.close();
  }
}

/**
 * The release's manifest diff: the deployed manifest (none for an install) against a
 * server-side dry run of the install or upgrade, both made once (prepare's, for a local chart).
 */
/** The chart reference and values an install or upgrade decision was reached with (both gathered to reach it). */
function refOf(p: Prepared): ChartRef {
  if (p.ref === undefined) throw new Error(`helm: ${p.decision.action} decided without resolving the chart`);
  return p.ref;
}

function valuesOf(p: Prepared): Values {
  return p.facts.values ?? {};
}

async function releaseDiff(step: HelmStep, ctx: StepContext, p: Prepared): Promise<string> {
  const { session, t, decision } = p;
  // A skipped or up-to-date release changes nothing.
  if (decision.action === "skip" || decision.action === "no-op") return "";
  // Raw texts, so that a changed secret still shows as a changed line; the diff is redacted as a whole.
  const manifests = p.facts.manifests;
  const before =
    decision.action === "install"
      ? ""
      : normalizeManifest(manifests?.deployed ?? (await session.rawManifest(t.release, t.namespace)));
  const after = normalizeManifest(
    manifests?.rendered ?? (await dryRun(session, t, refOf(p), valuesOf(p), decision.action, step, ctx)),
  );
  const where = `${t.namespace}/${t.release}`;
  const oldLabel =
    decision.action === "install" ? `${where} (not installed)` : `${where} ${describeRevision(decision.last)}`;
  const newLabel = `${where} ${chartLabel(decision.desired)} (server dry-run)`;
  const masked = maskSecretData(before, after);
  return ctx.redactor.redact(unifiedDiff(masked.before, masked.after, { old: oldLabel, new: newLabel }));
}

async function apply(step: HelmStep, ctx: StepContext): Promise<StepOutcome> {
  const p = await prepare(step, ctx, "apply");
  const { session, t, decision } = p;
  try {
    switch (decision.action) {
      case "skip":
        return { status: "skipped", reason: decision.reason };
      case "no-op":
        // khook's own wait leaves a release that never became ready `deployed`: check it again rather than trust it.
        if (step.action.wait)
          await waitForRelease(
            p.deployedManifest ?? (await session.rawManifest(t.release, t.namespace)),
            { name: t.release, namespace: t.namespace },
            ctx,
          );
        return { status: "ok", reason: `no-op: ${decision.reason}`, baseline: { revision: decision.last.revision } };
      case "install":
      case "upgrade": {
        ctx.log(
          `${decision.action === "install" ? "installing" : "upgrading"} release ${t.release} (namespace ${t.namespace}): ${decision.reason}; chart ${t.described}`,
        );
        const desired = decision.desired;
        if (ctx.hooks !== undefined) {
          // Helm's event-driven design's context: chart (with appVersion: one `helm show chart`), release, merged values and the
          // cluster's capabilities. Only when a hook will read them: specs without hooks pay nothing.
          const [capabilities, shown] = await Promise.all([
            ctx.kube.capabilities?.({ signal: ctx.signal }).catch(() => undefined),
            session.showChart(refOf(p)).catch(() => undefined),
          ]);
          const chart = shown ?? desired;
          ctx.hooks.setExtras({
            ...(chart !== undefined
              ? {
                  chart: {
                    name: chart.name,
                    version: chart.version,
                    ...(shown?.appVersion !== undefined ? { appVersion: shown.appVersion } : {}),
                  },
                }
              : {}),
            release: { name: t.release, namespace: t.namespace },
            values: valuesOf(p),
            ...(capabilities !== undefined ? { capabilities } : {}),
          });
        }
        const fingerprint = renderHooksFingerprint(step);
        // Set when hooks exist, cleared (helm's `null`) when they were removed; untouched in specs without hooks.
        const hookLabel: Record<string, string> =
          fingerprint !== undefined
            ? { [HOOKS_LABEL]: fingerprint }
            : ctx.spec.hooks.length > 0 && decision.action === "upgrade"
              ? { [HOOKS_LABEL]: "null" }
              : {};
        const install = await installSource(session, refOf(p), t, step, ctx);
        const timeoutMs = helmTimeoutMs(ctx.deadline);
        // helm's pid and host go into the record as soon as it runs: if khook dies, the next run can tell its helm from another's.
        const record = ctx.record;
        const operation = decision.action;
        let marked: Promise<void> | undefined;
        const onSpawn = (pid: number): void => {
          if (record === undefined) return;
          const startedAt = Date.now();
          const start = processStart(pid);
          marked = record.helmStarted({
            ...(start !== undefined ? { processStart: start } : {}),
            pid,
            host: record.run.host,
            startedAt: new Date(startedAt).toISOString(),
            until: new Date(startedAt + helmMayRunMs(timeoutMs, step.action.atomic)).toISOString(),
            release: t.release,
            namespace: t.namespace,
            operation,
            revision: (p.facts.history?.at(-1)?.revision ?? 0) + 1,
          });
        };
        const r = await withPendingHint(session, t, () =>
          withHookRenderer(session, ctx, true, (postRenderer) =>
            session.installOrUpgrade(
              {
                postRenderer,
                mode: decision.action,
                release: t.release,
                namespace: t.namespace,
                chart: install.chart,
                valuesFile: valuesFile(session, valuesOf(p)),
                createNamespace: step.action.createNamespace,
                atomic: step.action.atomic,
                wait: step.action.wait && !install.khookWaits,
                timeoutMs,
                // The ownership marker. On upgrade, helm keeps the labels an earlier revision carried,
                // and a release khook did not install must not become khook's by being upgraded.
                labels: {
                  ...(decision.action === "install" ? releaseOwnershipLabels(ctx.spec.name) : {}),
                  ...hookLabel,
                },
              },
              { onSpawn },
            ),
          ),
        ).finally(() => marked);
        if (install.khookWaits) await waitForRelease(r.rawManifest, { name: t.release, namespace: t.namespace }, ctx);
        const verb = decision.action === "install" ? "installed" : "upgraded to";
        return {
          status: "ok",
          revision: r.revision,
          baseline: { revision: r.revision },
          reason: `${verb} revision ${r.revision} (${r.chart ?? chartLabel(decision.desired)}, ${r.status}) of release ${t.release} (namespace ${t.namespace})`,
        };
      }
    }
  } finally {
    session.close();
  }
}

async function destroy(step: HelmStep, ctx: StepContext): Promise<DestroyOutcome> {
  const { release, namespace } = releaseOf(step);
  const session = await openSession(ctx);
  try {
    const state = historyState(await session.history(release, namespace), release, namespace);
    if (state.kind === "absent" || state.kind === "uninstalled") {
      return { status: "skipped", reason: `release ${release} (namespace ${namespace}) is not installed` };
    }
    const labels = releaseOwnershipLabels(ctx.spec.name);
    if (!(await session.hasLabels(release, namespace, labels))) {
      return {
        status: "skipped",
        reason: `release ${release} (namespace ${namespace}) was not installed by khook for spec ${ctx.spec.name} (no ${RELEASE_MANAGED_BY_LABEL}=khook, ${SPEC_LABEL}=${labels[SPEC_LABEL]} release labels); left alone`,
      };
    }
    ctx.log(`uninstalling release ${release} (namespace ${namespace}) and waiting for its resources to be gone`);
    const done = await uninstallAndWait(session, { release, namespace }, ctx);
    if (!done.removed)
      return { status: "skipped", reason: `release ${release} (namespace ${namespace}) is not installed` };
    return {
      status: "ok",
      reason: `uninstalled release ${release} (namespace ${namespace}); ${goneOrLeft(done.left)}`,
    };
  } finally {
    session.close();
  }
}

/**
 * Is the release still the one this step left? Its revision Secrets come from one list of helm's
 * Secrets per namespace (`owner=helm`), shared by every release there; the rule is
 * provider/helm/release-drift.ts. No helm process runs.
 */
async function drift(step: HelmStep, ctx: DriftContext): Promise<DriftFinding> {
  const { release, namespace } = releaseOf(step);
  const ref = `release ${release} -n ${namespace}`;
  if (!readsStorageSecrets())
    return {
      state: "not-checkable",
      reason: `helm's storage driver is ${process.env["HELM_DRIVER"]}: the live check reads releases from helm's Secrets (HELM_DRIVER=secret)`,
    };
  const secrets = await ctx.live.select(RELEASE_STORAGE, namespace, ALL_RELEASES_SELECTOR);
  const revisions = storedRevisions(secretsOfRelease(secrets, release), release);
  if (revisions === undefined)
    return { state: "not-checkable", reason: `${ref}: a revision Secret of the release is not one helm wrote` };
  const d = decideReleaseDrift({
    release,
    namespace,
    revisions,
    recordedRevision: ctx.recorded.baseline?.revision,
    finishedAt: ctx.recorded.finishedAt,
  });
  if (d.state !== "drifted") return d;
  return {
    state: "drifted",
    reason: d.reason,
    drifted: [{ ref, change: d.change, ...(d.fields !== undefined ? { fields: d.fields } : {}) }],
  };
}

export const helmExecutor: StepExecutor<HelmStep> = { type: "helm", diffs: true, assess, apply, destroy, drift };
