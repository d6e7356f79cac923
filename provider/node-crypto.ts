/**
 * node:crypto, required on first use. Loading it costs more than a `khook validate` spends on its
 * spec (about 5 ms), and most starts take no digest: the loader digests a step's hash when it is
 * first read (dsl/loader.ts), and `validate` never reads one.
 */
import type * as Crypto from "node:crypto";

export function nodeCrypto(): typeof Crypto {
  return require("node:crypto") as typeof Crypto;
}
