/**
 * Inputs -> LoadedSpec, the same way in every handler: the bundle is
 * materialized, the variables are put together with the CLI's precedence
 * (vars ~ --set > varFiles ~ --var-file > secretVars ~ KHOOK_SECRET_* > envVars ~ KHOOK_VAR_*),
 * and the loader runs. check, diff, create and update of one `pulumi up` run in
 * one provider process and see the same inputs, so results are cached.
 */
import { createHash } from "node:crypto";
import { isKhookError, type Diagnostic } from "../errors.js";
import type { LoadedSpec } from "../dsl/loaded.js";
import { loadSpec } from "../load-spec.js";
import { canonicalJson } from "../dsl/hash.js";
import { materializeBundle } from "./bundle.js";
import { BUNDLE_KEY, type InputProblem, type KhookInputs } from "./wire.js";

export type LoadOutcome =
  | { readonly ok: true; readonly spec: LoadedSpec; readonly bundleRoot: string }
  | { readonly ok: false; readonly problems: InputProblem[]; readonly message: string };

const cache = new Map<string, LoadOutcome>();
const CACHE_SIZE = 8;

/** The part of the inputs that decides the loaded spec. */
function specKey(inputs: KhookInputs): string {
  return createHash("sha256")
    .update(
      canonicalJson({
        spec: inputs.spec,
        specFile: inputs.specFile ?? null,
        bundle: inputs[BUNDLE_KEY] ?? null,
        vars: inputs.vars ?? {},
        varFiles: inputs.varFiles ?? [],
        secretVars: inputs.secretVars ?? {},
        envVars: inputs.envVars ?? {},
      }),
    )
    .digest("hex");
}

/** Loads (or recalls) the spec the inputs describe. Never throws for a bad spec: problems come back as values. */
export function loadFromInputs(inputs: KhookInputs): LoadOutcome {
  const key = specKey(inputs);
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const outcome = load(inputs);
  cache.set(key, outcome);
  while (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return outcome;
}

function load(inputs: KhookInputs): LoadOutcome {
  const display = inputs.specFile ?? "spec";
  let root: string;
  let baseDir: string;
  try {
    ({ root, baseDir } = materializeBundle(inputs[BUNDLE_KEY] ?? { baseDir: ".", files: {}, binaryFiles: {} }));
  } catch (e) {
    const message = `cannot prepare the spec's local files: ${e instanceof Error ? e.message : String(e)}`;
    return { ok: false, problems: [{ property: BUNDLE_KEY, reason: message }], message };
  }
  try {
    const spec = loadSpec({
      text: inputs.spec,
      baseDir,
      set: Object.entries(inputs.vars ?? {}),
      varFileValues: inputs.varFiles ?? [],
      secretVars: inputs.secretVars ?? {},
      envVars: inputs.envVars ?? {},
    });
    return { ok: true, spec, bundleRoot: root };
  } catch (e) {
    const unroot = (s: string): string =>
      root === process.cwd() ? s : s.split(`${root}/`).join("").split(root).join(".");
    if (isKhookError(e) && e.diagnostics.length > 0) {
      const problems = e.diagnostics.map((d) => diagnosticProblem(d, display, unroot));
      return { ok: false, problems, message: unroot(e.message.replace(/^<stdin>/, display)) };
    }
    const message = unroot(e instanceof Error ? e.message : String(e));
    return { ok: false, problems: [{ property: "", reason: `${display}: ${message}` }], message };
  }
}

/**
 * One diagnostic as a check failure: the property is the diagnostic's path
 * in Pulumi's property-path syntax under `spec` (`spec.steps[2].helm.chart`),
 * or none for whole-document problems; the reason starts with `file:line:col`.
 */
export function diagnosticProblem(
  d: Diagnostic,
  display: string,
  unroot: (s: string) => string = (s) => s,
): InputProblem {
  const where = d.position ? `${display}:${d.position.line}:${d.position.column}` : display;
  return { property: pointerToPropertyPath(d.path), reason: `${where}: ${unroot(d.message)}` };
}

/** `/steps/2/helm/chart` -> `spec.steps[2].helm.chart`; "" -> "". */
export function pointerToPropertyPath(pointer: string): string {
  if (pointer === "" || pointer === "/") return "";
  let out = "spec";
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
