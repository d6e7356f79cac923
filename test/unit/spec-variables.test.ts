import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { KhookError } from "../../provider/errors.js";
import { parseVarFile } from "../../provider/dsl/loader.js";
import { loadSpec } from "../../provider/load-spec.js";
import { SourceText } from "../../provider/dsl/source.js";
import { mergeVariables, substitute } from "../../provider/dsl/vars.js";
import { specText } from "./support/spec-files.js";

const sub = (text: string, sources: Parameters<typeof mergeVariables>[0] = {}) => {
  const vars = mergeVariables(sources);
  return { ...substitute(new SourceText(text, undefined), vars), vars };
};

function loadError(text: string, opts: Partial<Parameters<typeof loadSpec>[0]> = {}): KhookError {
  try {
    loadSpec({ text, env: {}, ...opts });
  } catch (e) {
    assert.ok(e instanceof KhookError, `expected a KhookError, got ${String(e)}`);
    return e;
  }
  assert.fail("expected the spec to be invalid");
}

describe("variables: sources and precedence", () => {
  test("--set > --var-file > KHOOK_SECRET_* > KHOOK_VAR_* > ${NAME:-default}", () => {
    const text = "${A:-d} ${B:-d} ${C:-d} ${D:-d} ${E:-d}";
    const r = sub(text, {
      set: [["A", "set"]],
      varFiles: [{ file: "f", values: { A: "file", B: "file" } }],
      env: {
        KHOOK_SECRET_A: "secretA",
        KHOOK_SECRET_B: "secretB",
        KHOOK_SECRET_C: "secretC",
        KHOOK_VAR_A: "va",
        KHOOK_VAR_B: "vb",
        KHOOK_VAR_C: "vc",
        KHOOK_VAR_D: "vd",
      },
    });
    assert.equal(r.text, "set file secretC vd d");
  });

  test("later --set and later --var-file entries win", () => {
    const r = sub("${A} ${B}", {
      set: [
        ["A", "1"],
        ["A", "2"],
      ],
      varFiles: [
        { file: "a", values: { B: "x" } },
        { file: "b", values: { B: "y" } },
      ],
    });
    assert.equal(r.text, "2 y");
  });

  test("both prefixes are configurable, and other environment variables are never read", () => {
    const r = sub("${FOO} ${TOK} ${PATH:-unset}", {
      env: { MY_FOO: "f", MY_SECRET_TOK: "tokvalue", PATH: "/bin", KHOOK_VAR_FOO: "ignored" },
      varPrefix: "MY_",
      secretPrefix: "MY_SECRET_",
    });
    assert.equal(r.text, "f tokvalue unset");
    assert.ok(r.vars.values.get("TOK")?.secret);
  });

  test("KHOOK_SECRET_ values are registered for redaction", () => {
    const r = sub("x", { env: { KHOOK_SECRET_TOKEN: "s3cr3t-value" } });
    assert.equal(r.vars.redactor.redact("token is s3cr3t-value"), "token is ***");
  });
});

describe("variables: substitution", () => {
  test("a missing variable with no default is an error, and every missing variable is reported at once", () => {
    const e = loadError(
      specText(
        "  - name: a\n    wait: { for: delete, on: pods/${ONE} }\n  - name: b\n    wait: { for: delete, on: pods/${TWO} }\n",
      ),
    );
    assert.equal(e.code, "invalid-input");
    assert.equal(e.exitCode, 2);
    const missing = e.diagnostics.filter((d) => d.rule === "variable-missing").map((d) => d.message.split(" ")[1]);
    assert.deepEqual(missing, ["ONE", "TWO"]);
    assert.deepEqual(
      e.diagnostics.map((d) => d.position?.line),
      [7, 9],
    );
  });

  test("substitution is textual and happens before YAML parsing, so a variable can hold any scalar", () => {
    const spec = loadSpec({
      text: specText("  - name: a\n    retries: ${N}\n    wait: { for: delete, on: pods }\n"),
      set: [["N", "3"]],
      env: {},
    });
    assert.equal(spec.steps[0]!.retries, 3);
  });

  test("{{ }} in embedded manifests stays untouched", () => {
    const r = sub("value: {{ .Values.x }} and ${A:-a}");
    assert.equal(r.text, "value: {{ .Values.x }} and a");
  });

  test("$${ is a literal ${ (khook extension for shell snippets)", () => {
    const r = sub('args: ["echo $${HOME} $$HOME ${A:-x}"]');
    assert.equal(r.text, 'args: ["echo ${HOME} $$HOME x"]');
    assert.equal(r.diagnostics.length, 0);
  });

  test("text without ${ passes through unchanged (property)", () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes("${")),
        (s) => {
          const r = sub(s);
          return r.text === s.replace(/\$\$\{/g, "${") && r.diagnostics.length === 0;
        },
      ),
    );
  });

  test("arbitrary input never crashes with anything but a khook diagnostic (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("$", "{", "}", "|", ":", "-", "A", "b", " ", '"', "x", "1", "\n") }),
        (s) => {
          const r = sub(s, { set: [["A", "v"]] });
          return (
            typeof r.text === "string" &&
            r.diagnostics.every((d) => typeof d.message === "string" && d.position !== undefined)
          );
        },
      ),
    );
  });

  test("errors point at the line the author wrote, even after a multi-line value was substituted", () => {
    const e = loadError(
      specText(
        "  - name: a\n    wait: { for: delete, on: pods }\n    when: ${COND}\n  - name: b\n    unknownField: 1\n    wait: { for: delete, on: pods }\n",
      ),
      { set: [["COND", 'vars.get("X", "a") ==\n      "a"']] },
    );
    const unknown = e.diagnostics.find((d) => d.path.startsWith("/steps/1"));
    assert.ok(unknown, e.message);
    assert.equal(unknown.position?.line, 10);
  });
});

describe("variables: what breaks names its cause", () => {
  test("a plain variable whose value breaks the YAML is named, with the fix", () => {
    const e = loadError(specText("  - name: a\n    wait: { for: delete, on: pods, selector: ${SEL} }\n"), {
      set: [["SEL", "app: x"]],
    });
    assert.match(
      e.message,
      /<stdin>:7:46: YAML: .*the value of variable SEL breaks the YAML here .*\$\{SEL \| quote\}/,
    );
  });

  test("a multi-document var file gets a message about var files, not about a JavaScript API", () => {
    assert.throws(
      () => parseVarFile("A: 1\n---\nB: 2\n", "vars.yaml"),
      (e: unknown) => {
        assert.ok(e instanceof KhookError);
        assert.equal(e.exitCode, 2);
        assert.match(
          e.message,
          /the var file vars\.yaml holds 2 YAML documents \(separated by ---\); a var file is one flat NAME: value map/,
        );
        assert.doesNotMatch(e.message, /parseAllDocuments/);
        return true;
      },
    );
  });

  test("variable-syntax: a pipeline with an empty stage (${A|upper|}) is refused like ${A|}", () => {
    for (const ref of ["${A|}", "${A|upper|}", "${A|upper | }", "${A:-x|upper|}"]) {
      const r = sub(`v: ${ref}`, { set: [["A", "a"]] });
      assert.equal(r.diagnostics.length, 1, `${ref}: ${JSON.stringify(r.diagnostics)}`);
      assert.match(r.diagnostics[0]!.message, /empty pipeline/);
      assert.equal(r.diagnostics[0]!.rule, "variable-syntax");
    }
    assert.deepEqual(
      sub('v: ${A|replace "x" "|"}', { set: [["A", "a"]] }).diagnostics,
      [],
      "a | inside a quoted argument is no stage",
    );
  });
});

describe("pipelines", () => {
  test("${NAME|fn arg|fn2} applies the pipeline to the value", () => {
    assert.equal(sub("${APP | lower | trunc 5}", { set: [["APP", "MyApplication"]] }).text, "myapp");
  });

  test("${NAME:-default|pipeline}: the default applies first, then the pipes", () => {
    assert.equal(sub('${WINDOW:-5|printf "%sm"}').text, "5m");
  });

  test("a :-default combined with a pipeline cannot contain |: the first | starts the pipeline", () => {
    assert.equal(sub("${X:-a|upper}").text, "A");
  });

  test("strict missing still applies: ${NAME|b64enc} with NAME unset is a missing-variable error", () => {
    const r = sub("${NAME|b64enc}");
    assert.equal(r.diagnostics[0]?.rule, "variable-missing");
  });

  test("calling an excluded function is an error that names it", () => {
    const r = sub("${A:-x|now}");
    assert.equal(r.diagnostics.length, 1);
    assert.match(r.diagnostics[0]!.message, /"now"/);
  });

  test("pipeline outputs of secret variables are registered for redaction alongside the raw values", () => {
    const r = sub("${TOKEN|b64enc} ${TOKEN|upper} ${TOKEN|sha256sum}", {
      env: { KHOOK_SECRET_TOKEN: "hunter2-token" },
    });
    const [b64, upper, sha] = r.text.split(" ");
    for (const form of [b64!, upper!, sha!, "hunter2-token"])
      assert.equal(r.vars.redactor.redact(`x ${form} y`), "x *** y", form);
  });

  test("a pipeline error never quotes a secret value", () => {
    const r = sub("${TOKEN|int|add1|fail}", { env: { KHOOK_SECRET_TOKEN: "hunter2-token" } });
    assert.equal(r.diagnostics.length, 1);
    assert.doesNotMatch(r.diagnostics[0]!.message, /hunter2/);
  });
});
