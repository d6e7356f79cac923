/**
 * The one process runner. Everything that spawns a process (helm, kustomize,
 * kubectl kustomize) goes through `runTool`; nothing else in khook spawns.
 *
 * - Arguments are an array (no shell), so nothing is ever re-parsed.
 * - Secrets never go on argv (other users' `ps` shows argv): callers hand them
 *   over through `stdin` or through files with restrictive permissions.
 * - An AbortSignal stops the child: SIGTERM, then SIGKILL after a grace period.
 * - With `processGroup`, the child leads its own process group and the whole group is
 *   ended: on abort (SIGTERM, then SIGKILL) and as soon as the child exits (a background
 *   process it left behind would otherwise hold its output pipes, and khook, open). The
 *   output pipes are never waited on past the kill: the result is final within the grace.
 * - Output is captured up to a cap; the rest is dropped and `truncated` is set.
 * - Exit codes and spawn failures are values, not exceptions. The only thing
 *   that rejects is a programming error (bad arguments).
 * - Everything returned (stdout, stderr, error text, the command line) is passed
 *   through the caller's Redactor. A caller that must parse raw output (for
 *   example, to compare values that contain secrets) asks for `rawStdout`
 *   explicitly and must never print it.
 */
import { spawn } from "node:child_process";
import type { Redactor } from "../redact.js";

export interface ExecOptions {
  /** Arguments, without the program itself. */
  args: readonly string[];
  /** Masks secrets in everything this function returns. */
  redactor: Redactor;
  /** Merged over the environment (`undefined` deletes a variable). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Start from an empty environment instead of process.env. */
  cleanEnv?: boolean;
  /** Fed to the child's stdin, which is then closed. Without it stdin is /dev/null. */
  stdin?: string | Buffer;
  cwd?: string;
  signal?: AbortSignal;
  /** Cap on captured stdout bytes (default 64 MiB). */
  maxStdoutBytes?: number;
  /** Cap on captured stderr bytes (default 1 MiB; the *last* bytes are kept). */
  maxStderrBytes?: number;
  /** Time between SIGTERM and SIGKILL when the signal aborts (default 5s). */
  killGraceMs?: number;
  /** Also return the unredacted stdout as `rawStdout`. Never print it. */
  keepRawStdout?: boolean;
  /** Run the child in its own process group and end the whole group with it (see the module comment). */
  processGroup?: boolean;
  /** Told the child's pid once it is started (helm's is recorded: it may outlive khook). */
  onSpawn?: (pid: number) => void;
}

export interface ExecResult {
  /** The command line, for messages; redacted. */
  readonly command: string;
  /** True when the process ran and exited with code 0. */
  readonly ok: boolean;
  /** null when the process did not exit normally (killed, or never started). */
  readonly exitCode: number | null;
  readonly exitSignal: NodeJS.Signals | null;
  /** Redacted. */
  readonly stdout: string;
  /** Redacted. */
  readonly stderr: string;
  /** Unredacted stdout; only with `keepRawStdout`. */
  readonly rawStdout?: string;
  /** Some output was dropped because of the size caps. */
  readonly truncated: boolean;
  /** The signal aborted the run and the child was stopped. */
  readonly aborted: boolean;
  /** Why the process could not be started (e.g. `ENOENT`), redacted. */
  readonly spawnError?: { code: string | undefined; message: string };
}

const DEFAULT_MAX_STDOUT = 64 * 1024 * 1024;
const DEFAULT_MAX_STDERR = 1024 * 1024;
const DEFAULT_KILL_GRACE_MS = 5000;

/** Quotes one argument for display (never for execution). */
export function quoteArg(a: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export function formatCommand(file: string, args: readonly string[]): string {
  return [file, ...args].map(quoteArg).join(" ");
}

/** The runTool calls in flight: a process being stopped waits for them (toolsSettled). */
const running = new Set<Promise<ExecResult>>();

/**
 * Resolves once every tool started so far has exited: a stopped one within its kill grace (SIGTERM,
 * then SIGKILL). The engine leaves an aborted attempt at once (engine/attempt.ts); a Pulumi provider
 * that reported a cancelled run before its helm had finished stopping would let pulumi exit and the
 * engine kill the provider with that helm still running, and the SIGKILL timer gone with it
 * (pulumi/cancel.ts waits here).
 */
export async function toolsSettled(): Promise<void> {
  while (running.size > 0) await Promise.allSettled([...running]);
}

export function runTool(file: string, opts: ExecOptions): Promise<ExecResult> {
  const result = startTool(file, opts);
  running.add(result);
  const done = (): void => void running.delete(result);
  result.then(done, done);
  return result;
}

function startTool(file: string, opts: ExecOptions): Promise<ExecResult> {
  const redact = (s: string): string => opts.redactor.redact(s);
  const command = redact(formatCommand(file, opts.args));
  const maxOut = opts.maxStdoutBytes ?? DEFAULT_MAX_STDOUT;
  const maxErr = opts.maxStderrBytes ?? DEFAULT_MAX_STDERR;
  const grace = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;

  const env: Record<string, string> = {};
  if (!opts.cleanEnv) for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }

  return new Promise<ExecResult>((resolve) => {
    if (opts.signal?.aborted) {
      resolve({
        command,
        ok: false,
        exitCode: null,
        exitSignal: null,
        stdout: "",
        stderr: "",
        truncated: false,
        aborted: true,
      });
      return;
    }

    const out: Buffer[] = [];
    let outBytes = 0;
    let errBuf = Buffer.alloc(0);
    let truncated = false;
    let aborted = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let spawnError: { code: string | undefined; message: string } | undefined;

    const group = opts.processGroup === true;
    const child = spawn(file, [...opts.args], {
      cwd: opts.cwd,
      env,
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      windowsHide: true,
      // setsid(2): the child leads a new process group (and session) that can be signalled whole.
      detached: group,
    });
    const pgid = group ? child.pid : undefined;
    if (pgid !== undefined) trackGroup(pgid);

    /** Signals the child, or with `processGroup` every process of its group. */
    const signalAll = (sig: NodeJS.Signals): void => {
      if (pgid !== undefined) killGroup(pgid, sig);
      else if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    };
    /** Stops waiting for output: the pipes' other ends may be held by processes that were just killed. */
    let drainTimer: NodeJS.Timeout | undefined;
    let groupKillTimer: NodeJS.Timeout | undefined;
    const stopWaitingSoon = (code: number | null, sig: NodeJS.Signals | null, ms: number): void => {
      if (drainTimer !== undefined) return;
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code, sig);
      }, ms);
      drainTimer.unref();
    };

    if (child.pid !== undefined) opts.onSpawn?.(child.pid);

    const onAbort = (): void => {
      if (aborted) return;
      const exited = child.exitCode !== null || child.signalCode !== null;
      if (exited && pgid === undefined) return;
      aborted = true;
      signalAll("SIGTERM");
      killTimer = setTimeout(() => {
        signalAll("SIGKILL");
        // Whatever still holds a pipe is dead or unkillable: the result does not wait for it.
        stopWaitingSoon(child.exitCode, child.signalCode ?? "SIGKILL", 100);
      }, grace);
      killTimer.unref();
    };
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout?.on("data", (chunk: Buffer) => {
      if (outBytes >= maxOut) {
        truncated = true;
        return;
      }
      const take = Math.min(chunk.length, maxOut - outBytes);
      if (take < chunk.length) truncated = true;
      out.push(take === chunk.length ? chunk : chunk.subarray(0, take));
      outBytes += take;
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      errBuf = Buffer.concat([errBuf, chunk]);
      if (errBuf.length > maxErr) {
        truncated = true;
        errBuf = errBuf.subarray(errBuf.length - maxErr);
      }
    });
    if (child.stdin) {
      // A child that exits without reading stdin makes the write fail with EPIPE; that is not our error.
      child.stdin.on("error", () => undefined);
      child.stdin.end(opts.stdin);
    }

    const started = Date.now();
    const finish = (code: number | null, sig: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      if (process.env["KHOOK_DEBUG_EXEC"])
        process.stderr.write(`khook exec: ${command} -> ${code ?? sig ?? "error"} in ${Date.now() - started}ms\n`);
      if (killTimer) clearTimeout(killTimer);
      if (drainTimer) clearTimeout(drainTimer);
      if (groupKillTimer) clearTimeout(groupKillTimer);
      if (pgid !== undefined) {
        // No child of the child outlives the run.
        killGroup(pgid, "SIGKILL");
        liveGroups.delete(pgid);
      }
      opts.signal?.removeEventListener("abort", onAbort);
      const raw = Buffer.concat(out).toString("utf8");
      const stderr = errBuf.toString("utf8");
      resolve({
        command,
        ok: spawnError === undefined && !aborted && code === 0,
        exitCode: code,
        exitSignal: sig,
        stdout: redact(raw),
        stderr: redact(stderr),
        ...(opts.keepRawStdout ? { rawStdout: raw } : {}),
        truncated,
        aborted,
        ...(spawnError ? { spawnError } : {}),
      });
    };

    child.on("error", (e: NodeJS.ErrnoException) => {
      spawnError = { code: e.code, message: redact(e.message) };
      // 'close' does not follow an 'error' when the process never started.
      if (child.pid === undefined) finish(null, null);
    });
    child.on("close", (code, sig) => finish(code, sig));
    // A stopped child's own children can keep the output pipes open (and 'close' from firing):
    // once the child itself has exited after an abort, stop waiting for them.
    child.on("exit", (code, sig) => {
      if (pgid !== undefined && !aborted) {
        // The child is done; what it left running in its group is ended now, so the output it
        // wrote is complete once the pipes drain, and nothing waits on a background process.
        killGroup(pgid, "SIGTERM");
        groupKillTimer = setTimeout(() => killGroup(pgid, "SIGKILL"), Math.min(grace, 1000));
        groupKillTimer.unref();
        stopWaitingSoon(code, sig, Math.min(grace, 1000) + 100);
        return;
      }
      if (!aborted) return;
      stopWaitingSoon(code, sig, 100);
    });
  });
}

/** Process groups of running children started with `processGroup`: ended if khook exits first. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const g of liveGroups) killGroup(g, "SIGKILL");
  });
}

function killGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // ESRCH: the group is already empty.
  }
}

/** The last lines of a tool's stderr (or stdout), trimmed for error messages. */
export function lastLines(text: string, n = 20): string {
  const lines = text.replace(/\s+$/, "").split("\n");
  return (lines.length > n ? ["...", ...lines.slice(-n)] : lines).join("\n");
}

/** One-line-ish description of a failed run, for errors. Already redacted. */
export function describeFailure(r: ExecResult, what: string): string {
  if (r.spawnError) return `${what}: could not start ${r.command.split(" ")[0]}: ${r.spawnError.message}`;
  if (r.aborted) return `${what}: stopped (cancelled or timed out)`;
  const detail = lastLines(r.stderr.trim() !== "" ? r.stderr : r.stdout);
  const how = r.exitCode !== null ? `exit code ${r.exitCode}` : `signal ${r.exitSignal ?? "unknown"}`;
  return `${what} failed (${how})${detail !== "" ? `:\n${detail}` : ""}`;
}
