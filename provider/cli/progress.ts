/**
 * How a run looks in a terminal: a live per-step view on a TTY (spinner,
 * elapsed time, attempt n/m), plain event lines otherwise, and a summary table.
 * Every line passes through the Output, and so through the redactor.
 */
import type { RunEvent, RunResult, StepResult } from "../engine/run.js";
import { formatDuration } from "../dsl/duration.js";
import { table, type Output } from "./output.js";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

interface Row {
  name: string;
  type: string;
  state: "waiting" | "running" | "ok" | "failed" | "skipped";
  startedAt?: number;
  attempt?: string;
  detail: string;
  durationMs?: number;
}

export interface ProgressView {
  onEvent(e: RunEvent): void;
  finish(): void;
}

export function createProgressView(
  out: Output,
  steps: readonly { name: string; type: string }[],
  verb: string,
  mode: "auto" | "lines" = "auto",
): ProgressView {
  if (
    mode === "auto" &&
    out.streams.stderr.isTTY &&
    out.streams.env.CI === undefined &&
    out.streams.env.TERM !== "dumb"
  )
    return new LiveView(out, steps);
  return new LineView(out, verb);
}

/** One line per event, for logs and CI. */
class LineView implements ProgressView {
  constructor(
    private readonly out: Output,
    private readonly verb: string,
  ) {}

  onEvent(e: RunEvent): void {
    switch (e.type) {
      case "run-started":
        this.out.err(`${this.verb} ${e.spec}: ${e.steps} step${e.steps === 1 ? "" : "s"}`);
        break;
      case "step-started":
        this.out.err(`[${e.step}] started (${e.stepType})`);
        break;
      case "attempt-failed":
        this.out.err(
          `[${e.step}] attempt ${e.attempt}/${e.of} failed: ${e.error}${e.willRetry ? `; retrying in ${formatDuration(e.retryInMs)}` : ""}`,
        );
        break;
      case "step-log":
        this.out.err(`[${e.step}] ${e.message}`);
        break;
      case "step-finished":
        this.out.err(
          `[${e.result.name}] ${e.result.status} (${formatDuration(e.result.durationMs)}): ${e.result.reason}`,
        );
        break;
      case "journal-warning":
      case "cluster-warning":
        this.out.err(`warning: ${e.message}`);
        break;
      case "journal-note":
        this.out.err(e.message);
        break;
      default:
        break;
    }
  }

  finish(): void {}
}

/** Redraws a block of rows in place. */
class LiveView implements ProgressView {
  private readonly rows: Row[];
  private readonly byName = new Map<string, Row>();
  private drawn = 0;
  private frame = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly color: boolean;

  constructor(
    private readonly out: Output,
    steps: readonly { name: string; type: string }[],
  ) {
    this.rows = steps.map((s) => ({ name: s.name, type: s.type, state: "waiting", detail: "" }));
    for (const r of this.rows) this.byName.set(r.name, r);
    this.color = out.streams.env.NO_COLOR === undefined;
    this.timer = setInterval(() => this.draw(), 100);
    this.timer.unref();
  }

  onEvent(e: RunEvent): void {
    const row =
      "step" in e ? this.byName.get(e.step) : e.type === "step-finished" ? this.byName.get(e.result.name) : undefined;
    switch (e.type) {
      case "step-started":
        if (row) Object.assign(row, { state: "running", startedAt: Date.now(), detail: "" });
        break;
      case "attempt-started":
        if (row && e.of > 1) row.attempt = `attempt ${e.attempt}/${e.of}`;
        break;
      case "attempt-failed":
        if (row) row.detail = `${e.error}${e.willRetry ? ` (retrying in ${formatDuration(e.retryInMs)})` : ""}`;
        break;
      case "step-log":
        if (row) row.detail = e.message;
        break;
      case "step-finished":
        if (row)
          Object.assign(row, { state: e.result.status, durationMs: e.result.durationMs, detail: e.result.reason });
        break;
      case "journal-warning":
      case "cluster-warning":
        this.clear();
        this.out.err(`warning: ${e.message}`);
        break;
      case "journal-note":
        this.clear();
        this.out.err(e.message);
        break;
      default:
        break;
    }
    this.draw();
  }

  private paint(code: string, text: string): string {
    return this.color ? `\x1b[${code}m${text}\x1b[0m` : text;
  }

  private line(r: Row): string {
    const width = Math.max(...this.rows.map((x) => x.name.length));
    const icon =
      r.state === "running"
        ? this.paint("36", SPINNER[this.frame % SPINNER.length]!)
        : r.state === "ok"
          ? this.paint("32", "✓")
          : r.state === "failed"
            ? this.paint("31", "✗")
            : r.state === "skipped"
              ? this.paint("33", "-")
              : this.paint("2", "·");
    const elapsed =
      r.state === "running" && r.startedAt !== undefined
        ? formatDuration(Date.now() - r.startedAt)
        : r.durationMs !== undefined
          ? formatDuration(r.durationMs)
          : "";
    const cols = (this.out.streams.stdout.columns ?? 120) - 2;
    const text = `${icon} ${r.name.padEnd(width)}  ${r.type.padEnd(7)}  ${r.state.padEnd(7)}  ${elapsed.padStart(6)}  ${r.attempt ?? ""} ${r.detail.split("\n")[0] ?? ""}`;
    return text.length > cols + 20 ? `${text.slice(0, cols + 17)}...` : text;
  }

  private clear(): void {
    if (this.drawn > 0) this.out.streams.stderr.write(`\x1b[${this.drawn}F\x1b[J`);
    this.drawn = 0;
  }

  private draw(): void {
    this.frame++;
    const lines = this.rows.map((r) => this.line(r));
    this.clear();
    this.out.streams.stderr.write(`${this.out.redactor.redact(lines.join("\n"))}\n`);
    this.drawn = lines.length;
  }

  finish(): void {
    clearInterval(this.timer);
    this.draw();
  }
}

export function summaryTable(result: RunResult): string {
  return table(
    ["STEP", "TYPE", "STATUS", "ATTEMPTS", "DURATION", "REASON"],
    result.steps.map((s: StepResult) => [
      s.name,
      s.type,
      s.status,
      String(s.attempts),
      formatDuration(s.durationMs),
      (s.error ?? s.reason).split("\n")[0] ?? "",
    ]),
  );
}

/** Transient failures of a step retried within its deadline (engine/transient-retry.ts); 0 when none. */
function transientRetries(step: RunResult["steps"][number]): number {
  return step.transientRetries ?? 0;
}

export function runJson(result: RunResult, specName: string): Record<string, unknown> {
  return {
    spec: specName,
    mode: result.mode,
    status: result.status,
    durationMs: result.durationMs,
    ...(result.journalError !== undefined ? { journalError: result.journalError } : {}),
    steps: result.steps.map((s) => ({
      name: s.name,
      type: s.type,
      status: s.status,
      reason: s.reason,
      attempts: s.attempts,
      transientRetries: transientRetries(s),
      durationMs: s.durationMs,
      inputHash: s.inputHash,
      ...(s.error !== undefined ? { error: s.error } : {}),
    })),
  };
}
