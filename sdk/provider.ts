/**
 * The dynamic provider object that Pulumi serializes into state (`__provider`).
 *
 * It is a thin, stateless loader: every method requires the handlers from the
 * installed `khook` package by name — resolved from the Pulumi program's
 * node_modules when the provider runs — and delegates. So:
 *  - the engine is never frozen into state: destroy and refresh of an old stack
 *    run the khook that is installed now;
 *  - nothing machine-specific is captured (a require of an absolute path would
 *    be, and would break when the project moves);
 *  - nothing secret is captured: credentials arrive as inputs or stack config.
 *
 * Keep these functions free of references to anything but `require` and string
 * literals: whatever they close over is serialized with them.
 */
import type * as pulumi from "@pulumi/pulumi";

export const khookProvider: pulumi.dynamic.ResourceProvider = {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  configure: (req) => require("khook/provider/pulumi/handlers").configure(req),
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  check: (olds, news) => require("khook/provider/pulumi/handlers").check(olds, news),
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  diff: (id, olds, news) => require("khook/provider/pulumi/handlers").diff(id, olds, news),
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  create: (inputs) => require("khook/provider/pulumi/handlers").create(inputs),
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  update: (id, olds, news) => require("khook/provider/pulumi/handlers").update(id, olds, news),
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  delete: (id, props) => require("khook/provider/pulumi/handlers").delete(id, props),
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  read: (id, props) => require("khook/provider/pulumi/handlers").read(id, props),
};
