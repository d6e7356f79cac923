/**
 * Reading the content a step references: manifest sources (inline, file, url,
 * kustomize) and remote text. Relative paths resolve against the spec's directory.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { executionError } from "../../errors.js";
import type { Redactor } from "../../redact.js";
import { describeChartText, splitUserinfo } from "../../helm/chart.js";
import type { ManifestSource } from "./definition.js";
import { parseYamlStream } from "../../dsl/yaml-stream.js";
import { renderKustomize } from "../../tools/kustomize.js";
import type { AttemptHooks } from "../../hooks/step-hooks.js";
import type { ToolPaths } from "../contract.js";

/** Remote sources are fetched with this bound unless the step's own deadline is sooner. */
export const URL_FETCH_TIMEOUT_MS = 30_000;

export interface SourceContext {
  baseDir: string;
  signal: AbortSignal;
  redactor: Redactor;
  /** Configured kustomize/kubectl binaries (else KHOOK_KUSTOMIZE / KHOOK_KUBECTL / PATH). */
  tools?: ToolPaths | undefined;
}

/** Fetches a URL's text; userinfo becomes basic auth and never appears in errors. */
export async function fetchUrlText(
  url: string,
  ctx: Pick<SourceContext, "signal" | "redactor">,
  timeoutMs = URL_FETCH_TIMEOUT_MS,
): Promise<string> {
  const info = splitUserinfo(url);
  const headers: Record<string, string> = { accept: "application/yaml, text/yaml, application/json, text/plain, */*" };
  if (info.user !== undefined && info.password !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${info.user}:${info.password}`).toString("base64")}`;
  }
  const shown = describeChartText(url);
  let response: Response;
  try {
    response = await fetch(info.url, {
      headers,
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]),
      redirect: "follow",
    });
  } catch (e) {
    const reason =
      (e as Error).name === "TimeoutError"
        ? `no answer within ${Math.round(timeoutMs / 1000)}s`
        : ((e as { cause?: Error }).cause?.message ?? (e as Error).message);
    throw executionError(ctx.redactor.redact(`cannot fetch ${shown}: ${reason}`));
  }
  if (!response.ok) {
    throw executionError(
      ctx.redactor.redact(
        `cannot fetch ${shown}: HTTP ${response.status} ${response.statusText}${response.status === 401 || response.status === 403 ? " (check the credentials)" : ""}`,
      ),
    );
  }
  return response.text();
}

/** Where an object came from, for messages: `inline #1`, `./manifests/x.yaml`, ... */
export interface SourcedObject {
  object: Record<string, unknown>;
  origin: string;
}

/** Reads every source in order and splits multi-document YAML into objects (a `List` is expanded). */
export async function readManifestSources(
  sources: readonly ManifestSource[],
  ctx: SourceContext,
): Promise<SourcedObject[]> {
  const texts = await Promise.all(sources.map((s, i) => readOneSource(s, i, ctx)));
  const out: SourcedObject[] = [];
  for (const { text, origin } of texts) out.push(...parseManifestText(text, origin, ctx.redactor));
  return out;
}

async function readOneSource(
  source: ManifestSource,
  index: number,
  ctx: SourceContext,
): Promise<{ text: string; origin: string }> {
  if ("inline" in source) return { text: source.inline, origin: `inline manifest #${index + 1}` };
  if ("file" in source) {
    const file = path.resolve(ctx.baseDir, source.file);
    try {
      return { text: await fs.readFile(file, "utf8"), origin: source.file };
    } catch (e) {
      throw executionError(
        `cannot read ${source.file} (${file}): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  }
  if ("url" in source) return { text: await fetchUrlText(source.url, ctx), origin: describeChartText(source.url) };
  const dir = path.resolve(ctx.baseDir, source.kustomize);
  const rendered = await renderKustomize(dir, {
    signal: ctx.signal,
    redactor: ctx.redactor,
    written: source.kustomize,
    ...(ctx.tools?.kustomize !== undefined ? { kustomizePath: ctx.tools.kustomize } : {}),
    ...(ctx.tools?.kubectl !== undefined ? { kubectlPath: ctx.tools.kubectl } : {}),
  });
  return { text: rendered, origin: `kustomize ${source.kustomize}` };
}

/**
 * Runs the step's post-render (and, when `send`, pre-apply) hooks over sourced
 * objects. An object a hook kept keeps its origin; one it added is `hooks`.
 */
export async function renderWithHooks(
  objects: SourcedObject[],
  ctx: { hooks?: AttemptHooks | undefined },
  send: boolean,
): Promise<SourcedObject[]> {
  if (ctx.hooks === undefined || !ctx.hooks.transformsObjects) return objects;
  const out = await ctx.hooks.render(
    objects.map((o) => o.object),
    { send },
  );
  const origins = new Map(objects.map((o) => [identity(o.object), o.origin]));
  return out.map((object) => ({ object, origin: origins.get(identity(object)) ?? "hooks" }));
}

function identity(o: Record<string, unknown>): string {
  const meta = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  return `${String(o.apiVersion)}|${String(o.kind)}|${String(meta.namespace ?? "")}|${String(meta.name ?? "")}`;
}

export function parseManifestText(text: string, origin: string, redactor: Redactor): SourcedObject[] {
  const out: SourcedObject[] = [];
  parseYamlStream(text).forEach((doc, i) => {
    if (doc.error !== undefined)
      throw executionError(redactor.redact(`${origin}: document ${i + 1} is not valid YAML: ${doc.error}`));
    // The parsed values are shared with the loader's cache: executors get their own copy.
    const value: unknown = structuredClone(doc.value);
    if (value === null || value === undefined) return;
    if (typeof value !== "object" || Array.isArray(value))
      throw executionError(`${origin}: document ${i + 1} is not a Kubernetes object`);
    const obj = value as Record<string, unknown>;
    if (obj.kind === "List" && Array.isArray(obj.items)) {
      for (const item of obj.items)
        if (item !== null && typeof item === "object") out.push({ object: item as Record<string, unknown>, origin });
      return;
    }
    if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string")
      throw executionError(`${origin}: document ${i + 1} has no apiVersion or kind`);
    out.push({ object: obj, origin });
  });
  return out;
}
