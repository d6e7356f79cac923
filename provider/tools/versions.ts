/**
 * Which helm and kustomize this khook would run, and their versions, for `khook version`: an
 * image or a CI runner says in one line what it ships. Found the way steps find them
 * (KHOOK_HELM / KHOOK_KUSTOMIZE, then PATH); a missing tool is reported, not an error.
 */
import { execFile } from "node:child_process";
import { locateTool } from "./locate.js";

export interface ToolVersion {
  tool: "helm" | "kustomize";
  /** The version the tool reports (`v3.22.0`), or undefined when it is missing or did not answer. */
  version: string | undefined;
  path: string | undefined;
  /** Why there is no version: not found, or what running it printed. */
  problem?: string;
}

const VERSION_ARGS = { helm: ["version", "--short"], kustomize: ["version"] } as const;
const ENV_VAR = { helm: "KHOOK_HELM", kustomize: "KHOOK_KUSTOMIZE" } as const;
/** A version query that takes longer than this is reported, not waited for. */
const QUERY_TIMEOUT_MS = 10_000;

/** `helm version --short` prints `v3.22.0+g144ca65`; `kustomize version` prints `v5.8.2` (older: `{Version:kustomize/v5.8.2 ...}`). */
export function parseToolVersion(text: string): string | undefined {
  return /v\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?/.exec(text)?.[0];
}

function query(tool: ToolVersion["tool"], env: NodeJS.ProcessEnv): Promise<ToolVersion> {
  const found = locateTool(tool, { envVar: ENV_VAR[tool], env });
  if (!found.ok) return Promise.resolve({ tool, version: undefined, path: undefined, problem: found.message });
  const file = found.tool.path;
  return new Promise((resolve) => {
    execFile(
      file,
      [...VERSION_ARGS[tool]],
      { env, timeout: QUERY_TIMEOUT_MS, encoding: "utf8" },
      (error, stdout, stderr) => {
        const version = error === null ? parseToolVersion(stdout) : undefined;
        if (version !== undefined) resolve({ tool, version, path: file });
        else
          resolve({
            tool,
            version: undefined,
            path: file,
            problem: `${file} ${VERSION_ARGS[tool].join(" ")} did not print a version: ${(error?.message ?? `${stdout}${stderr}`).trim().slice(0, 300)}`,
          });
      },
    );
  });
}

/** helm's and kustomize's versions, queried side by side. */
export function toolVersions(env: NodeJS.ProcessEnv = process.env): Promise<ToolVersion[]> {
  return Promise.all([query("helm", env), query("kustomize", env)]);
}
