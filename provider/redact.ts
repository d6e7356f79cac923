/**
 * The one redactor. It is created at load time and every output path (CLI text,
 * JSON, the journal's error text, Pulumi outputs and logs) goes through it.
 * Each run (apply, destroy, plan) works with a child of the spec's redactor:
 * what an executor learns is secret during the run is masked in everything the
 * run produces, and the loaded spec stays as it was.
 *
 * It masks registered secret values (raw and every pipeline output derived from
 * them, plus the common encodings of each) and URL userinfo credentials.
 */

export const MASK = "***";

/**
 * Secrets shorter than this are not masked by substring: masking "a" would destroy every log line.
 * Loading refuses a secret (or a secret's pipeline output) this short, so none reaches output.
 */
export const MIN_SECRET_LENGTH = 3;

/** The shortest run of a secret's text that redactFragments masks wherever it shows. */
export const MIN_FRAGMENT_LENGTH = 8;

export class Redactor {
  private readonly secrets = new Set<string>();
  /** The values as registered, for fragments (redactFragments). */
  private readonly values = new Set<string>();
  /** fragmentRuns() as of `valueCount` values. */
  private runsMemo: { valueCount: number; runs: Set<string> } | undefined;
  private pattern: RegExp | undefined;
  /** `size` when `pattern` was built: the parent may have learned more since. */
  private patternSize = 0;

  /** With a parent (see child()), it masks everything the parent masks, now and later, plus what is added to it. */
  constructor(private readonly parent?: Redactor) {}

  /** A redactor for one run: adding to it never changes this one. */
  child(): Redactor {
    return new Redactor(this);
  }

  /** Registers a secret value and the encodings under which it commonly leaks. */
  add(value: string): void {
    if (value.length < MIN_SECRET_LENGTH) return;
    this.values.add(value);
    const before = this.secrets.size;
    for (const form of encodedForms(value)) {
      if (form.length >= MIN_SECRET_LENGTH) this.secrets.add(form);
    }
    if (this.secrets.size !== before) this.pattern = undefined;
  }

  /** How many forms are masked (the parent's included). */
  get size(): number {
    return this.secrets.size + (this.parent?.size ?? 0);
  }

  /** All registered forms, the parent's included; for tests that grep produced output. */
  forms(): string[] {
    return [...new Set([...(this.parent?.forms() ?? []), ...this.secrets])];
  }

  redact(text: string): string {
    const out = stripUrlCredentials(text);
    const size = this.size;
    if (size === 0) return out;
    if (this.pattern === undefined || this.patternSize !== size) {
      this.pattern = buildPattern(new Set(this.forms()));
      this.patternSize = size;
    }
    return out.replace(this.pattern, MASK);
  }

  /**
   * redact(), and also every run of MIN_FRAGMENT_LENGTH or more characters that a registered secret
   * holds: for messages that quote text a parser split into tokens, where a piece of a substituted
   * secret shows without the rest (`Block scalar header includes extra characters: |aaaaaaa`).
   * Load-time problems go through it; it may mask a run of public text that a secret happens to
   * share, which a problem message can afford.
   */
  redactFragments(text: string): string {
    const out = this.redact(text);
    const runs = this.fragmentRuns();
    if (runs.size === 0 || out.length < MIN_FRAGMENT_LENGTH) return out;
    const covered = new Uint8Array(out.length);
    let found = false;
    for (let i = 0; i + MIN_FRAGMENT_LENGTH <= out.length; i++) {
      if (!runs.has(out.slice(i, i + MIN_FRAGMENT_LENGTH))) continue;
      covered.fill(1, i, i + MIN_FRAGMENT_LENGTH);
      found = true;
    }
    if (!found) return out;
    let masked = "";
    for (let i = 0; i < out.length;) {
      if (covered[i] === 0) masked += out[i++];
      else {
        masked += MASK;
        while (i < out.length && covered[i] === 1) i++;
      }
    }
    return masked;
  }

  /** Every MIN_FRAGMENT_LENGTH-character run of the registered values (the parent's included) with no blank at either end. */
  private fragmentRuns(): Set<string> {
    // Keyed by the values the runs come from, not by the forms, which a new value need not add to.
    let valueCount = 0;
    for (let r: Redactor | undefined = this; r !== undefined; r = r.parent) valueCount += r.values.size;
    if (this.runsMemo?.valueCount === valueCount) return this.runsMemo.runs;
    const runs = new Set<string>();
    for (let r: Redactor | undefined = this; r !== undefined; r = r.parent)
      for (const value of r.values)
        for (let i = 0; i + MIN_FRAGMENT_LENGTH <= value.length; i++) {
          const run = value.slice(i, i + MIN_FRAGMENT_LENGTH);
          if (run.trim().length === MIN_FRAGMENT_LENGTH) runs.add(run);
        }
    this.runsMemo = { valueCount, runs };
    return runs;
  }

  /** Redacts every string inside a JSON-like value. */
  redactValue<T>(value: T): T {
    return mapStrings(value, (s) => this.redact(s)) as T;
  }
}

function buildPattern(secrets: Set<string>): RegExp {
  // Longest first, so a secret that contains another is masked whole.
  const sorted = [...secrets].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(escapeRegExp).join("|"), "g");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The forms a secret typically takes in produced text: raw, JSON/YAML-escaped, URL-encoded, base64;
 * and the same of the secret without its surrounding whitespace, which a plain YAML scalar it is
 * substituted into drops (a message quoting the parsed value then shows the trimmed text).
 */
export function encodedForms(value: string): string[] {
  const trimmed = value.trim();
  const forms = new Set<string>(trimmed !== value && trimmed !== "" ? encodedForms(trimmed) : []);
  forms.add(value);
  forms.add(JSON.stringify(value).slice(1, -1));
  forms.add(encodeURIComponent(value));
  forms.add(escapeUrlQuery(value));
  forms.add(Buffer.from(value, "utf8").toString("base64"));
  forms.add(Buffer.from(value, "utf8").toString("base64").replace(/=+$/, ""));
  // Each line of a multi-line secret (a key, a certificate): substituted into YAML, a secret is
  // re-indented or folded, and a message that quotes the text shows it line by line.
  if (value.includes("\n")) for (const line of value.split(/\r?\n/)) forms.add(line.trim());
  return [...forms];
}

/** Go's url.QueryEscape, which sprig's `urlquery` uses (space becomes '+'). */
function escapeUrlQuery(s: string): string {
  return encodeURIComponent(s)
    .replace(/%20/g, "+")
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Masks `user:pass@` (and a lone `user@` is left alone) in anything URL-shaped. */
const URL_USERINFO = /\b([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^\s/@:'"]+):([^\s/@'"]*)@/g;

export function stripUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, `$1${MASK}:${MASK}@`);
}

function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[fn(k)] = mapStrings(v, fn);
    return out;
  }
  return value;
}
