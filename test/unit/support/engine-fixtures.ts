/**
 * LoadedSpec fixtures and stub executors for the engine and state tests.
 * Specs are built directly (no loader): the engine only consumes LoadedSpec.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { RunOptions, RunResult, StepContextExtras, StepResult } from "../../../provider/engine/run-types.js";
import { runSpec } from "../../../provider/engine/run.js";
import { Journal } from "../../../provider/state/journal.js";
import { parseRecord, type StateRecord } from "../../../provider/state/index.js";
import type { MemoryRecordStore } from "./memory-record-store.js";
import { Redactor } from "../../../provider/redact.js";
import type { LoadedSpec, LoadedStep } from "../../../provider/dsl/loaded.js";
import type { OnError } from "../../../provider/dsl/document.js";
import { stepHookPoints } from "../../../provider/dsl/hook-events.js";
import { KINDS, KIND_NAMES, type KindName } from "../../../provider/steps/index.js";
import type {
  Assessment,
  DestroyOutcome,
  DriftFinding,
  ExecutorRegistry,
  StepContext,
  StepExecutor,
  StepOutcome,
} from "../../../provider/steps/contract.js";

export interface StepFixture {
  name: string;
  type?: KindName;
  needs?: string[];
  /** A `when:` expression; the step is excluded when `whenHolds` is false. */
  when?: string;
  whenHolds?: boolean;
  timeoutMs?: number;
  retries?: number;
  retryDelayMs?: number;
  onError?: OnError;
  /** Default: derived from the name and `version`. */
  inputHash?: string;
  /** Changes the default input hash, like editing the step. */
  version?: number;
  action?: unknown;
}

export interface SpecFixtureOptions {
  name?: string;
  state?: { namespace: string; name: string } | false;
  /** Values registered with the redactor. */
  secrets?: string[];
}

export function hashOf(name: string, version = 1): string {
  return `sha256:${createHash("sha256").update(`${name}#${version}`).digest("hex")}`;
}

export function specFixture(fixtures: StepFixture[], opts: SpecFixtureOptions = {}): LoadedSpec {
  const redactor = new Redactor();
  for (const s of opts.secrets ?? []) redactor.add(s);
  const levelOf = new Map<string, number>();
  const byFixture = new Map(fixtures.map((f) => [f.name, f]));
  const level = (name: string, seen = new Set<string>()): number => {
    const known = levelOf.get(name);
    if (known !== undefined) return known;
    if (seen.has(name)) throw new Error(`fixture cycle at ${name}`);
    seen.add(name);
    const f = byFixture.get(name);
    const l = f && f.needs && f.needs.length > 0 ? 1 + Math.max(...f.needs.map((n) => level(n, seen))) : 0;
    levelOf.set(name, l);
    return l;
  };
  const steps: LoadedStep[] = fixtures.map(
    (f, index) =>
      ({
        name: f.name,
        type: f.type ?? "apply",
        action: f.action ?? { manifests: [{ inline: `# ${f.name}` }] },
        needs: f.needs ?? [],
        when:
          f.when ??
          (f.whenHolds === false ? `vars.get("ENABLE_${f.name.toUpperCase()}", "false") == "true"` : undefined),
        whenHolds: f.whenHolds ?? true,
        timeoutMs: f.timeoutMs ?? 300_000,
        retries: f.retries ?? 0,
        retryDelayMs: f.retryDelayMs ?? 10_000,
        onError: f.onError ?? "fail",
        level: level(f.name),
        inputHash: f.inputHash ?? hashOf(f.name, f.version),
        summary: `${f.type ?? "apply"} ${f.name}`,
        hooks: [],
        hookPoints: stepHookPoints(KINDS[f.type ?? "apply"].hookPoints, f.action ?? { manifests: [] }),
        index,
        position: { line: index + 1, column: 1 },
      }) as unknown as LoadedStep,
  );
  const maxLevel = Math.max(0, ...steps.map((s) => s.level));
  const levels = Array.from({ length: maxLevel + 1 }, (_, l) => steps.filter((s) => s.level === l).map((s) => s.name));
  const name = opts.name ?? "fixture";
  const state =
    opts.state === false ? undefined : (opts.state ?? { namespace: "default", name: `khook-state-${name}` });
  return {
    name,
    file: undefined,
    baseDir: process.cwd(),
    steps,
    stepsByName: new Map(steps.map((s) => [s.name, s])),
    levels,
    hooks: [],
    state,
    stateDeclared: state === undefined ? "absent" : "enabled",
    specHash: `sha256:${createHash("sha256")
      .update(steps.map((s) => `${s.name}=${s.inputHash}`).join("\n"))
      .digest("hex")}`,
    vars: new Map(),
    redactor,
    warnings: [],
  };
}

/** The context extras a test run needs (nothing today; a kube stub once StepContext grows one). */
export const noExtras = {} as StepContextExtras;

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export interface CallInfo {
  readonly step: LoadedStep;
  readonly ctx: StepContext;
  readonly kind: "apply" | "destroy" | "assess" | "drift";
  /** 1-based, per step and kind. */
  readonly attempt: number;
}

export type Handler = (
  call: CallInfo,
) =>
  | Promise<StepOutcome | DestroyOutcome | Assessment | DriftFinding | void>
  | StepOutcome
  | DestroyOutcome
  | Assessment
  | DriftFinding
  | void;

/**
 * One stub executor for every step type. `on(name, handler)` scripts a step;
 * unscripted steps succeed at once. `trace` records `start:x` / `end:x` /
 * `fail:x` in the order things happened.
 */
export class StubExecutors {
  readonly trace: string[] = [];
  readonly calls: CallInfo[] = [];
  private readonly handlers = new Map<string, Handler>();
  private readonly attempts = new Map<string, number>();
  running = 0;
  maxRunning = 0;

  on(name: string, handler: Handler): this {
    this.handlers.set(name, handler);
    return this;
  }

  started(name: string, kind: CallInfo["kind"] = "apply"): number {
    return this.calls.filter((c) => c.step.name === name && c.kind === kind).length;
  }

  /** A registry with a stub for every step type. */
  get map(): ExecutorRegistry {
    return Object.fromEntries(KIND_NAMES.map((t) => [t, this.executor(t)]));
  }

  private executor(type: KindName): StepExecutor {
    const call = async (kind: CallInfo["kind"], step: LoadedStep, ctx: StepContext): Promise<unknown> => {
      const key = `${kind}:${step.name}`;
      const attempt = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, attempt);
      const info: CallInfo = { step, ctx, kind, attempt };
      this.calls.push(info);
      const prefix = kind === "apply" ? "" : `${kind}-`;
      this.trace.push(`${prefix}start:${step.name}`);
      this.running++;
      this.maxRunning = Math.max(this.maxRunning, this.running);
      try {
        const h = this.handlers.get(step.name);
        const out = h ? await h(info) : undefined;
        this.trace.push(`${prefix}end:${step.name}`);
        if (kind === "assess") return out ?? { action: "install", reason: `stub assess of ${step.name}` };
        if (kind === "drift") return out ?? { state: "in-sync", reason: `stub drift of ${step.name}` };
        return out ?? { status: "ok", reason: `${kind} ${step.name} done` };
      } catch (e) {
        this.trace.push(`${prefix}fail:${step.name}`);
        throw e;
      } finally {
        this.running--;
      }
    };
    return {
      type,
      assess: (step, ctx) => call("assess", step as LoadedStep, ctx) as Promise<Assessment>,
      apply: (step, ctx) => call("apply", step as LoadedStep, ctx) as Promise<StepOutcome>,
      destroy: (step, ctx) => call("destroy", step as LoadedStep, ctx) as Promise<DestroyOutcome>,
      drift: (step, ctx) => call("drift", step as LoadedStep, ctx) as Promise<DriftFinding>,
    };
  }
}

/** Resolves after pending I/O callbacks and timers of 0ms have run. */
export function tick(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** A sleep that records the requested pauses and returns at once. */
export function recordingSleep(): { sleeps: number[]; sleep: (ms: number, signal: AbortSignal) => Promise<void> } {
  const sleeps: number[] = [];
  return {
    sleeps,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      if (signal.aborted) throw signal.reason;
    },
  };
}

/** a -> b -> c */
export const CHAIN: StepFixture[] = [{ name: "a" }, { name: "b", needs: ["a"] }, { name: "c", needs: ["b"] }];

/** One step's result; fails the test when the run has none of that name. */
export function resultOf(r: RunResult, name: string): StepResult {
  const s = r.steps.find((x) => x.name === name);
  assert.ok(s, `no result for ${name}`);
  return s;
}

/** The record the store holds; fails the test when none was written or it does not parse. */
export function storedRecord(store: MemoryRecordStore): StateRecord {
  assert.ok(store.json, "no record written");
  const p = parseRecord(store.json);
  assert.ok(p.ok);
  return p.record;
}

/** An apply of `spec` on the stubs, journaled in `store` (what the resume and repair tests run). */
export function journaledApply(
  spec: LoadedSpec,
  stubs: StubExecutors,
  store: MemoryRecordStore,
  extra: Partial<RunOptions> = {},
): Promise<RunResult> {
  return runSpec(spec, {
    mode: "apply",
    executors: stubs.map,
    context: noExtras,
    journal: Journal.forSpec(spec, store),
    sleep: recordingSleep().sleep,
    ...extra,
  });
}
