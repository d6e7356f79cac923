/**
 * Which Pulumi resource owns a spec's record, and what its create, update and delete may do about
 * it. Pulumi renames and replaces create the new resource first and delete the old one last, both
 * on the same record and objects: the old one's delete must not tear down what the new one took
 * over. The owner is the stack plus a token each `create` mints and keeps in its outputs (a dynamic
 * provider never sees its URN, and a replace keeps the URN). Pure: the resource's operations
 * (resource-operations.ts) read the owner and act on these decisions; docs/pulumi.md has the table.
 */
import { randomUUID } from "node:crypto";
import { describeRecord, type RecordLocation } from "../../state/location.js";
import { movedFromAfter, type OwnerData, type StateRecord } from "../../state/record.js";

export interface StackIdentity {
  project: string;
  stack: string;
}

/**
 * The Pulumi resource that holds a record (or, with the journal off, its owner marker), with the
 * record's moves (state/moves.ts) as it sees them. Stored as the record's owner data plus its moves,
 * which format 1 keeps together under `owner`.
 */
export interface RecordOwner extends StackIdentity {
  readonly token: string;
  /**
   * The token of the resource this one took the record over from by its create: a rename or a
   * replace, whose old resource's delete must then leave the cluster alone.
   */
  readonly succeeds?: string;
  /** The record its `state:` names now (StateRecord.movedTo): set on a record the owner left. */
  readonly movedTo?: string;
  /** The records ("namespace/name") the owner left for this one (StateRecord.movedFrom). */
  readonly movedFrom?: readonly string[];
}

/** The owner a record's owner data holds; undefined when there is none or it is malformed (a malformed owner is no owner). */
export function parseOwner(v: unknown): RecordOwner | undefined {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o["project"] !== "string" || typeof o["stack"] !== "string") return undefined;
  if (typeof o["token"] !== "string" || o["token"] === "") return undefined;
  const succeeds = typeof o["succeeds"] === "string" && o["succeeds"] !== "" ? { succeeds: o["succeeds"] } : {};
  return { project: o["project"], stack: o["stack"], token: o["token"], ...succeeds };
}

/** The owner of a record (or of what ownerAndMoves made of the owner marker's), with its moves. */
export function ownerOf(record: Pick<StateRecord, "owner" | "movedTo" | "movedFrom">): RecordOwner | undefined {
  const owner = parseOwner(record.owner);
  if (owner === undefined) return undefined;
  return {
    ...owner,
    ...(record.movedTo !== undefined ? { movedTo: record.movedTo } : {}),
    ...(record.movedFrom !== undefined ? { movedFrom: record.movedFrom } : {}),
  };
}

/** What a run stamps as the record's owner data: the owner without its moves, which the record keeps itself. */
export function ownerData(owner: RecordOwner): OwnerData {
  const { movedTo: _to, movedFrom: _from, ...data } = owner;
  return data;
}

/** Does the resource of `token` hold the record (whether or not it left it)? */
export function heldBy(record: StateRecord, token: string): boolean {
  return parseOwner(record.owner)?.token === token;
}

/** Where an owner is kept, for messages: the record, or the owner marker when the journal is off. */
export function describeOwnerLocation(location: RecordLocation | undefined, marker: RecordLocation): string {
  if (location !== undefined) return describeRecord(location);
  return `the owner marker (ConfigMap "${marker.name}" in namespace "${marker.namespace}")`;
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
  const movedFrom = movedFromAfter(carried, left !== undefined ? [left] : [], here);
  return movedFrom.length > 0 ? { ...base, movedFrom } : base;
}

export type DeleteDecision =
  | { readonly teardown: "all" }
  /** `dropRecord`: the record is this resource's own and nothing else will use it (its replacement journals elsewhere). */
  | { readonly teardown: "none"; readonly note: string; readonly dropRecord?: boolean }
  /**
   * Tear down the steps the record does not hold with this spec's inputs; leave those it does to
   * `owner`. The record stays for `owner` too, unless `owner` has left it (`movedTo`): then nobody
   * else holds it, and it goes (`dropRecord`).
   */
  | { readonly teardown: "own-steps"; readonly owner: RecordOwner; readonly dropRecord: boolean };

/** A resource of the stack that this update created with the same spec, journaling elsewhere: a rename's or a replace's new resource. */
export interface Replacement {
  readonly resourceName: string;
  readonly where: string;
}

/**
 * What may the resource holding `token` (undefined: created before owners existed) tear down? All
 * when the record is its own or nobody's; nothing when another stack holds it, or a create of its
 * stack took it over (the tail of a rename or a replace), or `replacement` (the resource this update
 * created with the same spec on another record) has just applied it; its own steps when another
 * resource of the stack took the record without replacing it (two resources on one record, which
 * khook now refuses at preview but earlier versions let happen).
 */
export function decideDelete(
  current: RecordOwner | undefined,
  token: string | undefined,
  where: string,
  identity?: StackIdentity,
  replacement?: Replacement,
): DeleteDecision {
  if (current === undefined || current.token === token) {
    if (replacement === undefined) return { teardown: "all" };
    return {
      teardown: "none",
      note:
        `nothing torn down: the Khook resource "${replacement.resourceName}", created in this update with the same spec name, has just applied it on ${replacement.where} ` +
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
