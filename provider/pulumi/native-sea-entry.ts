/**
 * The single executable's Pulumi provider mode: what dist/sea/khook runs when a
 * Pulumi engine starts it as the plugin `pulumi-resource-khook` (provider/cli/sea.ts dispatches on
 * that name). scripts/build-sea.mjs bundles this file, with @pulumi/pulumi and grpc-js inside, as
 * an asset of its own beside the CLI's bundle: the CLI's start-up does not carry the provider's
 * packages, and the provider's does not carry the CLI.
 */
import * as grpc from "@grpc/grpc-js";
import * as server from "@pulumi/pulumi/provider";
import * as engineGrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engineProto from "@pulumi/pulumi/proto/engine_pb";
import { setLineSink } from "./handlers.js";
import { nativeProvider, serve, type PulumiRpc } from "./native.js";
import { KHOOK_TOKEN } from "./native-schema.js";

/** Serves the provider until the engine stops it; the number is the exit code once the server is up (0). */
export async function providerMain(argv: string[]): Promise<number> {
  await serve(argv, server, {
    grpc: grpc as unknown as PulumiRpc["grpc"],
    engineGrpc: engineGrpc as unknown as PulumiRpc["engineGrpc"],
    engineProto: engineProto as unknown as PulumiRpc["engineProto"],
  });
  return 0;
}

/**
 * Build time only (scripts/build-sea.mjs, through sea.ts's training): what a provider's first
 * calls compile (the schema; check and diff of a small spec: loading, validation, the offline
 * plan), so the code cache the build makes after it covers them.
 */
export async function warmUp(): Promise<void> {
  const provider = nativeProvider(undefined);
  setLineSink(() => undefined); // the plan lines of a warm-up are nobody's
  const urn = `urn:pulumi:train::train::${KHOOK_TOKEN}::boot`;
  const spec =
    "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: train}\nsteps:\n  - name: cm\n    apply:\n      namespace: ${NS}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: cm}\n";
  await provider.getSchema?.();
  const checked = await provider.check!(urn, {}, { spec, vars: { NS: "train" } });
  await provider.diff!("train", urn, checked.inputs, checked.inputs);
}
