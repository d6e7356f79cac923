/**
 * What loading produces: an immutable, fully validated spec that the planner,
 * the engine and the adapters consume. Nothing downstream re-reads the text.
 */
import type { Diagnostic, SourcePosition } from "../errors.js";
import type { Redactor } from "../redact.js";
import type { LoadedHook } from "./hooks.js";
import type { HookPoint } from "./hook-events.js";
import type { OnError } from "./document.js";

/** A loaded step of the kind `Type`, whose normalized block is `Action` (steps/<kind>/definition.ts names it). */
export interface LoadedStepBase<Type extends string = string, Action = unknown> {
  readonly name: string;
  /** Its kind: the action key. */
  readonly type: Type;
  /** The action block after substitution, with every default of its kind applied; relative paths left as written. Frozen. */
  readonly action: Action;
  readonly needs: readonly string[];
  readonly when: string | undefined;
  /** Whether its `when:` condition holds (decided once, at load); true without a `when:`. A step whose condition does not hold is reported skipped, "excluded by when:". */
  readonly whenHolds: boolean;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly retryDelayMs: number;
  readonly onError: OnError;
  /** 0-based level in the DAG: 1 + the highest level among `needs`. */
  readonly level: number;
  /** sha256 of the canonical action block plus referenced local file contents, `sha256:<hex>`. */
  readonly inputHash: string;
  /** The local files (as written) of a step excluded by `when:`: not read, not hashed, and allowed to be absent. */
  readonly unreadFiles?: readonly string[];
  /** A one-line description of the target, safe to print (no credentials). */
  readonly summary: string;
  /** The hooks that apply to this step (any event), in run order: priority, then document order. */
  readonly hooks: readonly LoadedHook[];
  /** The points of its life where hook events happen (its kind's, for its form): which events apply to it. */
  readonly hookPoints: readonly HookPoint[];
  /** Index in `steps:` and the step's source position. */
  readonly index: number;
  readonly position: SourcePosition | undefined;
}

/** A loaded step of any kind (an executor reads its own kind's LoadedStepBase). */
export type LoadedStep = LoadedStepBase;

export interface StateSettings {
  readonly namespace: string;
  readonly name: string;
}

export interface LoadedSpec {
  readonly name: string;
  /** The spec file, or undefined for stdin / inline text. */
  readonly file: string | undefined;
  /** Directory that relative paths resolve against: the spec file's directory, else the working directory. */
  readonly baseDir: string;
  /** Steps in document order. */
  readonly steps: readonly LoadedStep[];
  readonly stepsByName: ReadonlyMap<string, LoadedStep>;
  /** Step names grouped by level, each level in document order. */
  readonly levels: readonly (readonly string[])[];
  /** undefined when the spec has no enabled `state:` block. */
  readonly state: StateSettings | undefined;
  /** Whether the document has a `state:` block, and whether it is enabled: Pulumi journals by default unless it is disabled. */
  readonly stateDeclared: "absent" | "enabled" | "disabled";
  /** Every hook of `hooks:`, in run order (priority, then document order). Empty without `hooks:`. */
  readonly hooks: readonly LoadedHook[];
  /** Hash over every step's name and input hash, plus the state settings. */
  readonly specHash: string;
  /** The merged variable map (values may be secret: never print it unredacted). */
  readonly vars: ReadonlyMap<string, string>;
  readonly redactor: Redactor;
  readonly warnings: readonly Diagnostic[];
}
