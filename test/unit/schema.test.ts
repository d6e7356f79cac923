/**
 * The JSON Schema (schema/v1/khook.json) rule by rule — a valid and an invalid
 * sample for each — and the wording of the translated diagnostics.
 * Tests are named after the spec rule they check.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { LineCounter, isMap, isScalar, isSeq, parseDocument } from "yaml";
import type { Diagnostic, PositionLookup, SourcePosition } from "../../provider/errors.js";
import { loadSchema, validateSchema } from "../../provider/dsl/schema.js";
import { KIND_NAMES } from "../../provider/steps/index.js";

// --- helpers ----------------------------------------------------------------

function dedent(text: string): string {
  const lines = text.replace(/^\n+|\s+$/g, "").split("\n");
  const indent = Math.min(...lines.filter((l) => l.trim() !== "").map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(indent)).join("\n");
}

/** A minimal position lookup over a yaml Document: map entries point at their key. */
function parse(text: string): { doc: unknown; positionOf: PositionLookup } {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  assert.deepEqual(document.errors, [], "test YAML parses");
  const toPos = (offset: number): SourcePosition => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const positionOf: PositionLookup = (pointer) => {
    const segs =
      pointer === ""
        ? []
        : pointer
            .slice(1)
            .split("/")
            .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    let node: unknown = document.contents;
    let offset = (node as { range?: [number] } | null)?.range?.[0] ?? 0;
    for (const seg of segs) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === seg);
        if (pair === undefined) break;
        offset = (pair.key as { range?: [number] }).range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node)) {
        const item = node.items[Number(seg)] as { range?: [number] } | undefined;
        if (item === undefined) break;
        offset = item.range?.[0] ?? offset;
        node = item;
      } else break;
    }
    return toPos(offset);
  };
  return { doc: document.toJS(), positionOf };
}

/** Every rule of the schema, including those the loader's semantic pass reports by default. */
function check(text: string): Diagnostic[] {
  const { doc, positionOf } = parse(text);
  return validateSchema(doc, positionOf, { semanticRules: true });
}

/** What the loader gets: rules tagged x-khook-rule are left to its semantic pass. */
function checkDefault(text: string): Diagnostic[] {
  const { doc, positionOf } = parse(text);
  return validateSchema(doc, positionOf);
}

const ENVELOPE = "apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: test\n";

/** A spec with the given steps, each written as block YAML. */
function spec(...steps: string[]): string {
  const body = steps
    .map((s) =>
      dedent(s)
        .split("\n")
        .map((line, i) => (i === 0 ? `  - ${line}` : `    ${line}`))
        .join("\n"),
    )
    .join("\n");
  return `${ENVELOPE}steps:\n${body}\n`;
}

function show(ds: readonly Diagnostic[]): string {
  return ds.map((d) => `${d.path}: ${d.message}`).join("\n") || "(no diagnostics)";
}

function valid(text: string): void {
  const ds = check(text);
  assert.deepEqual(ds, [], `expected valid, got:\n${show(ds)}\n---\n${text}`);
}

/** Asserts the text is invalid and one diagnostic matches; returns all of them. */
function invalid(text: string, expected: string | RegExp, path?: string): Diagnostic[] {
  const ds = check(text);
  const hit = ds.find(
    (d) =>
      (typeof expected === "string" ? d.message === expected : expected.test(d.message)) &&
      (path === undefined || d.path === path),
  );
  assert.ok(
    hit,
    `expected a diagnostic ${String(expected)}${path ? ` at ${path}` : ""}, got:\n${show(ds)}\n---\n${text}`,
  );
  for (const d of ds) {
    assert.equal(d.rule, "schema");
    assert.equal(d.severity, "error");
  }
  return ds;
}

const helmOk = `
  name: cilium
  helm:
    chart: cilium
    repo: https://helm.cilium.io/
    version: 1.18.4
`;

// --- the schema artifact ----------------------------------------------------

describe("schema artifact", () => {
  test("the schema is draft 2020-12 with the canonical $id", () => {
    const schema = loadSchema() as Record<string, unknown>;
    assert.equal(schema["$id"], "https://khook.io/schema/v1/khook.json");
    assert.equal(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    const ajv = new Ajv2020({ strict: false });
    assert.equal(ajv.validateSchema(schema), true, JSON.stringify(ajv.errors));
  });

  test("loadSchema returns a copy callers may modify", () => {
    const a = loadSchema() as Record<string, unknown>;
    a["title"] = "changed";
    assert.notEqual((loadSchema() as Record<string, unknown>)["title"], "changed");
  });

  test("every property in the schema has a description (editor hover docs)", () => {
    const schema = loadSchema() as Record<string, unknown>;
    const defs = schema["$defs"] as Record<string, Record<string, unknown>>;
    const missing: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
      if (typeof node !== "object" || node === null) return;
      const obj = node as Record<string, unknown>;
      const props = obj["properties"] as Record<string, Record<string, unknown>> | undefined;
      const conditional = /\/(if|then|else|not)(\/|$)/.test(where);
      if (props !== undefined && !conditional) {
        for (const [k, v] of Object.entries(props)) {
          const ref = v["$ref"];
          const target = typeof ref === "string" ? defs[ref.slice("#/$defs/".length)] : undefined;
          if (v["description"] === undefined && target?.["description"] === undefined)
            missing.push(`${where}/properties/${k}`);
        }
      }
      for (const [k, v] of Object.entries(obj)) walk(v, `${where}/${k}`);
    };
    walk(schema, "");
    assert.deepEqual(missing, []);
  });
});

// --- document envelope ------------------------------------------------------

describe("document envelope", () => {
  test("envelope: a minimal document is valid", () => valid(spec(helmOk)));

  test("envelope: apiVersion is required and fixed to khook.io/v1", () => {
    invalid(
      spec(helmOk).replace("khook.io/v1", "khook.io/v2"),
      'apiVersion must be "khook.io/v1"; found string "khook.io/v2"',
      "/apiVersion",
    );
    invalid(
      spec(helmOk).replace("apiVersion: khook.io/v1\n", ""),
      'the document is missing required field "apiVersion"',
      "",
    );
  });

  test("envelope: kind is required and fixed to Khook", () => {
    invalid(
      spec(helmOk).replace("kind: Khook", "kind: ClusterBootstrap"),
      'kind must be "Khook"; found string "ClusterBootstrap"',
      "/kind",
    );
  });

  test("envelope: metadata.name is required and an RFC 1123 subdomain", () => {
    valid(spec(helmOk).replace("name: test", "name: prod.eu-west-1"));
    invalid(
      spec(helmOk).replace("  name: test\n", "  title: x\n"),
      'metadata is missing required field "name"',
      "/metadata",
    );
    invalid(
      spec(helmOk).replace("name: test", "name: My_Bootstrap"),
      /^"My_Bootstrap" is not a valid metadata\.name: use an RFC 1123 subdomain/,
      "/metadata/name",
    );
    invalid(
      spec(helmOk).replace("name: test", `name: ${"a".repeat(242)}`),
      /is 242 characters; the limit is 241 \(so that khook-state-<name> fits in 253\)/,
    );
  });

  test("envelope: steps is required and lists at least one step", () => {
    invalid(ENVELOPE, 'the document is missing required field "steps"', "");
    invalid(`${ENVELOPE}steps: []\n`, "steps must list at least one step", "/steps");
  });

  test("envelope: unknown top-level fields are rejected with a suggestion", () => {
    invalid(`${ENVELOPE}step:\n  - name: a\n`, 'unknown field "step" in the document (did you mean "steps"?)', "/step");
  });

  test("envelope: a document that is not a mapping says so", () => {
    invalid("- a\n- b\n", "the document must be a mapping; found a list", "");
  });
});

// --- defaults ---------------------------------------------------------------

describe("defaults", () => {
  test("defaults: timeout, retries, retryDelay and onError", () => {
    valid(
      `${ENVELOPE}defaults:\n  timeout: 10m\n  retries: 2\n  retryDelay: 30s\n  onError: continue\nsteps:\n  - ${dedent(helmOk).split("\n").join("\n    ")}\n`,
    );
  });

  test("defaults: onError is fail or continue", () => {
    invalid(
      `${ENVELOPE}defaults:\n  onError: abort\nsteps: [{name: a, wait: {for: delete, on: pods}}]\n`,
      'defaults.onError must be one of "fail", "continue"; found string "abort"',
      "/defaults/onError",
    );
    invalid(
      `${ENVELOPE}defaults:\n  onError: contine\nsteps: [{name: a, wait: {for: delete, on: pods}}]\n`,
      /\(did you mean "continue"\?\)$/,
    );
  });

  test("defaults: retries is a whole number >= 0", () => {
    invalid(
      `${ENVELOPE}defaults:\n  retries: -1\nsteps: [{name: a, wait: {for: delete, on: pods}}]\n`,
      /^defaults\.retries must be >= 0; found number -1$/,
    );
    invalid(
      `${ENVELOPE}defaults:\n  retries: "2"\nsteps: [{name: a, wait: {for: delete, on: pods}}]\n`,
      'defaults.retries must be a whole number; found string "2" (remove the quotes)',
    );
    invalid(
      `${ENVELOPE}defaults:\n  retries: 1.5\nsteps: [{name: a, wait: {for: delete, on: pods}}]\n`,
      "defaults.retries must be a whole number; found number 1.5",
    );
  });

  test("defaults: only the four fields", () => {
    invalid(
      `${ENVELOPE}defaults:\n  timout: 5m\nsteps: [{name: a, wait: {for: delete, on: pods}}]\n`,
      'unknown field "timout" in defaults (did you mean "timeout"?)',
      "/defaults/timout",
    );
  });
});

// --- durations ---------------------------------------------------------------

describe("durations", () => {
  for (const d of ["90s", "5m", "1h30m", "0", "1.5h", "500ms", "2h45m30.5s", "10us", "10µs", ".5s"]) {
    test(`duration: ${d} is Go duration syntax`, () =>
      valid(spec(`name: a\ntimeout: "${d}"\nwait: {for: delete, on: pods}`)));
  }
  test("duration: prose is rejected with the Go syntax hint", () => {
    invalid(
      spec(`name: a\ntimeout: 5 minutes\nwait: {for: delete, on: pods}`),
      '"5 minutes" is not a duration; use Go syntax like 90s, 5m, 1h30m',
      "/steps/0/timeout",
    );
    invalid(
      spec(`name: a\nretryDelay: "10"\nwait: {for: delete, on: pods}`),
      '"10" is not a duration; use Go syntax like 90s, 5m, 1h30m',
      "/steps/0/retryDelay",
    );
    invalid(
      spec(`name: a\ntimeout: 1d\nwait: {for: delete, on: pods}`),
      '"1d" is not a duration; use Go syntax like 90s, 5m, 1h30m',
    );
  });
  test("duration: a bare number is not a duration", () => {
    invalid(
      spec(`name: a\ntimeout: 30\nwait: {for: delete, on: pods}`),
      "timeout must be a duration string like 90s, 5m, 1h30m; found number 30",
      "/steps/0/timeout",
    );
  });
});

// --- state -----------------------------------------------------------------

describe("state", () => {
  const withState = (state: string): string =>
    spec(helmOk).replace("steps:\n", `state:\n${state.replace(/^/gm, "  ")}\nsteps:\n`);

  test("state: an empty block opts in", () => valid(spec(helmOk).replace("steps:\n", "state: {}\nsteps:\n")));

  test("state: enabled, namespace and name", () =>
    valid(withState("enabled: false\nnamespace: kube-system\nname: my-bootstrap.state")));

  test("state: enabled is a boolean", () => {
    invalid(
      withState('enabled: "true"'),
      'state.enabled must be true or false; found string "true" (write true or false without quotes)',
      "/state/enabled",
    );
  });

  test("state: namespace is an RFC 1123 label", () => {
    invalid(
      withState("namespace: Kube_System"),
      /^"Kube_System" is not a valid namespace: use an RFC 1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters$/,
      "/state/namespace",
    );
    invalid(withState(`namespace: ${"n".repeat(64)}`), /^namespace "n+" is 64 characters; the limit is 63$/);
  });

  test("state: name is an RFC 1123 subdomain", () => {
    invalid(
      withState("name: -state"),
      /^"-state" is not a valid state record name: use an RFC 1123 subdomain/,
      "/state/name",
    );
  });

  test("state: only enabled, namespace and name", () => {
    invalid(withState("secret: x"), /^unknown field "secret" in state; allowed: enabled, namespace, name$/);
  });
});

// --- steps: common fields -----------------------------------------------------

describe("step common fields", () => {
  test("step name: required", () => {
    invalid(spec("wait: {for: delete, on: pods}"), 'steps[0] is missing required field "name"', "/steps/0");
  });

  test("step name: RFC 1123 label", () => {
    valid(spec("name: cert-manager-2\nwait: {for: delete, on: pods}"));
    invalid(
      spec("name: Cert_Manager\nwait: {for: delete, on: pods}"),
      `"Cert_Manager" is not a valid step name: use an RFC 1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`,
      "/steps/0/name",
    );
    invalid(spec("name: -a\nwait: {for: delete, on: pods}"), /^"-a" is not a valid step name/);
  });

  test("step name: at most 63 characters (an RFC 1123 label, as the spec says)", () => {
    valid(spec(`name: ${"a".repeat(63)}\nwait: {for: delete, on: pods}`));
    invalid(
      spec(`name: ${"a".repeat(64)}\nwait: {for: delete, on: pods}`),
      /^step name "a{64}" is 64 characters; the limit is 63$/,
      "/steps/0/name",
    );
  });

  test("needs: a list of unique step names", () => {
    valid(spec("name: a\nwait: {for: delete, on: pods}", "name: b\nneeds: [a]\nwait: {for: delete, on: pods}"));
    invalid(
      spec("name: b\nneeds: a\nwait: {for: delete, on: pods}"),
      'needs must be a list; found string "a"',
      "/steps/0/needs",
    );
    invalid(
      spec("name: b\nneeds: [a, a]\nwait: {for: delete, on: pods}"),
      'needs lists "a" more than once',
      "/steps/0/needs",
    );
    invalid(
      spec("name: b\nneeds: [A]\nwait: {for: delete, on: pods}"),
      /^"A" is not a valid step name/,
      "/steps/0/needs/0",
    );
  });

  test("when: a CEL expression string", () => {
    valid(spec(`name: a\nwhen: vars.get("ENABLE", "false") == "true"\nwait: {for: delete, on: pods}`));
    invalid(
      spec("name: a\nwhen: true\nwait: {for: delete, on: pods}"),
      "when must be a string; found boolean true (quote it in YAML; unquoted, it is read as a boolean)",
      "/steps/0/when",
    );
  });

  test("retries and onError: per-step overrides", () => {
    valid(spec("name: a\nretries: 3\nretryDelay: 5s\nonError: continue\ntimeout: 1m\nwait: {for: delete, on: pods}"));
    invalid(
      spec("name: a\nonError: ignore\nwait: {for: delete, on: pods}"),
      'onError must be one of "fail", "continue"; found string "ignore"',
    );
  });

  test("step: unknown fields get a suggestion", () => {
    invalid(
      spec("name: a\nneed: [b]\nwait: {for: delete, on: pods}"),
      'unknown field "need" in step "a" (did you mean "needs"?)',
      "/steps/0/need",
    );
  });
});

// --- exactly one action key -------------------------------------------------------

describe("exactly one action key per step", () => {
  test("action key: one key is valid for every step type", () => {
    valid(
      spec(
        helmOk,
        "name: b\napply: {manifests: [{file: ./m.yaml}]}",
        "name: c\ndelete: {resource: daemonset/aws-node, namespace: kube-system}",
        "name: d\npatch: {target: storageclass/gp3, type: merge, patch: {metadata: {annotations: {a: b}}}}",
        "name: e\nwait: {for: condition=Ready, on: pods, allNamespaces: true}",
        "name: f\nrollout: {restart: daemonset/x, namespace: kube-system}",
        "name: g\njob: {image: busybox}",
      ),
    );
  });

  test("action key: zero action keys is an error naming the keys", () => {
    const ds = invalid(
      spec("name: x\ntimeout: 5m"),
      `step "x" must have exactly one action key (${KIND_NAMES.join(", ")}); found none`,
      "/steps/0",
    );
    assert.equal(ds.length, 1, show(ds));
  });

  test("action key: two action keys is an error listing them", () => {
    const ds = invalid(
      spec("name: x\nhelm: {chart: ./charts/x}\napply: {manifests: [{file: ./m.yaml}]}"),
      `step "x" must have exactly one action key (${KIND_NAMES.join(", ")}); found 2: helm, apply`,
      "/steps/0",
    );
    assert.equal(ds.length, 1, show(ds));
  });

  test("action key: a misspelled action key is suggested", () => {
    const ds = invalid(
      spec("name: x\nhlem: {chart: cilium}"),
      'unknown field "hlem" in step "x" (did you mean "helm"?)',
      "/steps/0/hlem",
    );
    assert.ok(
      ds.some((d) => /found none$/.test(d.message)),
      show(ds),
    );
  });

  test("action key: only the present type's errors are reported (no oneOf noise)", () => {
    const ds = check(spec("name: x\nhelm: {chrat: cilium, repo: https://helm.cilium.io/}"));
    assert.deepEqual(
      ds.map((d) => d.message),
      ['helm step is missing required field "chart"', 'unknown field "chrat" in helm step (did you mean "chart"?)'],
    );
    for (const d of ds) assert.doesNotMatch(d.message, /apply|delete|rollout|oneOf|schema/);
  });

  test("action key: a step that is not a mapping", () => {
    const ds = invalid(
      spec("name: x\nwait: {for: delete, on: pods}") + "  - just-a-string\n",
      'steps[1] must be a mapping; found string "just-a-string"',
      "/steps/1",
    );
    assert.equal(ds.length, 1, show(ds));
  });

  test("action key: an empty action block is a type error", () => {
    invalid(spec("name: x\nhelm:"), "helm must be a mapping; found null (empty)", "/steps/0/helm");
  });
});

// --- skipIf per type --------------------------------------------------------------

describe("skipIf: one predicate per step type", () => {
  test("skipIf: helm accepts installed", () => valid(spec(`${dedent(helmOk)}\n  skipIf: installed`)));
  test("skipIf: apply accepts exists", () =>
    valid(spec("name: a\napply: {skipIf: exists, manifests: [{file: ./m.yaml}]}")));
  test("skipIf: job accepts succeeded", () => valid(spec("name: a\njob: {image: busybox, skipIf: succeeded}")));

  test("skipIf: the wrong word for a helm step names the right one", () => {
    invalid(
      spec(`${dedent(helmOk)}\n  skipIf: exists`),
      'skipIf: "exists" is not valid for a helm step; use "installed"',
      "/steps/0/helm/skipIf",
    );
  });
  test("skipIf: the wrong word for an apply step names the right one", () => {
    invalid(
      spec("name: a\napply: {skipIf: installed, manifests: [{file: ./m.yaml}]}"),
      'skipIf: "installed" is not valid for an apply step; use "exists"',
    );
  });
  test("skipIf: the wrong word for a job step names the right one", () => {
    invalid(
      spec("name: a\njob: {image: busybox, skipIf: exists}"),
      'skipIf: "exists" is not valid for a job step; use "succeeded"',
    );
  });
  for (const [type, body] of [
    ["delete", "{resource: pods, skipIf: exists}"],
    ["patch", "{target: a/b, patch: {a: 1}, skipIf: exists}"],
    ["wait", "{for: delete, on: pods, skipIf: exists}"],
    ["rollout", "{status: deployment/x, namespace: n, skipIf: exists}"],
  ] as const) {
    test(`skipIf: ${type} steps have no skip policy`, () => {
      invalid(
        spec(`name: a\n${type}: ${body}`),
        `skipIf is not supported by ${type} steps; only helm (installed), apply (exists), job (succeeded) have a skip policy`,
        `/steps/0/${type}/skipIf`,
      );
    });
  }
});

// --- helm ---------------------------------------------------------------------------

describe("helm", () => {
  test("helm: every field", () => {
    valid(
      spec(`
        name: cilium
        helm:
          chart: cilium
          repo: https://helm.cilium.io/
          version: "1.18.4"
          auth: {username: u, password: p}
          release: cilium.net
          namespace: kube-system
          createNamespace: true
          skipIf: installed
          atomic: true
          wait: true
          values:
            hubble: {enabled: true, relay: {replicas: 2}}
            any-key: [1, two, {three: 3}]
          valuesFrom:
            - file: ./values/cilium.yaml
            - url: https://example.com/values.yaml
      `),
    );
  });

  test("helm: chart is required", () => {
    invalid(
      spec("name: a\nhelm: {repo: https://x.example}"),
      'helm step is missing required field "chart"',
      "/steps/0/helm",
    );
  });

  test("helm: unknown fields are suggested", () => {
    invalid(
      spec("name: a\nhelm: {chrat: cilium, chart: cilium, repo: https://x.example}"),
      'unknown field "chrat" in helm step (did you mean "chart"?)',
      "/steps/0/helm/chrat",
    );
    invalid(
      spec("name: a\nhelm: {chart: ./c, createnamespace: true}"),
      'unknown field "createnamespace" in helm step (did you mean "createNamespace"?)',
    );
  });

  test("helm: values is free-form", () =>
    valid(spec("name: a\nhelm: {chart: ./c, values: {whatever: {nested: [1, 2]}, x: null}}")));

  test("helm: values must be a mapping", () => {
    invalid(
      spec("name: a\nhelm: {chart: ./c, values: [a]}"),
      "helm.values must be a mapping; found a list",
      "/steps/0/helm/values",
    );
  });

  test("helm chart sources: a bare name requires repo", () => {
    invalid(spec("name: a\nhelm: {chart: cilium}"), /^a bare chart name needs repo:/, "/steps/0/helm");
  });

  test("helm chart sources: oci:// and local paths forbid repo", () => {
    valid(spec("name: a\nhelm: {chart: oci://ghcr.io/org/charts/app:1.2.3}"));
    invalid(
      spec("name: a\nhelm: {chart: oci://ghcr.io/org/charts/app, repo: https://x.example}"),
      /^repo: is only for bare chart names/,
      "/steps/0/helm/repo",
    );
    invalid(
      spec("name: a\nhelm: {chart: ./charts/app, repo: https://x.example}"),
      /^repo: is only for bare chart names/,
      "/steps/0/helm/repo",
    );
  });

  test("helm chart sources: a local path forbids version and auth", () => {
    valid(spec("name: a\nhelm: {chart: ../charts/app-1.2.3.tgz}"));
    invalid(
      spec('name: a\nhelm: {chart: ./charts/app, version: "1.0"}'),
      /^a local chart path takes neither version:/,
      "/steps/0/helm/version",
    );
    invalid(
      spec("name: a\nhelm: {chart: /charts/app, auth: {username: u, password: p}}"),
      /^a local chart path takes neither version:/,
      "/steps/0/helm/auth",
    );
  });

  test("helm chart sources: inline name:version and version: are mutually exclusive", () => {
    valid(spec("name: a\nhelm: {chart: 'cilium:1.18.4', repo: https://helm.cilium.io/}"));
    invalid(
      spec("name: a\nhelm: {chart: 'cilium:1.18.4', version: 1.18.4, repo: https://helm.cilium.io/}"),
      /^the chart already carries its version inline/,
      "/steps/0/helm/version",
    );
    invalid(
      spec("name: a\nhelm: {chart: 'oci://r.example/c/app@sha256:abc', version: '1'}"),
      /^the chart already carries its version inline/,
    );
    valid(spec("name: a\nhelm: {chart: 'oci://r.example:5000/c/app', version: '1'}"));
  });

  test("helm: version must be a string", () => {
    invalid(
      spec("name: a\nhelm: {chart: cilium, repo: https://x.example, version: 1.20}"),
      "helm.version must be a string; found number 1.2 (quote it in YAML; unquoted, it is read as a number)",
      "/steps/0/helm/version",
    );
  });

  test("helm: repo is an HTTP(S) URL", () => {
    invalid(
      spec("name: a\nhelm: {chart: cilium, repo: helm.cilium.io}"),
      'helm.repo: "helm.cilium.io" is not an http:// or https:// URL',
      "/steps/0/helm/repo",
    );
  });

  test("helm private sources: auth needs username and password", () => {
    invalid(
      spec("name: a\nhelm: {chart: oci://r.example/c/app, auth: {username: AWS}}"),
      'helm auth is missing required field "password"',
      "/steps/0/helm/auth",
    );
    invalid(
      spec("name: a\nhelm: {chart: oci://r.example/c/app, auth: {username: AWS, password: x, token: y}}"),
      'unknown field "token" in helm auth; allowed: username, password',
    );
  });

  test("helm private sources: userinfo in repo and auth are never both", () => {
    valid(spec("name: a\nhelm: {chart: app, repo: 'https://u:p@charts.example'}"));
    invalid(
      spec("name: a\nhelm: {chart: app, repo: 'https://u:p@charts.example', auth: {username: u, password: p}}"),
      /^credentials come either as userinfo in the URL or as an auth: block/,
      "/steps/0/helm/auth",
    );
    invalid(
      spec("name: a\nhelm: {chart: 'oci://u:p@r.example/charts/app', auth: {username: u, password: p}}"),
      /^credentials come either as userinfo in the URL or as an auth: block/,
      "/steps/0/helm/auth",
    );
  });

  test("helm: release is a Helm release name", () => {
    invalid(
      spec("name: a\nhelm: {chart: ./c, release: My_Release}"),
      /^"My_Release" is not a valid Helm release name/,
      "/steps/0/helm/release",
    );
  });

  test("helm valuesFrom: each entry is exactly one of file or url", () => {
    invalid(
      spec("name: a\nhelm: {chart: ./c, valuesFrom: [{file: ./a.yaml, url: 'https://x.example/v.yaml'}]}"),
      "valuesFrom entry must have exactly one source (file, url); found 2: file, url",
      "/steps/0/helm/valuesFrom/0",
    );
    invalid(
      spec("name: a\nhelm: {chart: ./c, valuesFrom: [{}]}"),
      "valuesFrom entry must have exactly one source (file, url); found none",
    );
    invalid(
      spec("name: a\nhelm: {chart: ./c, valuesFrom: [{path: ./a.yaml}]}"),
      'unknown field "path" in valuesFrom entry; allowed: file, url',
    );
  });

  test("helm valuesFrom: file is local and url is HTTP(S)", () => {
    invalid(
      spec("name: a\nhelm: {chart: ./c, valuesFrom: [{file: 'https://x.example/v.yaml'}]}"),
      'valuesFrom[0].file: "https://x.example/v.yaml" is a URL, not a local path; use url: for remote sources',
    );
    invalid(
      spec("name: a\nhelm: {chart: ./c, valuesFrom: [{url: 'ftp://x.example/v.yaml'}]}"),
      'valuesFrom[0].url: "ftp://x.example/v.yaml" is not an http:// or https:// URL',
    );
  });
});

// --- apply --------------------------------------------------------------------

describe("apply", () => {
  test("apply: every field and all four sources", () => {
    valid(
      spec(`
        name: a
        apply:
          namespace: argocd
          createNamespace: true
          skipIf: exists
          serverSide: true
          waitFor: condition=Established
          manifests:
            - inline: |
                apiVersion: v1
                kind: Namespace
                metadata: {name: x}
            - file: ./manifests/extra.yaml
            - url: https://example.com/manifest.yaml
            - kustomize: ./overlays/prod
      `),
    );
  });

  test("apply: manifests is required and non-empty", () => {
    invalid(
      spec("name: a\napply: {namespace: x}"),
      'apply step is missing required field "manifests"',
      "/steps/0/apply",
    );
    invalid(
      spec("name: a\napply: {manifests: []}"),
      "apply.manifests must list at least one source (inline, file, url or kustomize)",
      "/steps/0/apply/manifests",
    );
  });

  test("manifest sources: each entry has exactly one of inline, file, url, kustomize", () => {
    const ds = invalid(
      spec("name: a\napply: {manifests: [{file: ./a.yaml, url: 'https://x.example/a.yaml'}]}"),
      "manifest entry must have exactly one source (inline, file, url, kustomize); found 2: file, url",
      "/steps/0/apply/manifests/0",
    );
    assert.equal(ds.length, 1, show(ds));
    invalid(
      spec("name: a\napply: {manifests: [{}]}"),
      "manifest entry must have exactly one source (inline, file, url, kustomize); found none",
    );
    invalid(
      spec("name: a\napply: {manifests: [{fiel: ./a.yaml}]}"),
      'unknown field "fiel" in manifest entry (did you mean "file"?)',
    );
  });

  test("manifest sources: kustomize is local only", () => {
    valid(spec("name: a\napply: {manifests: [{kustomize: ../base}, {kustomize: /abs/dir}]}"));
    invalid(
      spec("name: a\napply: {manifests: [{kustomize: 'github.com/org/repo//deploy?ref=v1'}]}"),
      'kustomize: "github.com/org/repo//deploy?ref=v1" is not a local path; kustomize sources must start with ./, ../ or / (remote bases are not supported)',
      "/steps/0/apply/manifests/0/kustomize",
    );
  });

  test("manifest sources: inline is a YAML string", () => {
    invalid(
      spec("name: a\napply: {manifests: [{inline: {apiVersion: v1}}]}"),
      "manifests[0].inline must be a string; found a mapping",
    );
  });

  test("apply: waitFor is wait.for's grammar minus delete", () => {
    valid(spec("name: a\napply: {waitFor: 'jsonpath={.status.phase}=Active', manifests: [{file: ./a.yaml}]}"));
    invalid(
      spec("name: a\napply: {waitFor: delete, manifests: [{file: ./a.yaml}]}"),
      /^apply\.waitFor: "delete" is not a wait condition; use condition=<Name>\[=<value>\] or jsonpath=<expr>\[=<value>\]/,
    );
    invalid(
      spec("name: a\napply: {waitFor: Ready, manifests: [{file: ./a.yaml}]}"),
      /is not a wait condition/,
      "/steps/0/apply/waitFor",
    );
  });

  test("apply: booleans are booleans", () => {
    invalid(
      spec("name: a\napply: {serverSide: 'yes', manifests: [{file: ./a.yaml}]}"),
      'apply.serverSide must be true or false; found string "yes" (write true or false without quotes)',
    );
  });
});

// --- delete ---------------------------------------------------------------------

describe("delete: three mutually exclusive forms", () => {
  test("delete by manifests: with namespace and ignoreNotFound", () => {
    valid(
      spec("name: a\ndelete: {manifests: [{file: ./old.yaml}, {kustomize: ./k}], namespace: x, ignoreNotFound: false}"),
    );
  });
  test("delete by resource: with namespace, selectors and ignoreNotFound", () => {
    valid(
      spec(
        "name: a\ndelete: {resource: pods, namespace: x, selector: app=web, fieldSelector: status.phase=Failed, ignoreNotFound: true}",
      ),
    );
    valid(spec("name: a\ndelete: {resource: pods, allNamespaces: true, selector: app=web}"));
  });
  test("delete by release: with namespace", () =>
    valid(spec("name: a\ndelete: {release: nginx-ingress, namespace: ingress, ignoreNotFound: false}")));

  test("delete: no form is an error naming the forms", () => {
    const ds = invalid(
      spec("name: a\ndelete: {namespace: x}"),
      "delete step must use exactly one of its forms (manifests, resource, release); found none",
      "/steps/0/delete",
    );
    assert.equal(ds.length, 1, show(ds));
  });

  test("delete: two forms is an error listing them", () => {
    const ds = invalid(
      spec("name: a\ndelete: {resource: pods, release: x}"),
      "delete step must use exactly one of its forms (manifests, resource, release); found 2: resource, release",
      "/steps/0/delete",
    );
    assert.equal(ds.length, 1, show(ds));
  });

  test("delete: per-form fields (selectors are for delete by resource)", () => {
    const ds = invalid(
      spec("name: a\ndelete: {release: x, allNamespaces: true}"),
      'unknown field "allNamespaces" in delete step (by release): allNamespaces only applies to delete by resource',
      "/steps/0/delete/allNamespaces",
    );
    assert.equal(ds.length, 1, show(ds));
    invalid(
      spec("name: a\ndelete: {manifests: [{file: ./a.yaml}], selector: app=x}"),
      'unknown field "selector" in delete step (by manifests): selector only applies to delete by resource',
    );
  });

  test("delete by resource: namespace and allNamespaces: true are mutually exclusive", () => {
    valid(spec("name: a\ndelete: {resource: pods, namespace: x, allNamespaces: false}"));
    invalid(
      spec("name: a\ndelete: {resource: pods, namespace: x, allNamespaces: true}"),
      "namespace and allNamespaces: true are mutually exclusive",
      "/steps/0/delete/namespace",
    );
  });

  test("delete by resource: resource is a type or kind/name", () => {
    invalid(
      spec("name: a\ndelete: {resource: 'daemonset/aws-node/x'}"),
      'delete.resource: "daemonset/aws-node/x" is not a resource type (pods) or kind/name (daemonset/aws-node)',
    );
  });

  test("delete: the same error from several forms is reported once", () => {
    const ds = check(spec("name: a\ndelete: {namespace: Bad_NS}"));
    assert.equal(ds.filter((d) => d.path === "/steps/0/delete/namespace").length, 1, show(ds));
  });
});

// --- patch ----------------------------------------------------------------------

describe("patch", () => {
  test("patch: strategic by default, body a mapping", () =>
    valid(
      spec(
        "name: a\npatch: {target: daemonset/aws-node, namespace: kube-system, patch: {spec: {template: {spec: {nodeSelector: {x: 'true'}}}}}}",
      ),
    ));
  test("patch: merge with a mapping", () =>
    valid(
      spec("name: a\npatch: {target: storageclass/gp3, type: merge, patch: {metadata: {annotations: {a: 'true'}}}}"),
    ));
  test("patch: json with a list of operations", () => {
    valid(
      spec(
        "name: a\npatch: {target: deployment/x, type: json, patch: [{op: remove, path: /spec/x}, {op: add, path: /a, value: 1}, {op: move, from: /a, path: /b}]}",
      ),
    );
  });

  test("patch: target and patch are required", () => {
    const ds = check(spec("name: a\npatch: {type: merge}"));
    assert.deepEqual(ds.map((d) => d.message).sort(), [
      'patch step is missing required field "patch"',
      'patch step is missing required field "target"',
    ]);
  });

  test("patch: target is kind/name", () => {
    invalid(
      spec("name: a\npatch: {target: pods, patch: {a: 1}}"),
      'patch.target: "pods" is not kind/name, e.g. daemonset/aws-node',
      "/steps/0/patch/target",
    );
  });

  test("patch: type is strategic, merge or json", () => {
    invalid(
      spec("name: a\npatch: {target: a/b, type: jsonpatch, patch: []}"),
      'patch.type must be one of "strategic", "merge", "json"; found string "jsonpatch"',
    );
  });

  test("patch body: a list needs type json", () => {
    const ds = invalid(
      spec("name: a\npatch: {target: a/b, patch: [{op: remove, path: /x}]}"),
      "a strategic or merge patch body is a mapping; a list of operations needs type: json",
      "/steps/0/patch/patch",
    );
    assert.equal(ds.length, 1, show(ds));
  });

  test("patch body: type json needs a list", () => {
    invalid(
      spec("name: a\npatch: {target: a/b, type: json, patch: {a: 1}}"),
      "type: json needs a list of operations (op/path/value) as the patch body, not a mapping",
      "/steps/0/patch/patch",
    );
  });

  test("patch body: a mapping or a list, nothing else", () => {
    const ds = invalid(
      spec("name: a\npatch: {target: a/b, patch: 'spec: {}'}"),
      'patch.patch must be a mapping or a list; found string "spec: {}"',
      "/steps/0/patch/patch",
    );
    assert.equal(ds.length, 1, show(ds));
  });

  test("patch body: json operations", () => {
    invalid(
      spec("name: a\npatch: {target: a/b, type: json, patch: [{op: delete, path: /x}]}"),
      'patch[0].op must be one of "add", "remove", "replace", "move", "copy", "test"; found string "delete"',
    );
    invalid(
      spec("name: a\npatch: {target: a/b, type: json, patch: [{op: remove}]}"),
      'json patch operation is missing required field "path"',
      "/steps/0/patch/patch/0",
    );
    invalid(
      spec("name: a\npatch: {target: a/b, type: json, patch: [{op: add, path: /x}]}"),
      "add, replace and test operations need a value:",
    );
    invalid(
      spec("name: a\npatch: {target: a/b, type: json, patch: [{op: copy, path: /x}]}"),
      "move and copy operations need from:",
    );
    invalid(
      spec("name: a\npatch: {target: a/b, type: json, patch: [{op: add, path: /x, value: 1, vaule: 2}]}"),
      'unknown field "vaule" in json patch operation (did you mean "value"?)',
    );
  });
});

// --- wait -------------------------------------------------------------------------

describe("wait", () => {
  test("wait: every field", () =>
    valid(
      spec(
        "name: a\nwait: {for: 'jsonpath={.status.readyReplicas}=2', on: deployment/coredns, namespace: kube-system, selector: a=b, fieldSelector: x=y}",
      ),
    ));
  test("wait: for and on are required", () => {
    invalid(spec("name: a\nwait: {on: pods}"), 'wait step is missing required field "for"');
    invalid(spec("name: a\nwait: {for: delete}"), 'wait step is missing required field "on"');
  });
  test("wait.for: condition=, jsonpath= or delete", () => {
    valid(spec("name: a\nwait: {for: condition=Ready=False, on: pods}"));
    valid(spec("name: a\nwait: {for: 'jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=True', on: pods}"));
    invalid(
      spec("name: a\nwait: {for: ready, on: pods}"),
      'wait.for: "ready" is not a wait condition; use condition=<Name>[=<value>], jsonpath=<expr>[=<value>] or delete',
      "/steps/0/wait/for",
    );
  });
  test("wait: namespace and allNamespaces: true are mutually exclusive", () => {
    invalid(
      spec("name: a\nwait: {for: delete, on: pods, namespace: x, allNamespaces: true}"),
      "namespace and allNamespaces: true are mutually exclusive",
      "/steps/0/wait/namespace",
    );
  });
  test("wait: no separate timeout (the step timeout bounds it)", () => {
    invalid(
      spec("name: a\nwait: {for: delete, on: pods, timeout: 5m}"),
      /^unknown field "timeout" in wait step; allowed: /,
      "/steps/0/wait/timeout",
    );
  });
});

// --- rollout ----------------------------------------------------------------------

describe("rollout", () => {
  test("rollout: restart or status with a namespace", () => {
    valid(spec("name: a\nrollout: {restart: daemonset/eks-pod-identity-agent, namespace: kube-system}"));
    valid(spec("name: a\nrollout: {status: statefulset/db, namespace: data}"));
  });
  test("rollout: exactly one of restart and status", () => {
    invalid(
      spec("name: a\nrollout: {namespace: x}"),
      "rollout step must have exactly one of restart, status; found none",
      "/steps/0/rollout",
    );
    invalid(
      spec("name: a\nrollout: {restart: deployment/a, status: deployment/a, namespace: x}"),
      "rollout step must have exactly one of restart, status; found 2: restart, status",
    );
  });
  test("rollout: namespace is required", () => {
    invalid(spec("name: a\nrollout: {restart: deployment/a}"), 'rollout step is missing required field "namespace"');
  });
  test("rollout: targets are deployments, daemonsets or statefulsets", () => {
    invalid(
      spec("name: a\nrollout: {restart: pod/a, namespace: x}"),
      'rollout.restart: "pod/a" is not a rollout target; use deployment/<name>, daemonset/<name> or statefulset/<name>',
    );
  });
});

// --- job ----------------------------------------------------------------------------

describe("job", () => {
  test("job: every field", () => {
    valid(
      spec(`
        name: whoami
        job:
          image: public.ecr.aws/aws-cli/aws-cli:2.17.0
          command: ["sh", "-c"]
          args: ["aws sts get-caller-identity"]
          env: {AWS_REGION: us-east-1, my.var: x}
          namespace: kube-system
          createNamespace: false
          serviceAccount: bootstrap-admin
          skipIf: succeeded
      `),
    );
  });
  test("job: image is required", () => {
    invalid(spec("name: a\njob: {command: [sh]}"), 'job step is missing required field "image"');
  });
  test("job: command and args are lists of strings", () => {
    invalid(spec("name: a\njob: {image: x, command: 'sh -c'}"), 'job.command must be a list; found string "sh -c"');
    invalid(
      spec("name: a\njob: {image: x, args: [1]}"),
      "job.args[0] must be a string; found number 1 (quote it in YAML; unquoted, it is read as a number)",
    );
  });
  test("job: env values are strings", () => {
    invalid(
      spec("name: a\njob: {image: x, env: {PORT: 8080}}"),
      "env.PORT must be a string; found number 8080 (quote it in YAML; unquoted, it is read as a number)",
      "/steps/0/job/env/PORT",
    );
  });
  test("job: env names are environment variable names", () => {
    invalid(
      spec("name: a\njob: {image: x, env: {'1BAD': x}}"),
      /^"1BAD" is not a valid environment variable name/,
      "/steps/0/job/env/1BAD",
    );
  });
  test("job: serviceAccount is an RFC 1123 subdomain", () => {
    invalid(spec("name: a\njob: {image: x, serviceAccount: Admin}"), /^"Admin" is not a valid ServiceAccount name/);
  });
});

// --- translation properties ----------------------------------------------------------

describe("diagnostics", () => {
  test("diagnostics: ordered by source position, with path, position and rule", () => {
    const text = spec(
      "name: a\ntimeout: soon\nwait: {for: delete, on: pods}",
      "name: B\nhelm: {chart: x, repo: 'ftp://x'}",
      "name: c\njob: {image: x, skipIf: exists}",
    ).replace("kind: Khook", "kind: Other");
    const ds = check(text);
    assert.ok(ds.length >= 5, show(ds));
    for (const d of ds) {
      assert.ok(d.position, `${d.path} has a position`);
      assert.equal(d.rule, "schema");
    }
    for (let i = 1; i < ds.length; i++) {
      const a = ds[i - 1]!.position!;
      const b = ds[i]!.position!;
      assert.ok(a.line < b.line || (a.line === b.line && a.column <= b.column), `sorted: ${show(ds)}`);
    }
    assert.equal(ds[0]!.path, "/kind");
    const skip = ds.find((d) => d.path === "/steps/2/job/skipIf")!;
    assert.deepEqual(skip.position, {
      line: text.split("\n").findIndex((l) => l.includes("skipIf")) + 1,
      column:
        text
          .split("\n")
          .find((l) => l.includes("skipIf"))!
          .indexOf("skipIf") + 1,
    });
  });

  test("diagnostics: no duplicates", () => {
    const ds = check(spec("name: a\ndelete: {namespace: Bad_NS, ignoreNotFound: maybe}"));
    const keys = ds.map((d) => `${d.path} ${d.message}`);
    assert.equal(new Set(keys).size, keys.length, show(ds));
  });

  test("diagnostics: a valid document has none", () =>
    valid(spec(helmOk, "name: b\nneeds: [cilium]\nwait: {for: condition=Ready, on: pods, namespace: kube-system}")));
});

describe("non-mapping action blocks", () => {
  for (const type of ["helm", "apply", "delete", "patch", "wait", "rollout", "job"]) {
    test(`action key: a ${type} block that is not a mapping gets one type error`, () => {
      const ds = check(spec(`name: a\n${type}: some-string`));
      assert.deepEqual(show(ds), `/steps/0/${type}: ${type} must be a mapping; found string "some-string"`);
    });
  }

  test("state: a boolean is not a state block", () => {
    invalid(
      spec(helmOk).replace("steps:\n", "state: true\nsteps:\n"),
      "state must be a mapping; found boolean true (write state: {} to turn the state record on, or leave it out)",
      "/state",
    );
  });
});

describe("translation robustness (property-based)", () => {
  const RAW_AJV =
    /must match|must NOT|must have required property|must be equal to|oneOf|anyOf|"then" schema|must be object|must be string/;

  const checkAll = (doc: unknown): void => {
    checkOne(validateSchema(doc, () => undefined));
    checkOne(validateSchema(doc, () => undefined, { semanticRules: true }));
  };
  const checkOne = (ds: Diagnostic[]): void => {
    for (const d of ds) {
      assert.equal(d.rule, "schema");
      assert.ok(d.path === "" || d.path.startsWith("/"), d.path);
      assert.ok(d.message.length > 0);
      assert.doesNotMatch(d.message, RAW_AJV, `raw ajv wording leaked: ${d.message}`);
    }
    const keys = ds.map((d) => `${d.path} ${d.message}`);
    assert.equal(new Set(keys).size, keys.length, "no duplicates");
  };

  test("any JSON value yields readable, deduplicated diagnostics", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => checkAll(v)),
      { numRuns: 300 },
    );
  });

  test("a valid step with one field replaced by any value yields readable diagnostics", () => {
    const base = parse(
      spec(
        helmOk,
        "name: b\ndelete: {resource: pods, namespace: x}",
        "name: c\npatch: {target: a/b, patch: {x: 1}}",
        "name: d\nrollout: {status: deployment/x, namespace: y}",
        "name: e\njob: {image: x, env: {A: b}}",
      ),
    ).doc as {
      steps: Record<string, Record<string, unknown>>[];
    };
    const stepFields = [
      "name",
      "needs",
      "when",
      "timeout",
      "helm",
      "apply",
      "delete",
      "patch",
      "wait",
      "rollout",
      "job",
      "extra",
    ];
    fc.assert(
      fc.property(
        fc.nat(4),
        fc.constantFrom(...stepFields),
        fc.jsonValue(),
        fc.boolean(),
        (i, field, value, intoAction) => {
          const doc = structuredClone(base);
          const step = doc.steps[i]!;
          const action = Object.keys(step).find((k) => k !== "name")!;
          if (intoAction && typeof step[action] === "object") (step[action] as Record<string, unknown>)[field] = value;
          else (step as Record<string, unknown>)[field] = value;
          checkAll(doc);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("division of labour with the loader's semantic rules", () => {
  // Each sample breaks exactly one rule tagged x-khook-rule in the schema.
  const samples: [rule: string, text: string, message: RegExp][] = [
    ["chart-source", spec("name: a\nhelm: {chart: cilium}"), /^a bare chart name needs repo:/],
    [
      "chart-source",
      spec("name: a\nhelm: {chart: ./c, repo: https://x.example}"),
      /^repo: is only for bare chart names/,
    ],
    ["chart-source", spec("name: a\nhelm: {chart: ./c, version: '1'}"), /^a local chart path takes neither/],
    [
      "chart-source",
      spec("name: a\nhelm: {chart: 'c:1', version: '1', repo: https://x.example}"),
      /^the chart already carries its version inline/,
    ],
    [
      "chart-auth",
      spec("name: a\nhelm: {chart: c, repo: 'https://u:p@x.example', auth: {username: u, password: p}}"),
      /^credentials come either/,
    ],
    ["wait-for-grammar", spec("name: a\nwait: {for: ready, on: pods}"), /is not a wait condition/],
    [
      "apply-wait-for-grammar",
      spec("name: a\napply: {waitFor: delete, manifests: [{file: ./a.yaml}]}"),
      /is not a wait condition/,
    ],
    ["rollout-kind", spec("name: a\nrollout: {restart: pod/x, namespace: n}"), /is not a rollout target/],
    [
      "namespace-or-all",
      spec("name: a\nwait: {for: delete, on: pods, namespace: n, allNamespaces: true}"),
      /mutually exclusive/,
    ],
    [
      "namespace-or-all",
      spec("name: a\ndelete: {resource: pods, namespace: n, allNamespaces: true}"),
      /mutually exclusive/,
    ],
    ["resource-reference", spec("name: a\npatch: {target: pods, patch: {a: 1}}"), /is not kind\/name/],
    ["resource-reference", spec("name: a\nwait: {for: delete, on: 'a/b/c'}"), /is not a resource type/],
    [
      "patch-body-shape",
      spec("name: a\npatch: {target: a/b, patch: [{op: remove, path: /x}]}"),
      /a list of operations needs type: json/,
    ],
    ["patch-body-shape", spec("name: a\npatch: {target: a/b, type: json, patch: {a: 1}}"), /type: json needs a list/],
    [
      "source-url",
      spec("name: a\napply: {manifests: [{url: 'ftp://x.example/a.yaml'}]}"),
      /is not an http:\/\/ or https:\/\/ URL/,
    ],
    ["local-path", spec("name: a\napply: {manifests: [{kustomize: overlays/prod}]}"), /is not a local path/],
    [
      "hook-function-exec",
      spec("name: a\napply: {manifests: [{file: ./a.yaml}]}").replace(
        "steps:",
        "hooks:\n  - {name: h, on: [post-render], function: {image: 'gcr.io/x/y:1'}}\nsteps:",
      ),
      /./,
    ],
    [
      "patch-json-pointer",
      spec("name: a\npatch: {target: a/b, type: json, patch: [{op: replace, path: spec/replicas, value: 1}]}"),
      /A JSON pointer starts with \//,
    ],
  ];
  for (const [rule, text, message] of samples) {
    test(`${rule}: reported by the schema only on request; by default left to the loader (${message.source})`, () => {
      invalid(text, message);
      assert.deepEqual(checkDefault(text), [], "deferred to the loader by default");
    });
  }

  test("tagged rules carry the loader's rule ids", () => {
    const ids = new Set<string>();
    const walk = (n: unknown): void => {
      if (Array.isArray(n)) return n.forEach(walk);
      if (typeof n !== "object" || n === null) return;
      const rule = (n as Record<string, unknown>)["x-khook-rule"];
      if (typeof rule === "string") ids.add(rule);
      Object.values(n).forEach(walk);
    };
    walk(loadSchema());
    assert.deepEqual([...ids].sort(), [...new Set(samples.map(([r]) => r))].sort());
  });

  test("structural problems are always reported", () => {
    assert.equal(checkDefault(spec("name: a\nhelm: {chart: ./c, chrat: x}")).length, 1);
    assert.equal(checkDefault(spec("name: a\nrollout: {namespace: n}")).length, 1);
    assert.equal(checkDefault(spec("name: a\njob: {image: x, skipIf: exists}")).length, 1);
  });
});
