/**
 * Secret leaks across helm output, errors and plan: passwords in auth:, in URL
 * userinfo (from a secret variable or written literally) and values from
 * secret variables (raw and through a pipeline) never appear in any reason,
 * log line, diff (labels included) or error, while they do reach the cluster.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import {
  startChartRepo,
  startOciRegistry,
  testCluster,
  withNamespace,
  type ChartRepoFixture,
} from "../harness/index.js";
import type { LoadedSpec, LoadedStep } from "../../provider/dsl/loaded.js";
import { helmExecutor } from "../../provider/steps/helm/executor.js";
import type { StepContext } from "../../provider/steps/contract.js";
import { assessDiff, executorContext, specFromSteps } from "./support/executors.js";

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of closers) await c();
});

const REPO_USER = "chartreader";
const REPO_PASS = "Repo-P4ss:w/rd@x";
const OCI_PASS = "oci-S3cret-77";
const LITERAL_PASS = "literal-inline-pa55";
const TOKEN = "tok3n-s3cr3t-v4lue";

/** Every text khook produced during the test: reasons, logs, diffs, errors. */
const produced: { where: string; text: string }[] = [];

function record(where: string, text: string): void {
  produced.push({ where, text });
}

function load(
  stepYaml: string,
  env: Record<string, string>,
): { spec: LoadedSpec; step: Extract<LoadedStep, { type: "helm" }> } {
  const spec = specFromSteps(stepYaml, { name: "helm-secrets", env });
  return { spec, step: spec.steps[0] as Extract<LoadedStep, { type: "helm" }> };
}

const context = (spec: LoadedSpec, label: string): Promise<StepContext> =>
  executorContext({ spec, onLog: (line) => record(`${label} log`, line) });

/** Runs plan (assess), diff and apply, recording everything they say, including errors. */
async function exercise(
  label: string,
  spec: LoadedSpec,
  step: Extract<LoadedStep, { type: "helm" }>,
): Promise<{ applied: boolean }> {
  const attempt = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      const v = await fn();
      record(`${label} ${what}`, typeof v === "string" ? v : JSON.stringify(v));
      return v;
    } catch (e) {
      record(`${label} ${what} error`, (e as Error).message);
      return undefined;
    }
  };
  await attempt("plan", async () => helmExecutor.assess(step, await context(spec, label)));
  await attempt("diff", async () => assessDiff(helmExecutor, step, await context(spec, label)));
  const out = await attempt("apply", async () => helmExecutor.apply(step, await context(spec, label)));
  return { applied: out !== undefined };
}

let repo: ChartRepoFixture | undefined;
async function privateRepo(): Promise<ChartRepoFixture> {
  if (!repo) {
    repo = await startChartRepo({ basicAuth: { username: REPO_USER, password: REPO_PASS } });
    closers.push(() => repo!.close());
  }
  return repo;
}

const env = { KHOOK_SECRET_REPO_PASS: REPO_PASS, KHOOK_SECRET_TOKEN: TOKEN, KHOOK_SECRET_OCI_PASS: OCI_PASS };

function stepYaml(ns: string, source: string, values: string): string {
  return `  - name: demo\n    helm:\n${source}      namespace: ${ns}\n${values === "" ? "" : `      values:\n${values}`}`;
}

const SECRET_VALUES = `        token: "\${TOKEN}"\n        message: "\${TOKEN|upper}"\n`;

function forms(s: string): string[] {
  return [s, encodeURIComponent(s), Buffer.from(s).toString("base64").replace(/=+$/, "")];
}

describe("helm: secrets never leak into output", () => {
  test("passwords in auth:, in URL userinfo and values from secret variables, across plan, diff, logs, results and errors", async (t) => {
    const r = await privateRepo();
    const cluster = await testCluster();
    const ns = await withNamespace(t, "helm-secrets");
    const hostPath = r.url.replace("http://", "");

    // auth: block from a secret variable, values from a secret variable (raw and piped)
    const a = load(
      stepYaml(
        ns,
        `      chart: khook-demo\n      repo: ${r.url}\n      version: "0.1.0"\n      auth: { username: ${REPO_USER}, password: "\${REPO_PASS}" }\n`,
        SECRET_VALUES,
      ),
      env,
    );
    assert.ok((await exercise("auth-block", a.spec, a.step)).applied, JSON.stringify(produced.slice(-3)));
    const stored = await cluster.kubectl(["-n", ns, "get", "secret", "demo-token", "-o", "jsonpath={.data.token}"]);
    assert.equal(Buffer.from(stored.stdout, "base64").toString(), TOKEN, "the secret value did reach the cluster");

    // a changed secret value: the upgrade's plan and diff mention the change, not the values
    const a2 = load(
      stepYaml(
        ns,
        `      chart: khook-demo\n      repo: ${r.url}\n      version: "0.1.0"\n      auth: { username: ${REPO_USER}, password: "\${REPO_PASS}" }\n`,
        `        token: "\${TOKEN}"\n        message: "\${TOKEN|b64enc}"\n`,
      ),
      env,
    );
    await exercise("auth-block-upgrade", a2.spec, a2.step);
    const upgradeDiff = produced.find((p) => p.where === "auth-block-upgrade diff")?.text ?? "";
    assert.match(
      upgradeDiff,
      /^- {2}message: "\*\*\*"\n\+ {2}message: "\*\*\*"$/m,
      "the diff shows that the value changed, masked on both sides",
    );

    // inline userinfo from a secret variable, URL-encoded by a pipeline
    const b = load(
      stepYaml(
        ns,
        `      chart: khook-demo:0.1.0\n      repo: "http://${REPO_USER}:\${REPO_PASS|urlquery}@${hostPath}"\n      release: demo-inline\n`,
        `        extraName: inline-extra\n`,
      ),
      env,
    );
    assert.ok((await exercise("userinfo-secret", b.spec, b.step)).applied, JSON.stringify(produced.slice(-3)));

    // inline userinfo written literally (no secret variable): still stripped everywhere
    const c = load(
      stepYaml(
        ns,
        `      chart: khook-demo:0.1.0\n      repo: "http://${REPO_USER}:${LITERAL_PASS}@${hostPath}"\n      release: demo-literal\n`,
        `        extraName: literal-extra\n`,
      ),
      {},
    );
    await exercise("userinfo-literal-wrong", c.spec, c.step);
    assert.ok(
      produced.some((p) => p.where.startsWith("userinfo-literal-wrong") && /401|Unauthorized/i.test(p.text)),
      `wrong literal credentials are refused: ${JSON.stringify(produced.filter((p) => p.where.startsWith("userinfo-literal-wrong")))}`,
    );

    // a wrong password from a secret variable: helm's error is shown, the password is not
    const d = load(
      stepYaml(
        ns,
        `      chart: khook-demo\n      repo: ${r.url}\n      version: "0.1.0"\n      release: demo-wrong\n      auth: { username: ${REPO_USER}, password: "\${WRONG}" }\n`,
        "",
      ),
      { ...env, KHOOK_SECRET_WRONG: "wrong-Secret-Pass-1" },
    );
    await exercise("auth-wrong", d.spec, d.step);

    // a failing install whose server error quotes a value from a secret variable
    const e = load(
      stepYaml(
        ns,
        `      chart: khook-demo\n      repo: ${r.url}\n      version: "0.1.0"\n      release: demo-fail\n      auth: { username: ${REPO_USER}, password: "\${REPO_PASS}" }\n`,
        `        extraName: "\${TOKEN}_Invalid"\n`,
      ),
      env,
    );
    await exercise("install-fails", e.spec, e.step);
    assert.ok(
      produced.some((p) => p.where === "install-fails apply error" && p.text.includes("***_Invalid")),
      JSON.stringify(produced.filter((p) => p.where.startsWith("install-fails"))),
    );

    // OCI with an auth: block from a secret variable, and with a wrong one
    const reg = await startOciRegistry({ username: "robot", password: OCI_PASS });
    closers.push(() => reg.close());
    const f = load(
      stepYaml(
        ns,
        `      chart: ${reg.url}/khook-demo:0.1.0\n      release: demo-oci\n      auth: { username: robot, password: "\${OCI_PASS}" }\n`,
        `        extraName: oci-extra\n${SECRET_VALUES}`,
      ),
      env,
    );
    assert.ok((await exercise("oci", f.spec, f.step)).applied, JSON.stringify(produced.slice(-3)));
    const g = load(
      stepYaml(
        ns,
        `      chart: ${reg.url}/khook-demo:0.1.0\n      release: demo-oci-wrong\n      auth: { username: robot, password: "\${WRONG}" }\n`,
        "",
      ),
      { ...env, KHOOK_SECRET_WRONG: "wrong-Oci-Pass-2" },
    );
    await exercise("oci-wrong", g.spec, g.step);

    // Destroy's messages too.
    for (const s of [a, b, f])
      record("destroy", JSON.stringify(await helmExecutor.destroy(s.step, await context(s.spec, "destroy"))));

    if (process.env.KHOOK_TEST_SHOW_OUTPUT) for (const p of produced) console.log(`[${p.where}] ${p.text}`);
    assert.ok(produced.length > 20, `enough output was produced to mean something (${produced.length})`);
    const secrets = [
      REPO_PASS,
      OCI_PASS,
      LITERAL_PASS,
      TOKEN,
      TOKEN.toUpperCase(),
      "wrong-Secret-Pass-1",
      "wrong-Oci-Pass-2",
    ];
    const leaks: string[] = [];
    for (const p of produced)
      for (const s of secrets)
        for (const form of forms(s))
          if (p.text.includes(form))
            leaks.push(`${p.where}: contains ${JSON.stringify(form)}: ${p.text.slice(0, 300)}`);
    assert.deepEqual(leaks, []);
    // The URL userinfo is gone entirely, not just the password.
    assert.deepEqual(
      produced.filter((p) => p.text.includes(`${REPO_USER}:`)).map((p) => p.where),
      [],
    );
  });
});
