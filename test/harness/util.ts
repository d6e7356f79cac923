// Small shared helpers for the test harness: paths, process spawning, ports, polling.
import { spawn, type SpawnOptions } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** Root of khook's per-user cache (tools, run state). */
export function cacheDir(): string {
  return process.env["KHOOK_CACHE_DIR"] ?? path.join(os.homedir(), ".cache", "khook");
}

/** Where built tools live: <toolsDir>/<tool>-<version>/bin. Shared with scripts/node-env.sh. */
export function toolsDir(): string {
  return process.env["KHOOK_TOOLS_DIR"] ?? path.join(cacheDir(), "tools");
}

/** Runtime state: clusters, env files, fixture data. */
export function runDir(): string {
  return path.join(cacheDir(), "run");
}

/** The repository root (the directory holding package.json), found from this file. */
export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "scripts", "toolchain")))
      return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`khook harness: cannot find the repository root above ${__dirname}`);
    dir = up;
  }
}

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
  /** Stream output to this file descriptor / stream instead of (as well as) capturing it. */
  echo?: boolean;
}

/** Runs a command to completion and captures its output. Never throws on a non-zero exit. */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (opts.echo) process.stderr.write(d);
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (opts.echo) process.stderr.write(d);
    });
    let timer: NodeJS.Timeout | undefined;
    if (opts.timeoutMs) {
      timer = setTimeout(() => {
        stderr += `\n[khook harness: ${cmd} timed out after ${opts.timeoutMs} ms, killed]\n`;
        child.kill("SIGKILL");
      }, opts.timeoutMs);
    }
    child.on("error", (err) => {
      if (timer) clearTimeout(timer);
      reject(new Error(`khook harness: cannot run ${cmd}: ${err.message}`));
    });
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ stdout, stderr, code: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1) });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
  });
}

/** Like run() but throws with the command's output when it fails. */
export async function runOk(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    throw new Error(`command failed (exit ${r.code}): ${cmd} ${args.join(" ")}\n${r.stdout}${r.stderr}`);
  }
  return r;
}

/** Spawns a long-running daemon detached in its own process group, logging to a file. */
export function spawnDaemon(
  cmd: string,
  args: string[],
  logFile: string,
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; detached?: boolean } = {},
): number {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = fs.openSync(logFile, "a");
  const so: SpawnOptions = {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ["ignore", fd, fd],
    detached: true,
  };
  const child = spawn(cmd, args, so);
  fs.closeSync(fd);
  if (child.pid === undefined) throw new Error(`khook harness: cannot start ${cmd}`);
  // Never keep the event loop alive for a daemon; its lifetime is managed through its pid.
  child.unref();
  child.on("error", () => undefined);
  return child.pid;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Stops a process group started by spawnDaemon: SIGTERM, then SIGKILL after graceMs. */
export async function killGroup(pid: number, graceMs = 5000): Promise<void> {
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* gone */
      }
    }
  };
  if (!isAlive(pid)) return;
  signalGroup("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid) && !groupAlive(pid)) return;
    await sleep(50);
  }
  signalGroup("SIGKILL");
  const hard = Date.now() + 5000;
  while (Date.now() < hard && (isAlive(pid) || groupAlive(pid))) await sleep(50);
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Asks the kernel for a free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls fn until it returns a truthy value or the deadline passes. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  opts: { timeoutMs: number; intervalMs?: number; onTimeout?: () => string },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > deadline) {
      const extra = opts.onTimeout ? `\n${opts.onTimeout()}` : "";
      const why = lastErr instanceof Error ? `: ${lastErr.message}` : "";
      throw new Error(`khook harness: timed out after ${opts.timeoutMs} ms waiting for ${what}${why}${extra}`);
    }
    await sleep(opts.intervalMs ?? 200);
  }
}

/** The last `lines` lines of a file ("" when it does not exist). */
export function tailFile(file: string, lines = 60): string {
  try {
    const text = fs.readFileSync(file, "utf8");
    return text.split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** Writes a file atomically (temp + rename). */
export function writeFileAtomic(file: string, data: string, mode?: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, mode === undefined ? undefined : { mode });
  fs.renameSync(tmp, file);
}
