/**
 * khook for Pulumi: the `Khook` resource.
 *
 * ```ts
 * import { Khook } from "khook";
 * const boot = new Khook("bootstrap", {
 *   specFile: "./bootstrap.khook.yaml",
 *   vars: { ENV: "prod" },
 *   secretVars: { ECR_TOKEN: token },
 *   kubeconfig: cluster.kubeconfig,
 * });
 * export const steps = boot.steps;
 * ```
 *
 * `pulumi preview` validates the spec offline and shows the plan (one line per
 * step), `pulumi up` applies with the state journal on, `pulumi destroy` tears
 * down, and `pulumi refresh` reads the journal.
 *
 * The spec file, var files and every local file the spec references are read
 * here, at program time, and travel as inputs: editing any of them shows in
 * preview, and destroy/refresh work from state alone.
 */
import fs from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { bundleInput, bundleOptions, recordKey, type Bundle } from "../provider/pulumi/bundle.js";
import {
  BUNDLE_KEY,
  PROVIDER_KEY,
  UNKNOWN as UNKNOWN_PLACEHOLDER,
  type DriftOutput,
  type StepOutput,
} from "../provider/pulumi/wire.js";
import { prefixProblems, scanEnvironment } from "../provider/dsl/vars.js";
import { claimRecord } from "../provider/pulumi/record-owner/siblings.js";
import { KHOOK_PROVIDER_TEXT, khookProvider } from "./provider.js";
import type * as LoadModule from "../provider/dsl/loader.js";

export { khookProvider };

export interface KhookArgs {
  /** The spec text. Exactly one of `spec` and `specFile`. */
  spec?: pulumi.Input<string>;
  /** The spec file, relative to the program's directory. Read at program time. */
  specFile?: string;
  /** Where relative paths in an inline `spec` resolve (default: the program's directory). */
  baseDir?: string;
  /**
   * Bundle hook functions (`function.exec`) from outside the spec's directory tree, reached through
   * `../` or a symlink. Off by default: bundled files are copied into the Pulumi state.
   */
  allowFunctionsOutsideSpecDir?: boolean;
  /** The limit on the referenced local files, which travel in the Pulumi state (default 4 MiB). */
  maxBundleBytes?: number;
  /** Variables, like `--set` (highest precedence). */
  vars?: pulumi.Input<Record<string, pulumi.Input<string | number | boolean>>>;
  /** Var files (flat `NAME: value` YAML maps), like `--var-file`; read at program time. Later files win. */
  varFiles?: string[];
  /**
   * Secret variables: stored as Pulumi secrets, and redacted from every line
   * khook prints and every output, like KHOOK_SECRET_* values.
   */
  secretVars?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /**
   * Read KHOOK_VAR_* and KHOOK_SECRET_* (or the prefixes below) from the
   * program's environment, like the CLI does. Off unless set (or a prefix is given):
   * a Pulumi program's environment is usually not meant for the spec.
   */
  fromEnvironment?: boolean;
  /** Environment prefix for variables (default KHOOK_VAR_); giving it opts into `fromEnvironment`. */
  varPrefix?: string;
  /** Environment prefix for secret variables (default KHOOK_SECRET_); giving it opts into `fromEnvironment`. */
  secretPrefix?: string;
  /**
   * Kubeconfig content (YAML or JSON), a path to a kubeconfig file, or a
   * kubeconfig object such as @pulumi/eks's `cluster.kubeconfig`. Stored as a
   * secret. Default: the stack config `khook:kubeconfig`, else the ambient
   * kubeconfig (KUBECONFIG, ~/.kube/config, in-cluster). For destroy and
   * refresh, a `khook:kubeconfig` stack config wins over this stored value.
   */
  kubeconfig?: pulumi.Input<string | Record<string, unknown>>;
  /** The kubeconfig context (default: stack config `khook:context`, else the current context). */
  context?: pulumi.Input<string>;
  /** Steps to run at once (default 8). */
  parallelism?: pulumi.Input<number>;
  /**
   * An overall bound on one apply or destroy, as a duration (`30m`). Pulumi's
   * customTimeouts do not reach dynamic providers; this does. When it runs
   * out, running steps are cancelled and the journal keeps what completed.
   */
  timeout?: pulumi.Input<string>;
  /**
   * First wait up to this long (`10m`) for the cluster's API server to answer `/readyz`, saying so
   * in one line (`khook apply --wait-for-cluster`): for a cluster created in the same program.
   */
  waitForCluster?: pulumi.Input<string>;
  /**
   * `online`: preview also asks the cluster, read-only, what each step would
   * do (install / upgrade / no-op / create / configure), and `--diff` shows a
   * unified diff. Default: the stack config `khook:previewMode`, else `offline`.
   */
  previewMode?: pulumi.Input<"offline" | "online">;
  /**
   * What `pulumi refresh` reads. `journal` (the default): the state record's per-step outcomes,
   * one read. `live`: also compares every step the record calls completed with the cluster (a
   * list per kind, not a GET per object) and writes the drifted ones into the `drift` output;
   * the next preview shows them as changes and `up` re-runs exactly them.
   */
  refresh?: pulumi.Input<"journal" | "live">;
}

/** One step's outcome: the provider's own output shape, so the two cannot drift apart. */
export type KhookStep = StepOutput;

/** One drifted step, as a live refresh found it (the `drift` output). */
export type KhookDrift = DriftOutput;

/**
 * The resource type: a dynamic resource of module `khook`, served by Pulumi's Node.js dynamic
 * provider with the provider text of ./provider.ts (what `pulumi.dynamic.Resource` would declare).
 */
const KHOOK_TYPE = "pulumi-nodejs:dynamic/khook:Khook";

/**
 * The Khook resource: a khook spec applied to a cluster. A dynamic resource declared the way
 * `pulumi.dynamic.Resource` declares one, with the provider text written by ./provider.ts instead
 * of serialized from a provider object at every program run.
 */
export class Khook extends pulumi.CustomResource {
  /** Per step, in document order. */
  declare readonly steps: pulumi.Output<KhookStep[]>;
  /** succeeded | failed | cancelled (after a refresh: the record's status). */
  declare readonly runStatus: pulumi.Output<string>;
  /** The state record Secret's namespace and name; undefined when the spec sets `state.enabled: false`. */
  declare readonly recordNamespace: pulumi.Output<string | undefined>;
  declare readonly recordName: pulumi.Output<string | undefined>;
  /** When the record was last written (after a refresh). */
  declare readonly recordUpdatedAt: pulumi.Output<string | undefined>;
  /** The khook version that last applied. */
  declare readonly engineVersion: pulumi.Output<string>;
  /** The offline plan, one line per step. */
  declare readonly plan: pulumi.Output<string[]>;
  /** The spec's metadata.name. */
  declare readonly specName: pulumi.Output<string>;
  /** After a refresh with `refresh: live`: the completed steps that drifted in the cluster (`up` re-runs them). */
  declare readonly drift: pulumi.Output<DriftOutput[] | undefined>;

  constructor(name: string, args: KhookArgs, opts: pulumi.CustomResourceOptions = {}) {
    const inputs = khookInputs(name, args, programRecords());
    super(
      KHOOK_TYPE,
      name,
      {
        ...inputs,
        [PROVIDER_KEY]: KHOOK_PROVIDER_TEXT,
        steps: undefined,
        runStatus: undefined,
        recordNamespace: undefined,
        recordName: undefined,
        recordUpdatedAt: undefined,
        engineVersion: undefined,
        plan: undefined,
        specName: undefined,
        drift: undefined,
      },
      {
        ...opts,
        additionalSecretOutputs: [
          ...new Set([...(opts.additionalSecretOutputs ?? []), "secretVars", "kubeconfig", "hashKey"]),
        ],
      },
    );
  }
}

/**
 * The records this program's Khook resources use, by record key, with the resource that took each.
 * Two resources of one stack with one record would take it from each other on every update (the
 * provider cannot tell a sibling from a rename, which also briefly has two resources on one record),
 * and a destroy would tear down only one of them; the program can tell, because a rename has one.
 */
const PROGRAM_RECORDS = new WeakMap<object, Map<string, string>>();
/** Where no stack resource exists (unit tests with mocks): one registry for the process. */
const PROCESS_RECORDS = new Map<string, string>();

/**
 * This program run's registry. Keyed by the run's root Stack resource: the Automation API runs
 * inline programs again in one process (another stack, a rename), and each run starts afresh.
 */
function programRecords(): Map<string, string> {
  const stack = pulumi.runtime.getStackResource();
  if (stack === undefined) return PROCESS_RECORDS;
  let records = PROGRAM_RECORDS.get(stack);
  if (records === undefined) PROGRAM_RECORDS.set(stack, (records = new Map()));
  return records;
}

/**
 * The provider inputs for the given arguments; exported for tests. `records` (the program's
 * registry) refuses a second resource on a record another resource of the program uses.
 */
export function khookInputs(
  name: string,
  args: KhookArgs,
  records?: Map<string, string>,
): Record<string, pulumi.Input<unknown> | undefined> {
  if ((args.spec === undefined) === (args.specFile === undefined)) {
    throw new Error(`Khook ${name}: give exactly one of spec and specFile`);
  }
  let specText: pulumi.Input<string>;
  let baseDir: string;
  if (args.specFile !== undefined) {
    const file = path.resolve(args.specFile);
    try {
      specText = fs.readFileSync(file, "utf8");
    } catch (e) {
      throw new Error(
        `Khook ${name}: cannot read the spec ${args.specFile}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`,
      );
    }
    baseDir = path.dirname(file);
  } else {
    specText = args.spec!;
    baseDir = path.resolve(args.baseDir ?? ".");
  }

  const readEnv = args.fromEnvironment ?? (args.varPrefix !== undefined || args.secretPrefix !== undefined);
  if (args.varPrefix === "" || args.secretPrefix === "") {
    throw new Error(`Khook ${name}: ${prefixProblems(args).join("; ")}`);
  }
  const { vars: envVars, secrets: envSecrets } = readEnv
    ? scanEnvironment(process.env, args)
    : { vars: {}, secrets: {} };

  const varFiles = (args.varFiles ?? []).map((f) => {
    // Lazily: the loader (and its schema validator) is only needed for var files.
    const { readVarFile } = require("../provider/dsl/loader.js") as typeof LoadModule;
    try {
      return readVarFile(f);
    } catch (e) {
      throw new Error(`Khook ${name}: ${(e as Error).message}`);
    }
  });

  // Decided here, synchronously, so that the program (preview or up) fails at this resource. A
  // value only an Output holds stands in as unknown: a record key built from it is not checked.
  if (records !== undefined && typeof specText === "string") {
    const plain = (m: unknown): Record<string, string> =>
      m === null || typeof m !== "object" || pulumi.Output.isInstance(m)
        ? {}
        : Object.fromEntries(
            Object.entries(m as Record<string, unknown>).map(([k, v]) => [
              k,
              typeof v === "string" || typeof v === "number" || typeof v === "boolean"
                ? String(v)
                : UNKNOWN_PLACEHOLDER,
            ]),
          );
    const refused = claimRecord(
      records,
      name,
      recordKey(specText, {
        set: Object.entries(plain(args.vars)),
        varFiles,
        secretVars: { ...envSecrets, ...plain(args.secretVars) },
        envVars,
      }),
    );
    if (refused !== undefined) throw new Error(`Khook ${name}: ${refused}`);
  }

  // Per variable: a map of values travels as a map of Outputs, so during a preview
  // one value another resource has not produced yet is one unknown, and the
  // provider plans every step that does not use it. (An Output of a whole map
  // is unknown as a whole.)
  const vars = perVariable(args.vars ?? {}, {});
  const secretVars = perVariable(args.secretVars ?? {}, envSecrets);
  const hasSecrets = args.secretVars !== undefined || Object.keys(envSecrets).length > 0;

  const { options: bundling, problems: bundlingProblems } = bundleOptions(args);
  if (bundlingProblems.length > 0)
    throw new Error(`Khook ${name}: ${bundlingProblems.map((p) => p.reason).join("; ")}`);
  // The local files the spec references. File paths can use variables, so this
  // needs their values; a path built from a secret keeps the bundle secret. It
  // is computed during a preview too: an unknown variable takes the protocol's
  // unknown placeholder, a file path built from it is not found, and the
  // provider names the steps that use the variable as waiting for it.
  const bundle = applyWithUnknowns<{ text: unknown; v: unknown; secrets: unknown }, Bundle>(
    pulumi.unsecret(pulumi.output({ text: specText, v: vars, secrets: secretVars })) as pulumi.Output<{
      text: unknown;
      v: unknown;
      secrets: unknown;
    }>,
    ({ text, v, secrets }) => {
      if (pulumi.isUnknown(text) || typeof text !== "string") return { baseDir: ".", files: {}, binaryFiles: {} };
      const known = { v: knownOrPlaceholder(v), secrets: knownOrPlaceholder(secrets) };
      const { bundle: b, secret } = bundleInput(
        text,
        baseDir,
        { set: Object.entries(known.v), varFiles, secretVars: known.secrets, envVars },
        bundling,
      );
      return secret ? pulumi.secret(b) : pulumi.output(b);
    },
  );

  return {
    resourceName: name,
    // Who owns the record (provider/pulumi/owner.ts): renames and replaces within this stack take it over.
    pulumiProject: pulumi.getProject(),
    pulumiStack: pulumi.getStack(),
    spec: specText,
    ...(args.specFile !== undefined ? { specFile: args.specFile } : {}),
    // Under a `__` name: Pulumi keeps it in the state but hides it from preview --diff.
    [BUNDLE_KEY]: bundle,
    vars,
    ...(varFiles.length > 0 ? { varFiles } : {}),
    ...(hasSecrets ? { secretVars: secretMap(secretVars) } : {}),
    ...(Object.keys(envVars).length > 0 ? { envVars } : {}),
    ...(args.kubeconfig !== undefined
      ? { kubeconfig: pulumi.secret(pulumi.output(args.kubeconfig).apply(kubeconfigText)) }
      : {}),
    ...(args.context !== undefined ? { context: args.context } : {}),
    ...(args.parallelism !== undefined ? { parallelism: args.parallelism } : {}),
    ...(args.timeout !== undefined ? { timeout: args.timeout } : {}),
    ...(args.waitForCluster !== undefined ? { waitForCluster: args.waitForCluster } : {}),
    ...(args.previewMode !== undefined ? { previewMode: args.previewMode } : {}),
    ...(args.refresh !== undefined ? { refresh: args.refresh } : {}),
  };
}

/** A kubeconfig object (e.g. @pulumi/eks's `cluster.kubeconfig`) travels as its JSON text, which is valid kubeconfig YAML. */
export function kubeconfigText(k: string | Record<string, unknown>): string {
  return typeof k === "string" ? k : JSON.stringify(k);
}

/**
 * `apply` that also runs during a preview when (parts of) the value are not
 * known yet; those parts arrive as `pulumi.unknown`. @pulumi/pulumi's Output
 * implementation has taken this second argument since 2.x (`all` and
 * `output` use it); it is not in the type declarations.
 */
function applyWithUnknowns<T, U>(o: pulumi.Output<T>, fn: (t: T) => pulumi.Input<U>): pulumi.Output<U> {
  return (
    o.apply as unknown as (
      this: pulumi.Output<T>,
      f: (t: T) => pulumi.Input<U>,
      runWithUnknowns: boolean,
    ) => pulumi.Output<U>
  ).call(o, fn, true);
}

/** The values, with every unknown one as the provider protocol's unknown placeholder text. */
function knownOrPlaceholder(m: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (pulumi.isUnknown(m) || m === null || typeof m !== "object") return out;
  for (const [k, v] of Object.entries(m as Record<string, unknown>))
    out[k] = pulumi.isUnknown(v) ? UNKNOWN_PLACEHOLDER : String(v);
  return out;
}

/**
 * The variables as text: a plain map becomes a map of per-variable Outputs
 * (each unknown on its own during a preview); an Output of a map stays one
 * Output. `extra` (from the environment) is under the given ones.
 */
function perVariable(
  given: pulumi.Input<Record<string, pulumi.Input<string | number | boolean>>>,
  extra: Record<string, string>,
): Record<string, pulumi.Output<string>> | pulumi.Output<Record<string, string>> {
  if (pulumi.Output.isInstance(given) || given instanceof Promise) {
    return pulumi.output(given).apply((m) => ({ ...extra, ...stringMap(m as Record<string, unknown>) }));
  }
  const out: Record<string, pulumi.Output<string>> = {};
  for (const [k, v] of Object.entries(extra)) out[k] = pulumi.output(v);
  for (const [k, v] of Object.entries(given as Record<string, pulumi.Input<string | number | boolean>>).sort(
    ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0),
  )) {
    if (v === undefined || v === null) continue;
    out[k] = pulumi.output(v).apply((x) => String(x));
  }
  return out;
}

/** Every secret variable a Pulumi secret, key by key (a map of Outputs) or as a whole. */
function secretMap(
  m: Record<string, pulumi.Output<string>> | pulumi.Output<Record<string, string>>,
): pulumi.Output<unknown> | Record<string, pulumi.Output<string>> {
  if (pulumi.Output.isInstance(m)) return pulumi.secret(m);
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, pulumi.secret(v)]));
}

function stringMap(m: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) if (v !== undefined && v !== null) out[k] = String(v);
  return out;
}
