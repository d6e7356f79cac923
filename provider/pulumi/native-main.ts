/**
 * The native provider's process from source: `pulumi-resource-khook` (bin/) and the
 * plugin the Node language host runs (pulumi-plugin/PulumiPlugin.yaml) both start here.
 * The engine passes its address as the first argument. (The single executable starts
 * the same provider from native-sea-entry.ts.)
 */
import { createRequire } from "node:module";
import type * as pulumiProvider from "@pulumi/pulumi/provider";
import { serve, type PulumiRpc } from "./native.js";

/** The modules of the installed @pulumi/pulumi, grpc-js from where it resolves it (an npm install may nest it). */
function installedPulumiRpc(): PulumiRpc {
  const fromPulumi = createRequire(require.resolve("@pulumi/pulumi/provider"));
  return {
    grpc: fromPulumi("@grpc/grpc-js") as PulumiRpc["grpc"],
    engineGrpc: require("@pulumi/pulumi/proto/engine_grpc_pb") as PulumiRpc["engineGrpc"],
    engineProto: require("@pulumi/pulumi/proto/engine_pb") as PulumiRpc["engineProto"],
  };
}

serve(process.argv.slice(2), require("@pulumi/pulumi/provider") as typeof pulumiProvider, installedPulumiRpc()).catch(
  (e: unknown) => {
    process.stderr.write(`pulumi-resource-khook: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
