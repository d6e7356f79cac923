/**
 * The step kinds, one line each: the loader, the engine, the Pulumi shells and the schema
 * generator read them from here. A kind is one folder (steps/<kind>/, README.md says what is
 * in it); its executor and its definition are required the first time they are asked for, so
 * loading a spec loads neither (test/unit/cli-startup.test.ts counts it).
 */
import type { KindSet } from "../dsl/step-kind.js";
import type { ExecutorRegistry, Kind, StepOfKind } from "./contract.js";
import { helmKind } from "./helm/kind.js";
import { applyKind } from "./apply/kind.js";
import { deleteKind } from "./delete/kind.js";
import { patchKind } from "./patch/kind.js";
import { waitKind } from "./wait/kind.js";
import { rolloutKind } from "./rollout/kind.js";
import { jobKind } from "./job/kind.js";

/** Every kind, by action key, in the order the schema and messages list them. */
export const KINDS = byName([helmKind, applyKind, deleteKind, patchKind, waitKind, rolloutKind, jobKind]);

export type KindName = keyof typeof KINDS;
export const KIND_NAMES = Object.keys(KINDS) as KindName[];

/** A loaded step of the kind `K`, as its executor reads it. */
export type StepOf<K extends KindName> = StepOfKind<(typeof KINDS)[K]>;

/** The kinds as the loader takes them. */
export const LOADER_KINDS: KindSet = KINDS;

function byName<const T extends readonly Kind[]>(kinds: T): { readonly [K in T[number] as K["name"]]: K } {
  return Object.fromEntries(kinds.map((k) => [k.name, k])) as { readonly [K in T[number] as K["name"]]: K };
}

/** Each kind's executor, by kind; each is required when its kind is first asked for. */
export const EXECUTORS: ExecutorRegistry = Object.defineProperties(
  {},
  Object.fromEntries(
    Object.values(KINDS).map((k: Kind) => [k.name, { enumerable: true, get: (): unknown => k.executor }]),
  ),
) as ExecutorRegistry;
