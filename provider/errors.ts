/**
 * Errors are values: every problem is a Diagnostic with a path into the spec
 * and, where one exists, its source line. A KhookError carries the list and a
 * code that decides the exit status (invalid-input -> 2, execution -> 1).
 */

export interface SourcePosition {
  line: number; // 1-based
  column: number; // 1-based
}

export type Severity = "error" | "warning";

export interface Diagnostic {
  severity: Severity;
  /** JSON-pointer-like path into the document, e.g. `/steps/2/helm/chart`; "" for the whole document. */
  path: string;
  message: string;
  position?: SourcePosition;
  /** A stable identifier of the rule that produced it, e.g. `step-name-unique`. */
  rule?: string;
}

export type ErrorCode = "invalid-input" | "execution" | "cancelled";

export const EXIT_CODES: Record<ErrorCode, number> = {
  "invalid-input": 2,
  execution: 1,
  cancelled: 130,
};

export class KhookError extends Error {
  readonly code: ErrorCode;
  readonly diagnostics: readonly Diagnostic[];

  constructor(code: ErrorCode, message: string, diagnostics: readonly Diagnostic[] = []) {
    super(message);
    this.name = "KhookError";
    this.code = code;
    this.diagnostics = diagnostics;
  }

  get exitCode(): number {
    return EXIT_CODES[this.code];
  }
}

export function invalidInput(message: string, diagnostics: readonly Diagnostic[]): KhookError {
  return new KhookError("invalid-input", message, diagnostics);
}

export function executionError(message: string): KhookError {
  return new KhookError("execution", message);
}

export function isKhookError(e: unknown): e is KhookError {
  return e instanceof KhookError;
}

/** `file:12:5: /steps/0/name: message` — the shape compilers and editors understand. */
export function formatDiagnostic(d: Diagnostic, file?: string): string {
  const where = d.position ? `${file ?? "<spec>"}:${d.position.line}:${d.position.column}` : (file ?? "<spec>");
  const path = d.path === "" ? "" : ` ${d.path}:`;
  const sev = d.severity === "warning" ? " warning:" : "";
  return `${where}:${sev}${path} ${d.message}`;
}

export function errorsOnly(ds: readonly Diagnostic[]): Diagnostic[] {
  return ds.filter((d) => d.severity === "error");
}

/** Source order: line, then column; problems without a position go last. */
export function sortByPosition(ds: readonly Diagnostic[]): Diagnostic[] {
  const key = (d: Diagnostic): number =>
    d.position ? d.position.line * 100_000 + d.position.column : Number.MAX_SAFE_INTEGER;
  return [...ds].sort((a, b) => key(a) - key(b));
}

/** Turns a list of diagnostics into the one error the spec asks for, listing every problem. */
export function diagnosticsError(ds: readonly Diagnostic[], file?: string): KhookError {
  const errors = sortByPosition(errorsOnly(ds));
  const n = errors.length;
  const header = `${file ?? "spec"} is invalid: ${n} problem${n === 1 ? "" : "s"}`;
  const body = errors.map((d) => `  - ${formatDiagnostic(d, file)}`).join("\n");
  return invalidInput(`${header}\n${body}`, errors);
}

/** Finds the source position of a JSON-pointer path in the parsed document. */
export type PositionLookup = (path: string) => SourcePosition | undefined;
