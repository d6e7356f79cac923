/**
 * The Pulumi dynamic provider's logic, without Pulumi: the serialized loader,
 * check (validation + plan), diff, the file bundle, and the handlers against a
 * fake operations layer.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, mock, test } from "node:test";
import { MASK } from "../../provider/redact.js";
import type { RunEvent, RunResult, StepResult } from "../../provider/engine/run-types.js";
import { RESUME_REASON } from "../../provider/engine/reasons.js";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { SPEC_DEFAULTS } from "../../provider/dsl/defaults.js";
import { bundleDigest, collectBundle, materializeBundle } from "../../provider/pulumi/bundle.js";
import { check } from "../../provider/pulumi/check.js";
import { planLines } from "../../provider/pulumi/plan-lines.js";
import { keyedSpec, newHashKey } from "../../provider/dsl/keyed-hash.js";
import { diff, isDone, targetIdentity } from "../../provider/pulumi/diff.js";
import * as handlers from "../../provider/pulumi/handlers.js";
import { loadFromInputs, pointerToPropertyPath } from "../../provider/pulumi/load.js";
import { normalizeInputs } from "../../provider/pulumi/wire.js";
import { runOutputs } from "../../provider/pulumi/outputs.js";
import { BUNDLE_KEY, UNKNOWN, type KhookInputs, type KhookOutputs } from "../../provider/pulumi/wire.js";
import { KHOOK_VERSION } from "../../provider/version.js";
import type { RecordOwner } from "../../provider/pulumi/record-owner/owner.js";
import type { Session, SessionOptions } from "../../provider/session.js";
import { fakeRecordOperations, fakeSessions, type MovedRecordCalls } from "./support/fake-sessions.js";
import { repoRoot, specText, tempSpecDir } from "./support/spec-files.js";
import { RECORD_LOADED_MODULES } from "./support/module-probe.js";

const CM = (name: string, value = "1"): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "${value}"\n`;

const STEPS = `  - name: ns
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: Namespace
            metadata:
              name: demo
  - name: config
    needs: [ns]
    apply:
      namespace: \${NS:-demo}
      manifests:
        - file: ./manifests/config.yaml
  - name: flags
    needs: [ns]
    when: vars.get("FLAGS", "on") == "on"
    patch:
      target: configmap/app
      namespace: demo
      type: merge
      patch:
        data:
          level: "\${LEVEL:-1}"
`;

/** A project dir with the spec and its files, and the provider inputs the SDK would send for it. */
function project(
  files: Record<string, string> = {},
  sources: { vars?: Record<string, string>; secretVars?: Record<string, string> } = {},
): { dir: string; inputs: KhookInputs } {
  const dir = tempSpecDir({ "boot.khook.yaml": specText(STEPS), "manifests/config.yaml": CM("app"), ...files });
  return { dir, inputs: inputsFor(dir, sources) };
}

function inputsFor(
  dir: string,
  sources: { vars?: Record<string, string>; secretVars?: Record<string, string> } = {},
): KhookInputs {
  const text = fs.readFileSync(path.join(dir, "boot.khook.yaml"), "utf8");
  const b = collectBundle(text, dir, { set: Object.entries(sources.vars ?? {}), secretVars: sources.secretVars ?? {} });
  return {
    resourceName: "boot",
    spec: text,
    specFile: "./boot.khook.yaml",
    [BUNDLE_KEY]: b,
    ...(sources.vars ? { vars: sources.vars } : {}),
    ...(sources.secretVars ? { secretVars: sources.secretVars } : {}),
  };
}

function checked(inputs: KhookInputs): Record<string, unknown> {
  const r = check({}, { ...inputs, __provider: "exports.handler = ..." });
  assert.deepEqual(r.failures, []);
  return r.inputs;
}

function loaded(inputs: KhookInputs): LoadedSpec {
  const l = loadFromInputs(inputs);
  assert.ok(l.ok, l.ok ? "" : l.message);
  return l.spec;
}

function okResult(spec: LoadedSpec, status: (name: string) => Partial<StepResult> = () => ({})): RunResult {
  return {
    mode: "apply",
    status: "succeeded",
    cancelled: false,
    durationMs: 5,
    steps: spec.steps.map((s) => ({
      name: s.name,
      type: s.type,
      status: s.whenHolds ? "ok" : "skipped",
      reason: s.whenHolds ? "applied" : `excluded by when: ${s.when}`,
      attempts: s.whenHolds ? 1 : 0,
      durationMs: 1,
      inputHash: s.inputHash,
      ...status(s.name),
    })),
  };
}

/** A run in which the first included step failed. */
function failedResult(spec: LoadedSpec): RunResult {
  const first = spec.steps.find((s) => s.whenHolds)!.name;
  return {
    ...okResult(spec, (n) => (n === first ? { status: "failed", reason: "failed", error: "denied" } : {})),
    status: "failed",
  };
}

const LOCATION = { namespace: "default", name: "khook-state-test" };

/** The old outputs after a successful apply of `inputs`. */
function appliedOutputs(inputs: KhookInputs): KhookOutputs {
  const spec = loaded(inputs);
  return {
    ...runOutputs(checked(inputs) as unknown as KhookInputs, spec, okResult(spec), LOCATION),
    __provider: "old code",
  } as KhookOutputs;
}

describe("the serialized provider", () => {
  test("is a thin loader: small, requires the engine by package name first, captures no secret", async () => {
    const { KHOOK_PROVIDER_TEXT } = await import("../../sdk/provider.js");
    const sf = { text: KHOOK_PROVIDER_TEXT };
    assert.ok(sf.text.length < 4096, `serialized provider is ${sf.text.length} bytes`);
    assert.doesNotMatch(sf.text, /token|password|BEGIN|kubeconfig:/i);
    for (const method of ["configure", "check", "diff", "create", "update", "delete", "read"])
      assert.match(sf.text, new RegExp(`\\.${method}\\(`), method);
    assert.match(
      sf.text,
      /\[\s*"khook\/provider\/pulumi\/handlers",\s*process\.env\.KHOOK_PULUMI_HANDLERS,\s*fallback\s*\]/,
      "by name first, the escape hatch next, the program-time path last",
    );
    assert.ok(
      sf.text.includes(JSON.stringify(path.resolve(__dirname, "../../provider/pulumi/handlers.js"))),
      "the fallback is where the program loaded khook from",
    );
  });

  test("the serialized loader finds the handlers by name, else by KHOOK_PULUMI_HANDLERS, else where the program loaded khook; and says what to do when none works", async () => {
    const { KHOOK_PROVIDER_TEXT } = await import("../../sdk/provider.js");
    const sf = { text: KHOOK_PROVIDER_TEXT };
    const handlersFile = path.resolve(__dirname, "../../provider/pulumi/handlers.js");
    // Load the serialized text the way the dynamic provider does (require-from-string), from a directory without node_modules.
    const elsewhere = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "khook-no-modules-"));
    const load = (text: string): { check: (o: unknown, n: unknown) => Promise<unknown> } => {
      const requireFromString = require("require-from-string") as (
        code: string,
        filename?: string,
      ) => { handler: () => { check: (o: unknown, n: unknown) => Promise<unknown> } };
      return requireFromString(text, path.join(elsewhere, "provider.js")).handler();
    };
    const probe = async (p: { check: (o: unknown, n: unknown) => Promise<unknown> }): Promise<unknown> =>
      p.check({}, { spec: 3 });
    // The program-time path is the fallback when the name does not resolve.
    assert.ok(await probe(load(sf.text)));
    // With the program-time path gone (the project moved), KHOOK_PULUMI_HANDLERS still finds it...
    const moved = sf.text.split(JSON.stringify(handlersFile).slice(1, -1)).join(path.join(elsewhere, "gone.js"));
    assert.ok(moved.includes("gone.js"));
    process.env.KHOOK_PULUMI_HANDLERS = handlersFile;
    try {
      assert.ok(await probe(load(moved)));
    } finally {
      delete process.env.KHOOK_PULUMI_HANDLERS;
    }
    // ...and without it the error says what to do.
    await assert.rejects(
      probe(load(moved)),
      /cannot find the khook package from .*npm install khook.*KHOOK_PULUMI_HANDLERS/s,
    );
  });

  test("the package name resolves to the handlers, with every method the loader calls", () => {
    const h = require("khook/provider/pulumi/handlers") as Record<string, unknown>;
    for (const method of ["configure", "check", "diff", "create", "update", "delete", "read"])
      assert.equal(typeof h[method], "function", method);
  });
});

describe("check", () => {
  test("returns normalized inputs and a deterministic plan: one line per step with action, when outcome and input hash", () => {
    const { inputs } = project();
    const a = checked(inputs);
    const b = checked(JSON.parse(JSON.stringify(inputs)) as KhookInputs);
    assert.deepEqual(a, b);
    const plan = a.plan as string[];
    assert.equal(plan.length, 3);
    const spec = loaded(inputs);
    spec.steps.forEach((s, i) => {
      assert.ok(
        plan[i]!.startsWith(
          `${s.name}: run ${s.type} [inputs ${s.inputHash.slice(7, 19)}, when included] ${s.summary} - `,
        ),
        plan[i],
      );
    });
    assert.equal("__provider" in a, false, "check leaves __provider to the protocol");
  });

  test("a when: that excludes a step shows as skip with the reason", () => {
    const { inputs } = project({}, { vars: { FLAGS: "off" } });
    const plan = checked(inputs).plan as string[];
    assert.match(plan[2]!, /^flags: skip patch \[inputs [0-9a-f]{12}, when excluded\] .* - excluded by when: /);
  });

  test("editing one step's values changes exactly that step's plan line", () => {
    const { inputs } = project();
    const before = checked(inputs).plan as string[];
    const after = checked({ ...inputs, vars: { LEVEL: "2" } }).plan as string[];
    const changed = before.map((l, i) => (l === after[i] ? undefined : i)).filter((i) => i !== undefined);
    assert.deepEqual(changed, [2]);
  });

  test("editing a referenced file changes exactly that step's plan line", () => {
    const { dir, inputs } = project();
    fs.writeFileSync(path.join(dir, "manifests/config.yaml"), CM("app", "2"));
    const edited = inputsFor(dir);
    assert.notDeepEqual(edited[BUNDLE_KEY]?.files, inputs[BUNDLE_KEY]?.files);
    const before = checked(inputs).plan as string[];
    const after = checked(edited).plan as string[];
    assert.deepEqual(
      before.map((l, i) => (l === after[i] ? undefined : i)).filter((i) => i !== undefined),
      [1],
    );
  });

  test("an invalid spec fails with every problem at once, each with a property path and a located reason", () => {
    const bad = specText(`  - name: a
    apply:
      manifests:
        - file: ./missing.yaml
  - name: a
    wait: { for: sideways, on: pods }
  - name: c
    needs: [nope]
    rollout: { restart: deployment/x, namespace: demo }
`);
    const dir = tempSpecDir({ "boot.khook.yaml": bad });
    const r = check({}, { ...inputsFor(dir), parallelism: 0, timeout: "soon" });
    const props = r.failures.map((f) => f.property);
    assert.ok(r.failures.length >= 5, JSON.stringify(r.failures, null, 2));
    assert.ok(props.includes("parallelism"));
    assert.ok(props.includes("timeout"));
    assert.ok(
      props.some((p) => p.startsWith("spec.steps[0].apply.manifests[0]")),
      props.join(", "),
    );
    assert.ok(
      props.some((p) => p.startsWith("spec.steps[1]")),
      props.join(", "),
    );
    assert.ok(
      props.some((p) => p.startsWith("spec.steps[2].needs")),
      props.join(", "),
    );
    for (const f of r.failures.filter((x) => x.property.startsWith("spec"))) {
      assert.match(f.reason, /^\.\/boot\.khook\.yaml:\d+:\d+: /, f.reason);
      assert.ok(!f.reason.includes("khook-pulumi-"), `no scratch path in: ${f.reason}`);
    }
    assert.equal(r.inputs.plan, undefined);
  });

  test("a missing variable is a located, document-level failure", () => {
    const dir = tempSpecDir({
      "boot.khook.yaml": specText("  - name: w\n    wait: { for: condition=Ready, on: pods, namespace: ${NS} }\n"),
    });
    const r = check({}, inputsFor(dir) as unknown as Record<string, unknown>);
    assert.equal(r.failures.length, 1);
    assert.equal(r.failures[0]!.property, "");
    assert.match(r.failures[0]!.reason, /^\.\/boot\.khook\.yaml:7:\d+: variable NS is not set/);
  });

  test("with inputs not known yet (preview), it validates nothing and leaves the plan unknown", () => {
    const { inputs } = project();
    const r = check({}, { ...inputs, secretVars: UNKNOWN });
    assert.deepEqual(r.failures, []);
    assert.equal(r.inputs.plan, UNKNOWN);
  });

  test("secret values never reach the plan", () => {
    const dir = tempSpecDir({
      "boot.khook.yaml": specText("  - name: w\n    wait: { for: condition=Ready, on: pods, namespace: ${NS} }\n"),
    });
    const plan = checked(inputsFor(dir, { secretVars: { NS: "topsecret-ns" } })).plan as string[];
    assert.ok(!plan.join("\n").includes("topsecret-ns"), plan.join("\n"));
    assert.match(plan[0]!, /\*\*\*/);
  });

  test("property paths follow Pulumi's syntax", () => {
    assert.equal(pointerToPropertyPath("/steps/2/helm/chart"), "spec.steps[2].helm.chart");
    assert.equal(pointerToPropertyPath("/steps/0/apply/manifests/1/file"), "spec.steps[0].apply.manifests[1].file");
    assert.equal(pointerToPropertyPath(""), "");
    assert.equal(pointerToPropertyPath("/metadata/a.b"), 'spec.metadata["a.b"]');
  });
});

describe("diff", () => {
  test("no changes when nothing effective changed; __provider, engineVersion, formatting and scheduling are ignored", () => {
    const { inputs } = project();
    const olds = appliedOutputs(inputs);
    assert.deepEqual(diff(olds as unknown as Record<string, unknown>, checked(inputs)), {
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
      reasons: [],
    });
    const cosmetic = inputs.spec
      .replace("  - name: ns\n", "  # a comment\n  - name: ns\n")
      .replace("needs: [ns]\n    apply", "needs: [ns]\n    timeout: 9m\n    retries: 3\n    apply");
    const news = checked({ ...inputs, spec: cosmetic, parallelism: 2, timeout: "1h", resourceName: "renamed" });
    const oldWithOtherVersion = { ...olds, engineVersion: "0.0.1", __provider: "different code" };
    const d = diff(oldWithOtherVersion as unknown as Record<string, unknown>, { ...news, __provider: "new code" });
    assert.equal(d.changes, false, d.reasons.join("; "));
  });

  test("an edited step, a new step, a removed step, a flipped when: and changed vars are changes; never a replacement", () => {
    const { inputs } = project();
    const olds = appliedOutputs(inputs) as unknown as Record<string, unknown>;
    const cases: [string, KhookInputs, RegExp][] = [
      ["edit", { ...inputs, vars: { LEVEL: "2" } }, /step flags: inputs changed/],
      ["when", { ...inputs, vars: { FLAGS: "off" } }, /step flags: when: now excluded/],
      [
        "new",
        { ...inputs, spec: `${inputs.spec}  - name: extra\n    rollout: { status: deployment/x, namespace: demo }\n` },
        /step extra: new/,
      ],
      [
        "removed",
        { ...inputs, spec: inputs.spec.slice(0, inputs.spec.indexOf("  - name: flags")) },
        /step flags: removed/,
      ],
      ["vars", { ...inputs, vars: { UNUSED: "x" } }, /variables changed/],
    ];
    for (const [what, news, reason] of cases) {
      const d = diff(olds, checked(news));
      assert.equal(d.changes, true, what);
      assert.deepEqual(d.replaces, [], what);
      assert.equal(d.deleteBeforeReplace, false, what);
      assert.ok(
        d.reasons.some((r) => reason.test(r)),
        `${what}: ${d.reasons.join("; ")}`,
      );
    }
  });

  test("keyed-hash-pulumi: a step whose inputs hold a secret is compared under the key the state keeps; an unchanged secret is no change, a rotated one is", () => {
    const dir = tempSpecDir({
      "boot.khook.yaml": specText(
        "  - name: creds\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Secret\n            metadata: {name: creds}\n            stringData: {pin: '${PIN}'}\n",
      ),
    });
    const inputs = inputsFor(dir, { secretVars: { PIN: "4711" } });
    const key = newHashKey();
    const spec = keyedSpec(loaded(inputs), key);
    const olds = {
      ...runOutputs(checked(inputs) as unknown as KhookInputs, spec, okResult(spec), LOCATION),
      hashKey: key,
    } as unknown as Record<string, unknown>;
    assert.match((olds.steps as { inputHash: string }[])[0]!.inputHash, /^hmac-sha256:[0-9a-f]{64}$/);
    const same = diff(olds, checked(inputs));
    assert.equal(same.changes, false, same.reasons.join("; "));
    const rotated = diff(olds, checked(inputsFor(dir, { secretVars: { PIN: "4712" } })));
    assert.deepEqual(rotated.reasons, ["step creds: inputs changed"]);
    // The plan lines (preview) show that the step is keyed, not a digest of it.
    assert.match((checked(inputs).plan as string[])[0]!, /\[inputs keyed,/);
  });

  test("an edited step reports exactly that step", () => {
    const { inputs } = project();
    const d = diff(
      appliedOutputs(inputs) as unknown as Record<string, unknown>,
      checked({ ...inputs, vars: { LEVEL: "3" } }),
    );
    assert.deepEqual(
      d.reasons.filter((r) => r.startsWith("step ")),
      ["step flags: inputs changed"],
    );
  });

  test("steps the last run did not complete are changes; resumed, skipIf-skipped and excluded steps are done", () => {
    const { inputs } = project();
    const spec = loaded(inputs);
    const failedRun = {
      ...okResult(spec, (n) =>
        n === "config"
          ? { status: "failed", reason: "failed", error: "boom" }
          : n === "flags"
            ? { status: "skipped", attempts: 0, reason: 'blocked by failed dependency "config"' }
            : {},
      ),
      status: "failed" as const,
    };
    const olds = runOutputs(checked(inputs) as unknown as KhookInputs, spec, failedRun, LOCATION);
    const d = diff(olds as unknown as Record<string, unknown>, checked(inputs));
    assert.equal(d.changes, true);
    assert.deepEqual(
      d.reasons.map((r) => r.split(":")[0]),
      ["step config", "step flags"],
    );
    const base = {
      name: "x",
      type: "apply",
      transientRetries: 0,
      durationMs: 0,
      inputHash: "h",
      when: "included" as const,
      reason: "",
    };
    assert.equal(isDone({ ...base, status: "skipped", attempts: 0, reason: RESUME_REASON }), true);
    assert.equal(isDone({ ...base, status: "skipped", attempts: 1, reason: "already exists" }), true);
    assert.equal(isDone({ ...base, status: "skipped", attempts: 0, when: "excluded" }), true);
    assert.equal(isDone({ ...base, status: "pending", attempts: 0 }), false);
  });

  test("a moved record and another cluster are changes; a rotated credential is not", () => {
    const { inputs } = project();
    const kc = (server: string, token: string): string =>
      `apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n  cluster: {server: "${server}"}\nusers:\n- name: u\n  user: {token: "${token}"}\n`;
    const withKc = { ...inputs, kubeconfig: kc("https://a:6443", "t1") };
    const olds = appliedOutputs(withKc) as unknown as Record<string, unknown>;
    assert.equal(diff(olds, checked({ ...withKc, kubeconfig: kc("https://a:6443", "t2") })).changes, false);
    assert.equal(diff(olds, checked({ ...withKc, kubeconfig: kc("https://b:6443", "t1") })).changes, true);
    assert.equal(diff(olds, checked({ ...withKc, context: "other" })).changes, true);
    assert.equal(diff({ ...olds, recordNamespace: "kube-system", recordName: "x" }, checked(withKc)).changes, true);
    const off = { ...withKc, spec: withKc.spec.replace("steps:\n", "state:\n  enabled: false\nsteps:\n") };
    assert.match(
      diff(olds, checked(off)).reasons.join("; "),
      /the state record moved: default\/khook-state-test -> \(none\)/,
    );
    assert.notEqual(targetIdentity({ spec: "", kubeconfig: "./a" }), targetIdentity({ spec: "", kubeconfig: "./b" }));
  });

  test("unknown inputs (preview) are a change", () => {
    const { inputs } = project();
    const d = diff(appliedOutputs(inputs) as unknown as Record<string, unknown>, { ...checked(inputs), vars: UNKNOWN });
    assert.equal(d.changes, true);
  });
});

describe("the file bundle", () => {
  test("bundle: entries are named by their path relative to the spec's directory (no machine paths), and load to the same hashes as the files on disk", () => {
    const dir = tempSpecDir({
      "proj/boot.khook.yaml": specText(`  - name: a
    apply:
      manifests:
        - file: ./manifests/a.yaml
        - kustomize: ./kust
  - name: b
    apply:
      manifests:
        - file: ../shared/\${WHICH}.yaml
  - name: c
    helm:
      chart: ./charts/tiny
`),
      "proj/manifests/a.yaml": CM("a"),
      "proj/kust/kustomization.yaml": "resources:\n  - cm.yaml\n  - ../kbase\n",
      "proj/kust/cm.yaml": CM("k"),
      "proj/kbase/kustomization.yaml": "resources:\n  - base.yaml\n",
      "proj/kbase/base.yaml": CM("base"),
      "shared/one.yaml": CM("one"),
      "shared/two.yaml": CM("two"),
      "proj/charts/tiny/Chart.yaml": "apiVersion: v2\nname: tiny\nversion: 0.1.0\n",
      "proj/charts/tiny/templates/cm.yaml": CM("tiny"),
    });
    fs.writeFileSync(path.join(dir, "proj/charts/tiny/blob.bin"), Buffer.from([0, 1, 2, 255]));
    const base = path.join(dir, "proj");
    const text = fs.readFileSync(path.join(base, "boot.khook.yaml"), "utf8");
    const b = collectBundle(text, base, { set: [["WHICH", "one"]] });
    // The spec climbs one level (../shared): its own directory's name is the only name above it kept.
    assert.equal(b.baseDir, "proj");
    assert.deepEqual(Object.keys(b.files).sort(), [
      "../shared/one.yaml",
      "charts/tiny/Chart.yaml",
      "charts/tiny/templates/cm.yaml",
      "kbase/base.yaml",
      "kbase/kustomization.yaml",
      "kust/cm.yaml",
      "kust/kustomization.yaml",
      "manifests/a.yaml",
    ]);
    assert.deepEqual(Object.keys(b.binaryFiles), ["charts/tiny/blob.bin"]);
    const machine = path.basename(dir);
    for (const k of [...Object.keys(b.files), b.baseDir]) assert.ok(!k.startsWith("/") && !k.includes(machine), k);

    const onDisk = loadSpec({ file: path.join(base, "boot.khook.yaml"), set: [["WHICH", "one"]], env: {} });
    const fromBundle = loaded({ spec: text, specFile: "./boot.khook.yaml", [BUNDLE_KEY]: b, vars: { WHICH: "one" } });
    assert.deepEqual(
      fromBundle.steps.map((s) => s.inputHash),
      onDisk.steps.map((s) => s.inputHash),
    );
    const m = materializeBundle(b);
    assert.equal(fs.readFileSync(path.join(m.baseDir, "../shared/one.yaml"), "utf8"), CM("one"));
    assert.deepEqual([...fs.readFileSync(path.join(m.baseDir, "charts/tiny/blob.bin"))], [0, 1, 2, 255]);
  });

  test("hook function files travel with the resource, with their executable bit, and load to the same hashes", () => {
    const dir = tempSpecDir({
      "proj/boot.khook.yaml": specText(
        `  - name: a\n    apply:\n      manifests:\n        - file: ./a.yaml\n`,
        "hooks:\n  - {name: labels, on: [post-render], function: {exec: ./fn/add-labels}}\n",
      ),
      "proj/a.yaml": CM("a"),
      "proj/fn/add-labels": "#!/bin/sh\ncat\n",
    });
    const base = path.join(dir, "proj");
    fs.chmodSync(path.join(base, "fn/add-labels"), 0o755);
    const text = fs.readFileSync(path.join(base, "boot.khook.yaml"), "utf8");
    const b = collectBundle(text, base, {});
    assert.deepEqual(Object.keys(b.files).sort(), ["a.yaml", "fn/add-labels"]);
    assert.equal(b.baseDir, ".", "nothing leaves the spec's directory: no directory name is kept");
    assert.deepEqual(b.executables, ["fn/add-labels"]);
    const m = materializeBundle(b);
    fs.accessSync(path.join(m.baseDir, "fn/add-labels"), fs.constants.X_OK);
    const onDisk = loadSpec({ file: path.join(base, "boot.khook.yaml"), env: {} });
    const fromBundle = loaded({ spec: text, specFile: "./boot.khook.yaml", [BUNDLE_KEY]: b });
    assert.equal(fromBundle.steps[0]!.inputHash, onDisk.steps[0]!.inputHash);
    // The bit is part of the bundle: the same content without it is another bundle.
    assert.notEqual(bundleDigest(b), bundleDigest({ ...b, executables: [] }));
  });

  test("bundle: a directory's own name is kept where a hash covers it or a path walks back down through it, and nowhere else", () => {
    const dir = tempSpecDir({
      "proj/boot.khook.yaml": specText(`  - name: here
    apply:
      manifests:
        - kustomize: ./
  - name: down
    apply:
      manifests:
        - file: ../proj/cm.yaml
`),
      "proj/kustomization.yaml": "resources:\n  - cm.yaml\n",
      "proj/cm.yaml": CM("k"),
    });
    const base = path.join(dir, "proj");
    const text = fs.readFileSync(path.join(base, "boot.khook.yaml"), "utf8");
    const b = collectBundle(text, base, {});
    assert.equal(b.baseDir, "proj");
    assert.ok(!Object.keys(b.files).some((k) => k.includes(path.basename(dir))), JSON.stringify(b));
    const onDisk = loadSpec({ file: path.join(base, "boot.khook.yaml"), env: {} });
    const fromBundle = loaded({ spec: text, specFile: "./boot.khook.yaml", [BUNDLE_KEY]: b });
    assert.deepEqual(
      fromBundle.steps.map((s) => s.inputHash),
      onDisk.steps.map((s) => s.inputHash),
    );
  });

  test("bundle: a stack written by an earlier khook (keys relative to the bundle's top, in files/baseDir) loads to the same bundle layout and hashes", () => {
    const { dir, inputs } = project();
    const b = inputs[BUNDLE_KEY]!;
    const top = path.basename(dir);
    const legacy: Record<string, unknown> = {
      ...inputs,
      baseDir: top,
      files: Object.fromEntries(Object.entries(b.files).map(([k, v]) => [`${top}/${k}`, v])),
      binaryFiles: {},
      executables: [],
    };
    delete legacy[BUNDLE_KEY];
    const normalized = normalizeInputs(legacy);
    assert.deepEqual(normalized.problems, []);
    assert.deepEqual(normalized.inputs[BUNDLE_KEY], { baseDir: top, files: b.files, binaryFiles: {} });
    assert.deepEqual(
      loaded(normalized.inputs).steps.map((s) => s.inputHash),
      loaded(inputs).steps.map((s) => s.inputHash),
    );
    // And diff calls it no change: the first preview after the upgrade shows nothing to do.
    const olds = appliedOutputs(inputs) as unknown as Record<string, unknown>;
    const legacyOlds: Record<string, unknown> = { ...olds, baseDir: legacy.baseDir, files: legacy.files };
    delete legacyOlds[BUNDLE_KEY];
    assert.deepEqual(diff(legacyOlds, checked(inputs)).reasons, []);
  });

  test("an invalid spec still bundles what it can; a spec without files bundles nothing", () => {
    assert.deepEqual(collectBundle("not: [valid", "/tmp", {}), { baseDir: ".", files: {}, binaryFiles: {} });
    const dir = tempSpecDir({ "x.yaml": CM("x") });
    const b = collectBundle(
      specText(
        "  - name: a\n    apply:\n      manifests:\n        - file: ./x.yaml\n        - file: ./missing.yaml\n  - name: b\n    bogus: {}\n",
      ),
      dir,
      {},
    );
    assert.equal(Object.keys(b.files).length, 1);
  });

  test("bundle: an exec function outside the spec's directory tree (through ../ or a symlink) is refused unless the user opts in", () => {
    const dir = tempSpecDir({ "tools/fn": "#!/bin/sh\ncat\n", "proj/a.yaml": CM("a") });
    const base = path.join(dir, "proj");
    fs.symlinkSync(path.join(dir, "tools"), path.join(base, "linked"));
    for (const exec of ["../tools/fn", "./linked/fn"]) {
      const text = specText(
        `  - name: a\n    apply:\n      manifests:\n        - file: ./a.yaml\n`,
        `hooks:\n  - {name: labels, on: [post-render], function: {exec: ${exec}}}\n`,
      );
      assert.throws(
        () => collectBundle(text, base, {}),
        new RegExp(
          `hook function ${exec.replace(/[.]/g, "\\.")} is outside the spec's directory .*allowFunctionsOutsideSpecDir: true`,
        ),
      );
      const allowed = collectBundle(text, base, {}, { allowFunctionsOutsideSpecDir: true });
      assert.ok(
        Object.keys(allowed.files).some((k) => k.endsWith("fn")),
        JSON.stringify(Object.keys(allowed.files)),
      );
    }
  });

  test("bundle: the bundle is capped, with a message naming the largest files", () => {
    const dir = tempSpecDir({
      "big.yaml": `# ${"x".repeat(3000)}\n${CM("big")}`,
      "mid.yaml": `# ${"y".repeat(1500)}\n${CM("mid")}`,
      "small.yaml": CM("small"),
    });
    const text = specText(
      "  - name: a\n    apply:\n      manifests:\n        - file: ./big.yaml\n        - file: ./mid.yaml\n        - file: ./small.yaml\n",
    );
    assert.throws(
      () => collectBundle(text, dir, {}, { maxBytes: 2048 }),
      /the files the spec references total [\d.]+ KiB, over the bundle's limit of 2\.0 KiB .*largest: big\.yaml \([\d.]+ KiB\), mid\.yaml .*maxBundleBytes/,
    );
    assert.equal(Object.keys(collectBundle(text, dir, {}).files).length, 3, "the default limit holds ordinary specs");
  });

  test("refuses a bundle that escapes its root", () => {
    assert.throws(
      () => materializeBundle({ baseDir: ".", files: { "../../etc/x": "no" }, binaryFiles: {} }),
      /outside its root/,
    );
    assert.throws(
      () => materializeBundle({ baseDir: "proj", files: { "../../x": "no" }, binaryFiles: {} }),
      /outside its root/,
    );
  });
});

describe("handlers (with a fake operations layer)", () => {
  const lines: string[] = [];
  afterEach(() => {
    handlers.setTestHooks();
    lines.length = 0;
  });

  /** What the latest fakeOps layer was asked to do with records an owner left. */
  let moved: MovedRecordCalls = { released: [], dropped: [] };

  function fakeOps(
    run: (spec: LoadedSpec, onEvent?: (e: RunEvent) => void) => RunResult,
    currentOwner: () => RecordOwner | undefined = () => undefined,
    sameInputSteps: () => Set<string> = () => new Set(),
  ) {
    const calls: {
      op: string;
      target: unknown;
      journal: unknown;
      owner?: RecordOwner;
      leave?: string[];
      rerun?: string[];
    }[] = [];
    const sessions = fakeSessions();
    const opened = (o: { session?: Session }): SessionOptions => sessions.optionsOf(o.session!);
    const records = fakeRecordOperations(currentOwner, sameInputSteps);
    const ops: handlers.Operations = {
      openSession: sessions.openSession,
      ...records,
      applyOperation: async (spec, o) => {
        calls.push({
          op: "apply",
          target: opened(o).target,
          journal: opened(o).journal,
          ...(o.owner ? { owner: o.owner } : {}),
          ...(o.rerun ? { rerun: [...o.rerun] } : {}),
        });
        const r = run(spec, o.onEvent);
        for (const s of r.steps) o.onEvent?.({ type: "step-finished", result: s });
        o.onEvent?.({ type: "run-finished", result: r });
        return r;
      },
      destroyOperation: async (spec, o) => {
        calls.push({
          op: "destroy",
          target: opened(o).target,
          journal: opened(o).journal,
          ...(o.owner ? { owner: o.owner } : {}),
          ...(o.withoutRecord ? { leave: [...o.withoutRecord.leave.keys()] } : {}),
        });
        return { ...run(spec), mode: "destroy" };
      },
      driftOperation: async (spec, o) => {
        calls.push({ op: "drift", target: opened(o).target, journal: opened(o).journal });
        return {
          lists: 1,
          steps: spec.steps.map((step, i) => ({
            name: step.name,
            type: step.type,
            level: step.level,
            ...(i === 0
              ? { state: "drifted" as const, reason: `configmap/${step.name} -n default changed (data.k)` }
              : { state: "in-sync" as const, reason: "as applied" }),
            decidedBy: "check" as const,
          })),
        };
      },
      statusOperation: async (spec, o) => {
        calls.push({ op: "status", target: opened(o).target, journal: opened(o).journal });
        const first = spec.steps[0]!;
        return {
          ...LOCATION,
          summary: {
            spec: spec.name,
            command: "apply",
            runStatus: "failed",
            khookVersion: KHOOK_VERSION,
            startedAt: "2025-01-01T00:00:00Z",
            updatedAt: "2025-01-01T00:00:01Z",
            steps: [
              {
                name: first.name,
                status: "ok",
                inputHash: first.inputHash,
                reason: "applied",
                attempts: 1,
                transientRetries: 0,
                durationMs: 3,
                finishedAt: "2025-01-01T00:00:01Z",
                inSpec: true,
                changed: false,
                resumable: true,
                fromEarlierRun: false,
              },
              {
                name: spec.steps[1]!.name,
                status: "ok",
                inputHash: "sha256:recorded-for-earlier-inputs",
                reason: "applied",
                attempts: 1,
                transientRetries: 0,
                durationMs: 3,
                finishedAt: "2025-01-01T00:00:01Z",
                inSpec: true,
                changed: true,
                resumable: false,
                fromEarlierRun: false,
              },
              {
                name: "gone",
                status: "ok",
                inputHash: "sha256:of-a-removed-step",
                reason: "applied",
                attempts: 1,
                transientRetries: 0,
                durationMs: 3,
                finishedAt: "2025-01-01T00:00:01Z",
                inSpec: false,
                fromEarlierRun: false,
              },
            ],
            counts: { ok: 3 },
            unrecorded: [spec.steps[2]!.name],
          },
        };
      },
    };
    handlers.setTestHooks({ operations: ops, sink: (l) => lines.push(l) });
    moved = records.calls;
    return calls;
  }

  test("create applies with the journal on by default and returns the full outputs", async () => {
    const calls = fakeOps((spec) => okResult(spec));
    const { inputs } = project();
    const news = { ...checked({ ...inputs, kubeconfig: "./kubeconfig.yaml", context: "kind" }), __provider: "code" };
    const { id, outs } = await handlers.create(news);
    assert.equal(id, "default/khook-state-test");
    assert.deepEqual(
      calls.map(({ owner: _o, ...c }) => c),
      [
        {
          op: "apply",
          target: { kubeconfigPath: path.resolve("./kubeconfig.yaml"), context: "kind" },
          journal: "default-on",
        },
      ],
    );
    assert.equal(
      calls[0]!.owner?.token,
      outs.ownerToken,
      "the apply claims the record with the token the outputs keep",
    );
    assert.equal(outs.runStatus, "succeeded");
    assert.equal(outs.engineVersion, KHOOK_VERSION);
    assert.equal(outs.recordNamespace, "default");
    assert.equal(outs.recordName, "khook-state-test");
    assert.equal(outs.specName, "test");
    assert.equal(outs.spec, inputs.spec);
    assert.deepEqual(outs[BUNDLE_KEY], inputs[BUNDLE_KEY]);
    assert.deepEqual(
      outs.steps.map((s) => [s.name, s.status, s.when]),
      [
        ["ns", "ok", "included"],
        ["config", "ok", "included"],
        ["flags", "ok", "included"],
      ],
    );
    assert.equal("__provider" in outs, false);
    assert.ok(
      lines.every((l) => l.startsWith("[boot] ")),
      lines.join("\n"),
    );
    assert.ok(
      lines.some((l) => /apply succeeded: 3 ok/.test(l)),
      lines.join("\n"),
    );
    assert.deepEqual(JSON.parse(JSON.stringify(outs)), outs, "outputs are plain JSON");
  });

  /** Operations that log the order they are called in; the wait says one line. */
  function orderedOps(order: string[]): { sessions: ReturnType<typeof fakeSessions> } {
    const sessions = fakeSessions();
    handlers.setTestHooks({
      sink: (l) => lines.push(l),
      operations: {
        openSession: sessions.openSession,
        clusterReadyOperation: async (_session, wait) => {
          order.push(`wait ${wait.timeoutMs}`);
          wait.say("waiting for the API server");
        },
        ...fakeRecordOperations(),
        ownerOperation: async () => (order.push("owner check"), undefined),
        heldRecordOperation: async () => (
          order.push("owner check"),
          { owner: undefined, sameInputSteps: new Set<string>() }
        ),
        applyOperation: async (spec, o) => (
          order.push(o.waitForCluster === undefined ? "apply" : "apply, waiting again"),
          okResult(spec)
        ),
        destroyOperation: async (spec) => (order.push("destroy"), { ...okResult(spec), mode: "destroy" }),
        statusOperation: async () => undefined,
      },
    });
    return { sessions };
  }

  test("waitForCluster: create waits for the API server before anything reads the cluster (the owner check), once", async () => {
    const order: string[] = [];
    orderedOps(order);
    const { inputs } = project();
    await handlers.create({ ...checked({ ...inputs, waitForCluster: "90s" }), __provider: "code" });
    assert.deepEqual(order, ["wait 90000", "owner check", "apply"]);
    assert.ok(lines.includes("[boot] waiting for the API server"), lines.join("\n"));
  });

  test("waitForCluster: without it, an API server that is not up yet fails the update with an error naming the input", async () => {
    const order: string[] = [];
    const { sessions } = orderedOps(order);
    const { inputs } = project();
    await handlers.create({ ...checked(inputs), __provider: "code" });
    assert.deepEqual(order, ["owner check", "apply"]);
    assert.match(
      sessions.opened[0]!.session.kube.notUpAdvice ?? "",
      /set the Khook input waitForCluster \(e\.g\. "10m"\)/,
    );
  });

  test("waitForCluster: delete waits too, before its reachability probe and the owner check", async () => {
    const order: string[] = [];
    orderedOps(order);
    const { inputs } = project();
    await handlers.delete("default/khook-state-test", {
      ...checked({ ...inputs, waitForCluster: "2m" }),
      __provider: "code",
    });
    assert.deepEqual(order, ["wait 120000", "owner check", "destroy"]);
  });

  test("a failed step rejects with a partial state that includes __provider, and the step's error, redacted", async () => {
    fakeOps((spec) => ({
      ...okResult(spec, (n) =>
        n === "config" ? { status: "failed", reason: "failed", error: "denied for s3cr3t-value" } : {},
      ),
      status: "failed",
    }));
    const { inputs } = project({}, { secretVars: { TOKEN: "s3cr3t-value" } });
    const news = { ...checked(inputs), __provider: "code" };
    await assert.rejects(handlers.update("default/khook-state-test", {}, news), (e: unknown) => {
      const err = e as handlers.PartialFailure;
      assert.equal(err.id, "default/khook-state-test");
      assert.equal(err.properties.__provider, "code");
      assert.equal(err.properties.runStatus, "failed");
      assert.match(err.message, /step "config" failed: denied for \*\*\*/);
      assert.match(err.message, /resume/);
      assert.ok(!JSON.stringify(err.properties.steps).includes("s3cr3t-value"));
      assert.ok(err.reasons.length > 0);
      return true;
    });
    assert.ok(!lines.join("\n").includes("s3cr3t-value"), lines.join("\n"));
    assert.ok(
      lines.some((l) => l.includes("config: FAILED")),
      lines.join("\n"),
    );
  });

  test("state.enabled: false turns the journal off with a warning", async () => {
    fakeOps((spec) => okResult(spec));
    const dir = tempSpecDir({
      "boot.khook.yaml": specText(STEPS, "state:\n  enabled: false\n"),
      "manifests/config.yaml": CM("app"),
    });
    const inputs = inputsFor(dir);
    const { id, outs } = await handlers.create({ ...checked(inputs), __provider: "code" });
    assert.equal(id, "test");
    assert.equal(outs.recordName, undefined);
    assert.ok(
      lines.some((l) => /warning: state\.enabled is false/.test(l)),
      lines.join("\n"),
    );
  });

  test("stack config supplies the kubeconfig when the input does not; the input wins", async () => {
    const calls = fakeOps((spec) => okResult(spec));
    await handlers.configure({
      config: {
        get: (k: string) =>
          ({ "khook:kubeconfig": "apiVersion: v1\nkind: Config\n", "khook:context": "from-config" })[k],
      },
    });
    try {
      const { inputs } = project();
      await handlers.create({ ...checked(inputs), __provider: "code" });
      await handlers.create({ ...checked({ ...inputs, context: "from-input" }), __provider: "code" });
      // The text arrives parsed once (`loaded`), for the client; helm gets the text.
      const withoutLoaded = (t: unknown): unknown => {
        const { loaded, ...rest } = t as { loaded?: unknown };
        assert.ok(loaded !== undefined, "the kubeconfig text is handed over already parsed");
        return rest;
      };
      assert.deepEqual(withoutLoaded(calls[0]!.target), {
        kubeconfigContent: "apiVersion: v1\nkind: Config\n",
        context: "from-config",
      });
      assert.deepEqual(withoutLoaded(calls[1]!.target), {
        kubeconfigContent: "apiVersion: v1\nkind: Config\n",
        context: "from-input",
      });
    } finally {
      await handlers.configure({ config: { get: () => undefined } });
    }
  });

  test("a kubeconfig text is parsed once per create: its credentials are masked from that parse; the owner check and the apply get the same loaded target", async () => {
    const targets: { op: string; target: unknown }[] = [];
    const masked: string[] = [];
    const token = "once-parsed-token-0123";
    const sessions = fakeSessions();
    handlers.setTestHooks({
      operations: {
        openSession: sessions.openSession,
        ...fakeRecordOperations(),
        ownerOperation: async (_spec, o) => {
          targets.push({ op: "owner", target: sessions.optionsOf(o.session!).target });
          return undefined;
        },
        applyOperation: async (spec, o) => {
          targets.push({ op: "apply", target: o.session!.target });
          masked.push(spec.redactor.redact(`token is ${token}`), o.session!.redactor.redact(`token is ${token}`));
          return okResult(spec);
        },
        destroyOperation: async () => {
          throw new Error("not called");
        },
        statusOperation: async () => undefined,
      },
      sink: (l) => lines.push(l),
    });
    const text = `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: { server: "https://a:6443" }\nusers:\n- name: u\n  user: { token: "${token}" }\ncontexts:\n- name: x\n  context: { cluster: c, user: u }\ncurrent-context: x\n`;
    const kubeconfigModule =
      require("../../provider/kube/kubeconfig.js") as typeof import("../../provider/kube/kubeconfig.js");
    const load = mock.method(kubeconfigModule, "loadKubeconfig");
    try {
      const { inputs } = project();
      await handlers.create({ ...checked({ ...inputs, kubeconfig: text }), __provider: "code" });
      assert.equal(load.mock.callCount(), 1, "one parse of the kubeconfig text");
      assert.deepEqual(
        targets.map((t) => t.op),
        ["owner", "apply"],
      );
      assert.ok(
        (targets[1]!.target as { loaded?: unknown }).loaded !== undefined,
        "the apply gets the parsed kubeconfig",
      );
      assert.equal(targets[0]!.target, targets[1]!.target, "the owner check and the apply share one target");
      assert.equal(sessions.opened.length, 1, "one session for the owner check and the apply");
      assert.deepEqual(
        masked,
        [`token is ${MASK}`, `token is ${MASK}`],
        "the token is masked from the one parse, by the spec's redactor and the session's",
      );
    } finally {
      load.mock.restore();
    }
  });

  test("delete destroys and fails loudly when a step fails to tear down", async () => {
    const calls = fakeOps((spec) => okResult(spec));
    const { inputs } = project();
    const props = { ...appliedOutputs(inputs) };
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.equal(calls[0]!.op, "destroy");
    fakeOps((spec) => ({
      ...okResult(spec, (n) => (n === "ns" ? { status: "failed", error: "stuck" } : {})),
      status: "failed",
    }));
    await assert.rejects(handlers.delete("id", props as unknown as Record<string, unknown>), /step "ns" failed: stuck/);
  });

  test("ownership: a create in the same stack takes the record over from a previous resource, and says so", async () => {
    const previous: RecordOwner = { project: "infra", stack: "dev", token: "token-of-the-old-resource" };
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => previous,
    );
    const { inputs } = project();
    const { outs } = await handlers.create({
      ...checked({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }),
      __provider: "code",
    });
    assert.equal(calls[0]!.op, "apply");
    assert.deepEqual(
      { ...calls[0]!.owner, token: "" },
      { project: "infra", stack: "dev", token: "", succeeds: previous.token },
    );
    assert.notEqual(calls[0]!.owner!.token, previous.token, "a create mints its own token");
    assert.equal(outs.ownerToken, calls[0]!.owner!.token);
    assert.equal(
      lines.filter((l) =>
        /took over the state record \(Secret "khook-state-test" in namespace "default"\) from this stack's previous Khook resource/.test(
          l,
        ),
      ).length,
      1,
      lines.join("\n"),
    );
  });

  test("ownership: an update keeps the token the outputs hold", async () => {
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "dev", token: "mine" }),
    );
    const { inputs } = project();
    const { outs } = await handlers.update(
      "id",
      { ownerToken: "mine" },
      { ...checked({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), __provider: "code" },
    );
    assert.equal(calls[0]!.owner!.token, "mine");
    assert.equal(outs.ownerToken, "mine");
    assert.ok(!lines.some((l) => /took over/.test(l)), lines.join("\n"));
  });

  test("ownership: a claim from another stack fails naming the owner, and applies nothing", async () => {
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "prod", token: "theirs" }),
    );
    const { inputs } = project();
    await assert.rejects(
      handlers.create({ ...checked({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), __provider: "code" }),
      (e: Error) => {
        assert.match(
          e.message,
          /refused: the state record \(Secret "khook-state-test" in namespace "default"\) belongs to the Khook resource of stack "prod" of project "infra"/,
        );
        assert.match(e.message, /Nothing was changed/);
        return true;
      },
    );
    assert.deepEqual(calls, []);
  });

  test("ownership: a delete whose record a rename or a replace took over (the owner's create succeeds its token) tears nothing down and says so in one line", async () => {
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "dev", token: "the-new-resource", succeeds: "the-old-resource" }),
    );
    const { inputs } = project();
    const props = {
      ...appliedOutputs({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }),
      ownerToken: "the-old-resource",
    };
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(calls, []);
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(
      lines[0]!,
      /^\[boot\] nothing torn down: the state record .* now belongs to another Khook resource of stack "dev" of project "infra" \(a rename or a replace took it over\); removing only this resource from the stack$/,
    );
  });

  test("two Khook resources on one record (an earlier khook's stack): the delete of the one that does not hold the record tears down its own steps without the record, leaving the steps the record holds alike to the holder", async () => {
    const holder: RecordOwner = { project: "infra", stack: "dev", token: "the-sibling" };
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => holder,
      () => new Set(["config"]),
    );
    const { inputs } = project();
    const props = { ...appliedOutputs({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), ownerToken: "mine" };
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(
      calls.map((c) => [c.op, c.owner, c.leave]),
      [["destroy", undefined, ["config"]]],
      "no owner (the record and its marker are the holder's), the alike step left",
    );
    assert.ok(
      lines.some((l) =>
        /is held by another Khook resource of stack "dev" of project "infra" that shares it with this one .*tearing down this resource's own steps \(.*\) without touching the record; steps config are held alike/.test(
          l,
        ),
      ),
      lines.join("\n"),
    );
    // Another stack's record is never torn down, not even in part.
    const other = fakeOps(
      (spec) => okResult(spec),
      () => ({ ...holder, stack: "prod" }),
    );
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(other, []);
  });

  test("a moved state record: an update whose state: names another record lists the one it left in its owner and releases it once the run succeeds", async () => {
    const calls = fakeOps((spec) => okResult(spec));
    const { inputs } = project();
    const news = { ...checked({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), __provider: "code" };
    const olds = { ownerToken: "mine", recordNamespace: "default", recordName: "khook-state-before" };
    await handlers.update("id", olds, news);
    assert.deepEqual(calls[0]!.owner!.movedFrom, ["default/khook-state-before"]);
    assert.deepEqual(moved.released, [
      {
        places: ["default/khook-state-before"],
        token: "mine",
        movedTo: 'the state record (Secret "khook-state-test" in namespace "default")',
      },
    ]);
    assert.ok(
      lines.some((l) =>
        /left the state record default\/khook-state-before for the state record \(Secret "khook-state-test"/.test(l),
      ),
      lines.join("\n"),
    );
    // The same record as before: nothing left, nothing released.
    const same = fakeOps((spec) => okResult(spec));
    await handlers.update("id", { ...olds, recordName: "khook-state-test" }, news);
    assert.equal(same[0]!.owner!.movedFrom, undefined);
    assert.equal(moved.released.length, 0);
  });

  test("a moved state record: an update that turns the journal off leaves its record too, and the owner marker lists it", async () => {
    const { inputs } = project();
    const off = {
      ...inputs,
      spec: inputs.spec.replace("steps:\n", "state:\n  enabled: false\nsteps:\n"),
      pulumiProject: "infra",
      pulumiStack: "dev",
    };
    const calls = fakeOps((spec) => okResult(spec));
    await handlers.update(
      "id",
      { ownerToken: "mine", recordNamespace: "default", recordName: "khook-state-test" },
      { ...checked(off), __provider: "code" },
    );
    assert.deepEqual(calls[0]!.owner!.movedFrom, ["default/khook-state-test"]);
    assert.deepEqual(
      moved.released.map((r) => [r.places, r.movedTo]),
      [[["default/khook-state-test"], 'the owner marker (ConfigMap "khook-owner-test" in namespace "default")']],
    );
  });

  test("a moved state record: a failed run releases nothing; the next run here, which the record's owner carries, releases it", async () => {
    const failed = fakeOps((spec) => failedResult(spec));
    const { inputs } = project();
    const news = { ...checked({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), __provider: "code" };
    await assert.rejects(
      handlers.update("id", { ownerToken: "mine", recordNamespace: "default", recordName: "khook-state-before" }, news),
    );
    assert.deepEqual(failed[0]!.owner!.movedFrom, ["default/khook-state-before"]);
    assert.equal(moved.released.length, 0);
    // The failed run's outputs name the new record; its owner, stamped into it, remembers the old one.
    const retried = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "dev", token: "mine", movedFrom: ["default/khook-state-before"] }),
    );
    await handlers.update(
      "id",
      { ownerToken: "mine", recordNamespace: "default", recordName: "khook-state-test" },
      news,
    );
    assert.deepEqual(retried[0]!.owner!.movedFrom, ["default/khook-state-before"]);
    assert.deepEqual(
      moved.released.map((r) => r.places),
      [["default/khook-state-before"]],
    );
  });

  test("a moved state record: the resource's delete removes the records it left, after its own teardown succeeds", async () => {
    const mine: RecordOwner = {
      project: "infra",
      stack: "dev",
      token: "mine",
      movedFrom: ["default/khook-state-before"],
    };
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => mine,
    );
    const { inputs } = project();
    const props = { ...appliedOutputs({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), ownerToken: "mine" };
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(
      calls.map((c) => c.op),
      ["destroy"],
    );
    assert.deepEqual(moved.dropped, [{ places: ["default/khook-state-before"], token: "mine" }]);
    assert.ok(
      lines.some((l) =>
        /removed the state record default\/khook-state-before, which its owner had left for another/.test(l),
      ),
      lines.join("\n"),
    );
    fakeOps(
      (spec) => failedResult(spec),
      () => mine,
    );
    await assert.rejects(handlers.delete("id", props as unknown as Record<string, unknown>));
    assert.equal(moved.dropped.length, 0, "a failed teardown keeps the records it left");
  });

  test("two Khook resources on one record whose holder has left it: the other's delete tears down its own steps, then removes the record", async () => {
    const holder: RecordOwner = {
      project: "infra",
      stack: "dev",
      token: "the-sibling",
      movedTo: 'the state record (Secret "elsewhere" in namespace "default")',
    };
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => holder,
      () => new Set(["config"]),
    );
    const { inputs } = project();
    const props = { ...appliedOutputs({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), ownerToken: "mine" };
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(
      calls.map((c) => [c.op, c.owner, c.leave]),
      [["destroy", undefined, ["config"]]],
    );
    assert.deepEqual(moved.dropped, [{ places: ["default/khook-state-test"], token: "the-sibling" }]);
    assert.ok(
      lines.some((l) =>
        /tearing down this resource's own steps \(.*\), then removing the record, which that resource has left for the state record \(Secret "elsewhere"/.test(
          l,
        ),
      ),
      lines.join("\n"),
    );
    // A holder that has not left keeps its record.
    fakeOps(
      (spec) => okResult(spec),
      () => ({ ...holder, movedTo: undefined }) as RecordOwner,
      () => new Set(["config"]),
    );
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.equal(moved.dropped.length, 0);
  });

  test("a rename or a replace that also moved the record: the old resource's delete after the new one's create in this process tears nothing down and removes its record", async () => {
    let holder: RecordOwner | undefined;
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => holder,
    );
    const { inputs } = project();
    const after = {
      ...inputs,
      spec: inputs.spec.replace("steps:\n", "state:\n  name: khook-state-moved\nsteps:\n"),
      resourceName: "after",
      pulumiProject: "infra",
      pulumiStack: "dev",
    };
    await handlers.create({ ...checked(after), __provider: "code" });
    assert.deepEqual(
      calls.map((c) => c.op),
      ["apply"],
    );
    holder = { project: "infra", stack: "dev", token: "old", movedFrom: ["default/khook-state-older"] };
    const props = { ...appliedOutputs({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), ownerToken: "old" };
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(
      calls.map((c) => c.op),
      ["apply"],
      "the delete tears nothing down",
    );
    assert.ok(
      lines.some((l) =>
        /nothing torn down: the Khook resource "after", created in this update with the same spec name, has just applied it on the state record \(Secret "khook-state-moved"/.test(
          l,
        ),
      ),
      lines.join("\n"),
    );
    assert.deepEqual(
      moved.released.map((r) => r.places),
      [["default/khook-state-test"]],
    );
    assert.deepEqual(
      moved.dropped.map((r) => r.places),
      [["default/khook-state-test", "default/khook-state-older"]],
      "its record and the ones it had left",
    );
    // Without that create in this process (a removed resource, no successor), the delete tears down as before.
    const alone = fakeOps(
      (spec) => okResult(spec),
      () => holder,
    );
    await handlers.delete("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(
      alone.map((c) => c.op),
      ["destroy"],
    );
  });

  test("ownership: a create that takes the record over records whose claim it succeeds; an update keeps it", async () => {
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "dev", token: "old" }),
    );
    const { inputs } = project();
    const news = { ...checked({ ...inputs, pulumiProject: "infra", pulumiStack: "dev" }), __provider: "code" };
    await handlers.create(news);
    assert.equal(calls[0]!.owner!.succeeds, "old");
    const kept = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "dev", token: "mine", succeeds: "old" }),
    );
    await handlers.update("id", { ownerToken: "mine" }, news);
    assert.equal(kept[0]!.owner!.succeeds, "old");
    const sibling = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "dev", token: "theirs" }),
    );
    await handlers.update("id", { ownerToken: "mine" }, news);
    assert.equal(sibling[0]!.owner!.succeeds, undefined, "an update that takes a sibling's record succeeds nobody");
  });

  test("two Khook resources of one program with one spec name: the provider's check refuses the second, naming the first and the fix, whatever the language (a rename, one resource, is never refused)", async () => {
    fakeOps((spec) => okResult(spec));
    const { inputs } = project();
    const as = (name: string, vars: Record<string, string> = {}): Record<string, unknown> => ({
      ...inputs,
      resourceName: name,
      vars: { ...inputs.vars, ...vars },
      pulumiProject: "infra",
      pulumiStack: "dev",
      __provider: "code",
    });
    assert.deepEqual((await handlers.check({}, as("first", { LEVEL: "1" }))).failures, []);
    assert.deepEqual(
      (await handlers.check({}, as("first", { LEVEL: "1" }))).failures,
      [],
      "the same resource checked again",
    );
    const second = await handlers.check({}, as("second", { LEVEL: "2" }));
    assert.equal(second.failures.length, 1);
    assert.match(
      second.failures[0]!.reason,
      /the Khook resource "first" of this program already uses the state record Secret "khook-state-test" in namespace "default" \(spec name "test"\).*distinct metadata\.name \(or state\.name\)/,
    );
    const elsewhere = await handlers.check(
      {},
      { ...as("second"), spec: inputs.spec.replace("steps:\n", "state:\n  name: khook-state-other\nsteps:\n") },
    );
    assert.deepEqual(elsewhere.failures, [], "a distinct state.name is a distinct record");
  });

  test("ownership: a delete tears down its own record, and one nobody claimed (state from before owners)", async () => {
    for (const [current, token] of [
      [{ project: "infra", stack: "dev", token: "mine" }, "mine"],
      [undefined, undefined],
      [undefined, "mine"],
    ] as const) {
      const calls = fakeOps(
        (spec) => okResult(spec),
        () => current,
      );
      const { inputs } = project();
      const props = { ...appliedOutputs(inputs), ...(token ? { ownerToken: token } : {}) };
      await handlers.delete("id", props as unknown as Record<string, unknown>);
      assert.deepEqual(
        calls.map((c) => c.op),
        ["destroy"],
        JSON.stringify([current, token]),
      );
    }
  });

  test("ownership: a delete by a resource from before owners leaves a claimed record alone", async () => {
    const calls = fakeOps(
      (spec) => okResult(spec),
      () => ({ project: "infra", stack: "dev", token: "the-new-resource" }),
    );
    const { inputs } = project();
    await handlers.delete("id", appliedOutputs(inputs) as unknown as Record<string, unknown>);
    assert.deepEqual(calls, []);
  });

  test("read (refresh) takes steps and runStatus from the record", async () => {
    fakeOps((spec) => okResult(spec));
    const { inputs } = project();
    const props = appliedOutputs(inputs);
    const { id, props: after } = await handlers.read(
      "default/khook-state-test",
      props as unknown as Record<string, unknown>,
    );
    const outs = after as unknown as KhookOutputs;
    assert.equal(id, "default/khook-state-test");
    assert.equal(outs.runStatus, "failed");
    assert.equal(outs.recordUpdatedAt, "2025-01-01T00:00:01Z");
    assert.deepEqual(
      outs.steps.map((s) => [s.name, s.status, s.inputHash === loaded(inputs).stepsByName.get(s.name)!.inputHash]),
      [
        ["ns", "ok", true],
        ["config", "ok", false],
        ["flags", "pending", true],
      ],
    );
    assert.equal(outs.spec, props.spec, "the inputs stay");
    // ...and the next diff sees the pending steps.
    const d = diff(after, checked(inputs));
    assert.deepEqual(d.reasons, [
      "step config: inputs changed",
      "step flags: not completed (pending: not in the state record: the next apply runs it)",
    ]);
  });

  test("refresh-journal-default: a refresh reads the record only, and drops a drift an earlier live refresh found", async () => {
    const calls = fakeOps((spec) => okResult(spec));
    const { inputs } = project();
    const props = { ...appliedOutputs(inputs), drift: [{ name: "ns", type: "apply", reason: "old" }] };
    const { props: after } = await handlers.read("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(
      calls.map((c) => c.op),
      ["status"],
      "no live check unless refresh: live asks for it",
    );
    assert.equal((after as unknown as KhookOutputs).drift, undefined);
  });

  test("refresh-live: the refresh writes the drifted steps into drift, the next diff shows them, and update re-runs exactly them", async () => {
    const calls = fakeOps((spec) => okResult(spec));
    const { inputs } = project();
    const props = { ...appliedOutputs(inputs), refresh: "live" };
    const { props: after } = await handlers.read("id", props as unknown as Record<string, unknown>);
    assert.deepEqual(
      calls.map((c) => c.op),
      ["status", "drift"],
    );
    const outs = after as unknown as KhookOutputs;
    assert.deepEqual(outs.drift, [{ name: "ns", type: "apply", reason: "configmap/ns -n default changed (data.k)" }]);
    assert.ok(lines.some((l) => /drift: ns: configmap\/ns -n default changed \(data\.k\)/.test(l)));
    // The refreshed record also says config changed; the drift adds ns.
    const d = diff(after, checked({ ...inputs, refresh: "live" }));
    assert.ok(d.changes);
    assert.ok(
      d.reasons.includes("step ns: drifted in the cluster (configmap/ns -n default changed (data.k))"),
      d.reasons.join("\n"),
    );
    const { outs: updated } = await handlers.update("id", after, {
      ...checked({ ...inputs, refresh: "live" }),
      __provider: "code",
    });
    const applied = calls.find((c) => c.op === "apply")!;
    assert.deepEqual(applied.rerun, ["ns"]);
    assert.equal(updated.drift, undefined, "the repaired drift is gone from the outputs");
  });

  test("refresh must be journal or live", () => {
    const { problems } = normalizeInputs({ spec: "x", refresh: "always" });
    assert.deepEqual(problems, [{ property: "refresh", reason: "refresh must be one of journal, live" }]);
  });

  test("read without a record marks every step pending", async () => {
    const ops = fakeOps((spec) => okResult(spec));
    void ops;
    handlers.setTestHooks({
      operations: {
        openSession: fakeSessions().openSession,
        applyOperation: async () => {
          throw new Error("no");
        },
        destroyOperation: async () => {
          throw new Error("no");
        },
        statusOperation: async () => undefined,
        ...fakeRecordOperations(),
      },
      sink: () => undefined,
    });
    const { inputs } = project();
    const { props } = await handlers.read("x", appliedOutputs(inputs) as unknown as Record<string, unknown>);
    const outs = props as unknown as KhookOutputs;
    assert.equal(outs.runStatus, "unknown");
    assert.deepEqual(new Set(outs.steps.map((s) => s.status)), new Set(["pending"]));
  });
});

describe("journal location", () => {
  test("the Pulumi resource journals unless state.enabled is false; the CLI only with an enabled state: block", async () => {
    const { recordLocation } = await import("../../provider/state/location.js");
    const load = (extra: string): LoadedSpec =>
      loadSpec({ text: specText("  - name: w\n    wait: { for: condition=Ready, on: pods }\n", extra), env: {} });
    const absent = load("");
    assert.deepEqual(recordLocation(absent, "default-on"), {
      namespace: SPEC_DEFAULTS.stateNamespace,
      name: `${SPEC_DEFAULTS.stateNamePrefix}${absent.name}`,
    });
    assert.equal(recordLocation(absent, "spec"), undefined);
    for (const policy of ["spec", "default-on"] as const) {
      assert.deepEqual(recordLocation(load("state:\n  namespace: kube-system\n  name: rec\n"), policy), {
        namespace: "kube-system",
        name: "rec",
      });
      assert.deepEqual(recordLocation(load("state: {}\n"), policy), {
        namespace: SPEC_DEFAULTS.stateNamespace,
        name: `${SPEC_DEFAULTS.stateNamePrefix}${absent.name}`,
      });
      assert.equal(recordLocation(load("state:\n  enabled: false\n"), policy), undefined, policy);
    }
  });
});

describe("the summary memo", () => {
  test("a second check of the same inputs comes from the memo, with the same plan; any input change misses", async () => {
    const { summaryFor, memoKey } = await import("../../provider/pulumi/summary.js");
    const { inputs } = project({}, { vars: { LEVEL: `memo-${process.pid}-${Date.now()}` } });
    const first = summaryFor(inputs);
    const second = summaryFor(JSON.parse(JSON.stringify(inputs)) as KhookInputs);
    assert.ok(first.ok && second.ok);
    assert.equal(first.fromMemo, false);
    assert.equal(second.fromMemo, true);
    assert.deepEqual(second.summary, first.summary);
    assert.deepEqual(second.summary.plan, planLines(loaded(inputs)));
    const key = memoKey(inputs);
    for (const changed of [
      { ...inputs, vars: { ...inputs.vars, LEVEL: "other" } },
      {
        ...inputs,
        [BUNDLE_KEY]: {
          ...inputs[BUNDLE_KEY]!,
          files: Object.fromEntries(
            Object.entries(inputs[BUNDLE_KEY]?.files ?? {}).map(([k, v]) => [k, `${v}# edit\n`]),
          ),
        },
      },
      { ...inputs, secretVars: { S: "rotated" } },
      { ...inputs, spec: `${inputs.spec}\n` },
    ])
      assert.notEqual(memoKey(changed), key);
    assert.equal(
      memoKey({ ...inputs, parallelism: 3, timeout: "1m", resourceName: "x", kubeconfig: "k" }),
      key,
      "targeting is not part of the spec",
    );
  });

  test("a check and diff the memo answers, in a fresh provider process, load no spec machinery, no YAML library and no node:child_process", () => {
    const { inputs } = project({}, { vars: { LEVEL: `fresh-${process.pid}-${Date.now()}` } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-provider-modules-"));
    const inputsFile = path.join(dir, "inputs.json");
    fs.writeFileSync(inputsFile, JSON.stringify({ inputs, olds: appliedOutputs(inputs) }));
    const handlersFile = path.join(repoRoot(), "dist", "provider", "pulumi", "handlers.js");
    // What the dynamic provider does per call: check the program's inputs, then diff them against the state's.
    const script = `${RECORD_LOADED_MODULES}
      const h = require(${JSON.stringify(handlersFile)});
      h.setTestHooks({ sink: () => undefined });
      const { inputs, olds } = JSON.parse(require("node:fs").readFileSync(${JSON.stringify(inputsFile)}, "utf8"));
      (async () => {
        const c = await h.check(olds, inputs);
        const d = await h.diff("boot", olds, c.inputs);
        process.stdout.write(JSON.stringify({ failures: c.failures.length, changes: d.changes, modules: [...loaded] }));
      })();`;
    const run = (env: NodeJS.ProcessEnv = process.env): { failures: number; changes: boolean; modules: string[] } =>
      JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8", env })) as {
        failures: number;
        changes: boolean;
        modules: string[];
      };
    // The counter-check: without the memo the same calls load the spec, and the probe sees it.
    const cold = run({ ...process.env, KHOOK_PULUMI_MEMO: "off" });
    assert.deepEqual([cold.failures, cold.changes], [0, false]);
    assert.ok(cold.modules.some((m) => m.endsWith(path.join("dsl", "loader.js"))));
    run(); // writes the memo, if the test's own check above has not
    const warm = run();
    assert.deepEqual([warm.failures, warm.changes], [0, false]);
    const unwanted = warm.modules.filter((m) =>
      /\/dsl\/(loader|yaml)\.js$|node_modules\/(js-yaml|yaml)\/|^(node:)?child_process$/.test(m),
    );
    assert.deepEqual(unwanted, []);
  });

  test("a failed load is never memoized", async () => {
    const { summaryFor } = await import("../../provider/pulumi/summary.js");
    const dir = tempSpecDir({ "boot.khook.yaml": specText("  - name: w\n    wait: { for: nope, on: pods }\n") });
    assert.equal(summaryFor(inputsFor(dir)).ok, false);
    assert.equal(summaryFor(inputsFor(dir)).ok, false);
  });
});

describe("planLines", () => {
  test("is redacted and stable", () => {
    const { inputs } = project();
    const spec = loaded(inputs);
    assert.deepEqual(planLines(spec), planLines(spec));
  });
});
