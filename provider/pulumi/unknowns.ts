/**
 * Preview while some inputs are not known yet.
 *
 * The most common program creates the cluster and bootstraps it in the same
 * `pulumi up`, so at preview the `kubeconfig` (and often a variable fed by
 * another resource) is the dynamic provider protocol's unknown sentinel.
 * What an unknown hides:
 *  - a targeting input (kubeconfig, context, parallelism, timeout, ...):
 *    nothing; the spec validates and plans in full;
 *  - one variable: the steps whose text mentions it (their inputs, or their
 *    `when:`); every other step is planned, and problems outside those steps
 *    still fail the preview;
 *  - the spec text, its files, var files, or a whole variable map: everything
 *    (there is no spec to read yet).
 */
import type * as StepsModule from "../steps/index.js";
import { SPEC_INPUT_KEYS, TARGETING_KEYS, UNKNOWN, containsUnknown } from "./wire.js";
import type * as YamlModule from "yaml";

/** What the plan says for a step whose inputs are unknown. */
export const KNOWN_AFTER = "known after the cluster/values exist";

const VARIABLE_MAPS = ["vars", "secretVars", "envVars"] as const;

export interface UnknownInputs {
  /** Targeting properties whose value is unknown (passed through, never validated). */
  readonly targeting: string[];
  /** Spec-shaping properties unknown as a whole: nothing can be planned. */
  readonly opaque: string[];
  /** Variables whose value is unknown, by name, sorted. */
  readonly variables: string[];
}

export function classifyUnknowns(raw: Record<string, unknown>): UnknownInputs {
  const targeting = TARGETING_KEYS.filter((k) => containsUnknown(raw[k]));
  const variables = new Set<string>();
  const opaque: string[] = [];
  for (const key of SPEC_INPUT_KEYS) {
    const v = raw[key];
    if (!containsUnknown(v)) continue;
    const perName =
      (VARIABLE_MAPS as readonly string[]).includes(key) && v !== null && typeof v === "object" && !Array.isArray(v);
    if (!perName) {
      opaque.push(key);
      continue;
    }
    for (const [name, value] of Object.entries(v as Record<string, unknown>)) {
      if (containsUnknown(value)) variables.add(name);
    }
  }
  return { targeting, opaque, variables: [...variables].sort() };
}

/** The raw inputs without the unknown targeting properties (they are validated once known). */
export function withoutUnknownTargeting(raw: Record<string, unknown>, u: UnknownInputs): Record<string, unknown> {
  const out = { ...raw };
  for (const k of u.targeting) delete out[k];
  return out;
}

export interface RawStep {
  readonly index: number;
  readonly name: string;
  readonly type: string;
  /** The unknown variables the step's text mentions. */
  readonly unknown: readonly string[];
}

/**
 * The steps as written (before substitution), each with the unknown variables
 * its text mentions: `${NAME...}` in its action or a bare NAME in its `when:`.
 * A mention is a whole-word match, so a step can be over-reported (it then
 * waits for the value), never under-reported. undefined when the text is not
 * readable YAML as written.
 */
export function rawSteps(specText: string, unknown: readonly string[]): RawStep[] | undefined {
  // Loaded on use: a preview with nothing unknown never needs the positioned parser.
  const { parseDocument, isMap, isSeq } = require("yaml") as typeof YamlModule;
  let doc;
  try {
    doc = parseDocument(specText, { prettyErrors: false, strict: false, uniqueKeys: false });
  } catch {
    return undefined;
  }
  if (doc.errors.length > 0 || !isMap(doc.contents)) return undefined;
  const steps = doc.contents.get("steps", true);
  if (!isSeq(steps)) return undefined;
  const words = unknown.map((n) => ({ n, re: new RegExp(`(^|[^A-Za-z0-9_])${n}([^A-Za-z0-9_]|$)`) }));
  return steps.items.map((item, index) => {
    const range = (item as { range?: [number, number, number] }).range;
    const text = range ? specText.slice(range[0], range[1]) : "";
    const plain = isMap(item) ? (item.toJSON() as Record<string, unknown>) : {};
    const name = typeof plain.name === "string" ? plain.name : `steps[${index}]`;
    const type: string =
      (require("../steps/index.js") as typeof StepsModule).KIND_NAMES.find((t) => t in plain) ?? "step";
    return { index, name, type, unknown: words.filter((w) => w.re.test(text)).map((w) => w.n) };
  });
}

/** The plan line of a step that waits for unknown values. */
export function waitingLine(step: Pick<RawStep, "name" | "type" | "unknown">): string {
  return `${step.name}: ${step.type} - ${KNOWN_AFTER} (unknown: ${step.unknown.join(", ")})`;
}

/** The placeholder the loader saw for an unknown value, as people should read it. */
export function showUnknown(line: string): string {
  return line.split(UNKNOWN).join("<unknown>");
}

/** Whether a check failure is about a step that waits for unknown values, or quotes the placeholder. */
export function hiddenByUnknown(failure: { property: string; reason: string }, waiting: ReadonlySet<number>): boolean {
  if (failure.reason.includes(UNKNOWN)) return true;
  const m = /^spec\.steps\[(\d+)\]/.exec(failure.property);
  return m !== null && waiting.has(Number(m[1]));
}
