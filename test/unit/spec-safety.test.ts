/**
 * Safety rules of loading (issue 10, items 2-8, 10 and 22): inputs that would damage a
 * cluster, leak a secret, exhaust memory or lose the author's text are refused at load,
 * with exit 2 and every problem at once.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { planOffline } from "../../provider/engine/plan.js";
import { KhookError, type Diagnostic } from "../../provider/errors.js";
import { planLines } from "../../provider/pulumi/plan-lines.js";
import { parseVarFile, type LoadOptions } from "../../provider/dsl/loader.js";
import { loadSpec } from "../../provider/load-spec.js";
import { MAX_SPEC_BYTES } from "../../provider/dsl/yaml.js";
import { parseYamlStream } from "../../provider/dsl/yaml-stream.js";
import { specText, tempSpecDir } from "./support/spec-files.js";
import { Redactor } from "../../provider/redact.js";

function load(stepsYaml: string, opts: Partial<LoadOptions> & { files?: Record<string, string>; text?: string } = {}) {
  const { files, text, ...rest } = opts;
  const dir = tempSpecDir({ "spec.yaml": text ?? specText(stepsYaml), ...(files ?? {}) });
  return loadSpec({ file: path.join(dir, "spec.yaml"), env: {}, ...rest });
}

/** The invalid-input error of a load that must fail. */
function refused(stepsYaml: string, opts: Parameters<typeof load>[1] = {}): KhookError {
  try {
    load(stepsYaml, opts);
  } catch (e) {
    assert.ok(e instanceof KhookError, String(e));
    assert.equal(e.exitCode, 2, e.message);
    return e;
  }
  assert.fail("the spec was accepted");
}

function withRule(e: KhookError, rule: string): Diagnostic[] {
  const ds = e.diagnostics.filter((d) => d.rule === rule);
  assert.ok(ds.length > 0, `expected a ${rule} problem, got: ${e.message}`);
  for (const d of ds)
    assert.ok(d.position && d.position.line > 0, `every problem carries a line: ${JSON.stringify(d)}`);
  return ds;
}

describe("delete by resource: kubectl's selection rules", () => {
  test("delete-name-or-selector: kind/name cannot be combined with selector, fieldSelector or allNamespaces", () => {
    const e = refused(
      "  - name: a\n    delete: { resource: deployment/web, selector: app=web }\n" +
        "  - name: b\n    delete: { resource: deployment/web, fieldSelector: metadata.name=web }\n" +
        "  - name: c\n    delete: { resource: deployment/web, allNamespaces: true }\n",
    );
    const ds = withRule(e, "delete-name-or-selector");
    assert.deepEqual(
      ds.map((d) => d.path),
      ["/steps/0/delete/selector", "/steps/1/delete/fieldSelector", "/steps/2/delete/allNamespaces"],
    );
    assert.match(ds[0]!.message, /deployment\/web names one object/);
  });

  test("delete-type-needs-selector: a bare type needs selector: or fieldSelector:, and the message says how to select", () => {
    const e = refused(
      "  - name: a\n    delete: { resource: pods }\n  - name: b\n    delete: { resource: pods, allNamespaces: true }\n",
    );
    const ds = withRule(e, "delete-type-needs-selector");
    assert.deepEqual(
      ds.map((d) => d.path),
      ["/steps/0/delete/resource", "/steps/1/delete/resource"],
    );
    assert.match(ds[0]!.message, /selector:.*fieldSelector:.*kind\/name/);
    assert.match(ds[1]!.message, /every pods in every namespace|in every namespace/);
  });

  test("a bare type with a selector, and kind/name alone, are still valid", () => {
    const spec = load(
      "  - name: a\n    delete: { resource: pods, selector: app=old }\n  - name: b\n    delete: { resource: pods, fieldSelector: status.phase=Failed, allNamespaces: true }\n  - name: c\n    delete: { resource: daemonset/aws-node, namespace: kube-system }\n",
    );
    assert.equal(spec.steps.length, 3);
  });
});

describe("secret values", () => {
  const USES_PIN = "  - name: a\n    job: { image: busybox, args: ['${PIN}'] }\n";

  test("secret-min-length: a referenced secret value of 1-2 characters is refused at load, without printing it", () => {
    const e = refused(USES_PIN, { env: { KHOOK_SECRET_PIN: "42" } });
    const [d] = withRule(e, "secret-min-length");
    assert.match(d!.message, /secret variable PIN/);
    assert.match(d!.message, /at least 3 characters/);
    assert.doesNotMatch(e.message, /42/);
  });

  test("secret-min-length: surrounding whitespace does not count, since a plain YAML scalar drops it", () => {
    const e = refused("  - name: a\n    apply: { namespace: ${PIN}, manifests: [{ file: x.yaml }] }\n", {
      env: { KHOOK_SECRET_PIN: "  42 " },
    });
    const [d] = withRule(e, "secret-min-length");
    assert.match(d!.message, /surrounding whitespace not counted/);
    assert.doesNotMatch(e.message, /42/);
  });

  test("secret-masking: a secret is masked without its surrounding whitespace too", () => {
    const redactor = new Redactor();
    redactor.add(" s3cr3t-token\\ ");
    assert.equal(redactor.redact('namespace "s3cr3t-token\\\\" is invalid'), 'namespace "***" is invalid');
    assert.equal(redactor.redact("value s3cr3t-token\\."), "value ***.");
  });

  test("secret-masking: a problem that quotes a piece of a secret (8 characters or more) masks the piece", () => {
    const redactor = new Redactor();
    redactor.add("|s3cr3t-token#tail");
    assert.equal(
      redactor.redactFragments("Block scalar header includes extra characters: |s3cr3t-tok"),
      "Block scalar header includes extra characters: ***",
    );
    assert.equal(redactor.redactFragments("a short run s3cr3t- stays"), "a short run s3cr3t- stays");
    assert.equal(redactor.child().redactFragments("token#tail"), "***", "a child masks its parent's pieces");
  });

  test("secret-masking: a secret added after a problem was masked brings its pieces too", () => {
    const redactor = new Redactor();
    redactor.add("s3cr3t-token-value");
    assert.equal(redactor.redactFragments("nothing secret here"), "nothing secret here");
    const encoded = Buffer.from("s3cr3t-token-value").toString("base64");
    redactor.add(encoded);
    assert.equal(redactor.redactFragments(`a piece: ${encoded.slice(0, 12)}`), "a piece: ***");
  });

  test("secret-min-length: the Pulumi secretVars input is held to the same rule", () => {
    withRule(refused(USES_PIN, { secretVars: { PIN: "7" } }), "secret-min-length");
  });

  test("secret-min-length: a 1-2 character pipeline output of a secret is refused too", () => {
    const e = refused("  - name: a\n    job: { image: busybox, args: ['${TOKEN|trunc 2}'] }\n", {
      env: { KHOOK_SECRET_TOKEN: "s3cr3t-token" },
    });
    const [d] = withRule(e, "secret-min-length");
    assert.match(d!.message, /pipeline/);
    assert.doesNotMatch(e.message, /s3/);
  });

  test("a short secret the spec never references is not a problem, and an empty one hides nothing", () => {
    assert.equal(load(USES_PIN, { env: { KHOOK_SECRET_PIN: "4242", KHOOK_SECRET_OTHER: "x" } }).steps.length, 1);
    assert.equal(
      load("  - name: a\n    job: { image: busybox, args: ['x${EMPTY}'] }\n", { env: { KHOOK_SECRET_EMPTY: "" } }).steps
        .length,
      1,
    );
  });
});

describe("variable prefixes", () => {
  test("prefix-not-empty: an empty --var-prefix or --secret-prefix is refused (it would read the whole environment)", () => {
    for (const opts of [{ varPrefix: "" }, { secretPrefix: "" }]) {
      const e = refused("  - name: a\n    job: { image: busybox }\n", { ...opts, env: { PATH: "/bin" } });
      assert.match(e.message, /prefix/);
      assert.match(e.message, /empty/);
    }
  });

  test("prefix-not-empty: the SDK's varPrefix and secretPrefix inputs are held to the same rule", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    for (const prefix of [{ varPrefix: "" }, { secretPrefix: "" }]) {
      assert.throws(
        () => khookInputs("boot", { spec: specText("  - name: a\n    job: { image: busybox }\n"), ...prefix }),
        /prefix.*empty/,
      );
    }
  });
});

describe("YAML resource limits", () => {
  /** 8 nested levels of 10 aliases each: 10^8 nodes once expanded. */
  function aliasBomb(): string {
    let s = "            l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (let i = 1; i <= 8; i++)
      s += `            l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(", ")}]\n`;
    return `  - name: a\n    helm:\n      chart: ./c\n      values:\n        bomb:\n${s.replace(/^ {12}/gm, "          ")}`;
  }

  test("yaml-alias-limit: an alias bomb is refused quickly with exit 2, naming aliases", () => {
    const e = refused(aliasBomb(), { files: { "c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n" } });
    const [d] = withRule(e, "yaml-alias-limit");
    assert.match(d!.message, /alias/);
  });

  test("yaml-alias-limit: an inline manifest's alias bomb is bounded as well", () => {
    const bomb = aliasBomb()
      .split("\n")
      .filter((l) => /^ {10}l\d/.test(l))
      .map((l) => l.slice(10))
      .join("\n");
    const docs = parseYamlStream(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n${bomb.replace(/^/gm, "  ")}\n`,
    );
    assert.ok(docs[0]?.error !== undefined && /alias/.test(docs[0].error), JSON.stringify(docs[0]).slice(0, 300));
  });

  test("yaml-alias-limit: a local valuesFrom file's alias bomb is refused at validation with exit 2", () => {
    const bomb = aliasBomb()
      .split("\n")
      .filter((l) => /^ {10}l\d/.test(l))
      .map((l) => l.slice(10))
      .join("\n");
    const e = refused("  - name: a\n    helm: { chart: ./c, valuesFrom: [{ file: ./values.yaml }] }\n", {
      files: { "c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "values.yaml": `${bomb}\n` },
    });
    assert.match(e.message, /alias/);
  });

  test('yaml-alias-limit: a JSON-style bomb ("k":*alias, no space) is refused too', () => {
    let flow = `{"l0": &l0 {"a": x, "b": x, "c": x, "d": x, "e": x, "f": x, "g": x, "h": x, "i": x, "j": x}`;
    for (let i = 1; i <= 8; i++)
      flow += `, "l${i}": &l${i} {${Array.from({ length: 10 }, (_, k) => `"k${k}":*l${i - 1}`).join(", ")}}`;
    const e = refused(`  - name: a\n    helm:\n      chart: ./c\n      values: ${flow}}\n`, {
      files: { "c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n" },
    });
    withRule(e, "yaml-alias-limit");
  });

  test("ordinary anchors and aliases still work", () => {
    const spec = load("  - name: a\n    job: &j { image: busybox, args: [a] }\n  - name: b\n    job: *j\n");
    // The loaded action carries the defaults table's values too (provider/dsl/defaults.ts).
    assert.deepEqual(spec.steps[1]!.action, {
      image: "busybox",
      args: ["a"],
      namespace: "default",
      createNamespace: false,
    });
  });

  test("spec-size-limit: a spec file larger than the limit is refused before parsing", () => {
    const big = specText("  - name: a\n    job: { image: busybox }\n") + `# ${"x".repeat(MAX_SPEC_BYTES)}\n`;
    const e = refused("", { text: big });
    assert.match(e.message, /larger than/);
  });
});

describe("input hash of OCI charts", () => {
  test("oci-digest-hashed: with both a tag and a digest, re-pinning the digest changes the input hash", () => {
    const chart = (d: string): string =>
      `  - name: h\n    helm: { chart: 'oci://registry.example/charts/app:1.0@sha256:${d.repeat(64)}' }\n`;
    assert.notEqual(load(chart("a")).steps[0]!.inputHash, load(chart("b")).steps[0]!.inputHash);
  });

  test("a tag alone still hashes like version:", () => {
    const a = load("  - name: h\n    helm: { chart: 'oci://registry.example/charts/app:1.0' }\n").steps[0]!.inputHash;
    const b = load("  - name: h\n    helm: { chart: 'oci://registry.example/charts/app', version: '1.0' }\n").steps[0]!
      .inputHash;
    assert.equal(a, b);
  });
});

describe("var files", () => {
  test("var-file-text: values keep the text the author wrote", () => {
    const values = parseVarFile(
      "VERSION: 1.10\nHEX: 0x1F\nEXP: 1e3\nBIG: 12345678901234567890\nOCT: 0o17\nBOOL: yes\nQUOTED: '007'\nEMPTY:\nTILDE: ~\nBLOCK: |\n  two\n  lines\n",
      "vars.yaml",
    );
    assert.deepEqual(values, {
      VERSION: "1.10",
      HEX: "0x1F",
      EXP: "1e3",
      BIG: "12345678901234567890",
      OCT: "0o17",
      BOOL: "yes",
      QUOTED: "007",
      EMPTY: "",
      TILDE: "",
      BLOCK: "two\nlines\n",
    });
  });

  test("var-file-text: a chart version 1.10 from a var file reaches the step unchanged", () => {
    const dir = tempSpecDir({ "vars.yaml": "V: 1.10\n" });
    const spec = load("  - name: h\n    helm: { chart: app, repo: 'https://charts.example', version: '${V}' }\n", {
      varFiles: [path.join(dir, "vars.yaml")],
    });
    assert.equal((spec.steps[0]!.action as { version?: string }).version, "1.10");
  });
});

describe("steps excluded by when:", () => {
  const GATED =
    '  - name: prod-only\n    when: \'vars.get("ENV", "dev") == "prod"\'\n    apply:\n      manifests:\n        - file: ./prod/secret-store.yaml\n        - kustomize: ./prod/overlay\n' +
    '  - name: values\n    when: \'vars.get("ENV", "dev") == "prod"\'\n    helm: { chart: ./prod/chart, valuesFrom: [{ file: ./prod/values.yaml }] }\n';

  test("when-excluded-files-unread: an excluded step's local files may be absent; they are not read or hashed", () => {
    const spec = load(GATED);
    assert.deepEqual(
      spec.steps.map((s) => s.whenHolds),
      [false, false],
    );
    for (const s of spec.steps) assert.match(s.inputHash, /^sha256:[0-9a-f]{64}$/);
  });

  test("when-excluded-files-unread: the plan line (CLI and Pulumi) says the files were not read", () => {
    const spec = load(GATED);
    const [p] = planOffline(spec);
    assert.match(p!.reason, /excluded by when: .*local files .*not read/);
    assert.match(planLines(spec)[0]!, /local files .*not read/);
  });

  test("the same step, included, still needs its files", () => {
    const e = refused(GATED, { set: [["ENV", "prod"]] });
    assert.ok(e.diagnostics.filter((d) => d.rule === "local-file-exists").length >= 3, e.message);
  });
});

describe("YAML documents", () => {
  test("yaml-empty: a spec of only --- separators is reported as empty", () => {
    const e = refused("", { text: "---\n---\n" });
    assert.match(e.message, /the spec is empty/);
    assert.doesNotMatch(e.message, /found 2/);
  });

  test("kustomize-local-only: the error quotes the remote base URL intact", () => {
    const e = refused("  - name: a\n    apply:\n      manifests:\n        - kustomize: ./k\n", {
      files: { "k/kustomization.yaml": "resources:\n  - https://github.com/org/repo//base?ref=v1\n" },
    });
    assert.match(e.message, /https:\/\/github\.com\/org\/repo\/\/base\?ref=v1/);
  });
});
