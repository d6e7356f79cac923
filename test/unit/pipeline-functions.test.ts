/**
 * The function set of khook pipelines: what is allowed, what is refused and why, and the error
 * contract (PipelineError, function names in messages, never the value).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePipeline, PipelineError, runPipeline } from "../../provider/gotemplate/index.js";
import { ALLOWED_FUNCTIONS, EXCLUDED as EXCLUDED_FUNCTIONS } from "../../provider/gotemplate/functions/index.js";
import { evaluatePipeline } from "./support/gotemplate.js";

const BUILTINS = [
  "and",
  "or",
  "not",
  "eq",
  "ne",
  "lt",
  "le",
  "gt",
  "ge",
  "index",
  "len",
  "print",
  "printf",
  "println",
  "urlquery",
  "html",
  "js",
];
const SPRIG_COUNT = 179;

function errorOf(f: () => unknown): PipelineError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof PipelineError, `expected PipelineError, got ${String(e)}`);
    return e;
  }
  assert.fail("expected an error");
}

test("allowed functions are sprig's 179 hermetic ones plus text/template's builtins", () => {
  for (const b of BUILTINS) assert.ok(ALLOWED_FUNCTIONS.has(b), b);
  assert.ok(ALLOWED_FUNCTIONS.has("slice"), "sprig's slice replaces the builtin");
  assert.equal(ALLOWED_FUNCTIONS.size, SPRIG_COUNT + BUILTINS.length);
});

test("no excluded function is allowed", () => {
  for (const name of EXCLUDED_FUNCTIONS.keys()) assert.ok(!ALLOWED_FUNCTIONS.has(name), name);
});

test("every excluded function fails with an error that names it and says why", () => {
  for (const [name, why] of EXCLUDED_FUNCTIONS) {
    for (const pipeline of [name, `upper | ${name}`, `print (${name} "x")`]) {
      const e = errorOf(() => evaluatePipeline("value", pipeline));
      assert.match(e.message, new RegExp(`function "${name}" is not allowed in khook pipelines`), e.message);
      assert.ok(e.message.includes(why), `${name}: reason missing in ${e.message}`);
    }
  }
});

test("the spec's examples of excluded functions are refused at parse time", () => {
  for (const name of [
    "now",
    "env",
    "expandenv",
    "randAlphaNum",
    "uuidv4",
    "genCA",
    "bcrypt",
    "randInt",
    "shuffle",
    "encryptAES",
    "ago",
    "toDate",
    "mustToDate",
    "toYaml",
    "fromYaml",
    "include",
    "tpl",
    "required",
    "lookup",
    "toToml",
  ]) {
    assert.ok(EXCLUDED_FUNCTIONS.has(name), name);
    const e = errorOf(() => parsePipeline(name));
    assert.ok(e.message.includes(`"${name}"`), e.message);
  }
  assert.match(
    errorOf(() => parsePipeline("now")).message,
    /not deterministic, and plan and apply must substitute identically/,
  );
  assert.match(errorOf(() => parsePipeline("env")).message, /KHOOK_VAR_/);
});

test('unknown functions fail like Go: function "x" not defined', () => {
  assert.match(errorOf(() => evaluatePipeline("v", "foo")).message, /function "foo" not defined/);
  assert.match(errorOf(() => evaluatePipeline("v", "upper | nosuchfn 1")).message, /function "nosuchfn" not defined/);
});

test("fail carries its message", () => {
  const e = errorOf(() => evaluatePipeline("v", 'print (fail "database name must be set")'));
  assert.match(e.message, /error calling fail: database name must be set/);
});

test("fail withholds a message derived from the value", () => {
  const e = errorOf(() => evaluatePipeline("hunter2-secret", "fail"));
  assert.ok(!e.message.includes("hunter2"), e.message);
  assert.match(e.message, /error calling fail/);
});

test("errors name the function and never include the value", () => {
  const secret = "s3cr3t-VALUE";
  const cases = [
    "trunc 3 | int | mustFromJson",
    "mustFromJson",
    "semver",
    "urlParse",
    "b64enc | b64dec | mustRegexFind",
    "list | upper",
    "mustToDate",
  ];
  for (const p of cases) {
    const e = errorOf(() => evaluatePipeline(secret + "%zz:{", p));
    assert.ok(!e.message.includes(secret), `${p}: ${e.message}`);
  }
  assert.match(errorOf(() => evaluatePipeline(secret, "mustFromJson")).message, /error calling mustFromJson/);
  assert.match(
    errorOf(() => evaluatePipeline(secret, "semver")).message,
    /error calling semver: Invalid Semantic Version/,
  );
});

test("syntax errors are PipelineError and mention the pipeline text", () => {
  for (const p of ["upper | | lower", "(upper", 'printf "%d', "upper }", "print 1x"]) {
    const e = errorOf(() => parsePipeline(p));
    assert.ok(e.message.includes(JSON.stringify(p)), e.message);
  }
});

test("runPipeline rejects things that are not parsed pipelines", () => {
  errorOf(() => runPipeline({} as never, "v"));
});

test("spec examples render like helm", () => {
  assert.equal(evaluatePipeline("My-App", "lower | trunc 63"), "my-app");
  assert.equal(evaluatePipeline("s3cret", "b64enc"), "czNjcmV0");
  assert.equal(evaluatePipeline("5", 'printf "%sm"'), "5m");
  assert.equal(evaluatePipeline("dev", "upper"), "DEV");
});

test("regex functions match in linear time, like Go's RE2: nested quantifiers on a long subject finish and answer like Go", () => {
  // A backtracking engine takes exponential time here; RE2 (Go, and re2js under khook) does not.
  const subject = `${"a".repeat(5000)}!`;
  assert.equal(evaluatePipeline(subject, 'regexMatch "^(a+)+$"'), "false");
  assert.equal(evaluatePipeline(subject, 'regexFind "(a|aa)+!"'), subject);
  assert.equal(evaluatePipeline("x".repeat(3000), 'regexMatch "(x*)*y"'), "false");
});
