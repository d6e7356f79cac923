/**
 * What the single executable's bundle exports to its loader (sea.ts): the CLI.
 * scripts/build-sea.mjs bundles this file with every package it reaches. The Pulumi provider
 * mode is a bundle of its own (pulumi/native-sea-entry.ts).
 */
export { main } from "./main.js";
