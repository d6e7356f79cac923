/**
 * Keyed step hashes: a printed or stored hash never gives a secret back.
 *
 * A step's input hash digests its rendered action, so for a step whose action holds
 * a secret value (a `KHOOK_SECRET_*` variable, a Pulumi secretVar, a credential) an
 * unsalted sha256 would let anyone holding the hash (the record, `plan`, `apply -o
 * json`, Pulumi outputs) brute-force a low-entropy secret. Such a step's hash is
 * instead `hmac-sha256:<hex>`: an HMAC-SHA256 of the same text under a random
 * 256-bit key that lives with the record (in the state Secret, and in the Pulumi
 * state as a secret output). Steps without secrets keep their `sha256:` hash,
 * byte for byte.
 *
 * At load the key is not at hand: such a step's `inputHash` is `hmac-sha256` (the
 * algorithm, no digest). Whoever reads the record keys the spec (`keyedSpec`) before
 * comparing or recording hashes. Without a key (`plan --offline`, a run without a
 * record) the bare `hmac-sha256` is what is shown: it says "keyed, not computable
 * here" and holds nothing to attack.
 *
 * The text digested is kept only in memory, beside the loaded step (never on it, so
 * no serialization of a step can carry it).
 */
import { nodeCrypto } from "../node-crypto.js";
import type { LoadedSpec, LoadedStep } from "./loaded.js";

/** The prefix of a keyed hash. */
export const KEYED_HASH_PREFIX = "hmac-sha256:";
/** A keyed step's hash before a key is at hand. */
export const UNKEYED_HASH = "hmac-sha256";

/** The hashed text of each step whose hash is keyed. */
const preimages = new WeakMap<LoadedStep, string>();

/** Marks `step` as keyed (its inputHash is UNKEYED_HASH until `keyedSpec`). Load time only. */
export function registerKeyedStep(step: LoadedStep, preimage: string): void {
  preimages.set(step, preimage);
}

/** Whether a hash is keyed (or waits for its key). */
export function isKeyedHash(hash: string): boolean {
  return hash === UNKEYED_HASH || hash.startsWith(KEYED_HASH_PREFIX);
}

/**
 * A hash for a table column: the first `digits` hex digits, or `keyed` for a keyed step
 * whose key is not at hand (plan --offline, a run without a record).
 */
export function shortHash(hash: string, digits: number): string {
  if (hash === UNKEYED_HASH) return "keyed";
  return hash.replace(/^(sha256|hmac-sha256):/, "").slice(0, digits);
}

/** Whether any step of the spec has a keyed hash. */
export function hasKeyedSteps(spec: Pick<LoadedSpec, "steps">): boolean {
  return spec.steps.some((s) => preimages.has(s));
}

/** A fresh key: 32 random bytes, base64. */
export function newHashKey(): string {
  return nodeCrypto().randomBytes(32).toString("base64");
}

/** The keyed hash of a text. */
export function keyedHash(key: string, preimage: string): string {
  return `${KEYED_HASH_PREFIX}${nodeCrypto().createHmac("sha256", Buffer.from(key, "base64")).update(preimage).digest("hex")}`;
}

/**
 * The spec with every keyed step's hash computed under `key`. A spec without keyed
 * steps is returned as it is. `specHash` stays the load-time one (it covers the
 * unkeyed marker), so it never depends on a key either.
 */
export function keyedSpec(spec: LoadedSpec, key: string): LoadedSpec {
  if (!hasKeyedSteps(spec)) return spec;
  const steps = spec.steps.map((step) => {
    const preimage = preimages.get(step);
    if (preimage === undefined) return step;
    // Copies the descriptors, so a lazy getter (position) stays lazy.
    const descriptors: Record<string, PropertyDescriptor> = Object.getOwnPropertyDescriptors(step);
    descriptors["inputHash"] = { value: keyedHash(key, preimage), enumerable: true };
    const keyed = Object.freeze(Object.defineProperties({}, descriptors) as LoadedStep);
    preimages.set(keyed, preimage);
    return keyed;
  });
  const descriptors: Record<string, PropertyDescriptor> = Object.getOwnPropertyDescriptors(spec);
  descriptors["steps"] = { ...descriptors["steps"], value: steps };
  descriptors["stepsByName"] = { ...descriptors["stepsByName"], value: new Map(steps.map((s) => [s.name, s])) };
  return Object.freeze(Object.defineProperties({}, descriptors) as LoadedSpec);
}
