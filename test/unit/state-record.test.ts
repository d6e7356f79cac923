/** The pure record model: what is stored, redaction, truncation, the resume decision, display. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Redactor } from "../../provider/redact.js";
import {
  beginRecord,
  entryFromOutcome,
  finishRecord,
  isResumable,
  markDestroying,
  MAX_ERROR_BYTES,
  parseRecord,
  RECORD_FORMAT,
  serializeRecord,
  summarizeRecord,
  truncateUtf8,
  withEntry,
  type StateRecord,
} from "../../provider/state/record.js";
import { runSpec } from "../../provider/engine/run.js";
import { Journal } from "../../provider/state/journal.js";
import { MemoryRecordStore } from "./support/memory-record-store.js";
import { noExtras, specFixture, StubExecutors } from "./support/engine-fixtures.js";

const T0 = new Date("2025-01-01T00:00:00.000Z");
const T1 = new Date("2025-01-01T00:01:00.000Z");
const id = { spec: "demo", specHash: "sha256:spec", khookVersion: "0.1.0" };
const plain = new Redactor();

function recordWith(steps: Record<string, { hash: string; status: "ok" | "failed" | "skipped" }>): StateRecord {
  let r = beginRecord(undefined, id, "apply", T0);
  for (const [name, s] of Object.entries(steps)) {
    r = withEntry(
      r,
      name,
      entryFromOutcome({ inputHash: s.hash, status: s.status, reason: "r", attempts: 1, durationMs: 5 }, plain, T1),
      T1,
    );
  }
  return r;
}

describe("state record: model", () => {
  test("stores per-step input hashes and outcomes, the whole-spec hash, khook's version and timestamps", () => {
    const r = finishRecord(recordWith({ a: { hash: "sha256:a", status: "ok" } }), "succeeded", T1);
    const json = JSON.parse(serializeRecord(r)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json).sort(), [
      "command",
      "finishedAt",
      "format",
      "khookVersion",
      "runStatus",
      "spec",
      "specHash",
      "startedAt",
      "steps",
      "updatedAt",
    ]);
    assert.deepEqual(json["steps"], {
      a: { inputHash: "sha256:a", status: "ok", reason: "r", attempts: 1, durationMs: 5, finishedAt: T1.toISOString() },
    });
    assert.equal(json["format"], RECORD_FORMAT);
    assert.equal(json["runStatus"], "succeeded");
    assert.equal(json["startedAt"], T0.toISOString());
  });

  test("runStatus is running at the start of an apply and destroying at the start of a destroy", () => {
    assert.equal(beginRecord(undefined, id, "apply", T0).runStatus, "running");
    assert.equal(beginRecord(undefined, id, "destroy", T0).runStatus, "destroying");
  });

  test("a new run carries the previous step entries over (including names no longer in the spec)", () => {
    const prev = recordWith({ old: { hash: "h", status: "ok" } });
    assert.equal(beginRecord(prev, id, "apply", T1).steps["old"]?.status, "ok");
  });

  test("the rendered spec is never stored: a full run's record holds no action content and no variable values", async () => {
    const secret = "Sup3rS3cretValue";
    const spec = specFixture(
      [
        {
          name: "cni",
          type: "helm",
          action: {
            chart: "cilium",
            repo: "https://helm.cilium.io",
            values: { password: secret, marker: "VALUES-MARKER" },
          },
        },
        { name: "job", type: "job", action: { image: "busybox", env: { TOKEN: secret }, args: ["ARGS-MARKER"] } },
      ],
      { secrets: [secret] },
    );
    const store = new MemoryRecordStore();
    await runSpec(spec, {
      mode: "apply",
      executors: new StubExecutors().map,
      context: noExtras,
      journal: Journal.forSpec(spec, store),
    });
    for (const json of store.history) {
      for (const needle of [secret, "VALUES-MARKER", "ARGS-MARKER", "cilium", "busybox", "helm.cilium.io"]) {
        assert.ok(!json.includes(needle), `record contains ${needle}: ${json}`);
      }
    }
  });
});

describe("state record: error text", () => {
  test("error text is redacted, then truncated to 2 KiB", () => {
    const r = new Redactor();
    r.add("tok-abcdef");
    const e = entryFromOutcome(
      {
        inputHash: "h",
        status: "failed",
        reason: "failed",
        attempts: 1,
        durationMs: 1,
        error: `tok-abcdef ${"y".repeat(5000)}`,
      },
      r,
      T1,
    );
    assert.ok(e.error?.startsWith("*** yyy"));
    assert.ok(Buffer.byteLength(e.error ?? "") <= MAX_ERROR_BYTES);
    assert.ok(e.error?.endsWith("[truncated]"));
  });

  test("redaction happens before truncation: a secret straddling the cut is never half-stored", () => {
    const secret = "ZZZZ-secret-value-ZZZZ";
    const r = new Redactor();
    r.add(secret);
    // Put the secret right across the 2 KiB boundary.
    const text = "a".repeat(MAX_ERROR_BYTES - 20) + secret + "b".repeat(100);
    const e = entryFromOutcome(
      { inputHash: "h", status: "failed", reason: "failed", attempts: 1, durationMs: 1, error: text },
      r,
      T1,
    );
    assert.ok(!(e.error ?? "").includes("ZZZZ-secret"), e.error);
  });

  test("truncation cuts on a character boundary and stays within the byte budget", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.integer({ min: 20, max: 300 }), (s, max) => {
        const out = truncateUtf8(s, max);
        assert.ok(Buffer.byteLength(out, "utf8") <= max);
        if (Buffer.byteLength(s, "utf8") <= max) assert.equal(out, s);
        else assert.ok(s.startsWith(out.replace(/ … \[truncated\]$/, "")));
        // No replacement character that the input did not have: the cut never splits a character.
        assert.ok(!out.includes("\uFFFD") || s.includes("\uFFFD"));
      }),
    );
  });

  test("short error text is stored unchanged", () => {
    assert.equal(truncateUtf8("boom", MAX_ERROR_BYTES), "boom");
  });
});

describe("state record: the resume decision", () => {
  test("a step resumes when the record shows it succeeded with the same input hash", () => {
    const r = recordWith({ a: { hash: "h1", status: "ok" } });
    assert.equal(isResumable(r, { name: "a", inputHash: "h1" }), true);
  });

  test("a changed input hash does not resume", () => {
    assert.equal(isResumable(recordWith({ a: { hash: "h1", status: "ok" } }), { name: "a", inputHash: "h2" }), false);
  });

  test("failed and skipped steps do not resume (they re-run)", () => {
    const r = recordWith({ a: { hash: "h", status: "failed" }, b: { hash: "h", status: "skipped" } });
    assert.equal(isResumable(r, { name: "a", inputHash: "h" }), false);
    assert.equal(isResumable(r, { name: "b", inputHash: "h" }), false);
  });

  test("no record, or no entry, does not resume; object prototype names are not entries", () => {
    assert.equal(isResumable(undefined, { name: "a", inputHash: "h" }), false);
    const r = recordWith({});
    for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty"]) {
      assert.equal(isResumable(r, { name, inputHash: "h" }), false, name);
    }
  });

  test("a teardown marks steps destroying before anything is destroyed: they no longer resume", () => {
    const r = markDestroying(recordWith({ a: { hash: "h", status: "ok" }, b: { hash: "h", status: "ok" } }), ["a"], T1);
    assert.equal(isResumable(r, { name: "a", inputHash: "h" }), false);
    assert.equal(r.steps["a"]?.status, "destroying");
    assert.equal(isResumable(r, { name: "b", inputHash: "h" }), true, "only the named steps");
  });
});

describe("state record: parsing and size", () => {
  test("a record round-trips through JSON", () => {
    const r = finishRecord(recordWith({ a: { hash: "h", status: "ok" } }), "failed", T1);
    const p = parseRecord(serializeRecord(r));
    assert.ok(p.ok);
    assert.deepEqual(p.record, r);
  });

  test("unreadable and future-format records are reported, not thrown", () => {
    assert.equal(parseRecord("{").ok, false);
    assert.equal(parseRecord("[]").ok, false);
    const future = parseRecord(JSON.stringify({ format: 99, steps: {} }));
    assert.ok(!future.ok && /unsupported record format 99/.test(future.problem));
  });

  test("malformed step entries are dropped one by one", () => {
    const p = parseRecord(
      JSON.stringify({ format: 1, steps: { good: { inputHash: "h", status: "ok" }, bad: { status: "ok" }, worse: 7 } }),
    );
    assert.ok(p.ok);
    assert.deepEqual(Object.keys(p.record.steps), ["good"]);
  });

  test("when the record outgrows its budget, stale entries (not in the spec) go first, oldest first", () => {
    let r = beginRecord(undefined, id, "apply", T0);
    for (let i = 0; i < 50; i++) {
      const at = new Date(T0.getTime() + i * 1000);
      r = withEntry(
        r,
        `old-${String(i).padStart(2, "0")}`,
        entryFromOutcome(
          { inputHash: "h", status: "ok", reason: "x".repeat(100), attempts: 1, durationMs: 1 },
          plain,
          at,
        ),
        at,
      );
    }
    r = withEntry(
      r,
      "current",
      entryFromOutcome({ inputHash: "h", status: "ok", reason: "r", attempts: 1, durationMs: 1 }, plain, T0),
      T0,
    );
    const json = serializeRecord(r, new Set(["current"]), 3000);
    assert.ok(Buffer.byteLength(json) <= 3000);
    const kept = Object.keys((JSON.parse(json) as StateRecord).steps);
    assert.ok(kept.includes("current"));
    assert.ok(kept.includes("old-49") && !kept.includes("old-00"), kept.join(","));
  });
});

describe("state record: summary for khook status", () => {
  test("summarizes the last run and compares against the current spec", () => {
    const r = finishRecord(
      recordWith({
        a: { hash: "h1", status: "ok" },
        b: { hash: "h2", status: "failed" },
        gone: { hash: "x", status: "ok" },
      }),
      "failed",
      T1,
    );
    const s = summarizeRecord(r, {
      specHash: "sha256:other",
      steps: [
        { name: "a", inputHash: "h1" },
        { name: "b", inputHash: "h2" },
        { name: "new", inputHash: "n" },
      ],
    });
    assert.equal(s.runStatus, "failed");
    assert.equal(s.specChanged, true);
    assert.deepEqual(
      s.steps.map((x) => [x.name, x.status, x.inSpec, x.resumable ?? null]),
      [
        ["a", "ok", true, true],
        ["b", "failed", true, false],
        ["gone", "ok", false, null],
      ],
    );
    assert.deepEqual(s.unrecorded, ["new"]);
    assert.deepEqual(s.counts, { ok: 2, failed: 1 });
  });

  test("summary without a spec lists entries by name", () => {
    const s = summarizeRecord(recordWith({ b: { hash: "h", status: "ok" }, a: { hash: "h", status: "ok" } }));
    assert.deepEqual(
      s.steps.map((x) => x.name),
      ["a", "b"],
    );
    assert.equal(s.specChanged, undefined);
  });
});
