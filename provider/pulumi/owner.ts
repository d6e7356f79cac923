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
 * - Within one stack, a new create (or an update) takes the record over.
 * - Another stack or project claiming it is refused, naming the owner.
 * - A delete tears down only when the record is its own, or when nobody
 *   claimed it (a record from before owners existed, or none at all).
 */
import { randomUUID } from "node:crypto";
import type { RecordOwner } from "../state/record.js";

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
  | { readonly ok: true; readonly note?: string }
  | { readonly ok: false; readonly message: string };

/**
 * May `claimant` apply? `where` names the record (or the owner marker) for
 * messages; `resourceName` is the Pulumi resource's name.
 */
export function decideClaim(current: RecordOwner | undefined, claimant: RecordOwner, where: string, resourceName: string): ClaimDecision {
  if (current === undefined || current.token === claimant.token) return { ok: true };
  if (sameStack(current, claimant)) {
    return { ok: true, note: `took over ${where} from this stack's previous Khook resource (a rename or a replace); that resource's delete will leave the cluster alone` };
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

export type DeleteDecision = { readonly teardown: true } | { readonly teardown: false; readonly note: string };

/** May the resource holding `token` (undefined: created before owners existed) tear the bootstrap down? */
export function decideDelete(current: RecordOwner | undefined, token: string | undefined, where: string): DeleteDecision {
  if (current === undefined || current.token === token) return { teardown: true };
  return {
    teardown: false,
    note: `nothing torn down: ${where} now belongs to another Khook resource of ${describeStack(current)} (a rename or a replace took it over); removing only this resource from the stack`,
  };
}
