/** The pure ownership rules of provider/pulumi/owner.ts: what a delete may tear down, and which records an owner has left. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decideDelete, withMovedFrom } from "../../provider/pulumi/owner.js";
import { MAX_MOVED_FROM, type RecordOwner } from "../../provider/state/record.js";

const stack = { project: "infra", stack: "dev" };
const mine: RecordOwner = { ...stack, token: "mine" };
const HERE = "ns/khook-state-here";

describe("withMovedFrom: the records an owner has left", () => {
  test("an update that leaves a record lists it", () => {
    assert.deepEqual(withMovedFrom(mine, undefined, "ns/old", HERE).movedFrom, ["ns/old"]);
  });

  test("the list the owner's claim on this record carries is kept, and a second move adds to it", () => {
    const current: RecordOwner = { ...mine, movedFrom: ["ns/first"] };
    assert.deepEqual(withMovedFrom(mine, current, undefined, HERE).movedFrom, ["ns/first"]);
    assert.deepEqual(withMovedFrom(mine, current, "ns/second", HERE).movedFrom, ["ns/first", "ns/second"]);
    assert.deepEqual(withMovedFrom(mine, current, "ns/first", HERE).movedFrom, ["ns/first"], "listed once");
  });

  test("a create that succeeds the holder (a rename or a replace) inherits what the holder left; a sibling's list is not taken", () => {
    const holder: RecordOwner = { ...stack, token: "old", movedFrom: ["ns/first"] };
    assert.deepEqual(withMovedFrom({ ...stack, token: "new", succeeds: "old" }, holder, undefined, HERE).movedFrom, [
      "ns/first",
    ]);
    assert.equal(withMovedFrom({ ...stack, token: "sibling" }, holder, undefined, HERE).movedFrom, undefined);
  });

  test("returning to a record it left takes that record off the list: it is its own again", () => {
    const current: RecordOwner = { ...mine, movedFrom: ["ns/a", HERE] };
    assert.deepEqual(withMovedFrom(mine, current, "ns/b", HERE).movedFrom, ["ns/a", "ns/b"]);
    assert.equal(
      withMovedFrom(mine, undefined, HERE, HERE).movedFrom,
      undefined,
      "no move when the record is the same",
    );
  });

  test("the list is bounded, keeping the newest", () => {
    const many = Array.from({ length: MAX_MOVED_FROM }, (_, i) => `ns/r${i}`);
    const out = withMovedFrom(mine, { ...mine, movedFrom: many }, "ns/newest", HERE).movedFrom!;
    assert.equal(out.length, MAX_MOVED_FROM);
    assert.equal(out.at(-1), "ns/newest");
    assert.ok(!out.includes("ns/r0"));
  });
});

describe("decideDelete: what a resource's delete may tear down", () => {
  const where = "the state record";

  test("its own record, or one nobody claimed: everything", () => {
    assert.deepEqual(decideDelete(mine, "mine", where, stack), { teardown: "all" });
    assert.deepEqual(decideDelete(undefined, "mine", where, stack), { teardown: "all" });
  });

  test("a record a rename or a replace took over, or another stack's: nothing", () => {
    assert.equal(decideDelete({ ...stack, token: "new", succeeds: "mine" }, "mine", where, stack).teardown, "none");
    assert.equal(decideDelete({ ...mine, stack: "prod" }, "other", where, stack).teardown, "none");
  });

  test("a rename or a replace that also moved the record: with a successor created in this update on another record, its own record's delete tears nothing down and removes the record", () => {
    const successor = { resourceName: "after", where: 'the state record (Secret "b")' };
    const decision = decideDelete(mine, "mine", where, stack, successor);
    assert.equal(decision.teardown, "none");
    assert.equal(decision.teardown === "none" && decision.dropRecord, true);
    assert.match(
      decision.teardown === "none" ? decision.note : "",
      /the Khook resource "after", created in this update with the same spec name, has just applied it on the state record \(Secret "b"\)/,
    );
    const unowned = decideDelete(undefined, undefined, where, stack, successor);
    assert.equal(
      unowned.teardown === "none" && unowned.dropRecord,
      false,
      "a record nobody claimed is not removed on a guess",
    );
    assert.equal(
      decideDelete({ ...stack, token: "new", succeeds: "mine" }, "mine", where, stack, successor).teardown,
      "none",
    );
  });

  test("a record a sibling of the stack holds: its own steps; the record goes only when that sibling has left it", () => {
    const sibling: RecordOwner = { ...stack, token: "sibling" };
    assert.deepEqual(decideDelete(sibling, "mine", where, stack), {
      teardown: "own-steps",
      owner: sibling,
      dropRecord: false,
    });
    const left: RecordOwner = { ...sibling, movedTo: "elsewhere" };
    assert.deepEqual(decideDelete(left, "mine", where, stack), {
      teardown: "own-steps",
      owner: left,
      dropRecord: true,
    });
  });
});
