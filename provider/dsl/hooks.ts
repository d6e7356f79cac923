/**
 * Lifecycle hooks at load time: the rules a JSON Schema cannot express, and the
 * immutable LoadedHook each matched step carries. Each problem names its rule:
 *
 *   hook-name-unique        hook names are unique
 *   hook-match-steps        every match.steps entry names a step of this spec
 *   hook-event-type         every event of the hook applies to every step kind it matches
 *   hook-event-handler      each event takes the one handler kind its definition names (hook-events.ts)
 *   hook-function-exec      a function is exec: (container functions, image:, are not supported)
 *   hook-exec-file          the exec file exists, is a regular file and is executable
 *   hook-webhook-url        https://, or http:// to a loopback address; no credentials in the URL
 *   hook-timeout            timeouts are positive and within the timer range; a webhook's is at most 60s
 *   hook-allow              allow: is for pre-apply webhooks; its clusterScoped and namespaces need add: true
 *   hook-allow-add-state    allow.add needs a declared, enabled state: (only the record lists what was added)
 *   hook-header-name        header names are HTTP tokens (RFC 9110 field names)
 *   hook-header-value       header values are visible ASCII, spaces and tabs: no CR, LF, NUL or non-ASCII
 *   hook-matches-nothing    a hook that matches no step (warning)
 */
import fs from "node:fs";
import path from "node:path";
import type { Diagnostic, PositionLookup, SourcePosition } from "../errors.js";
import { formatDuration, parseDuration } from "./duration.js";
import { canonicalJson, sha256Hex } from "./hash.js";
import type { Redactor } from "../redact.js";
import { MAX_TIMER_MS } from "./rules.js";
import { pointer } from "./yaml.js";
import type { FailurePolicy, HookSpec, KhookDocument, StepSpec } from "./document.js";
import { SPEC_DEFAULTS } from "./defaults.js";
import {
  HOOK_EVENTS,
  HOOK_POINTS,
  lifecycleOf,
  type HookEvent,
  type HookPoint,
  type HookRun,
  type HookStepForm,
} from "./hook-events.js";
import { kindOf, type KindSet, type StepKind } from "./step-kind.js";

/** How `event` happens on steps of `kind`: on every one, on one form, or not at all. */
function formOf(event: HookEvent, kind: StepKind): true | HookStepForm | undefined {
  const point = lifecycleOf(event).at;
  return HOOK_POINTS[point].everyStep ? true : kind.hookPoints[point];
}

/** Whether `event` happens on a step of `kind` with this action block. */
export function eventApplies(event: HookEvent, kind: StepKind, action: unknown): boolean {
  const form = formOf(event, kind);
  return form === true || (form !== undefined && form.applies(action));
}

/** Whether any event of `hook` fires in `run` (plan: the planner calls none of a webhook's). */
export function firesIn(hook: Pick<LoadedHook, "events">, run: HookRun): boolean {
  return hook.events.some((e) => lifecycleOf(e).runs.includes(run));
}

/** A webhook request never waits longer than this, whatever the spec says. */
export const MAX_WEBHOOK_TIMEOUT_MS = 60_000;

export interface LoadedFunctionHandler {
  readonly kind: "function";
  /** As written in the spec. */
  readonly exec: string;
  /** Resolved against the spec's directory. */
  readonly path: string;
  readonly config: Readonly<Record<string, unknown>> | undefined;
  readonly timeoutMs: number;
}

export interface LoadedWebhookHandler {
  readonly kind: "webhook";
  readonly url: string;
  readonly timeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
}

/** What a pre-apply webhook may add (the defaults table: nothing). */
export interface LoadedHookAllow {
  readonly add: boolean;
  readonly clusterScoped: boolean;
  /** undefined: the step's own namespaces. */
  readonly namespaces: readonly string[] | undefined;
}

export interface LoadedHook {
  readonly name: string;
  readonly events: readonly HookEvent[];
  readonly priority: number;
  readonly failurePolicy: FailurePolicy;
  /** Index in `hooks:`: the tie-breaker after priority. */
  readonly index: number;
  readonly handler: LoadedFunctionHandler | LoadedWebhookHandler;
  readonly allow: LoadedHookAllow;
  /** sha256 of the hook's definition and its exec file's content: an input of every step it matches. */
  readonly digest: string;
  /** The names of the steps it applies to, in document order. */
  readonly steps: readonly string[];
  /** `hooks[i]` in the spec, for messages. */
  readonly position: SourcePosition | undefined;
}

/**
 * The definitions (as hashed) of hooks that hold a secret value: their digests are of the masked
 * text, and this text goes into the keyed hash of the steps they reshape (keyed-hash.ts). Kept
 * beside the hook, never on it, so nothing that serializes a hook can carry it.
 */
const secretHookDefinitions = new WeakMap<LoadedHook, string>();

/** The secret-bearing definition of a hook, or undefined. Never print it. */
export function secretDefinitionOf(hook: LoadedHook): string | undefined {
  return secretHookDefinitions.get(hook);
}

type Report = (path: string, message: string, rule: string, severity?: "error" | "warning") => void;

function stepMatches(hook: HookSpec, step: StepSpec, kinds: KindSet): boolean {
  const kind = kindOf(step, kinds);
  if (kind === undefined) return false;
  if (hook.match?.steps !== undefined && !hook.match.steps.includes(step.name)) return false;
  if (hook.match?.types !== undefined && !hook.match.types.includes(kind.name)) return false;
  return hook.on.some((e) => eventApplies(e, kind, step[kind.name]));
}

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Why a webhook URL is not acceptable, or undefined. */
export function webhookUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a valid URL";
  }
  if (url.username !== "" || url.password !== "")
    return 'must not carry credentials; put them in headers: (e.g. Authorization: "Bearer ${HOOK_TOKEN}")';
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:")
    return isLoopbackHost(url.hostname)
      ? undefined
      : `uses plain http to ${url.hostname}: use https:// (plain http is allowed only to loopback addresses)`;
  return `has scheme ${url.protocol.replace(/:$/, "")}: use https://`;
}

/**
 * Header names whose values are credentials by definition (RFC 9110, RFC 6265), and are
 * redacted everywhere. Exact names only: `X-Keyspace` is not a credential. Any other
 * header's value is secret when it comes from a secret source (a KHOOK_SECRET_* variable,
 * a Pulumi secretVar), which the redactor already knows.
 */
export const CREDENTIAL_HEADERS: readonly string[] = ["authorization", "proxy-authorization", "cookie"];

export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.includes(name.toLowerCase());
}

/** An HTTP field name: a token of RFC 9110 section 5.6.2. */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Why a header value cannot be sent, or undefined. The value may be a secret: the
 * message names the character and where it is, never the value.
 */
export function headerValueProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x09 || (c >= 0x20 && c <= 0x7e)) continue;
    const at = `at character ${i + 1}`;
    if (c === 0x0a || c === 0x0d)
      return `the value has a line break (${c === 0x0a ? "LF" : "CR"}) ${at}, which would end the header; a header value is one line`;
    const code = `U+${(value.codePointAt(i) ?? c).toString(16).toUpperCase().padStart(4, "0")}`;
    return `the value has ${code} ${at}, which an HTTP header cannot carry: use visible ASCII, spaces and tabs (percent-encode or base64 other text)`;
  }
  return undefined;
}

/** The rules of the hooks: block. Needs a schema-valid document. */
export function checkHooks(
  doc: KhookDocument,
  ctx: { kinds: KindSet; baseDir: string; positionOf: PositionLookup; schemaInvalidHooks: ReadonlySet<number> },
): Diagnostic[] {
  const kinds = ctx.kinds;
  const out: Diagnostic[] = [];
  const report: Report = (p, message, rule, severity = "error") =>
    out.push({ severity, path: p, message, rule, position: ctx.positionOf(p) });
  const hooks = Array.isArray(doc.hooks) ? doc.hooks : [];
  const steps = Array.isArray(doc.steps) ? doc.steps.filter((s) => kindOf(s, kinds) !== undefined) : [];
  const stepByName = new Map(steps.map((s) => [s.name, s]));
  const firstName = new Map<string, number>();
  hooks.forEach((hook, i) => {
    if (ctx.schemaInvalidHooks.has(i)) return;
    const at = (...rest: (string | number)[]): string => pointer("hooks", i, ...rest);
    const prev = firstName.get(hook.name);
    if (prev !== undefined)
      report(
        at("name"),
        `hook name "${hook.name}" is already used by hook ${prev + 1}; hook names must be unique`,
        "hook-name-unique",
      );
    else firstName.set(hook.name, i);

    hook.on.forEach((event, e) => {
      const wants = lifecycleOf(event).handler;
      const has = hook.function !== undefined ? "function" : "webhook";
      if (wants !== has) {
        report(
          at("on", e),
          wants === "function"
            ? `${event} takes a function:, not a webhook: plan --diff runs post-render handlers, and plan never calls webhooks. Use pre-apply for a webhook that changes the objects`
            : `${event} takes a webhook:, not a function: a KRM function only transforms or validates objects, which is post-render's job`,
          "hook-event-handler",
        );
      }
    });

    hook.match?.steps?.forEach((name, j) => {
      const step = stepByName.get(name);
      if (step === undefined) {
        report(
          at("match", "steps", j),
          `match names step "${name}", which this spec does not have`,
          "hook-match-steps",
        );
        return;
      }
      const kind = kindOf(step, kinds)!;
      const action = step[kind.name];
      if (hook.match?.types !== undefined && !hook.match.types.includes(kind.name)) {
        report(
          at("match", "steps", j),
          `match names step "${name}", a ${kind.name} step, but match.types does not include ${kind.name}: the hook would never run on it`,
          "hook-event-type",
        );
      }
      for (const event of hook.on) {
        if (!eventApplies(event, kind, action))
          report(
            at("match", "steps", j),
            `${event} does not happen on step "${name}" (${describeKind(kind, action)}); it happens on ${describeEventKinds(event, kinds)}`,
            "hook-event-type",
          );
      }
    });
    hook.match?.types?.forEach((type, j) => {
      const kind = kinds[type];
      for (const event of hook.on) {
        if (kind !== undefined && formOf(event, kind) === undefined)
          report(
            at("match", "types", j),
            `${event} does not happen on ${type} steps; it happens on ${describeEventKinds(event, kinds)}`,
            "hook-event-type",
          );
      }
    });
    if (steps.length > 0 && !steps.some((s) => stepMatches(hook, s, kinds))) {
      report(
        at(),
        `hook "${hook.name}" matches no step of this spec, so it never runs`,
        "hook-matches-nothing",
        "warning",
      );
    }

    if (hook.allow !== undefined) {
      if (!hook.on.includes("pre-apply"))
        report(
          at("allow"),
          `allow: says what a pre-apply webhook may add; hook "${hook.name}" does not handle pre-apply`,
          "hook-allow",
        );
      else if (hook.allow.add !== true) {
        for (const field of ["clusterScoped", "namespaces"] as const) {
          if (hook.allow[field] !== undefined)
            report(
              at("allow", field),
              `allow.${field} has no effect without allow.add: true (by default a webhook adds nothing)`,
              "hook-allow",
            );
        }
      } else if (doc.state === undefined || doc.state === null || doc.state.enabled === false) {
        // What a webhook added is known only from the record: without one, destroy would leave it behind.
        const why = doc.state?.enabled === false ? "state.enabled is false" : "the spec has no state:";
        report(
          at("allow", "add"),
          `hook "${hook.name}" may add objects the spec does not declare, and only the state record lists them for destroy, but ${why}: declare state: (state: {} keeps the defaults), or drop allow.add`,
          "hook-allow-add-state",
        );
      }
    }
    if (hook.function !== undefined) checkFunction(hook, i, ctx.baseDir, report);
    if (hook.webhook !== undefined) {
      const problem = webhookUrlProblem(hook.webhook.url);
      if (problem !== undefined) report(at("webhook", "url"), `webhook url ${problem}`, "hook-webhook-url");
      checkTimeout(hook.webhook.timeout, at("webhook", "timeout"), MAX_WEBHOOK_TIMEOUT_MS, report);
      checkHeaders(hook.webhook.headers, (name) => at("webhook", "headers", name), report);
    }
  });
  return out;
}

/** A step, in `does not happen on step "x" (...)`: its kind, or what its form is not (a delete by resource renders nothing). */
function describeKind(kind: StepKind, action: unknown): string {
  const form = HOOK_EVENTS.map((e) => formOf(e, kind)).find((f): f is HookStepForm => f !== undefined && f !== true);
  return form !== undefined && !form.applies(action) ? form.otherwise : `a ${kind.name} step`;
}

/** The kinds `event` happens on, in the kinds' order: `every step`, or `helm, apply, delete (by manifests) steps`. */
function describeEventKinds(event: HookEvent, kinds: KindSet): string {
  const all = Object.values(kinds);
  const on = all.filter((k) => formOf(event, k) !== undefined);
  if (on.length === all.length) return "every step";
  const names = on.map((k) => {
    const form = formOf(event, k);
    return form === true || form === undefined ? k.name : form.name;
  });
  return `${names.join(", ")} steps`;
}

function checkFunction(hook: HookSpec, i: number, baseDir: string, report: Report): void {
  const fn = hook.function as unknown as Record<string, unknown>;
  const at = (...rest: string[]): string => pointer("hooks", i, "function", ...rest);
  if ("image" in fn) {
    report(
      at("image"),
      `container functions (image: ${String(fn.image)}) need a container runtime, which khook does not use: build the function as a local executable and point exec: at it (container functions are on the roadmap, see ROADMAP.md)`,
      "hook-function-exec",
    );
  }
  if (typeof fn.exec !== "string") {
    if (!("image" in fn))
      report(
        at(),
        "a function needs exec: the path of a local executable, relative to the spec file",
        "hook-function-exec",
      );
    return;
  }
  const problem = execFileProblem(path.resolve(baseDir, fn.exec));
  if (problem !== undefined) report(at("exec"), `${fn.exec} ${problem}`, "hook-exec-file");
  checkTimeout(fn.timeout, at("timeout"), undefined, report);
}

/** Why `file` cannot run as a function, or undefined. */
export function execFileProblem(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return `does not exist (${file})`;
  }
  if (!st.isFile()) return `is not a regular file (${file})`;
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return `is not executable: run chmod +x ${file}`;
  }
  return undefined;
}

function checkHeaders(
  headers: Readonly<Record<string, unknown>> | undefined,
  at: (name: string) => string,
  report: Report,
): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!HTTP_TOKEN.test(name)) {
      report(
        at(name),
        `${JSON.stringify(name)} is not an HTTP header name: a name is letters, digits and !#$%&'*+-.^_\`|~, without spaces or colons`,
        "hook-header-name",
      );
    }
    const problem = typeof value === "string" ? headerValueProblem(value) : undefined;
    if (problem !== undefined) report(at(name), `header ${name}: ${problem}`, "hook-header-value");
  }
}

/** `maxMs` is the webhook's cap; a function's timeout is bounded by what a timer can hold. */
function checkTimeout(value: unknown, p: string, maxMs: number | undefined, report: Report): void {
  if (typeof value !== "string") return;
  const ms = parseDuration(value);
  if (ms === undefined) return; // the schema reported it
  if (ms <= 0) report(p, "timeout must be greater than zero", "hook-timeout");
  else if (maxMs !== undefined && ms > maxMs)
    report(p, `timeout ${value} is longer than the ${maxMs / 1000}s a webhook may take`, "hook-timeout");
  else if (ms > MAX_TIMER_MS)
    report(
      p,
      `timeout ${value} is longer than khook can wait; the limit is ${formatDuration(MAX_TIMER_MS)} (about 24.8 days)`,
      "hook-timeout",
    );
}

/**
 * The loaded hooks, sorted by priority then document order, each with the steps it
 * matches and its digest. Needs a document that passed checkHooks; an unreadable
 * exec file (reported there) digests as empty.
 */
export function loadHooks(
  doc: KhookDocument,
  kinds: KindSet,
  baseDir: string,
  positionOf: PositionLookup,
  redactor?: Redactor,
): LoadedHook[] {
  const hooks = Array.isArray(doc.hooks) ? doc.hooks : [];
  const loaded = hooks.map((hook, index): LoadedHook => {
    const handler =
      hook.function !== undefined
        ? {
            kind: "function" as const,
            exec: hook.function.exec,
            path: path.resolve(baseDir, hook.function.exec),
            config: hook.function.config,
            timeoutMs: parseDuration(hook.function.timeout ?? SPEC_DEFAULTS.functionTimeout) ?? 0,
          }
        : {
            kind: "webhook" as const,
            url: hook.webhook!.url,
            timeoutMs: parseDuration(hook.webhook!.timeout ?? SPEC_DEFAULTS.webhookTimeout) ?? 0,
            headers: hook.webhook!.headers ?? {},
          };
    const digested = hookDigest(hook, handler, redactor);
    const h = {
      name: hook.name,
      events: HOOK_EVENTS.filter((e) => hook.on.includes(e)),
      priority: hook.priority ?? SPEC_DEFAULTS.hookPriority,
      failurePolicy: hook.failurePolicy ?? SPEC_DEFAULTS.hookFailurePolicy,
      index,
      handler,
      allow: {
        add: hook.allow?.add ?? SPEC_DEFAULTS.hookAllowAdd,
        clusterScoped: hook.allow?.clusterScoped ?? SPEC_DEFAULTS.hookAllowClusterScoped,
        namespaces: hook.allow?.namespaces,
      },
      digest: digested.digest,
      steps: doc.steps.filter((s) => stepMatches(hook, s, kinds)).map((s) => s.name),
    };
    // Positions are only wanted for messages; asking for one parses the positioned Document.
    Object.defineProperty(h, "position", { enumerable: true, get: () => positionOf(pointer("hooks", index)) });
    if (digested.secretDefinition !== undefined)
      secretHookDefinitions.set(h as unknown as LoadedHook, digested.secretDefinition);
    return h as unknown as LoadedHook;
  });
  return orderHooks(loaded);
}

/** Priority, then document order, as Helm's event-driven design orders handlers. */
export function orderHooks<T extends { priority: number; index: number }>(hooks: readonly T[]): T[] {
  return [...hooks].sort((a, b) => a.priority - b.priority || a.index - b.index);
}

/**
 * What the step hash covers of a hook: what identifies what it does to the objects. A
 * function: its name, exec path and config, and the exec file's bytes. A webhook: its name,
 * URL and `allow:`; never its headers, which carry who is calling (a per-run CI token would
 * otherwise re-run every step it matches), not what the hook does. Events, priority,
 * timeouts and failurePolicy are not in it: only the reshaping events put a hook in a step's
 * hash at all (see `objectHooksFor`), and their order there is the run order.
 */
function hookDigest(
  hook: HookSpec,
  handler: LoadedFunctionHandler | LoadedWebhookHandler,
  redactor: Redactor | undefined,
): { digest: string; secretDefinition?: string } {
  const definition =
    handler.kind === "function"
      ? { name: hook.name, function: { exec: handler.exec, config: handler.config ?? null } }
      : { name: hook.name, webhook: { url: handler.url }, ...(hook.allow !== undefined ? { allow: hook.allow } : {}) };
  let content = "";
  if (handler.kind === "function") {
    try {
      content = sha256Hex(fs.readFileSync(handler.path));
    } catch {
      content = "";
    }
  }
  const text = canonicalJson(definition);
  // A definition holding a secret (a config value, a URL from a secret variable) is digested with
  // the secret masked, so the digest (and the helm release label made from it) gives nothing back;
  // the real text goes into the keyed step hash instead (keyed-hash.ts).
  const masked = redactor !== undefined && redactor.size > 0 ? redactor.redact(text) : text;
  if (masked !== text) return { digest: sha256Hex(`${masked}\n${content}`), secretDefinition: text };
  return { digest: sha256Hex(`${text}\n${content}`) };
}

/** A step as hooks see it: its hooks, and the points of its life (LoadedStep.hookPoints). */
export interface HookedStep {
  readonly hooks: readonly LoadedHook[];
  readonly hookPoints: readonly HookPoint[];
}

/**
 * The hooks that can change what `step` applies, event by event in HOOK_EVENTS order (post-render
 * functions, then pre-apply webhooks): the events its executor fires. They are inputs of its
 * hash and of a helm release's hooks fingerprint; post-apply and finalize come after the objects
 * are sent (or before they are removed) and change nothing a step applies.
 */
export function objectHooksFor(step: HookedStep): LoadedHook[] {
  return HOOK_EVENTS.filter((e) => HOOK_POINTS[lifecycleOf(e).at].firedBy === "executor").flatMap((e) =>
    hooksFor(step, e),
  );
}

/** The hooks of `step` that handle `event`, in run order. */
export function hooksFor(step: HookedStep, event: HookEvent): LoadedHook[] {
  if (!step.hookPoints.includes(lifecycleOf(event).at)) return [];
  return step.hooks.filter((h) => h.events.includes(event));
}

/** `require-limits (post-render function ./fn/require-limits)`, for plan lines. */
export function describeHook(hook: LoadedHook, events: readonly HookEvent[] = hook.events): string {
  const handler =
    hook.handler.kind === "function"
      ? `function ${hook.handler.exec}`
      : `webhook ${new URL(hook.handler.url).origin}${new URL(hook.handler.url).pathname}`;
  return `${events.join(",")} ${hook.name} (${handler})`;
}
