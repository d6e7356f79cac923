/**
 * The dynamic provider object that Pulumi serializes into state (`__provider`).
 *
 * It is a thin, stateless loader: every method finds the handlers of the
 * installed `khook` package and delegates. So the engine is never frozen into
 * state (destroy and refresh of an old stack run the khook installed now), and
 * nothing secret is captured: credentials arrive as inputs or stack config.
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
 *     name, and every `up` re-serializes it.
 *
 * Keep these functions free of references to anything but `require`,
 * `process` and the captured string: whatever they close over is serialized
 * with them.
 */
import * as path from "node:path";
import type * as pulumi from "@pulumi/pulumi";

type Handlers = Required<pulumi.dynamic.ResourceProvider>;

/** The handlers module of this copy of khook, as the program sees it (fallback 3). */
const PROGRAM_TIME_HANDLERS = path.join(__dirname, "..", "provider", "pulumi", "handlers.js");

function loaderFor(fallback: string): () => Handlers {
  return () => {
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
  };
}

function providerFor(fallback: string): pulumi.dynamic.ResourceProvider {
  const load = loaderFor(fallback);
  return {
    configure: (req) => load().configure(req),
    check: (olds, news) => load().check(olds, news),
    diff: (id, olds, news) => load().diff(id, olds, news),
    create: (inputs) => load().create(inputs),
    update: (id, olds, news) => load().update(id, olds, news),
    delete: (id, props) => load().delete(id, props),
    read: (id, props) => load().read(id, props),
  };
}

export const khookProvider: pulumi.dynamic.ResourceProvider = providerFor(PROGRAM_TIME_HANDLERS);
