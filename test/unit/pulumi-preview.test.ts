/**
 * Preview with unknowns, tool prerequisites, credential precedence, the
 * unreachable-cluster escape hatch and the online preview: the provider's
 * logic against fakes of the cluster-facing layer (the integration tests run
 * the same against the real pulumi CLI and cluster).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { afterEach, describe, test } from "node:test";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import type { RunResult } from "../../provider/engine/run-types.js";
import { check } from "../../provider/pulumi/check.js";
import { diff } from "../../provider/pulumi/diff.js";
import * as handlers from "../../provider/pulumi/handlers.js";
import { classifyUnknowns, KNOWN_AFTER, rawSteps } from "../../provider/pulumi/unknowns.js";
import { normalizeInputs, UNKNOWN } from "../../provider/pulumi/wire.js";
import type { Session } from "../../provider/session.js";
import { fakeRecordOperations, fakeSessions } from "./support/fake-sessions.js";
import { specText } from "./support/spec-files.js";

const HELM = `  - name: cert-manager
    helm:
      chart: cert-manager
      repo: https://charts.jetstack.io
      version: v1.16.2
      namespace: cert-manager
`;
const CONFIG = `  - name: config
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: app
              namespace: \${NS}
            data:
              region: "\${REGION}"
`;
const PLAIN = `  - name: plain
    wait:
      for: condition=Ready
      on: pods
      namespace: \${NS}
`;
const GATED = `  - name: gated
    when: vars.get("FEATURE", "off") == "on"
    wait:
      for: condition=Ready
      on: pods
      namespace: default
`;

function inputs(steps: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { resourceName: "boot", spec: specText(steps), baseDir: ".", ...extra };
}

const noTools = { toolMissing: () => undefined };

describe("check while the cluster is not known yet", () => {
  test("an unknown kubeconfig, context, parallelism and timeout hide nothing: the full plan, and the unknowns pass through", () => {
    const known = check({}, inputs(CONFIG + PLAIN, { vars: { NS: "apps", REGION: "eu" } }), noTools);
    const r = check(
      {},
      inputs(CONFIG + PLAIN, {
        vars: { NS: "apps", REGION: "eu" },
        kubeconfig: UNKNOWN,
        context: UNKNOWN,
        parallelism: UNKNOWN,
        timeout: UNKNOWN,
      }),
      noTools,
    );
    assert.deepEqual(r.failures, []);
    assert.deepEqual(r.inputs.plan, known.inputs.plan);
    assert.equal((r.inputs.plan as string[]).length, 2);
    for (const k of ["kubeconfig", "context", "parallelism", "timeout"]) assert.equal(r.inputs[k], UNKNOWN, k);
  });

  test("an invalid spec fails with every problem whether or not the kubeconfig is known", () => {
    const bad = `  - name: a
    helm: { chart: "" }
  - name: a
    wait: { for: nonsense, on: pods }
`;
    const withKnown = check({}, inputs(bad, { kubeconfig: "/tmp/kubeconfig" }), noTools);
    const withUnknown = check({}, inputs(bad, { kubeconfig: UNKNOWN }), noTools);
    assert.ok(withKnown.failures.length >= 2, JSON.stringify(withKnown.failures));
    assert.deepEqual(withUnknown.failures, withKnown.failures);
  });

  test("an unknown variable: the steps that use it are named as known after the values exist, every other step is planned", () => {
    const r = check({}, inputs(CONFIG + PLAIN + GATED, { vars: { NS: "apps", REGION: UNKNOWN } }), noTools);
    assert.deepEqual(r.failures, []);
    const plan = r.inputs.plan as string[];
    assert.equal(plan.length, 3);
    assert.equal(plan[0], `config: apply - ${KNOWN_AFTER} (unknown: REGION)`);
    assert.match(plan[1]!, /^plain: run wait \[inputs [0-9a-f]{12}, when included\]/);
    assert.match(plan[2]!, /^gated: skip wait /);
    assert.ok(!plan.join("\n").includes(UNKNOWN), "the placeholder never shows");
  });

  test("an unknown variable in a when: condition makes that step wait too", () => {
    const r = check({}, inputs(PLAIN + GATED, { vars: { NS: "apps", FEATURE: UNKNOWN } }), noTools);
    assert.deepEqual(r.failures, []);
    const plan = r.inputs.plan as string[];
    assert.match(plan[0]!, /^plain: run wait/);
    assert.equal(plan[1], `gated: wait - ${KNOWN_AFTER} (unknown: FEATURE)`);
  });

  test("an unknown secret variable is handled like a plain one, and a problem outside the waiting steps still fails", () => {
    const bad = `${CONFIG}  - name: broken
    wait: { for: nonsense, on: pods, namespace: default }
`;
    const r = check({}, inputs(bad, { vars: { NS: "apps" }, secretVars: { REGION: UNKNOWN } }), noTools);
    assert.equal(r.failures.length, 1, JSON.stringify(r.failures));
    assert.equal(r.failures[0]!.property.startsWith("spec.steps[1]"), true, r.failures[0]!.property);
  });

  test("an unknown spec text or whole variable map leaves the plan unknown", () => {
    assert.equal(check({}, { resourceName: "boot", spec: UNKNOWN }, noTools).inputs.plan, UNKNOWN);
    assert.equal(check({}, inputs(CONFIG, { vars: UNKNOWN }), noTools).inputs.plan, UNKNOWN);
    assert.deepEqual(
      classifyUnknowns({ vars: { A: UNKNOWN, B: "x" }, secretVars: { C: UNKNOWN }, kubeconfig: UNKNOWN }),
      { targeting: ["kubeconfig"], opaque: [], variables: ["A", "C"] },
    );
  });

  test("rawSteps names steps as written and over-reports rather than misses a mention", () => {
    const steps = rawSteps(specText(CONFIG + PLAIN), ["REGION", "NS"]);
    assert.deepEqual(
      steps?.map((s) => [s.name, s.type, s.unknown]),
      [
        ["config", "apply", ["REGION", "NS"]],
        ["plain", "wait", ["NS"]],
      ],
    );
  });
});

describe("diff while values are unknown", () => {
  test("names the waiting steps and an unknown cluster as changes, never a replacement", () => {
    const news = check(
      {},
      inputs(CONFIG + PLAIN, { vars: { NS: "apps", REGION: UNKNOWN }, kubeconfig: UNKNOWN }),
      noTools,
    ).inputs;
    const olds = {
      ...check({}, inputs(CONFIG + PLAIN, { vars: { NS: "apps", REGION: "eu" }, kubeconfig: "/k" }), noTools).inputs,
      steps: [],
    };
    const d = diff(olds, news);
    assert.equal(d.changes, true);
    assert.deepEqual(d.replaces, []);
    assert.ok(d.reasons.includes(`step config: ${KNOWN_AFTER} (unknown: REGION)`), d.reasons.join("; "));
    assert.ok(d.reasons.includes(`the target cluster is ${KNOWN_AFTER}`), d.reasons.join("; "));
  });
});

describe("preview checks the tools apply needs", () => {
  test("a helm step needs helm: missing, preview fails naming the step, with the install hint", () => {
    const r = check({}, inputs(HELM), {
      toolMissing: (t) =>
        t === "helm"
          ? "helm: steps need the helm CLI: helm was not found on PATH. Install helm v3.15.0 or newer"
          : undefined,
    });
    assert.equal(r.failures.length, 1);
    assert.equal(r.failures[0]!.property, "spec.steps[0]");
    assert.match(r.failures[0]!.reason, /step cert-manager needs helm.*Install helm/);
  });

  test("a helm step that when: excludes needs nothing", () => {
    const excluded = HELM.replace("    helm:", '    when: vars.get("HELM", "no") == "yes"\n    helm:');
    const asked: string[] = [];
    const r = check({}, inputs(excluded), { toolMissing: (t) => (asked.push(t), "missing") });
    assert.deepEqual(r.failures, []);
    assert.deepEqual(asked, []);
  });

  test("the real lookup: helm is missing from an empty PATH and the message says what to install", async () => {
    const { helmMissing } = await import("../../provider/tools/helm.js");
    const { kustomizeMissing } = await import("../../provider/tools/kustomize.js");
    assert.match(helmMissing({ PATH: "/nonexistent" }) ?? "", /helm was not found on PATH.*https:\/\/helm\.sh/);
    assert.match(kustomizeMissing({ PATH: "/nonexistent" }) ?? "", /neither was found.*Install kustomize/);
  });
});

describe("kubeconfig as an object", () => {
  test("an object (like @pulumi/eks's cluster.kubeconfig) is normalized to its JSON text, which is kubeconfig content", () => {
    const kc = {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: "https://example.invalid" } }],
    };
    const { inputs: n, problems } = normalizeInputs({ spec: "x", kubeconfig: kc });
    assert.deepEqual(problems, []);
    assert.deepEqual(JSON.parse(n.kubeconfig!), kc);
    assert.deepEqual(handlers.target(n), { kubeconfigContent: n.kubeconfig });
  });
});

describe("handlers: credentials, unreachable clusters, online preview", () => {
  const lines: string[] = [];
  afterEach(async () => {
    handlers.setTestHooks();
    await handlers.configure({ config: { get: () => undefined } });
    lines.length = 0;
  });

  const okRun = (spec: LoadedSpec): RunResult => ({
    mode: "destroy",
    status: "succeeded",
    cancelled: false,
    durationMs: 1,
    steps: spec.steps.map((s) => ({
      name: s.name,
      type: s.type,
      status: "ok",
      reason: "",
      attempts: 1,
      durationMs: 1,
      inputHash: s.inputHash,
    })),
  });

  let sessions = fakeSessions();

  function fake(extra: Partial<handlers.Operations> = {}): { op: string; target: unknown }[] {
    const calls: { op: string; target: unknown }[] = [];
    sessions = fakeSessions();
    const targetOf = (o: { session?: Session }): unknown => sessions.optionsOf(o.session!).target;
    handlers.setTestHooks({
      operations: {
        openSession: sessions.openSession,
        applyOperation: async (spec, o) => (calls.push({ op: "apply", target: targetOf(o) }), okRun(spec)),
        destroyOperation: async (spec, o) => (calls.push({ op: "destroy", target: targetOf(o) }), okRun(spec)),
        statusOperation: async (_spec, o) => (calls.push({ op: "status", target: targetOf(o) }), undefined),
        ...fakeRecordOperations(),
        ...extra,
      },
      sink: (l) => lines.push(l),
    });
    return calls;
  }

  const config = (values: Record<string, string>) => handlers.configure({ config: { get: (k: string) => values[k] } });
  const stored = (): Record<string, unknown> => ({
    ...check(
      {},
      inputs(PLAIN, { vars: { NS: "apps" }, kubeconfig: "/stored/kubeconfig", context: "stored-ctx" }),
      noTools,
    ).inputs,
  });

  test("delete and read: the stack config's kubeconfig wins over the stored input (with khook:context, else its current context)", async () => {
    const calls = fake();
    await config({ "khook:kubeconfig": "/fresh/kubeconfig" });
    await handlers.delete("id", stored());
    await handlers.read("id", stored());
    assert.deepEqual(
      calls.map((c) => c.target),
      [{ kubeconfigPath: "/fresh/kubeconfig" }, { kubeconfigPath: "/fresh/kubeconfig" }],
    );
    await config({ "khook:kubeconfig": "/fresh/kubeconfig", "khook:context": "fresh-ctx" });
    await handlers.delete("id", stored());
    assert.deepEqual(calls[2]!.target, { kubeconfigPath: "/fresh/kubeconfig", context: "fresh-ctx" });
  });

  test("one session per handler call: delete's probe, owner check and teardown share it, as do create's owner check and apply", async () => {
    const used: { op: string; session: Session }[] = [];
    fake({
      reachOperation: async (session) => (used.push({ op: "probe", session }), undefined),
      ownerOperation: async (_spec, o) => (used.push({ op: "owner", session: o.session! }), undefined),
      heldRecordOperation: async (_spec, o) => (
        used.push({ op: "owner", session: o.session! }),
        { owner: undefined, sameInputSteps: new Set<string>() }
      ),
      destroyOperation: async (spec, o) => (used.push({ op: "destroy", session: o.session! }), okRun(spec)),
      applyOperation: async (spec, o) => (
        used.push({ op: "apply", session: o.session! }),
        { ...okRun(spec), mode: "apply" }
      ),
    });
    await handlers.delete("id", stored());
    assert.equal(sessions.opened.length, 1);
    assert.deepEqual(
      used.map((u) => [u.op, u.session === sessions.opened[0]!.session]),
      [
        ["probe", true],
        ["owner", true],
        ["destroy", true],
      ],
    );
    used.length = 0;
    await handlers.create(stored());
    assert.equal(sessions.opened.length, 2);
    assert.deepEqual(
      used.map((u) => [u.op, u.session === sessions.opened[1]!.session]),
      [
        ["owner", true],
        ["apply", true],
      ],
    );
  });

  test("create: the input wins over the stack config", async () => {
    const calls = fake();
    await config({ "khook:kubeconfig": "/fresh/kubeconfig" });
    await handlers.create(stored());
    assert.deepEqual(calls[0]!.target, { kubeconfigPath: path.resolve("/stored/kubeconfig"), context: "stored-ctx" });
  });

  test("destroy against an unreachable cluster fails naming khook:deleteUnreachable, and touches nothing", async () => {
    const calls = fake({
      reachOperation: async () => ({
        kind: "unreachable",
        message: "cannot reach the Kubernetes API server: ECONNREFUSED",
      }),
    });
    await assert.rejects(handlers.delete("id", stored()), (e: Error) => {
      assert.match(e.message, /cannot be reached .*ECONNREFUSED/);
      assert.match(e.message, /pulumi config set khook:deleteUnreachable true/);
      assert.match(e.message, /KHOOK_DELETE_UNREACHABLE=true pulumi destroy/);
      assert.match(e.message, /khook:kubeconfig/);
      return true;
    });
    assert.deepEqual(calls, []);
  });

  test("with khook:deleteUnreachable: true, an unreachable cluster drops the resource with a warning and destroys nothing", async () => {
    const calls = fake({ reachOperation: async () => ({ kind: "unreachable", message: "ECONNREFUSED" }) });
    await config({ "khook:deleteUnreachable": "true" });
    await handlers.delete("id", stored());
    assert.deepEqual(calls, []);
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^\[boot\] warning: .*dropped from the stack's state and nothing in the cluster was touched/,
    );
  });

  test("KHOOK_DELETE_UNREACHABLE=true in the destroy's environment is the same escape hatch", async () => {
    const calls = fake({ reachOperation: async () => ({ kind: "unreachable", message: "ECONNREFUSED" }) });
    process.env.KHOOK_DELETE_UNREACHABLE = "true";
    try {
      await handlers.delete("id", stored());
    } finally {
      delete process.env.KHOOK_DELETE_UNREACHABLE;
    }
    assert.deepEqual(calls, []);
    assert.match(lines[0]!, /KHOOK_DELETE_UNREACHABLE is true, so this resource is dropped/);
  });

  test("rejected credentials are not unreachable: deleteUnreachable does not drop the resource", async () => {
    fake({ reachOperation: async () => ({ kind: "rejected", message: "401 Unauthorized" }) });
    await config({ "khook:deleteUnreachable": "true" });
    await assert.rejects(handlers.delete("id", stored()), /rejected the credentials.*\n.*expired token/);
  });

  test("online preview prints each step's live action and the masked diff; offline prints nothing live", async () => {
    const planned: unknown[] = [];
    fake({
      planOperation: async (spec, o) => {
        planned.push(o.session!.target);
        return {
          steps: spec.steps.map(
            (s) =>
              ({
                name: s.name,
                type: s.type,
                level: s.level,
                when: "included",
                inputHash: s.inputHash,
                summary: s.summary,
                action: "upgrade",
                reason: "values differ",
                decidedBy: "assess",
              }) as never,
          ),
          diffs: new Map(spec.steps.map((s) => [s.name, `--- live\n+++ planned\n-token: ***\n+token: ***\n`])),
        };
      },
    });
    const news = stored();
    const olds = { ...news, steps: [] };
    await handlers.diff("id", olds, news);
    assert.ok(!lines.some((l) => l.includes("live:")), lines.join("\n"));
    lines.length = 0;
    await handlers.diff("id", olds, { ...news, previewMode: "online" });
    assert.deepEqual(planned, [{ kubeconfigPath: path.resolve("/stored/kubeconfig"), context: "stored-ctx" }]);
    assert.ok(lines.includes("[boot] live: plain: upgrade - values differ"), lines.join("\n"));
    assert.ok(lines.includes("[boot]   -token: ***"), lines.join("\n"));
    lines.length = 0;
    await config({ "khook:previewMode": "online" });
    await handlers.diff("id", olds, news);
    assert.equal(planned.length, 2, "the stack config turns it on too");
  });

  test("online preview with an unknown or unreachable cluster falls back to the offline plan with one warning line", async () => {
    let asked = 0;
    fake({
      planOperation: async () => {
        asked++;
        throw new Error("cannot reach the Kubernetes API server at https://127.0.0.1:1: ECONNREFUSED");
      },
    });
    const news = { ...stored(), previewMode: "online" };
    await handlers.diff("id", news, { ...news, kubeconfig: UNKNOWN });
    assert.equal(asked, 0);
    assert.deepEqual(
      lines.filter((l) => /warning/.test(l)),
      ["[boot] warning: online preview: the cluster is not known yet; showing the offline plan"],
    );
    lines.length = 0;
    await handlers.diff("id", news, news);
    assert.equal(asked, 1);
    assert.equal(lines.filter((l) => /warning/.test(l)).length, 1, lines.join("\n"));
    assert.match(
      lines.find((l) => /warning/.test(l))!,
      /online preview: cannot read the cluster: .*ECONNREFUSED; showing the offline plan/,
    );
  });
});
