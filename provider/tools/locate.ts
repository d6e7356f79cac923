/** Finding tool binaries: an explicit path, an environment variable, or PATH. */
import fs from "node:fs";
import path from "node:path";

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, or undefined. */
export function findOnPath(name: string, envPath: string | undefined = process.env["PATH"]): string | undefined {
  for (const dir of (envPath ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface Located {
  path: string;
  /** Where the path came from, for messages: `KHOOK_HELM`, `the provider configuration`, `PATH`. */
  from: string;
}

/**
 * Resolves a tool: the explicit path (configuration) wins, then the environment
 * variable, then PATH. An explicit path or variable that does not point at an
 * executable is an error (returned as a message), never silently skipped.
 */
export function locateTool(
  name: string,
  opts: { explicit?: string | undefined; envVar: string; env?: NodeJS.ProcessEnv },
): { ok: true; tool: Located } | { ok: false; message: string } {
  const env = opts.env ?? process.env;
  const candidates: { value: string | undefined; from: string }[] = [
    { value: opts.explicit, from: "the provider configuration" },
    { value: env[opts.envVar], from: opts.envVar },
  ];
  for (const c of candidates) {
    if (c.value === undefined || c.value === "") continue;
    // A bare name is looked up on PATH, like a shell would.
    const resolved = c.value.includes("/") ? path.resolve(c.value) : findOnPath(c.value, env["PATH"]);
    if (resolved === undefined || !isExecutable(resolved)) {
      return { ok: false, message: `${name} was set to "${c.value}" by ${c.from}, but that is not an executable file` };
    }
    return { ok: true, tool: { path: resolved, from: c.from } };
  }
  const onPath = findOnPath(name, env["PATH"]);
  if (onPath !== undefined) return { ok: true, tool: { path: onPath, from: "PATH" } };
  return { ok: false, message: `${name} was not found on PATH` };
}
