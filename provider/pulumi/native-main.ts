/**
 * The native provider's process: `pulumi-resource-khook` (bin/) and the
 * plugin the Node language host runs from source (pulumi-plugin/PulumiPlugin.yaml)
 * both start here. The engine passes its address as the first argument.
 */
import { serve } from "./native.js";

serve(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`pulumi-resource-khook: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
