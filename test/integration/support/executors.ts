/**
 * What integration tests need to call the kube layer and the step executors directly
 * against the shared test cluster: one KubeClient per test process, a checked kubectl,
 * specs loaded from step YAML, hand-built steps, and a StepContext.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, type TestContext } from "node:test";
import { testCluster, toolEnv, toolPath, withNamespace, type TestCluster } from "../../harness/index.js";
import { run } from "../../harness/util.js";
import { KubeClient } from "../../../provider/kube/index.js";
import { Redactor } from "../../../provider/redact.js";
import { releaseOwnershipLabels } from "../../../provider/ownership.js";
import { loadSpec } from "../../../provider/load-spec.js";
import type { LoadedSpec, LoadedStep } from "../../../provider/dsl/loaded.js";
import { stepHookPoints } from "../../../provider/dsl/hook-events.js";
import { KINDS, type KindName, type StepOf } from "../../../provider/steps/index.js";
import type { Kind } from "../../../provider/steps/contract.js";
import type { StepContext, StepExecutor, ToolPaths } from "../../../provider/steps/contract.js";

let shared: KubeClient | undefined;
after(() => shared?.close());

/** The test cluster and one KubeClient connected to it, shared by every test in this process. */
export async function sharedKube(): Promise<{ cluster: TestCluster; kube: KubeClient }> {
  const cluster = await testCluster();
  shared ??= await KubeClient.connect({ kubeconfigPath: cluster.kubeconfig });
  return { cluster, kube: shared };
}

export type Kubectl = (args: string[], input?: string) => Promise<string>;

/** A fresh namespace, the shared client, and a kubectl that fails the test on a non-zero exit. */
export async function kubeSetup(
  t: TestContext,
  prefix: string,
): Promise<{ cluster: TestCluster; ns: string; kube: KubeClient; kubectl: Kubectl }> {
  const { cluster, kube } = await sharedKube();
  const ns = await withNamespace(t, prefix);
  const kubectl: Kubectl = async (args, input) => {
    const full = input === undefined ? args : [...args, "-f", "-"];
    const r = await cluster.kubectl(full, input === undefined ? {} : { input });
    assert.equal(r.code, 0, `kubectl ${full.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  };
  return { cluster, ns, kube, kubectl };
}

/** Loads a spec made of the given step YAML (indented under `steps:`), from a fresh directory holding `files`. */
export function specFromSteps(
  stepsYaml: string,
  opts: { name?: string; env?: Record<string, string>; files?: Record<string, string> } = {},
): LoadedSpec {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-it-"));
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  fs.writeFileSync(
    path.join(dir, "spec.yaml"),
    `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: ${opts.name ?? "it"}\nsteps:\n${stepsYaml}`,
  );
  return loadSpec({ file: path.join(dir, "spec.yaml"), env: opts.env ?? {} });
}

/** A step built directly (no spec), for executors that only read their action. */
export function loadedStep<K extends KindName>(
  type: K,
  action: Parameters<(typeof KINDS)[K]["normalize"]>[0],
  name: string = type,
): StepOf<K> {
  // What the loader does: the kind's defaults applied once (its normalize).
  const kind: Kind = KINDS[type];
  const normalized = kind.normalize(action, name);
  const step = {
    name,
    type,
    action: normalized,
    needs: [],
    hooks: [],
    hookPoints: stepHookPoints(kind.hookPoints, normalized),
    when: undefined,
    whenHolds: true,
    timeoutMs: 120_000,
    retries: 0,
    retryDelayMs: 0,
    onError: "fail",
    level: 0,
    inputHash: "sha256:test",
    summary: type,
    index: 0,
    position: undefined,
  };
  return step as unknown as StepOf<K>;
}

export interface ContextOptions {
  /** The spec the step came from; its redactor is used. Absent: an empty redactor and no spec. */
  spec?: LoadedSpec;
  timeoutMs?: number;
  signal?: AbortSignal;
  tools?: ToolPaths;
  /** Also called with every (redacted) progress line. */
  onLog?: (line: string) => void;
}

/** A StepContext on the shared test cluster with a live deadline; `logs` collects the executor's progress lines. */
export async function executorContext(opts: ContextOptions = {}): Promise<StepContext & { logs: string[] }> {
  const { cluster, kube } = await sharedKube();
  const redactor = opts.spec?.redactor ?? new Redactor();
  const deadlineAt = Date.now() + (opts.timeoutMs ?? 180_000);
  const logs: string[] = [];
  return {
    spec: opts.spec as LoadedSpec,
    kube,
    signal: opts.signal ?? new AbortController().signal,
    redactor,
    get deadline() {
      return Math.max(0, deadlineAt - Date.now());
    },
    log: (m: string) => {
      const line = redactor.redact(m);
      logs.push(line);
      opts.onLog?.(line);
    },
    connection: { kubeconfigPath: cluster.kubeconfig },
    tools: opts.tools ?? { helm: toolPath("helm"), kustomize: toolPath("kustomize") },
    logs,
  };
}

/** Whether the release carries this spec's ownership labels, the marker destroy reads before it uninstalls. */
export async function releaseOwnedBy(release: string, namespace: string, specName: string): Promise<boolean> {
  const cluster = await testCluster();
  const selector = Object.entries(releaseOwnershipLabels(specName))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const r = await run(
    toolPath("helm"),
    ["list", "-n", namespace, "--all", "--selector", selector, "-o", "json", "--kubeconfig", cluster.kubeconfig],
    { env: toolEnv() },
  );
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { name: string }[]).some((x) => x.name === release);
}

/** The step's diff as `plan --diff` gets it: from assess, asked for it. Throws when the diff could not be made. */
export async function assessDiff<S extends LoadedStep>(
  executor: StepExecutor<S>,
  step: S,
  ctx: StepContext,
): Promise<string> {
  const { diff } = await executor.assess(step, ctx, { diff: true });
  if (diff instanceof Error) throw diff;
  return diff ?? "";
}
