/**
 * Property tests of the pipeline evaluator: robustness on arbitrary input, algebraic laws of sprig
 * functions, determinism, and that values never leak into error messages.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { parsePipeline, PipelineError, runPipeline } from "../../provider/gotemplate/index.js";
import { ALLOWED_FUNCTIONS } from "../../provider/gotemplate/functions/index.js";
import { evaluatePipeline } from "./support/gotemplate.js";

const RUNS = 300;

/** Well-formed Unicode strings (lone surrogates cannot be represented in Go strings). */
const text = fc.string({ unit: "grapheme", maxLength: 40 });
const anyText = fc.string({ unit: "binary", maxLength: 40 });
const ascii = fc.string({ unit: "binary-ascii", maxLength: 40 });
const printableAscii = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});

// derivePassword is left out of random pipelines only because scrypt makes it slow.
const FUNCTION_NAMES = [...ALLOWED_FUNCTIONS].filter((n) => n !== "derivePassword");

const token = fc.oneof(
  fc.constantFrom(...FUNCTION_NAMES),
  fc.constantFrom("|", "(", ")", ".", "$", "nil", "true", "false", ",", ":=", "=", "$x", ".Field", "-", "+"),
  fc.integer({ min: -100, max: 100 }).map(String),
  fc.constantFrom("1.5", "0x1F", "1e3", "'a'", "1i", "0777", "99999999999999999999", "1_000"),
  fc.constantFrom(
    '"%s"',
    '"%d"',
    '"%v %q"',
    '"a,b"',
    '","',
    '"(a)(b)?"',
    '"$1W"',
    '"^x"',
    '">=1.0"',
    '"{\\"a\\":1}"',
    "`raw`",
    '""',
  ),
  printableAscii.filter((s) => !s.includes("}")).map((s) => JSON.stringify(s)),
  anyText.filter((s) => !s.includes("}")),
);

const pipelineText = fc.array(token, { maxLength: 12 }).map((ts) => ts.join(" "));

function outcome(f: () => string): { ok: true; out: string } | { ok: false; err: unknown } {
  try {
    return { ok: true, out: f() };
  } catch (err) {
    return { ok: false, err };
  }
}

test("arbitrary pipeline text and values never throw anything but PipelineError", () => {
  fc.assert(
    fc.property(anyText, pipelineText, (value, pipeline) => {
      const r = outcome(() => evaluatePipeline(value, pipeline));
      if (!r.ok) assert.ok(r.err instanceof PipelineError, `threw ${String(r.err)} for ${JSON.stringify(pipeline)}`);
      else assert.equal(typeof r.out, "string");
    }),
    { numRuns: 2000 },
  );
});

test("arbitrary text (not just tokens) as a pipeline only ever fails with PipelineError", () => {
  fc.assert(
    fc.property(anyText, anyText, (value, pipeline) => {
      const r = outcome(() => evaluatePipeline(value, pipeline));
      if (!r.ok) assert.ok(r.err instanceof PipelineError, String(r.err));
    }),
    { numRuns: 1000 },
  );
});

test("parse is deterministic: the same text parses (or fails) the same way and runs to the same result", () => {
  fc.assert(
    fc.property(anyText, pipelineText, (value, pipeline) => {
      const p1 = outcome(() => runPipeline(parsePipeline(pipeline), value));
      const p2 = outcome(() => runPipeline(parsePipeline(pipeline), value));
      assert.equal(p1.ok, p2.ok);
      if (p1.ok && p2.ok) assert.equal(p1.out, p2.out);
      if (!p1.ok && !p2.ok) assert.equal((p1.err as Error).message, (p2.err as Error).message);
    }),
    { numRuns: RUNS },
  );
});

test("a parsed pipeline is reusable: running it twice gives the same output (no state leaks between runs)", () => {
  fc.assert(
    fc.property(anyText, pipelineText, (value, pipeline) => {
      const parsed = outcome(() => JSON.stringify(parsePipeline(pipeline) !== undefined));
      if (!parsed.ok) return;
      const p = parsePipeline(pipeline);
      const a = outcome(() => runPipeline(p, value));
      const b = outcome(() => runPipeline(p, value));
      assert.equal(a.ok, b.ok);
      if (a.ok && b.ok) assert.equal(a.out, b.out);
    }),
    { numRuns: RUNS },
  );
});

test("values never appear in error messages", () => {
  const secret = fc.string({ unit: "grapheme-ascii", minLength: 6, maxLength: 20 }).map((s) => "S3CR3T-" + s);
  fc.assert(
    fc.property(secret, pipelineText, (value, pipeline) => {
      fc.pre(!pipeline.includes("S3CR3T"));
      const r = outcome(() => evaluatePipeline(value, pipeline));
      if (!r.ok) assert.ok(!(r.err as Error).message.includes("S3CR3T"), (r.err as Error).message);
    }),
    { numRuns: 2000 },
  );
  for (const p of [
    "fail",
    'printf "%s" | fail',
    "urlParse",
    "mustFromJson",
    "semver",
    "regexFind .",
    'print (mustRegexFind . "x")',
    "int | fail",
  ]) {
    try {
      evaluatePipeline("S3CR3T-{not json :", p);
    } catch (e) {
      assert.ok(!(e as Error).message.includes("S3CR3T"), `${p}: ${(e as Error).message}`);
    }
  }
});

test("b64enc | b64dec round-trips every string", () => {
  fc.assert(
    fc.property(text, (s) => assert.equal(evaluatePipeline(s, "b64enc | b64dec"), s)),
    { numRuns: RUNS },
  );
});

test("b32enc | b32dec round-trips every string", () => {
  fc.assert(
    fc.property(text, (s) => assert.equal(evaluatePipeline(s, "b32enc | b32dec"), s)),
    { numRuns: RUNS },
  );
});

test("b64enc is standard padded base64 of the UTF-8 bytes", () => {
  fc.assert(
    fc.property(text, (s) => assert.equal(evaluatePipeline(s, "b64enc"), Buffer.from(s, "utf8").toString("base64"))),
    {
      numRuns: RUNS,
    },
  );
});

test("upper | lower equals lower-casing on ASCII", () => {
  fc.assert(
    fc.property(ascii, (s) => assert.equal(evaluatePipeline(s, "upper | lower"), s.toLowerCase())),
    { numRuns: RUNS },
  );
});

test("trunc n keeps at most n bytes", () => {
  fc.assert(
    fc.property(text, fc.integer({ min: 0, max: 50 }), (s, n) => {
      const bytes = Number(evaluatePipeline(s, `trunc ${n} | len`));
      assert.ok(bytes <= n, `${bytes} > ${n}`);
      assert.equal(bytes, Math.min(n, Buffer.byteLength(s, "utf8")));
    }),
    { numRuns: RUNS },
  );
});

test("trunc -n keeps the last n bytes", () => {
  fc.assert(
    fc.property(ascii, fc.integer({ min: 1, max: 50 }), (s, n) => {
      assert.equal(evaluatePipeline(s, `trunc -${n}`), s.length > n ? s.slice(s.length - n) : s);
    }),
    { numRuns: RUNS },
  );
});

test("len counts UTF-8 bytes", () => {
  fc.assert(
    fc.property(text, (s) => assert.equal(evaluatePipeline(s, "len"), String(Buffer.byteLength(s, "utf8")))),
    { numRuns: RUNS },
  );
});

test("quote of printable ASCII is the JSON string literal, and squote wraps without escaping", () => {
  fc.assert(
    fc.property(printableAscii, (s) => {
      assert.equal(evaluatePipeline(s, "quote"), JSON.stringify(s));
      assert.equal(evaluatePipeline(s, "squote"), "'" + s + "'");
    }),
    { numRuns: RUNS },
  );
});

test("toJson | fromJson round-trips every string", () => {
  fc.assert(
    fc.property(text, (s) => assert.equal(evaluatePipeline(s, "toJson | fromJson"), s)),
    { numRuns: RUNS },
  );
});

test("print, printf %s and toString are the identity on strings", () => {
  fc.assert(
    fc.property(text, (s) => {
      assert.equal(evaluatePipeline(s, "print"), s);
      assert.equal(evaluatePipeline(s, 'printf "%s"'), s);
      assert.equal(evaluatePipeline(s, "toString"), s);
      assert.equal(evaluatePipeline(s, ""), s);
    }),
    { numRuns: RUNS },
  );
});

test("default replaces only the empty string", () => {
  fc.assert(
    fc.property(text, (s) => assert.equal(evaluatePipeline(s, 'default "fallback"'), s === "" ? "fallback" : s)),
    { numRuns: RUNS },
  );
});

test("sha256sum is the lowercase hex SHA-256 of the UTF-8 bytes", () => {
  fc.assert(
    fc.property(text, (s) =>
      assert.equal(evaluatePipeline(s, "sha256sum"), createHash("sha256").update(s, "utf8").digest("hex")),
    ),
    { numRuns: RUNS },
  );
});

test("splitList then join with the same separator is the identity", () => {
  fc.assert(
    fc.property(text, fc.constantFrom(",", "-", "::", "é"), (s, sep) => {
      assert.equal(evaluatePipeline(s, `splitList ${JSON.stringify(sep)} | join ${JSON.stringify(sep)}`), s);
    }),
    { numRuns: RUNS },
  );
});

test("regexQuoteMeta makes any string match itself literally", () => {
  fc.assert(
    fc.property(text, (s) =>
      assert.equal(evaluatePipeline(s, 'regexMatch (printf "^%s$" (regexQuoteMeta .))'), "true"),
    ),
    { numRuns: RUNS },
  );
});

test("int of a decimal integer string is that integer", () => {
  fc.assert(
    fc.property(fc.integer({ min: -1e9, max: 1e9 }), (n) => {
      assert.equal(evaluatePipeline(String(n), "atoi"), String(n));
      assert.equal(evaluatePipeline(String(n), "int64"), String(n));
    }),
    { numRuns: RUNS },
  );
});
