/**
 * The dynamic provider that Pulumi keeps in state (`__provider`): the text of a small CommonJS
 * module whose `handler()` returns the provider object, which is the form Pulumi's Node.js dynamic
 * provider loads (`require-from-string`, then `.handler()`).
 *
 * The SDK writes that text itself rather than handing a provider object to
 * `pulumi.dynamic.Resource`, whose closure serializer loads the TypeScript compiler and asks V8's
 * inspector about every function it serializes: a quarter of a second of every program run, for
 * a loader whose text only changes with the place khook is installed in.
 *
 * The provider is a thin, stateless loader: every method finds the handlers of the installed
 * `khook` package and delegates. So the engine is never frozen into state (destroy and refresh
 * of an old stack run the khook installed now), and nothing secret is in it: credentials arrive
 * as inputs or stack config.
 *
 * Where the handlers are found, in order:
 *  1. `khook/provider/pulumi/handlers` by package name, from the provider's
 *     working directory (the program's directory): an npm, yarn or pnpm
 *     install, and workspaces whose node_modules hold a `khook` link;
 *  2. the directory named by KHOOK_PULUMI_HANDLERS, when set: an escape hatch
 *     for layouts nothing else finds;
 *  3. where the program loaded khook from when it last ran: covers imports by
 *     relative path and Automation API inline programs whose working directory
 *     is elsewhere. This one is machine-specific, which is why it comes last
 *     and is never the only way: a project that moves still finds khook by
 *     name, and every `up` writes it anew.
 */
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";

type Handlers = Required<pulumi.dynamic.ResourceProvider>;

/** The methods of a dynamic provider, each delegated to the handlers. */
const METHODS = ["configure", "check", "diff", "create", "update", "delete", "read"] as const;

/** The handlers module of this copy of khook, as the program sees it (fallback 3). */
const PROGRAM_TIME_HANDLERS = path.join(__dirname, "..", "provider", "pulumi", "handlers.js");

/**
 * The handlers, found as the module comment says. Its source is copied into the provider's text
 * (Function.prototype.toString), so it may use nothing but its argument, `require` and `process`.
 */
function loadHandlers(fallback: string): Handlers {
  const missing = (e: unknown, id: string): boolean =>
    (e as { code?: string } | null)?.code === "MODULE_NOT_FOUND" && String((e as Error).message).includes(id);
  const tried: string[] = [];
  for (const id of ["khook/provider/pulumi/handlers", process.env.KHOOK_PULUMI_HANDLERS, fallback]) {
    if (id === undefined || id === "") continue;
    try {
      return require(id) as Handlers;
    } catch (e) {
      if (!missing(e, id)) throw e;
      tried.push(id);
    }
  }
  throw new Error(
    `khook's Pulumi provider cannot find the khook package from ${process.cwd()} (tried ${tried.join(", ")}). ` +
      "Install khook in the Pulumi program's directory (npm install khook), or set KHOOK_PULUMI_HANDLERS to <khook package>/dist/provider/pulumi/handlers.js.",
  );
}

/** The provider module's text for handlers found by name first and at `fallback` last. */
export function providerModuleText(fallback: string): string {
  return [
    '"use strict";',
    `const fallback = ${JSON.stringify(fallback)};`,
    `const loadHandlers = ${loadHandlers.toString()};`,
    "const provider = {",
    ...METHODS.map((m) => `  ${m}: (...args) => loadHandlers(fallback).${m}(...args),`),
    "};",
    "exports.handler = () => provider;",
    "",
  ].join("\n");
}

/** What the Khook resource stores in `__provider`. */
export const KHOOK_PROVIDER_TEXT = providerModuleText(PROGRAM_TIME_HANDLERS);

/** The same provider as an object, for a program that declares its own `pulumi.dynamic.Resource` with it. */
export const khookProvider: pulumi.dynamic.ResourceProvider = {
  configure: (req) => loadHandlers(PROGRAM_TIME_HANDLERS).configure(req),
  check: (olds, news) => loadHandlers(PROGRAM_TIME_HANDLERS).check(olds, news),
  diff: (id, olds, news) => loadHandlers(PROGRAM_TIME_HANDLERS).diff(id, olds, news),
  create: (inputs) => loadHandlers(PROGRAM_TIME_HANDLERS).create(inputs),
  update: (id, olds, news) => loadHandlers(PROGRAM_TIME_HANDLERS).update(id, olds, news),
  delete: (id, props) => loadHandlers(PROGRAM_TIME_HANDLERS).delete(id, props),
  read: (id, props) => loadHandlers(PROGRAM_TIME_HANDLERS).read(id, props),
};
