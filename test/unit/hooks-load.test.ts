/** The hooks: block at load: schema, rules (named after each rule), ordering and input hashes. */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { KhookError, type Diagnostic } from "../../provider/errors.js";
import { planOffline } from "../../provider/engine/plan.js";
import { keyedSpec, newHashKey, UNKEYED_HASH } from "../../provider/dsl/keyed-hash.js";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { repoRoot, specText, tempSpecDir } from "./support/spec-files.js";

const FUNCTIONS = path.join(repoRoot(), "examples", "functions");

const STEPS = [
  "  - name: web",
  "    apply:",
  "      manifests:",
  "        - inline: |",
  "            apiVersion: v1",
  "            kind: ConfigMap",
  "            metadata: {name: web}",
  "  - name: chart",
  "    helm: {chart: ./chart}",
  "  - name: gone",
  "    delete: {resource: configmap/old}",
  "  - name: settle",
  "    wait: {for: delete, on: pods}",
  "",
].join("\n");

function files(extra: Record<string, string> = {}): Record<string, string> {
  return { "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n", ...extra };
}

function load(
  hooksYaml: string,
  extraFiles: Record<string, string> = {},
  steps = STEPS,
  prelude = "",
): { spec?: LoadedSpec; problems: Diagnostic[]; dir: string } {
  const dir = tempSpecDir({
    "spec.yaml": specText(steps, prelude + (hooksYaml === "" ? "" : `hooks:\n${hooksYaml}`)),
    ...files(extraFiles),
  });
  for (const f of ["add-labels", "require-limits"]) {
    fs.mkdirSync(path.join(dir, "fn"), { recursive: true });
    fs.copyFileSync(path.join(FUNCTIONS, f), path.join(dir, "fn", f));
    fs.chmodSync(path.join(dir, "fn", f), 0o755);
  }
  try {
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
    return { spec, problems: [...spec.warnings], dir };
  } catch (e) {
    assert.ok(e instanceof KhookError, String(e));
    assert.equal(e.exitCode, 2, "invalid hooks exit 2");
    return { problems: [...e.diagnostics], dir };
  }
}

function expectRule(ds: Diagnostic[], rule: string, message?: RegExp, at?: string): Diagnostic {
  const d = ds.find((x) => x.rule === rule && (at === undefined || x.path === at));
  assert.ok(
    d,
    `expected a ${rule} problem${at ? ` at ${at}` : ""}, got: ${JSON.stringify(ds.map((x) => [x.rule, x.path, x.message]))}`,
  );
  if (message) assert.match(d.message, message);
  assert.ok(d.position && d.position.line > 0, "every problem carries a line");
  return d;
}

const LABELS =
  "  - name: labels\n    on: [post-render]\n    function: {exec: ./fn/add-labels, config: {data: {team: a}}}\n";

describe("hooks at load", () => {
  test("a spec without hooks: loads as before, with no hooks and the hashes it always had", () => {
    const without = load("");
    assert.ok(without.spec);
    assert.deepEqual(without.spec.hooks, []);
    assert.ok(without.spec.steps.every((s) => s.hooks.length === 0));
    // A hook matching only `web` leaves every other step's hash alone.
    const withHook = load(LABELS.replace("function:", "match: {steps: [web]}\n    function:"));
    assert.ok(withHook.spec);
    for (const name of ["chart", "gone", "settle"])
      assert.equal(withHook.spec.stepsByName.get(name)!.inputHash, without.spec.stepsByName.get(name)!.inputHash, name);
    assert.notEqual(withHook.spec.stepsByName.get("web")!.inputHash, without.spec.stepsByName.get("web")!.inputHash);
  });

  test("match default: every step the hook's events happen on (post-render: apply, helm, delete by manifests)", () => {
    const { spec } = load(LABELS);
    assert.ok(spec);
    assert.deepEqual(spec.hooks[0]!.steps, ["web", "chart"]);
  });

  test("inputs: the hook definition and the exec file's content are inputs of exactly the matched steps", () => {
    const a = load(LABELS);
    const b = load(LABELS.replace("team: a", "team: b"));
    assert.ok(a.spec && b.spec);
    // The same spec, with the function's content edited.
    fs.writeFileSync(path.join(a.dir, "fn", "add-labels"), "#!/bin/sh\ncat\n");
    const c2 = loadSpec({ file: path.join(a.dir, "spec.yaml"), env: {} });
    for (const name of ["web", "chart"]) {
      assert.notEqual(
        a.spec.stepsByName.get(name)!.inputHash,
        b.spec.stepsByName.get(name)!.inputHash,
        `${name}: config is an input`,
      );
      assert.notEqual(
        a.spec.stepsByName.get(name)!.inputHash,
        c2.stepsByName.get(name)!.inputHash,
        `${name}: exec content is an input`,
      );
    }
    for (const name of ["gone", "settle"])
      assert.equal(
        a.spec.stepsByName.get(name)!.inputHash,
        c2.stepsByName.get(name)!.inputHash,
        `${name} is not matched`,
      );
    // Timeouts are scheduling, not inputs.
    const t = load(LABELS.replace("config:", "timeout: 5s, config:"));
    assert.equal(t.spec!.stepsByName.get("web")!.inputHash, a.spec.stepsByName.get("web")!.inputHash);
  });

  test("hook-hash-scope: post-apply and finalize webhooks cannot change what a step applies, so they are not inputs of its hash", () => {
    const without = load("");
    const observers = load(
      "  - {name: notify, on: [post-apply, finalize], webhook: {url: 'https://hooks.example.com/khook', headers: {Authorization: 'Bearer run-1-token'}}}\n",
    );
    assert.ok(without.spec && observers.spec);
    for (const s of without.spec.steps)
      assert.equal(observers.spec.stepsByName.get(s.name)!.inputHash, s.inputHash, s.name);
  });

  test("hook-hash-scope: a pre-apply webhook is an input by name, URL and order, never by its credentials", () => {
    const hook = (name: string, url: string, token: string): string =>
      `  - {name: ${name}, on: [pre-apply], webhook: {url: '${url}', headers: {Authorization: 'Bearer ${token}', X-Run: '${token}'}}}\n`;
    const base = load(hook("audit", "https://hooks.example.com/khook", "run-1-token"));
    const rotated = load(hook("audit", "https://hooks.example.com/khook", "run-2-token"));
    const renamed = load(hook("audit2", "https://hooks.example.com/khook", "run-1-token"));
    const moved = load(hook("audit", "https://hooks.example.com/other", "run-1-token"));
    const second = "  - {name: second, on: [pre-apply], webhook: {url: 'https://hooks.example.com/second'}}\n";
    const order1 = load(hook("audit", "https://hooks.example.com/khook", "t-1") + second);
    const order2 = load(second + hook("audit", "https://hooks.example.com/khook", "t-1"));
    const web = (r: { spec?: LoadedSpec }): string => r.spec!.stepsByName.get("web")!.inputHash;
    assert.equal(web(rotated), web(base), "a rotated token does not re-run the step");
    assert.notEqual(web(renamed), web(base));
    assert.notEqual(web(moved), web(base));
    assert.notEqual(web(order1), web(order2), "the order webhooks reshape the objects in is an input");
  });

  test("keyed-hash: a hook whose definition holds a secret (function config, webhook URL) has a digest that gives nothing back, and keys the steps it reshapes", () => {
    const hook =
      "  - name: labels\n    on: [post-render]\n    match: {steps: [web]}\n    function:\n      exec: ./fn/add-labels\n      config: {data: {pin: '${PIN}'}}\n";
    const dir = tempSpecDir({ "spec.yaml": specText(STEPS, `hooks:\n${hook}`), ...files() });
    fs.mkdirSync(path.join(dir, "fn"));
    fs.copyFileSync(path.join(FUNCTIONS, "add-labels"), path.join(dir, "fn", "add-labels"));
    fs.chmodSync(path.join(dir, "fn", "add-labels"), 0o755);
    const secret = loadSpec({ file: path.join(dir, "spec.yaml"), env: { KHOOK_SECRET_PIN: "4711" } });
    const guess = loadSpec({ file: path.join(dir, "spec.yaml"), env: {}, set: [["PIN", "4711"]] });
    assert.notEqual(
      secret.hooks[0]!.digest,
      guess.hooks[0]!.digest,
      "the right guess does not reproduce the hook's digest",
    );
    assert.equal(secret.stepsByName.get("web")!.inputHash, UNKEYED_HASH);
    assert.match(guess.stepsByName.get("web")!.inputHash, /^sha256:/);
    const key = newHashKey();
    const rotated = loadSpec({ file: path.join(dir, "spec.yaml"), env: { KHOOK_SECRET_PIN: "4712" } });
    assert.equal(rotated.hooks[0]!.digest, secret.hooks[0]!.digest, "the digest is of the masked definition");
    assert.notEqual(
      keyedSpec(rotated, key).stepsByName.get("web")!.inputHash,
      keyedSpec(secret, key).stepsByName.get("web")!.inputHash,
      "a rotated secret in a hook still re-runs the step",
    );
  });

  test("ordering: priority first (lower runs first), then document order", () => {
    const hooks = [
      "  - {name: third, on: [post-render], priority: 5, function: {exec: ./fn/add-labels}}",
      "  - {name: first, on: [post-render], priority: -1, function: {exec: ./fn/add-labels}}",
      "  - {name: second, on: [post-render], function: {exec: ./fn/add-labels}}",
      "  - {name: fourth, on: [post-render], priority: 5, function: {exec: ./fn/add-labels}}",
      "",
    ].join("\n");
    const { spec } = load(hooks);
    assert.ok(spec);
    assert.deepEqual(
      spec.hooks.map((h) => h.name),
      ["first", "second", "third", "fourth"],
    );
    assert.deepEqual(
      spec.stepsByName.get("web")!.hooks.map((h) => h.name),
      ["first", "second", "third", "fourth"],
    );
  });

  test("plan --offline lists each step's hooks in order, event by event", () => {
    const hooks =
      LABELS + "  - {name: audit, on: [pre-apply, finalize], webhook: {url: 'https://hooks.example.com/khook'}}\n";
    const { spec } = load(hooks);
    assert.ok(spec);
    const plan = planOffline(spec);
    const web = plan.find((p) => p.name === "web")!;
    assert.deepEqual(web.hooks, [
      "post-render labels (function ./fn/add-labels)",
      "pre-apply audit (webhook https://hooks.example.com/khook)",
      "finalize audit (webhook https://hooks.example.com/khook)",
    ]);
    assert.deepEqual(plan.find((p) => p.name === "settle")!.hooks, []);
  });

  test("webhook-reshapes-plan: plan says which steps a pre-apply webhook may reshape, and which hooks may add objects", () => {
    const hooks =
      "  - {name: audit, on: [pre-apply], match: {steps: [web]}, webhook: {url: 'https://hooks.example.com/a'}}\n  - {name: inject, on: [pre-apply], allow: {add: true}, match: {steps: [chart]}, webhook: {url: 'https://hooks.example.com/b'}}\n  - {name: notify, on: [post-apply], match: {steps: [settle]}, webhook: {url: 'https://hooks.example.com/c'}}\n";
    const { spec } = load(hooks, {}, STEPS, "state: {}\n");
    assert.ok(spec);
    const plan = planOffline(spec);
    assert.match(plan.find((p) => p.name === "web")!.reason, /may be reshaped by pre-apply audit$/);
    assert.match(
      plan.find((p) => p.name === "chart")!.reason,
      /may be reshaped by pre-apply inject \(may add objects\)$/,
    );
    assert.doesNotMatch(plan.find((p) => p.name === "settle")!.reason, /reshaped/);
    assert.doesNotMatch(plan.find((p) => p.name === "gone")!.reason, /webhook/);
  });

  test("hook-allow-add-state: a webhook allowed to add objects needs a state record, the only list of what it added that destroy can read", () => {
    const hook = "  - {name: inject, on: [pre-apply], allow: {add: true}, webhook: {url: 'https://x.example'}}\n";
    for (const prelude of ["", "state: {enabled: false}\n"]) {
      const ds = load(hook, {}, STEPS, prelude).problems;
      expectRule(
        ds,
        "hook-allow-add-state",
        /hook "inject" may add objects .* declare state: \(state: \{\} keeps the defaults\)/,
        "/hooks/0/allow/add",
      );
    }
    const declared = load(hook, {}, STEPS, "state: {}\n");
    assert.ok(declared.spec, JSON.stringify(declared.problems));
  });

  test("hook-allow: allow: is for pre-apply webhooks, and its clusterScoped and namespaces need add: true", () => {
    const ds = load(
      "  - {name: a, on: [post-apply], allow: {add: true}, webhook: {url: 'https://x.example'}}\n  - {name: b, on: [pre-apply], allow: {namespaces: [apps]}, webhook: {url: 'https://x.example'}}\n  - {name: c, on: [pre-apply], allow: {add: true, namespaces: [apps]}, webhook: {url: 'https://x.example'}}\n",
      {},
      STEPS,
      "state: {}\n",
    ).problems;
    expectRule(ds, "hook-allow", /does not handle pre-apply/, "/hooks/0/allow");
    expectRule(ds, "hook-allow", /no effect without allow.add: true/, "/hooks/1/allow/namespaces");
    assert.ok(!ds.some((d) => d.path.startsWith("/hooks/2") && d.severity === "error"), JSON.stringify(ds));
  });

  test("schema: an unknown event, and a hook with neither function nor webhook, are reported", () => {
    const { problems } = load(
      "  - {name: a, on: [pre-install], webhook: {url: 'https://x.example'}}\n  - {name: b, on: [post-render]}\n",
    );
    assert.ok(
      problems.some((d) => d.path === "/hooks/0/on/0"),
      JSON.stringify(problems),
    );
    assert.ok(
      problems.some((d) => d.path.startsWith("/hooks/1") && /function|webhook/.test(d.message)),
      JSON.stringify(problems),
    );
  });

  test("hook-name-unique: hook names are unique", () => {
    expectRule(load(LABELS + LABELS).problems, "hook-name-unique", /already used/, "/hooks/1/name");
  });

  test("hook-match-steps: a match naming no step", () => {
    expectRule(
      load("  - {name: a, on: [post-render], match: {steps: [wbe]}, function: {exec: ./fn/add-labels}}\n").problems,
      "hook-match-steps",
      /"wbe"/,
    );
  });

  test("hook-event-type: an event that does not happen on a matched type or step", () => {
    const ds = load(
      [
        "  - {name: a, on: [pre-apply], match: {types: [wait]}, webhook: {url: 'https://x.example'}}",
        "  - {name: b, on: [post-render], match: {steps: [gone]}, function: {exec: ./fn/add-labels}}",
        "",
      ].join("\n"),
    ).problems;
    expectRule(ds, "hook-event-type", /pre-apply does not happen on wait steps/, "/hooks/0/match/types/0");
    expectRule(ds, "hook-event-type", /renders nothing/, "/hooks/1/match/steps/0");
  });

  test("hook-event-handler: post-render takes a function; pre-apply, post-apply and finalize take a webhook", () => {
    const ds = load(
      "  - {name: a, on: [post-render], webhook: {url: 'https://x.example'}}\n  - {name: b, on: [finalize], function: {exec: ./fn/add-labels}}\n",
    ).problems;
    expectRule(ds, "hook-event-handler", /plan never calls webhooks/, "/hooks/0/on/0");
    expectRule(ds, "hook-event-handler", /takes a webhook/, "/hooks/1/on/0");
  });

  test("hook-function-exec: container functions (image:) are rejected with a pointer to exec:", () => {
    expectRule(
      load("  - {name: a, on: [post-render], function: {image: 'gcr.io/kpt-fn/set-labels:v0.2'}}\n").problems,
      "hook-function-exec",
      /container runtime.*exec:.*ROADMAP/,
    );
  });

  test("hook-exec-file: a missing or non-executable exec file", () => {
    const ds = load(
      "  - {name: a, on: [post-render], function: {exec: ./fn/nope}}\n  - {name: b, on: [post-render], function: {exec: ./fn/plain}}\n",
      { "fn/plain": "#!/bin/sh\ncat\n" },
    ).problems;
    expectRule(ds, "hook-exec-file", /does not exist/, "/hooks/0/function/exec");
    expectRule(ds, "hook-exec-file", /not executable.*chmod \+x/, "/hooks/1/function/exec");
  });

  test("hook-webhook-url: https, or plain http only to loopback; no credentials in the URL", () => {
    const ds = load(
      [
        "  - {name: a, on: [pre-apply], webhook: {url: 'http://hooks.example.com/x'}}",
        "  - {name: b, on: [pre-apply], webhook: {url: 'http://127.0.0.1:8080/x'}}",
        "  - {name: c, on: [pre-apply], webhook: {url: 'http://[::1]:8080/x'}}",
        "  - {name: d, on: [pre-apply], webhook: {url: 'https://u:p@hooks.example.com/x'}}",
        "",
      ].join("\n"),
    ).problems;
    expectRule(ds, "hook-webhook-url", /plain http to hooks.example.com/, "/hooks/0/webhook/url");
    assert.ok(!ds.some((d) => d.path.startsWith("/hooks/1") || d.path.startsWith("/hooks/2")), JSON.stringify(ds));
    expectRule(ds, "hook-webhook-url", /credentials/, "/hooks/3/webhook/url");
  });

  test("hook-timeout: a webhook waits at most 60s", () => {
    expectRule(
      load("  - {name: a, on: [pre-apply], webhook: {url: 'https://x.example', timeout: 2m}}\n").problems,
      "hook-timeout",
      /at most|longer than/,
    );
  });

  test("every problem at once, each with its line, exit 2", () => {
    const ds = load(
      [
        "  - {name: a, on: [post-render], function: {image: x}}",
        "  - {name: b, on: [pre-apply], match: {steps: [nope]}, webhook: {url: 'http://example.com'}}",
        "  - {name: c, on: [post-render], function: {exec: ./fn/missing}}",
        "",
      ].join("\n"),
    ).problems.filter((d) => d.severity === "error");
    assert.deepEqual(
      new Set(ds.map((d) => d.rule)),
      new Set(["hook-function-exec", "hook-match-steps", "hook-webhook-url", "hook-exec-file"]),
    );
    assert.ok(ds.every((d) => (d.position?.line ?? 0) > 0));
  });

  test("hook-matches-nothing: a hook whose match selects no step is a warning", () => {
    const { spec } = load(
      "  - {name: a, on: [finalize], match: {types: [job]}, webhook: {url: 'https://x.example'}}\n",
    );
    assert.ok(spec);
    assert.ok(spec.warnings.some((w) => w.rule === "hook-matches-nothing"));
  });

  test("secret headers: credential-looking header values are masked everywhere, a plain header is not", () => {
    const { spec } = load(
      "  - {name: a, on: [pre-apply], webhook: {url: 'https://x.example', headers: {Authorization: 'Bearer s3cr3t-t0ken', X-Team: platform}}}\n",
    );
    assert.ok(spec);
    assert.equal(spec.redactor.redact("Bearer s3cr3t-t0ken"), "***");
    assert.equal(spec.redactor.redact("token s3cr3t-t0ken"), "token ***");
    assert.equal(spec.redactor.redact("platform"), "platform");
  });

  test("hook-header-secret: a header value is secret only from a secret source or under an exact credential header name (Authorization, Proxy-Authorization, Cookie)", () => {
    const headers =
      "{X-Keyspace: default, X-Auth-Mode: basic, X-Api-Key: '${API_KEY}', Cookie: 'session=c00k1e', Proxy-Authorization: 'Basic cHJveHk='}";
    const dir = tempSpecDir({
      "spec.yaml": specText(
        STEPS,
        `hooks:\n  - {name: a, on: [pre-apply], webhook: {url: 'https://x.example', headers: ${headers}}}\n`,
      ),
      ...files(),
    });
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: { KHOOK_SECRET_API_KEY: "k3y-from-secret" } });
    // Names that merely contain key/auth are not credentials: their values stay readable everywhere.
    assert.equal(spec.redactor.redact("keyspace default, mode basic"), "keyspace default, mode basic");
    assert.equal(spec.redactor.redact("k3y-from-secret"), "***");
    assert.equal(spec.redactor.redact("session=c00k1e"), "***");
    assert.equal(spec.redactor.redact("Basic cHJveHk="), "***");
  });

  test("hook-header-name: header names are HTTP tokens", () => {
    const ds = load(
      "  - {name: a, on: [pre-apply], webhook: {url: 'https://x.example', headers: {'X Team': a, 'X-Ok': b, 'Bad:Name': c}}}\n",
    ).problems;
    expectRule(ds, "hook-header-name", /X Team.*not an HTTP header name/, "/hooks/0/webhook/headers/X Team");
    expectRule(ds, "hook-header-name", /Bad:Name/, "/hooks/0/webhook/headers/Bad:Name");
    assert.ok(!ds.some((d) => d.path.endsWith("X-Ok")), JSON.stringify(ds));
  });

  test("hook-header-value: header values carry no CR, LF or other characters HTTP cannot carry", () => {
    const ds = load(
      '  - {name: a, on: [pre-apply], webhook: {url: \'https://x.example\', headers: {X-A: "one\\r\\nX-Injected: two", X-B: "t\\u00e9am", X-C: "nul\\0", X-D: \'fine value\'}}}\n',
    ).problems;
    expectRule(ds, "hook-header-value", /line break/, "/hooks/0/webhook/headers/X-A");
    expectRule(ds, "hook-header-value", /U\+00E9/, "/hooks/0/webhook/headers/X-B");
    expectRule(ds, "hook-header-value", /U\+0000/, "/hooks/0/webhook/headers/X-C");
    assert.ok(!ds.some((d) => d.path.endsWith("X-D")), JSON.stringify(ds));
  });

  test("hook-header-value: a variable's value that breaks a header is reported without showing a secret", () => {
    const dir = tempSpecDir({
      "spec.yaml": specText(
        STEPS,
        "hooks:\n  - name: a\n    on: [pre-apply]\n    webhook:\n      url: https://x.example\n      headers:\n        Authorization: ${T | quote}\n",
      ),
      ...files(),
    });
    assert.throws(
      () => loadSpec({ file: path.join(dir, "spec.yaml"), env: { KHOOK_SECRET_T: "t0ken-line-1\nt0ken-line-2" } }),
      (e: KhookError) =>
        e.exitCode === 2 &&
        e.diagnostics.some((d) => d.rule === "hook-header-value" && (d.position?.line ?? 0) > 0) &&
        !JSON.stringify([e.message, e.diagnostics]).includes("t0ken-line"),
    );
  });

  test("hook-timeout: function and webhook timeouts stay within the timer range", () => {
    const ds = load(
      "  - {name: a, on: [post-render], function: {exec: ./fn/add-labels, timeout: 1000h}}\n  - {name: b, on: [pre-apply], webhook: {url: 'https://x.example', timeout: 1000h}}\n",
    ).problems;
    expectRule(ds, "hook-timeout", /longer than khook can wait/, "/hooks/0/function/timeout");
    expectRule(ds, "hook-timeout", /60s/, "/hooks/1/webhook/timeout");
  });
});
