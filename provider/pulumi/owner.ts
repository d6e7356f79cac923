/**
 * Which Pulumi resource owns a spec's record, and what create, update and
 * delete may do about it. Pure: the handlers read the current owner from the
 * cluster and act on these decisions.
 *
 * Why: Pulumi renames, `--replace` and `replaceOnChanges` create the new
 * resource first and delete the old one last, and both point at the same
 * record and the same objects. The old resource's delete must not tear down
 * what the new one just took over. The owner is the stack (project and stack
 * name, which the SDK passes as inputs) plus a token each `create` mints and
 * keeps in its outputs: a dynamic provider never sees its URN, and a replace
 * keeps the URN.
 *
 * - Within one stack, a new create (or an update) takes the record over; a
 *   create notes whose claim it succeeds (`succeeds`: a rename or a replace).
 * - Another stack or project claiming it is refused, naming the owner.
 * - A delete tears down everything when the record is its own, or when nobody
 *   claimed it (a record from before owners existed, or none at all); nothing
 *   when the owner's create succeeded it (the tail of a rename or a replace)
 *   or the owner is another stack; and its own steps only when another
 *   resource of the stack took the record without succeeding it. That is two
 *   resources on one record, which khook now refuses at preview but earlier
 *   versions let happen: the delete tears down the steps it does not hold
 *   alike with the record (the objects only its variables made) and leaves the
 *   record and the steps it shares to the owner, whose delete removes them.
 * - An update whose `state:` names another record leaves the old one: once a run on
 *   the new record succeeds, the old record is marked as left (`movedTo`), and the
 *   new one lists it (`movedFrom`). The resource's delete removes the records it
 *   left; a resource that shared a left record tears down its own steps and removes
 *   it. So the fix khook advises for a shared record (a distinct `state.name`)
 *   leaves nothing behind at destroy, in either order.
 * - A rename or a replace whose new resource journals on another record (its
 *   `state:` changed in the same update) is told by the provider process that
 *   created the new one: the old resource's delete tears nothing down (the new
 *   one has just applied the same spec) and removes its own record.
 */
import { randomUUID } from "node:crypto";
import { MAX_MOVED_FROM, type RecordOwner } from "../state/record.js";
import { UNKNOWN } from "./wire.js";

export interface StackIdentity {
  project: string;
  stack: string;
}

/** A new owner for a resource that is being created. */
export function mintOwner(identity: StackIdentity): RecordOwner {
  return { project: identity.project, stack: identity.stack, token: randomUUID() };
}

/** `stack "dev" of project "infra"`, for messages. */
export function describeStack(o: StackIdentity): string {
  return `stack "${o.stack || "(unknown)"}" of project "${o.project || "(unknown)"}"`;
}

export function sameStack(a: StackIdentity, b: StackIdentity): boolean {
  return a.project === b.project && a.stack === b.stack;
}

export type ClaimDecision =
  /** Go ahead; `note` is one line for the log when this takes the record over from another resource of the stack. */
  /** `succeeds`: the token of the resource of this stack whose claim this takes over (recorded by a create). */
  | { readonly ok: true; readonly note?: string; readonly succeeds?: string }
  | { readonly ok: false; readonly message: string };

/**
 * May `claimant` apply? `where` names the record (or the owner marker) for
 * messages; `resourceName` is the Pulumi resource's name.
 */
export function decideClaim(
  current: RecordOwner | undefined,
  claimant: RecordOwner,
  where: string,
  resourceName: string,
): ClaimDecision {
  if (current === undefined || current.token === claimant.token) return { ok: true };
  if (sameStack(current, claimant)) {
    return {
      ok: true,
      note: `took over ${where} from this stack's previous Khook resource (a rename or a replace); that resource's delete will leave the cluster alone`,
      succeeds: current.token,
    };
  }
  return {
    ok: false,
    message:
      `khook apply of ${resourceName} refused: ${where} belongs to the Khook resource of ${describeStack(current)}, ` +
      `and two stacks must not share one bootstrap (a destroy in either would tear down the other's objects). Nothing was changed. ` +
      `Apply this spec from one stack only; to move it here, destroy it in that stack, or drop it there with \`pulumi state delete <urn>\` ` +
      `and then delete ${where} so that this stack can claim it.`,
  };
}

/**
 * The owner a run stamps into the record at `here`: `owner` plus the records it has left
 * (`movedFrom`): those its claim on `here` carries (its own, or the one's it succeeds) and `left`,
 * the record this update leaves (its previous outputs named another). Returning to a record it
 * left takes that one off the list: the record is its own again.
 */
export function withMovedFrom(
  owner: RecordOwner,
  current: RecordOwner | undefined,
  left: string | undefined,
  here: string,
): RecordOwner {
  const { movedFrom: _drop, ...base } = owner;
  const carried =
    current !== undefined && (current.token === owner.token || current.token === owner.succeeds)
      ? (current.movedFrom ?? [])
      : [];
  const places = [...new Set([...carried, ...(left !== undefined ? [left] : [])])]
    .filter((p) => p !== here)
    .slice(-MAX_MOVED_FROM);
  return places.length > 0 ? { ...base, movedFrom: places } : base;
}

export type DeleteDecision =
  | { readonly teardown: "all" }
  /** `dropRecord`: the record is this resource's own and nothing else will use it (a successor journals elsewhere). */
  | { readonly teardown: "none"; readonly note: string; readonly dropRecord?: boolean }
  /**
   * Tear down the steps the record does not hold alike; leave those steps to `owner`. The record
   * stays for `owner` too, unless `owner` has left it (`movedTo`): then nobody else holds it, and it
   * goes (`dropRecord`).
   */
  | { readonly teardown: "own-steps"; readonly owner: RecordOwner; readonly dropRecord: boolean };

/** A resource of the stack that this update created with the same spec, journaling elsewhere: a rename's or a replace's new resource. */
export interface Successor {
  readonly resourceName: string;
  readonly where: string;
}

/**
 * What may the resource holding `token` (undefined: created before owners existed) tear down?
 * `successor`: the resource this update created with the same spec on another record, if any.
 */
export function decideDelete(
  current: RecordOwner | undefined,
  token: string | undefined,
  where: string,
  identity?: StackIdentity,
  successor?: Successor,
): DeleteDecision {
  if (current === undefined || current.token === token) {
    if (successor === undefined) return { teardown: "all" };
    return {
      teardown: "none",
      note:
        `nothing torn down: the Khook resource "${successor.resourceName}", created in this update with the same spec name, has just applied it on ${successor.where} ` +
        `(a rename or a replace that also moved the record), so the objects are its own now; removing this resource and ${where}`,
      dropRecord: current !== undefined && token !== undefined,
    };
  }
  if (identity === undefined || !sameStack(current, identity)) {
    return {
      teardown: "none",
      note: `nothing torn down: ${where} now belongs to the Khook resource of ${describeStack(current)}; removing only this resource from the stack`,
    };
  }
  if (token === undefined || current.succeeds === token) {
    return {
      teardown: "none",
      note: `nothing torn down: ${where} now belongs to another Khook resource of ${describeStack(current)} (a rename or a replace took it over); removing only this resource from the stack`,
    };
  }
  return { teardown: "own-steps", owner: current, dropRecord: current.movedTo !== undefined };
}

/**
 * The line a delete of "own-steps" prints: what it tears down and what it leaves, and why (two
 * resources of one stack on one record, as earlier khook versions allowed).
 */
export function ownStepsNote(
  where: string,
  owner: RecordOwner,
  own: readonly string[],
  shared: readonly string[],
): string {
  const left =
    shared.length > 0 ? `; steps ${shared.join(", ")} are held alike by that resource and left to its delete` : "";
  const record =
    owner.movedTo !== undefined
      ? `, then removing the record, which that resource has left for ${owner.movedTo}`
      : " without touching the record";
  return (
    `${where} is held by another Khook resource of ${describeStack(owner)} that shares it with this one (two resources with one spec name, made by an earlier khook): ` +
    `tearing down this resource's own steps (${own.length > 0 ? own.join(", ") : "none"})${record}${left}`
  );
}

/** What a record is keyed by (bundle.ts `recordKey`): two resources with one key share one record. */
export interface RecordKey {
  readonly key: string;
  readonly specName: string;
  readonly where: string;
}

/**
 * Registers the resource `name` on its record in `records` (one program run's, or one provider
 * process's); returns why not, naming the first resource and the fix, when another resource has
 * it. Two resources of one stack on one record would take it from each other on every update, and
 * a destroy would leave one's objects behind. A rename is never refused: it has one resource in
 * the program. A key still waiting for an unknown value is checked once it is known.
 */
export function claimRecord(
  records: Map<string, string>,
  name: string,
  record: RecordKey | undefined,
): string | undefined {
  if (record === undefined || record.key.includes(UNKNOWN)) return undefined;
  const first = records.get(record.key);
  if (first === undefined || first === name) {
    records.set(record.key, name);
    return undefined;
  }
  return (
    `the Khook resource "${first}" of this program already uses ${record.where} (spec name "${record.specName}"). ` +
    `Two resources on one record would take it from each other on every update, and a destroy would leave one's objects behind. ` +
    `Give this spec a distinct metadata.name (or state.name), e.g. with a variable: name: ${record.specName}-\${ENV}. ` +
    `A stack that already holds both (made by an earlier khook): give one of them a distinct state.name, which keeps its objects' ownership marks (metadata.name is in them)`
  );
}
