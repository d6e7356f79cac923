/**
 * What the single executable's bundle exports to its loader (sea.ts): the CLI, and the Pulumi
 * provider mode. scripts/build-sea.mjs bundles this file with every package it reaches.
 */
export { main } from "./main.js";

/**
 * The Pulumi provider mode: what the executable runs when the Pulumi engine starts it as the
 * plugin `pulumi-resource-khook` (sea.ts dispatches on that name). The native provider
 * (khook:index:Khook, issue 21) plugs its gRPC server in here; until it does, the mode says so.
 */
export const providerMain: ((argv: string[]) => Promise<number>) | undefined = undefined;
