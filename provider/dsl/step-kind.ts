/**
 * What the loader needs from a step kind. Each kind is one unit under provider/steps/<kind>/
 * (its definition, defaults, rules, summary and executor); the loader takes the kinds as an
 * argument (dsl/loader.ts `loadSpecWith`), so the DSL knows no kind by name and a new kind
 * changes nothing here.
 */
import type { HookPoints } from "./hook-events.js";
import type { PositionLookup } from "../errors.js";

/** The keys under which an action names a local file or directory (`chart:` only when its value is a path). */
export type LocalFileKey = "file" | "kustomize" | "chart";

/** A local file or directory that an action references, resolved against the spec's directory. */
export interface FileReference {
  role: "manifest" | "kustomize" | "values" | "chart" | "function";
  /** As written in the spec. */
  written: string;
  resolved: string;
  /** Pointer of the field that names it, relative to the action block (e.g. `/manifests/2/file`). */
  field: string;
}

/** Reports one problem at a JSON pointer; `rule` names the rule (docs and tests refer to it). */
export type Report = (path: string, message: string, rule: string, severity?: "error" | "warning") => void;

/** The JSON pointer of a field, from the action block (or, for `step`, from the step). */
export type Pointer = (...rest: (string | number)[]) => string;

/** What a kind's rules may look at besides its action block. */
export interface KindRuleContext {
  readonly baseDir: string;
  readonly positionOf: PositionLookup;
  /** False for a step `when:` excludes: its local files may be absent, so only their form is checked. */
  readonly readFiles: boolean;
  /**
   * The step: its name when the spec gives one as a string (a wrong or missing name is the
   * schema's problem to report, and does not keep the kind's rules from running), and a pointer
   * into it.
   */
  readonly step: { readonly name: string | undefined; readonly at: Pointer };
}

/**
 * A step kind, as the loader reads it. `Action` is the block as written (and as the schema
 * promises it: rules run only on schema-valid blocks); `Normalized` is the block with every
 * default applied, which the hash, the summary and the executor read.
 */
export interface StepKind<Name extends string = string, Action = unknown, Normalized = unknown> {
  /** The action key, e.g. `helm`. */
  readonly name: Name;
  /** The block with every default applied (fields left out, or null, take the default). Once, at load. */
  normalize(action: Action, stepName: string): Normalized;
  /**
   * The defaults that apply to this block: the hash leaves out the fields equal to them, so
   * writing a default, or adding a field with a default later, never changes a hash.
   */
  defaultsOf(action: Normalized): Readonly<Record<string, unknown>>;
  /** Rewrites the hash's canonical form of the block where two spellings mean the same thing. */
  canonical?(block: Record<string, unknown>, stepName: string): void;
  /** One line for plans and progress; never a credential. */
  summary(stepName: string, action: Normalized): string;
  /** The rules of the block that the schema cannot state. */
  rules(action: Action, at: Pointer, ctx: KindRuleContext, report: Report): void;
  /** The local files the block references, in the order the input hash takes them. */
  files(action: Normalized, baseDir: string): FileReference[];
  /** The keys under which `files` finds them (the Pulumi bundle's quick scan of the text looks for these). */
  readonly localFileKeys: readonly LocalFileKey[];
  /** The hook points its steps have besides after-step: which events happen on it. */
  readonly hookPoints: HookPoints;
  /** Credentials in the block (passwords, URL userinfo), masked everywhere; read before validation, so `block` may be anything. */
  credentials?(block: unknown): string[];
}

/** The kinds a loader knows, by action key. */
export type KindSet = Readonly<Record<string, StepKind>>;

/** The kind of a step: its one action key among `kinds`, or undefined (none, or several). */
export function kindOf(step: unknown, kinds: KindSet): StepKind | undefined {
  if (step === null || typeof step !== "object") return undefined;
  const keys = Object.keys(kinds).filter((k) => Object.hasOwn(step, k));
  return keys.length === 1 ? kinds[keys[0]!] : undefined;
}

/** `in all namespaces`, `in apps` or `in the current namespace`, for summaries. */
export function inNamespace(namespace: string | undefined, all: boolean | undefined): string {
  return all ? "in all namespaces" : `in ${namespace ?? "the current namespace"}`;
}
