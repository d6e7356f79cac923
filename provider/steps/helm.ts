/**
 * `helm:` steps: declarative install-or-upgrade of a chart release, driven
 * through the helm CLI (provider/tools/helm.ts).
 *
 * The release history decides:
 * - no release (or only an uninstalled one) -> install;
 * - pending-install / pending-upgrade / pending-rollback -> fail, with the
 *   recovery command;
 * - deployed with the same chart (name-version) and the same user-supplied
 *   values -> no-op, and no new revision (a local chart is also rendered with a
 *   server-side dry run and compared with the deployed manifest, because its
 *   content can change without its version);
 * - anything else (deployed but different, failed, superseded) -> upgrade.
 *
 * Every release khook installs carries the release labels
 * `khook.io/managed-by=khook` and `khook.io/spec=<spec name>`; destroy
 * uninstalls only such releases (of this spec), so a release that
 * `skipIf: installed` found is left alone.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseYaml, parseAllDocuments, stringify as stringifyYaml } from "yaml";
import { unifiedDiff } from "../diff.js";
import { executionError } from "../errors.js";
import { classifyChart, describeChartSource, type ChartSource } from "../spec/chart.js";
import type { LoadedStep } from "../spec/loaded.js";
import {
  HelmSession,
  locateHelm,
  MANAGED_BY_LABEL,
  ownershipLabels,
  SPEC_LABEL,
  type ChartMeta,
  type ChartRef,
  type HelmBinary,
  type HelmRevision,
} from "../tools/helm.js";
import type { KubeObject } from "../kube/index.js";
import type { ResourceType } from "../kubectl/types.js";
import { releaseSelector, storedReleases, type StoredReleases } from "../tools/helm-storage.js";
import { computeValues, registerPreviousSecrets, sameValues, type Values } from "./helm-values.js";
import { manifestObjects, objectsManifest, startPostRenderer, type PostRenderer } from "../hooks/post-renderer.js";
import { isPermanent } from "../hooks/run.js";
import { sha256Hex } from "../spec/hash.js";
import { objectHooksFor } from "../spec/hooks.js";
import { chartMayHaveHooks } from "../tools/chart-hooks.js";
import { waitForRelease } from "./helm-wait.js";
import { maskSecretPair } from "./objects.js";
import type { Assessment, AssessOptions, DestroyOutcome, StepContext, StepExecutor, StepOutcome } from "./types.js";

type HelmStep = Extract<LoadedStep, { type: "helm" }>;

/** The release name and namespace a helm: step targets. */
function releaseOf(step: HelmStep): { release: string; namespace: string } {
  return { release: step.action.release, namespace: step.action.namespace };
}

// ------------------------------------------------------------------ history

export type HistoryState =
  | { kind: "absent" }
  | { kind: "uninstalled"; last: HelmRevision }
  | { kind: "pending"; last: HelmRevision; recovery: string }
  | { kind: "present"; last: HelmRevision };

const PENDING = new Set(["pending-install", "pending-upgrade", "pending-rollback"]);

/** Classifies a release's history (oldest first) for the install/upgrade decision. */
export function historyState(history: readonly HelmRevision[] | undefined, release: string, namespace: string): HistoryState {
  const last = history?.[history.length - 1];
  if (history === undefined || last === undefined) return { kind: "absent" };
  if (last.status === "uninstalled") return { kind: "uninstalled", last };
  if (PENDING.has(last.status)) return { kind: "pending", last, recovery: recoveryCommand(history, release, namespace) };
  return { kind: "present", last };
}

function recoveryCommand(history: readonly HelmRevision[], release: string, namespace: string): string {
  const last = history[history.length - 1]!;
  const good = [...history].reverse().find((h) => h.revision !== last.revision && (h.status === "deployed" || h.status === "superseded"));
  if (last.status === "pending-install" || good === undefined) return `helm uninstall ${release} --namespace ${namespace}`;
  return `helm rollback ${release} ${good.revision} --namespace ${namespace}`;
}

export function describeRevision(r: HelmRevision): string {
  return `revision ${r.revision} (${r.chart}, ${r.status})`;
}

export function pendingMessage(state: Extract<HistoryState, { kind: "pending" }>, release: string, namespace: string): string {
  return (
    `release ${release} (namespace ${namespace}) is ${state.last.status} at ${describeRevision(state.last)}: ` +
    `a helm operation on it is still running, or was interrupted (helm refuses to change a release in this state). ` +
    `If no other helm operation is running, recover with: ${state.recovery} — then re-run khook`
  );
}

// ------------------------------------------------------------------ chart

/** `name@version`, as plan shows the target. */
function chartLabel(c: ChartMeta): string {
  return `${c.name}@${c.version}`;
}

const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

function ociChartName(reference: string): string {
  return reference.slice(reference.lastIndexOf("/") + 1);
}

/** OCI tags cannot hold '+', so helm pushes `1.0.0+x` as tag `1.0.0_x`. */
function tagToVersion(tag: string): string {
  return tag.replace(/_/g, "+");
}

function ociHost(reference: string): string {
  const rest = reference.slice("oci://".length);
  const slash = rest.indexOf("/");
  return slash === -1 ? rest : rest.slice(0, slash);
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\./.test(h);
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

/** How helm finds the chart, registering credentials in the session's private config. */
async function chartRef(session: HelmSession, t: Target, baseDir: string): Promise<ChartRef> {
  const s = t.source;
  switch (s.form) {
    case "local": {
      const abs = path.resolve(baseDir, s.path);
      if (!fs.existsSync(abs)) throw executionError(`chart ${s.path} does not exist (${abs})`);
      return { chart: abs, flags: [] };
    }
    case "repo": {
      const version = s.version !== undefined ? ["--version", s.version] : [];
      if (s.credentials !== undefined) {
        const name = await session.addRepository(s.repoUrl, s.credentials);
        return { chart: `${name}/${s.name}`, flags: version };
      }
      return { chart: s.name, flags: ["--repo", s.repoUrl, ...version] };
    }
    case "oci": {
      const host = ociHost(s.reference);
      if (s.credentials !== undefined) session.addRegistry(host, s.credentials);
      const flags: string[] = [];
      // A registry on the loopback interface is reached over plain HTTP, as docker does for localhost.
      if (isLoopbackHost(host) && process.env["KHOOK_HELM_OCI_TLS"] !== "1") flags.push("--plain-http");
      if (s.digest !== undefined) return { chart: `${s.reference}@${s.digest}`, flags };
      const v = s.tag !== undefined ? tagToVersion(s.tag) : s.version;
      if (v !== undefined) flags.push("--version", v);
      return { chart: s.reference, flags };
    }
  }
}

/** The chart (name, version) this step would deploy; resolves "latest", ranges and digests through helm. */
async function desiredChart(session: HelmSession, t: Target, ref: ChartRef, baseDir: string): Promise<ChartMeta> {
  const s = t.source;
  if (s.form === "repo" && s.version !== undefined && EXACT_VERSION.test(s.version)) return { name: s.name, version: s.version };
  if (s.form === "oci" && s.digest === undefined) {
    const v = s.tag !== undefined ? tagToVersion(s.tag) : s.version;
    if (v !== undefined && EXACT_VERSION.test(v)) return { name: ociChartName(s.reference), version: v };
  }
  if (s.form === "local" && !s.packaged) {
    const file = path.join(path.resolve(baseDir, s.path), "Chart.yaml");
    try {
      const meta = parseYaml(fs.readFileSync(file, "utf8")) as { name?: unknown; version?: unknown } | null;
      if (meta && typeof meta.name === "string" && (typeof meta.version === "string" || typeof meta.version === "number")) {
        return { name: meta.name, version: String(meta.version) };
      }
    } catch {
      // fall through: helm says what is wrong with the chart
    }
  }
  return session.showChart(ref);
}

// ------------------------------------------------------------------ decision

type Decision =
  | { action: "skip"; reason: string; last: HelmRevision }
  | { action: "install"; reason: string; desired: ChartMeta | undefined; state: HistoryState }
  | { action: "upgrade"; reason: string; desired: ChartMeta; last: HelmRevision }
  | { action: "no-op"; reason: string; last: HelmRevision };

interface Prepared {
  session: HelmSession;
  t: Target;
  values: Values;
  ref: ChartRef;
  decision: Decision;
  /** The latest revision's manifest when helm's storage gave it: a no-op `wait: true` step checks its objects. */
  deployedManifest?: string;
  /** The deployed manifest and a dry-run upgrade's, raw, when deciding needed them (a local chart): the diff reuses them. */
  manifests?: { before: string; after: string };
}

function helmTimeoutMs(deadline: number): number {
  // Leave helm room to finish (an atomic rollback, say) before the engine's own timeout fires.
  const margin = Math.min(10_000, Math.floor(deadline / 10));
  return Math.max(1000, deadline - margin);
}

async function openSession(ctx: StepContext): Promise<HelmSession> {
  // Located (and its version checked) on the first helm run: a step that decides no-op runs none.
  const helm = (): Promise<HelmBinary> => locateHelm({ explicit: ctx.tools?.helm, redactor: ctx.redactor, signal: ctx.signal });
  return HelmSession.open({ helm, connection: ctx.connection, redactor: ctx.redactor, signal: ctx.signal });
}

/** Opens a session and decides install / upgrade / no-op / skip. The caller closes the session. */
async function prepare(step: HelmStep, ctx: StepContext): Promise<Prepared> {
  const t = target(step, ctx);
  const session = await openSession(ctx);
  try {
    const stored = await storedReleasesOf(ctx, t);
    const history = stored !== undefined ? stored.history : await session.history(t.release, t.namespace);
    const state = historyState(history, t.release, t.namespace);
    if (state.kind === "pending") throw executionError(pendingMessage(state, t.release, t.namespace));

    if (step.action.skipIf === "installed" && state.kind === "present") {
      const reason = `release ${t.release} (namespace ${t.namespace}) is installed: ${describeRevision(state.last)}; skipIf: installed`;
      return { session, t, values: {}, ref: { chart: "", flags: [] }, decision: { action: "skip", reason, last: state.last } };
    }

    const values = await computeValues(step.action, { baseDir: ctx.spec.baseDir, signal: ctx.signal, redactor: ctx.redactor, deadline: ctx.deadline });
    const ref = await chartRef(session, t, ctx.spec.baseDir);

    if (state.kind !== "present") {
      const desired = await desiredChart(session, t, ref, ctx.spec.baseDir);
      const was = state.kind === "uninstalled" ? `${describeRevision(state.last)}` : "not installed";
      return { session, t, values, ref, decision: { action: "install", reason: `${was} -> ${chartLabel(desired)}`, desired, state } };
    }

    const last = state.last;
    const deployedValues = stored?.latestValues ?? (await session.userValues(t.release, t.namespace));
    registerPreviousSecrets(ctx.redactor, values, deployedValues);
    const desired = await desiredChart(session, t, ref, ctx.spec.baseDir);
    const sameChart = last.chart === `${desired.name}-${desired.version}`;
    const upgrade = (why: string, manifests?: Prepared["manifests"]): Prepared => ({
      session,
      t,
      values,
      ref,
      decision: { action: "upgrade", reason: `${describeRevision(last)} -> ${chartLabel(desired)}${why}`, desired, last },
      ...(manifests !== undefined ? { manifests } : {}),
    });
    if (last.status !== "deployed") return upgrade(last.status === "failed" ? " (the last revision failed)" : "");
    if (!sameChart) return upgrade("");
    if (!sameValues(deployedValues, values)) return upgrade(" (values changed)");
    // The render hooks' fingerprint rides on the release: changed hooks re-render it. Specs without hooks skip the lookup.
    if (ctx.spec.hooks.length > 0 && !(await session.hasLabels(t.release, t.namespace, { [HOOKS_LABEL]: renderHooksFingerprint(step) ?? null }))) {
      return upgrade(" (hooks changed)");
    }
    if (t.source.form === "local") {
      const before = await session.rawManifest(t.release, t.namespace);
      const after = await dryRun(session, t, ref, values, "upgrade", step, ctx);
      if (normalizeManifest(before) !== normalizeManifest(after)) return upgrade(" (chart content changed)", { before, after });
    }
    return {
      session,
      t,
      values,
      ref,
      decision: { action: "no-op", reason: `${describeRevision(last)} is up to date (same chart and values)`, last },
      ...(stored?.latestManifest !== undefined ? { deployedManifest: stored.latestManifest } : {}),
    };
  } catch (e) {
    session.close();
    throw e;
  }
}

const SECRETS: ResourceType = { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true };

/**
 * The release's history and latest user values from helm's storage Secrets, in one list request
 * instead of `helm history` and `helm get values` (two helm processes per step, the bulk of a
 * re-run). Undefined means "ask helm": another storage driver, no permission to list Secrets, or
 * a record helm did not write.
 */
async function storedReleasesOf(ctx: StepContext, t: { release: string; namespace: string }): Promise<StoredReleases | undefined> {
  const driver = process.env["HELM_DRIVER"];
  if (driver !== undefined && driver !== "" && driver !== "secret" && driver !== "secrets") return undefined;
  try {
    const list = await ctx.kube.list(SECRETS, { namespace: t.namespace, labelSelector: releaseSelector(t.release), signal: ctx.signal });
    return storedReleases(list.items, t.release);
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return undefined;
  }
}

/** `helm get manifest` ends with an extra newline the release JSON's manifest does not have. */
function normalizeManifest(m: string): string {
  return m.replace(/\s+$/, "") + "\n";
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
async function hookRenderer(session: HelmSession, ctx: StepContext, send: boolean): Promise<{ renderer: PostRenderer; hookError: () => unknown } | undefined> {
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
async function withHookRenderer<T>(session: HelmSession, ctx: StepContext, send: boolean, run: (postRenderer: string | undefined) => Promise<T>): Promise<T> {
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

async function dryRun(session: HelmSession, t: Target, ref: ChartRef, values: Values, mode: "install" | "upgrade", step: HelmStep, ctx: StepContext): Promise<string> {
  const r = await withHookRenderer(session, ctx, false, (postRenderer) => session.installOrUpgrade({
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
  }));
  return r.rawManifest;
}

/**
 * Where helm installs from, and who waits. A `wait: true` step waits with khook's watches
 * (helm --wait polls every 2 s) unless the chart may have hooks, whose post-install and
 * post-upgrade phases helm --wait runs only once the release is ready, or the step is
 * `atomic`, whose rollback on a failed wait is helm's. A repository or OCI chart is pulled
 * first so its files can be read; helm then installs from that archive (one download either way).
 */
async function installSource(session: HelmSession, ref: ChartRef, t: Target, step: HelmStep, ctx: StepContext): Promise<{ chart: ChartRef; khookWaits: boolean }> {
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
 * A helm that dies mid-operation (killed, out of memory, its node gone) leaves
 * the release pending-install/-upgrade, and every later helm call refuses it.
 * Say so with the failure, and the exact recovery command, rather than only on
 * the next run. khook does not recover the release itself: helm records no
 * owner for a pending operation, so khook cannot tell its own dead helm from
 * another client's live one, and a rollback would undo that one's work.
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
  const p = await prepare(step, ctx);
  try {
    const assessment = { action: p.decision.action, reason: p.decision.reason };
    if (opts?.diff !== true) return assessment;
    return { ...assessment, diff: await releaseDiff(step, ctx, p).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))) };
  } finally {
    p.session.close();
  }
}

/**
 * The release's manifest diff: the deployed manifest (none for an install) against a
 * server-side dry run of the install or upgrade, both made once (prepare's, for a local chart).
 */
async function releaseDiff(step: HelmStep, ctx: StepContext, p: Prepared): Promise<string> {
  const { session, t, decision } = p;
  // A skipped or up-to-date release changes nothing.
  if (decision.action === "skip" || decision.action === "no-op") return "";
  // Raw texts, so that a changed secret still shows as a changed line; the diff is redacted as a whole.
  const before = decision.action === "install" ? "" : normalizeManifest(p.manifests?.before ?? (await session.rawManifest(t.release, t.namespace)));
  const after = normalizeManifest(p.manifests?.after ?? (await dryRun(session, t, p.ref, p.values, decision.action, step, ctx)));
  const where = `${t.namespace}/${t.release}`;
  const oldLabel = decision.action === "install" ? `${where} (not installed)` : `${where} ${describeRevision(decision.last)}`;
  const newLabel = `${where} ${chartLabel(decision.desired ?? { name: t.described, version: "" })} (server dry-run)`;
  const masked = maskSecretData(before, after);
  return ctx.redactor.redact(unifiedDiff(masked.before, masked.after, { old: oldLabel, new: newLabel }));
}

async function apply(step: HelmStep, ctx: StepContext): Promise<StepOutcome> {
  const p = await prepare(step, ctx);
  const { session, t, decision } = p;
  try {
    switch (decision.action) {
      case "skip":
        return { status: "skipped", reason: decision.reason };
      case "no-op":
        // khook's own wait leaves a release that never became ready `deployed`: check it again rather than trust it.
        if (step.action.wait) await waitForRelease(p.deployedManifest ?? (await session.rawManifest(t.release, t.namespace)), { name: t.release, namespace: t.namespace }, ctx);
        return { status: "ok", reason: `no-op: ${decision.reason}` };
      case "install":
      case "upgrade": {
        ctx.log(`${decision.action === "install" ? "installing" : "upgrading"} release ${t.release} (namespace ${t.namespace}): ${decision.reason}; chart ${t.described}`);
        const desired = decision.desired;
        if (ctx.hooks !== undefined) {
          // seed 004's context: chart (with appVersion: one `helm show chart`), release, merged values and the
          // cluster's capabilities. Only when a hook will read them: specs without hooks pay nothing.
          const [capabilities, shown] = await Promise.all([
            ctx.kube.capabilities?.({ signal: ctx.signal }).catch(() => undefined),
            session.showChart(p.ref).catch(() => undefined),
          ]);
          const chart = shown ?? desired;
          ctx.hooks.setExtras({
            ...(chart !== undefined ? { chart: { name: chart.name, version: chart.version, ...(shown?.appVersion !== undefined ? { appVersion: shown.appVersion } : {}) } } : {}),
            release: { name: t.release, namespace: t.namespace },
            values: p.values,
            ...(capabilities !== undefined ? { capabilities } : {}),
          });
        }
        const fingerprint = renderHooksFingerprint(step);
        // Set when hooks exist, cleared (helm's `null`) when they were removed; untouched in specs without hooks.
        const hookLabel: Record<string, string> = fingerprint !== undefined ? { [HOOKS_LABEL]: fingerprint } : ctx.spec.hooks.length > 0 && decision.action === "upgrade" ? { [HOOKS_LABEL]: "null" } : {};
        const install = await installSource(session, p.ref, t, step, ctx);
        const r = await withPendingHint(session, t, () => withHookRenderer(session, ctx, true, (postRenderer) => session.installOrUpgrade({
          postRenderer,
          mode: decision.action,
          release: t.release,
          namespace: t.namespace,
          chart: install.chart,
          valuesFile: valuesFile(session, p.values),
          createNamespace: step.action.createNamespace,
          atomic: step.action.atomic,
          wait: step.action.wait && !install.khookWaits,
          timeoutMs: helmTimeoutMs(ctx.deadline),
          // The ownership marker. On upgrade, helm keeps the labels an earlier revision carried,
          // and a release khook did not install must not become khook's by being upgraded.
          labels: { ...(decision.action === "install" ? ownershipLabels(ctx.spec.name) : {}), ...hookLabel },
        })));
        if (install.khookWaits) await waitForRelease(r.rawManifest, { name: t.release, namespace: t.namespace }, ctx);
        const verb = decision.action === "install" ? "installed" : "upgraded to";
        return {
          status: "ok",
          revision: r.revision,
          reason: `${verb} revision ${r.revision} (${r.chart ?? chartLabel(decision.desired ?? { name: "?", version: "?" })}, ${r.status}) of release ${t.release} (namespace ${t.namespace})`,
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
    const labels = ownershipLabels(ctx.spec.name);
    if (!(await session.hasLabels(release, namespace, labels))) {
      return {
        status: "skipped",
        reason: `release ${release} (namespace ${namespace}) was not installed by khook for spec ${ctx.spec.name} (no ${MANAGED_BY_LABEL}=khook, ${SPEC_LABEL}=${labels[SPEC_LABEL]} release labels); left alone`,
      };
    }
    ctx.log(`uninstalling release ${release} (namespace ${namespace}) and waiting for its resources to be gone`);
    await session.uninstall(release, namespace, helmTimeoutMs(ctx.deadline));
    return { status: "ok", reason: `uninstalled release ${release} (namespace ${namespace}); its resources are gone` };
  } finally {
    session.close();
  }
}

export const helmExecutor: StepExecutor<"helm"> = { type: "helm", diffs: true, assess, apply, destroy };

// ------------------------------------------------------------------ secrets in diffs

/**
 * Like `kubectl diff`, never shows a Secret's data: each value becomes `***`,
 * or `*** (before)` / `*** (after)` where it changed. Other documents are kept
 * as they are.
 */
export function maskSecretData(before: string, after: string): { before: string; after: string } {
  const a = splitManifest(before);
  const b = splitManifest(after);
  const secretsOf = (docs: ManifestDoc[]): Map<string, Record<string, unknown>> =>
    new Map(docs.flatMap((d) => (d.secretKey !== undefined && d.parsed !== undefined ? [[d.secretKey, d.parsed] as const] : [])));
  const av = secretsOf(a);
  const bv = secretsOf(b);
  const render = (docs: ManifestDoc[], other: Map<string, Record<string, unknown>>, side: "before" | "after"): string =>
    docs
      .map((d) => {
        if (d.secretKey === undefined || d.parsed === undefined) return d.text;
        const theirs = other.get(d.secretKey) as KubeObject | undefined;
        const mine = d.parsed as KubeObject;
        const masked = side === "before" ? maskSecretPair(mine, theirs).before : maskSecretPair(theirs, mine).after;
        return `${d.header}${stringifyYaml(masked)}`;
      })
      .join("");
  return { before: render(a, bv, "before"), after: render(b, av, "after") };
}

interface ManifestDoc {
  text: string;
  header: string;
  parsed: Record<string, unknown> | undefined;
  secretKey: string | undefined;
}

function splitManifest(text: string): ManifestDoc[] {
  if (text === "") return [];
  const parts = text.split(/(?=^---[ \t]*$)/m);
  return parts.map((part) => {
    const doc: ManifestDoc = { text: part, header: "", parsed: undefined, secretKey: undefined };
    let parsed: unknown;
    try {
      const docs = parseAllDocuments(part);
      if (!Array.isArray(docs) || docs.length !== 1 || docs[0]!.errors.length > 0) return doc;
      parsed = docs[0]!.toJS();
    } catch {
      return doc;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return doc;
    const o = parsed as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    if (o.kind !== "Secret") return doc;
    // Keep the `---` line and helm's `# Source:` comment above the object.
    const lines = part.split("\n");
    let i = 0;
    while (i < lines.length && (/^---/.test(lines[i]!) || /^\s*#/.test(lines[i]!) || lines[i]!.trim() === "")) i++;
    doc.header = lines.slice(0, i).join("\n") + (i > 0 ? "\n" : "");
    doc.parsed = parsed as Record<string, unknown>;
    doc.secretKey = `${String(o.metadata?.namespace ?? "")}/${String(o.metadata?.name ?? "")}`;
    return doc;
  });
}
