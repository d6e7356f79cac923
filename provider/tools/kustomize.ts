/**
 * Rendering `kustomize:` manifest sources: `kustomize build DIR` with the
 * kustomize binary (KHOOK_KUSTOMIZE, else `kustomize` on PATH), or else
 * `kubectl kustomize DIR` (KHOOK_KUBECTL, else `kubectl` on PATH).
 *
 * Local kustomizations only: a kustomization that references a remote base
 * (a URL or a git reference) is rejected before anything runs, because
 * kustomize would shell out to git for it. The loader already rejects these at
 * validation; the check is repeated here because the files may have changed
 * between validation and apply.
 */
import fs from "node:fs";
import path from "node:path";
import { executionError } from "../errors.js";
import type { Redactor } from "../redact.js";
import { findRemoteKustomizeBases, readKustomization } from "../dsl/hash.js";
import { describeFailure, runTool } from "./exec.js";
import { locateTool } from "./locate.js";

export interface KustomizeOptions {
  signal: AbortSignal;
  redactor: Redactor;
  /** Explicit binaries (provider configuration); else KHOOK_KUSTOMIZE / KHOOK_KUBECTL / PATH. */
  kustomizePath?: string;
  kubectlPath?: string;
  /** For error messages: the path as the spec wrote it. */
  written?: string;
  env?: NodeJS.ProcessEnv;
}

export const REMOTE_BASE_EXPLANATION =
  "kustomize: sources must be local, because remote bases need git. Vendor the base into the repository and reference it by a relative path";

/** The kustomize invocation: the program and the arguments before the directory. */
export function kustomizeCommand(opts: Pick<KustomizeOptions, "kustomizePath" | "kubectlPath" | "env">): {
  file: string;
  args: string[];
} {
  const env = opts.env ?? process.env;
  const k = locateTool("kustomize", { explicit: opts.kustomizePath, envVar: "KHOOK_KUSTOMIZE", env });
  if (k.ok) return { file: k.tool.path, args: ["build"] };
  // An explicitly configured kustomize that is broken is an error, not a reason to fall back.
  if (opts.kustomizePath || env["KHOOK_KUSTOMIZE"]) throw executionError(k.message);
  const kc = locateTool("kubectl", { explicit: opts.kubectlPath, envVar: "KHOOK_KUBECTL", env });
  if (kc.ok) return { file: kc.tool.path, args: ["kustomize"] };
  throw executionError(
    `kustomize: sources need the kustomize binary or kubectl (which embeds it), and neither was found: ${k.message}; ${kc.message}. ` +
      `Install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) or kubectl, or set KHOOK_KUSTOMIZE to its path`,
  );
}

/** Why neither kustomize nor kubectl can be found (with the install hint), or undefined. Presence only. */
export function kustomizeMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    kustomizeCommand({ env });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Renders a local kustomization directory to multi-document YAML. */
export async function renderKustomize(dir: string, opts: KustomizeOptions): Promise<string> {
  const shown = opts.written ?? dir;
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw executionError(`kustomize: ${shown} does not exist (${dir})`);
  }
  if (!st.isDirectory())
    throw executionError(
      `kustomize: ${shown} is not a directory; point kustomize: at the directory that holds kustomization.yaml`,
    );
  if (readKustomization(dir) === undefined) {
    throw executionError(`kustomize: ${shown} has no kustomization.yaml, kustomization.yml or Kustomization file`);
  }
  const remote = findRemoteKustomizeBases(dir);
  if (remote.length > 0) {
    const list = remote.map((r) => {
      const where = path.relative(dir, r.dir) || ".";
      return `${where === "." ? shown : path.join(shown, where)}: ${r.ref}`;
    });
    throw executionError(
      opts.redactor.redact(
        `kustomize: the kustomization references a remote base (${list.join("; ")}); ${REMOTE_BASE_EXPLANATION}`,
      ),
    );
  }
  const cmd = kustomizeCommand(opts);
  const r = await runTool(cmd.file, {
    args: [...cmd.args, dir],
    redactor: opts.redactor,
    signal: opts.signal,
    // The rendered manifests may carry secret values (a secretGenerator); they are applied, not printed.
    keepRawStdout: true,
    ...(opts.env ? { env: opts.env, cleanEnv: true } : {}),
  });
  if (!r.ok) {
    if (r.aborted)
      throw opts.signal.reason instanceof Error ? opts.signal.reason : executionError(`kustomize ${shown}: stopped`);
    throw executionError(describeFailure(r, `kustomize build ${shown}`));
  }
  if (r.truncated) throw executionError(`kustomize build ${shown}: the output is larger than khook accepts`);
  return r.rawStdout ?? r.stdout;
}
