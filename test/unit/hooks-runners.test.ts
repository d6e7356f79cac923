/**
 * The hooks pipeline with real parts and no cluster: real exec functions (the
 * committed fixtures in test/functions) and a real HTTP hook server on loopback.
 * The engine-level behaviour (retries, finalize before destroy, post-apply) is in
 * test/integration/hooks.test.ts.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { spawn } from "node:child_process";
import os from "node:os";
import { manifestObjects, objectsManifest, startPostRenderer } from "../../provider/hooks/post-renderer.js";
import { isPermanent, StepHooks, type AttemptIo } from "../../provider/hooks/step-hooks.js";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { deadLoopbackUrl, HookServer } from "../harness/hook-server.js";
import { repoRoot, specText, tempSpecDir } from "./support/spec-files.js";

/** The example functions (add-labels, require-limits) and the test-only print-env. */
const FUNCTIONS = [path.join(repoRoot(), "examples", "functions"), path.join(repoRoot(), "test", "functions")];
const SECRET = "hunter2-very-secret";

const STEP = [
  "  - name: web",
  "    retries: 2",
  "    apply:",
  "      manifests:",
  "        - inline: |",
  "            apiVersion: apps/v1",
  "            kind: Deployment",
  "            metadata: {name: web, namespace: apps}",
  "            spec:",
  "              template:",
  "                spec:",
  "                  containers:",
  "                    - {name: app, image: nginx}",
  "                    - {name: sidecar, image: envoy, resources: {limits: {cpu: 100m}}}",
  "",
].join("\n");

function specWith(hooksYaml: string, files: Record<string, string> = {}, prelude = ""): LoadedSpec {
  const dir = tempSpecDir({ "spec.yaml": specText(STEP, `${prelude}hooks:\n${hooksYaml}`), ...files });
  fs.mkdirSync(path.join(dir, "fn"), { recursive: true });
  for (const from of FUNCTIONS) {
    for (const f of fs.readdirSync(from)) {
      fs.copyFileSync(path.join(from, f), path.join(dir, "fn", f));
      fs.chmodSync(path.join(dir, "fn", f), 0o755);
    }
  }
  for (const rel of Object.keys(files)) fs.chmodSync(path.join(dir, rel), 0o755);
  return loadSpec({ file: path.join(dir, "spec.yaml"), env: { KHOOK_SECRET_TOKEN: SECRET } });
}

function io(): AttemptIo & { lines: string[] } {
  const lines: string[] = [];
  return { lines, signal: new AbortController().signal, log: (m) => lines.push(m) };
}

const deployment = (): Record<string, unknown> => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "apps" },
  spec: {
    template: {
      spec: {
        containers: [
          { name: "app", image: "nginx" },
          { name: "sidecar", image: "envoy", resources: { limits: { cpu: "100m" } } },
        ],
      },
    },
  },
});
const configMap = (name: string, data: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data,
});

function hooksOf(spec: LoadedSpec, mode: "apply" | "plan" | "destroy" = "apply"): StepHooks {
  return new StepHooks(spec, spec.stepsByName.get("web")!, mode, spec.redactor);
}

describe("post-render functions (real executables)", () => {
  test("a transformer's output replaces the objects, and its results are printed with the hook's source line", async () => {
    const spec = specWith(
      "  - name: labels\n    on: [post-render]\n    function: {exec: ./fn/add-labels, config: {data: {team: platform}}}\n",
    );
    const out = io();
    const objects = await hooksOf(spec).render([deployment(), configMap("a")], out, { send: true });
    assert.deepEqual(
      objects.map((o) => (o.metadata as { labels?: unknown }).labels),
      [{ team: "platform" }, { team: "platform" }],
    );
    assert.ok(
      out.lines.some((l) => /^post-render hook labels \(.*spec\.yaml:6\): info: labelled 2 object/.test(l)),
      out.lines.join("\n"),
    );
  });

  test("a validator's error results fail the step permanently, listing each offending object and field", async () => {
    const spec = specWith("  - name: limits\n    on: [post-render]\n    function: {exec: ./fn/require-limits}\n");
    const out = io();
    await assert.rejects(hooksOf(spec).render([deployment()], out, { send: true }), (e: Error) => {
      assert.ok(isPermanent(e), "a function's verdict is not retried");
      assert.match(e.message, /post-render hook limits \(.*spec\.yaml:6\) rejected/);
      assert.match(
        e.message,
        /error Deployment\/web -n apps spec\.template\.spec\.containers\[0\]\.resources\.limits: container app has no resource limits/,
      );
      assert.doesNotMatch(e.message, /containers\[1\]/);
      return true;
    });
  });

  test("exec functions get PATH and HOME only, run in a private directory, and the context holds no secret", async () => {
    const spec = specWith("  - name: env\n    on: [post-render]\n    function: {exec: ./fn/print-env}\n");
    process.env["KHOOK_SECRET_LEAK"] = SECRET;
    const out = io();
    try {
      await hooksOf(spec).render([configMap("a")], out, { send: false });
    } finally {
      delete process.env["KHOOK_SECRET_LEAK"];
    }
    const line = out.lines.find((l) => l.includes("info: {"))!;
    const report = JSON.parse(line.slice(line.indexOf("info: ") + 6)) as {
      env: string[];
      cwd: string;
      context: string;
    };
    assert.deepEqual(report.env, ["HOME", "PATH"]);
    assert.notEqual(path.resolve(report.cwd), path.dirname(spec.file!));
    assert.ok(!fs.existsSync(report.cwd), "the private directory is removed afterwards");
    const context = JSON.parse(report.context) as Record<string, unknown>;
    assert.equal((context.step as { name: string }).name, "web");
    assert.equal(context.event, "post-render");
    assert.ok(!out.lines.join("\n").includes(SECRET));
  });

  test("validator-sees-applied: exec functions receive every object exactly as it will be applied, secrets included", async () => {
    const spec = specWith(
      "  - name: labels\n    on: [post-render]\n    function: {exec: ./fn/add-labels, config: {data: {team: a}}}\n",
    );
    const out = io();
    const objects = await hooksOf(spec).render(
      [configMap("a"), configMap("creds", { token: SECRET }), configMap("b")],
      out,
      { send: false },
    );
    assert.deepEqual(
      objects.map((o) => (o.metadata as { name: string }).name),
      ["a", "creds", "b"],
    );
    assert.deepEqual(
      (objects[1]!.metadata as { labels?: unknown }).labels,
      { team: "a" },
      "the object with a secret went through the function",
    );
    assert.equal(
      (objects[1]!.data as { token: string }).token,
      SECRET,
      "what is applied is the real value, not a mask",
    );
    assert.ok(!out.lines.join("\n").includes(SECRET));
  });

  test("validator-sees-applied: a validator rejects an object that carries a secret; its results and stderr stay redacted", async () => {
    const script = [
      "#!/usr/bin/env node",
      "let input = '';",
      "process.stdin.on('data', (c) => (input += c));",
      "process.stdin.on('end', () => {",
      "  const list = JSON.parse(input);",
      "  const results = list.items.filter((o) => o.data && o.data.token).map((o) => ({ severity: 'error', message: 'token ' + o.data.token + ' is in a ConfigMap', resourceRef: { kind: o.kind, name: o.metadata.name } }));",
      "  process.stderr.write('saw ' + JSON.stringify(list.items.map((o) => o.data)) + '\\n');",
      "  process.stdout.write(JSON.stringify({ ...list, results }));",
      "  process.exit(results.length > 0 ? 1 : 0);",
      "});",
      "",
    ].join("\n");
    const spec = specWith(
      "  - name: no-secrets-in-configmaps\n    on: [post-render]\n    function: {exec: ./fn/check}\n",
      { "fn/check": script },
    );
    await assert.rejects(
      hooksOf(spec).render([configMap("a"), configMap("creds", { token: SECRET })], io(), { send: false }),
      (e: Error) => {
        assert.match(e.message, /rejected the step's objects \(1 error\)/);
        assert.match(e.message, /error ConfigMap\/creds: token \*\*\* is in a ConfigMap/);
        assert.ok(!e.message.includes(SECRET));
        return true;
      },
    );
  });

  test(
    "function-process-group: a background child holding stdout does not hold the step; the whole group ends with the function",
    { timeout: 120_000 },
    async () => {
      const pidFile = path.join(os.tmpdir(), `khook-bg-${process.pid}-${Date.now()}.pid`);
      const spec = specWith("  - name: bg\n    on: [post-render]\n    function: {exec: ./fn/bg, timeout: 5s}\n", {
        "fn/bg": `#!/bin/sh\nsleep 300 &\necho $! > ${pidFile}\ncat\n`,
      });
      const objects = await hooksOf(spec).render([configMap("a")], io(), { send: false });
      assert.deepEqual(
        objects.map((o) => (o.metadata as { name: string }).name),
        ["a"],
        "the function's answer is used",
      );
      assertGone(Number(fs.readFileSync(pidFile, "utf8")));
    },
  );

  test(
    "function-process-group: past its timeout the function and every child it started are ended, and the step fails",
    { timeout: 120_000 },
    async () => {
      const pidFile = path.join(os.tmpdir(), `khook-bg-${process.pid}-${Date.now()}.pid`);
      const spec = specWith("  - name: hang\n    on: [post-render]\n    function: {exec: ./fn/hang, timeout: 1s}\n", {
        "fn/hang": `#!/bin/sh\ntrap '' TERM\nsleep 300 &\necho $! > ${pidFile}\nwait\n`,
      });
      await assert.rejects(
        hooksOf(spec).render([configMap("a")], io(), { send: false }),
        /did not finish within its timeout of 1s/,
      );
      assertGone(Number(fs.readFileSync(pidFile, "utf8")));
    },
  );

  test("function-environment: a function runs as khook's user with PATH and HOME only; docs/hooks.md says plainly it is not a sandbox", async () => {
    const script = "#!/bin/sh\nid -u >&2\nexit 3\n";
    const spec = specWith("  - name: who\n    on: [post-render]\n    function: {exec: ./fn/who}\n", {
      "fn/who": script,
    });
    await assert.rejects(
      hooksOf(spec).render([configMap("a")], io(), { send: false }),
      new RegExp(`failed \\(exit code 3\\):\\n${process.getuid!()}$`),
    );
    const docs = fs.readFileSync(path.join(repoRoot(), "docs", "hooks.md"), "utf8");
    assert.match(docs, /is not a sandbox/);
    assert.match(docs, /\/proc\/<pid>\/environ/, "the docs name what a function can still read");
  });

  test("a function that outlives its timeout is stopped and the step fails", async () => {
    const spec = specWith("  - name: slow\n    on: [post-render]\n    function: {exec: ./fn/slow, timeout: 1s}\n", {
      "fn/slow": "#!/bin/sh\nexec sleep 30\n",
    });
    await assert.rejects(
      hooksOf(spec).render([configMap("a")], io(), { send: false }),
      /did not finish within its timeout of 1s/,
    );
  });

  test("output that is not a ResourceList fails the step, with the function's stderr (redacted)", async () => {
    const spec = specWith("  - name: bad\n    on: [post-render]\n    function: {exec: ./fn/bad}\n", {
      "fn/bad": `#!/bin/sh\necho "oops ${SECRET}" >&2\necho '{"kind":"List"}'\n`,
    });
    await assert.rejects(hooksOf(spec).render([configMap("a")], io(), { send: false }), (e: Error) => {
      assert.match(e.message, /kind "List", not ResourceList/);
      assert.match(e.message, /oops \*\*\*/);
      assert.ok(!e.message.includes(SECRET));
      return true;
    });
  });
});

describe("webhooks (a real hook server on loopback, seed 003's contract)", () => {
  let server: HookServer;
  before(async () => {
    server = await HookServer.start();
  });
  after(() => server.close());
  const hook = (extra = ""): string =>
    `  - name: audit\n    on: [pre-apply, post-apply, finalize]\n    ${extra}webhook: {url: '${server.url}', headers: {Authorization: 'Bearer \${TOKEN}', X-Team: platform}}\n`;

  test("success with changed children: the returned children are what gets sent; the secret header is sent but never shown", async () => {
    server.on("pre-apply", {
      kind: "ok",
      change: (children) =>
        Object.fromEntries(
          Object.entries(children).map(([k, v]) => [
            k,
            { ...v, metadata: { ...(v.metadata as object), labels: { audited: "yes" } } },
          ]),
        ),
    });
    const spec = specWith(hook());
    const before = server.count("pre-apply");
    const out = io();
    const objects = await hooksOf(spec).render([configMap("a")], out, { send: true });
    assert.equal(server.count("pre-apply"), before + 1);
    const req = server.requests.at(-1)!;
    assert.equal(req.headers.authorization, `Bearer ${SECRET}`);
    assert.deepEqual(Object.keys(req.body.children), ["ConfigMap/a"]);
    assert.equal((req.body.object as { kind: string }).kind, "Step");
    assert.equal(req.body.context.event, "pre-apply");
    assert.deepEqual((objects[0]!.metadata as { labels: unknown }).labels, { audited: "yes" });
    assert.ok(!out.lines.join("\n").includes(SECRET));
  });

  test("pre-apply is not called when nothing is sent (plan, diff, reads)", async () => {
    const spec = specWith(hook());
    const before = server.count();
    await hooksOf(spec, "plan").render([configMap("a")], io(), { send: true });
    await hooksOf(spec).render([configMap("a")], io(), { send: false });
    assert.equal(server.count(), before);
  });

  test("permanent: false is a retryable failure; permanent: true is not retried", async () => {
    const spec = specWith(hook());
    server.on("pre-apply", { kind: "error", message: "not yet", permanent: false });
    await assert.rejects(
      hooksOf(spec).render([configMap("a")], io(), { send: true }),
      (e: Error) => !isPermanent(e) && /answered HTTP 500: not yet/.test(e.message),
    );
    server.on("pre-apply", { kind: "error", status: 403, message: "forbidden by policy", permanent: true });
    await assert.rejects(
      hooksOf(spec).render([configMap("a")], io(), { send: true }),
      (e: Error) => isPermanent(e) && /HTTP 403: forbidden by policy \(permanent/.test(e.message),
    );
  });

  test("continue: true proceeds with the objects unchanged", async () => {
    const spec = specWith(hook());
    server.on("pre-apply", { kind: "error", message: "degraded", continue: true });
    const out = io();
    const objects = await hooksOf(spec).render([configMap("a")], out, { send: true });
    assert.deepEqual(objects, [configMap("a")]);
    assert.ok(out.lines.some((l) => /degraded; continue: true/.test(l)));
  });

  test("failurePolicy Ignore: an unreachable hook is logged and skipped; Fail fails the step", async () => {
    const dead = await deadLoopbackUrl();
    const ignore = specWith(
      `  - name: audit\n    on: [pre-apply]\n    failurePolicy: Ignore\n    webhook: {url: '${dead}'}\n`,
    );
    const out = io();
    assert.deepEqual(await hooksOf(ignore).render([configMap("a")], out, { send: true }), [configMap("a")]);
    assert.ok(
      out.lines.some((l) => /cannot reach .*failurePolicy Ignore: skipped/.test(l)),
      out.lines.join("\n"),
    );
    const fail = specWith(`  - name: audit\n    on: [pre-apply]\n    webhook: {url: '${dead}'}\n`);
    await assert.rejects(
      hooksOf(fail).render([configMap("a")], io(), { send: true }),
      /cannot reach .*failurePolicy Fail/,
    );
  });

  test("a secret in a hook's error text is masked", async () => {
    const spec = specWith(hook());
    server.on("pre-apply", { kind: "error", message: `token ${SECRET} rejected`, permanent: true });
    await assert.rejects(
      hooksOf(spec).render([configMap("a")], io(), { send: true }),
      (e: Error) => !e.message.includes(SECRET) && /token \*\*\* rejected/.test(e.message),
    );
  });

  test("objects carrying a secret are withheld from webhooks, listed in the context, and sent unchanged", async () => {
    const spec = specWith(hook());
    server.on("pre-apply", { kind: "ok", change: (children) => children });
    const objects = await hooksOf(spec).render([configMap("a"), configMap("creds", { token: SECRET })], io(), {
      send: true,
    });
    const req = server.requests.at(-1)!;
    assert.deepEqual(Object.keys(req.body.children), ["ConfigMap/a"]);
    assert.deepEqual(req.body.context.withheld, ["ConfigMap/creds"]);
    assert.ok(!JSON.stringify(req.body).includes(SECRET));
    assert.deepEqual(
      objects.map((o) => (o.metadata as { name: string }).name),
      ["a", "creds"],
    );
  });

  test("webhook-no-additions: by default a pre-apply webhook may change declared objects but not add one; the step fails naming the object", async () => {
    const spec = specWith(hook());
    const binding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "pwned" },
      roleRef: { kind: "ClusterRole", name: "cluster-admin" },
    };
    server.on("pre-apply", {
      kind: "ok",
      change: (children) => ({ ...children, "ClusterRoleBinding/pwned": binding }),
    });
    await assert.rejects(hooksOf(spec).render([configMap("a")], io(), { send: true }), (e: Error) => {
      assert.ok(isPermanent(e), "the hook's answer will not change on a retry");
      assert.match(
        e.message,
        /pre-apply hook audit .*added ClusterRoleBinding\/pwned, which the step does not declare/,
      );
      assert.match(e.message, /allow: \{add: true/, "the message says how to allow it");
      return true;
    });
  });

  test("webhook-allowed-additions: with allow.add, additions in the allowed namespaces are applied; others still fail", async () => {
    const spec = specWith(hook("allow: {add: true, namespaces: [apps]}\n    "), {}, "state: {}\n");
    server.on("pre-apply", {
      kind: "ok",
      change: (children) => ({
        ...children,
        "ConfigMap/extra -n apps": { ...configMap("extra"), metadata: { name: "extra", namespace: "apps" } },
      }),
    });
    const hooks = hooksOf(spec);
    const out = io();
    const objects = await hooks.render([configMap("a")], out, { send: true });
    assert.deepEqual(
      objects.map((o) => (o.metadata as { name: string }).name),
      ["a", "extra"],
    );
    assert.deepEqual(
      hooks.added().map((o) => (o.metadata as { name: string }).name),
      ["extra"],
    );
    assert.ok(
      out.lines.some((l) => /1 of them added: ConfigMap\/extra -n apps/.test(l)),
      out.lines.join("\n"),
    );
    server.on("pre-apply", {
      kind: "ok",
      change: (children) => ({
        ...children,
        "ConfigMap/x -n kube-system": { ...configMap("x"), metadata: { name: "x", namespace: "kube-system" } },
      }),
    });
    await assert.rejects(
      hooks.render([configMap("a")], io(), { send: true }),
      /added ConfigMap\/x -n kube-system in namespace kube-system: allow.namespaces is \[apps\]/,
    );
    const binding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "pwned" },
    };
    server.on("pre-apply", {
      kind: "ok",
      change: (children) => ({ ...children, "ClusterRoleBinding/pwned": binding }),
    });
    await assert.rejects(
      hooks.render([configMap("a")], io(), { send: true }),
      /added ClusterRoleBinding\/pwned, a cluster-scoped object, and hook audit allows only namespaced additions/,
    );
  });

  test("webhook-never-sees-secret: a pre-apply webhook cannot replace an object it was not shown; the step fails naming it", async () => {
    const spec = specWith(hook());
    server.on("pre-apply", {
      kind: "ok",
      change: (children) => ({ ...children, "ConfigMap/creds": configMap("creds", { token: "***" }) }),
    });
    await assert.rejects(
      hooksOf(spec).render([configMap("a"), configMap("creds", { token: SECRET })], io(), { send: true }),
      (e: Error) => {
        assert.ok(isPermanent(e));
        assert.match(e.message, /pre-apply hook audit .*returned ConfigMap\/creds, which it was not shown/);
        return true;
      },
    );
  });

  test("post-apply is told the outcome and the objects sent; finalize runs only when destroying", async () => {
    const spec = specWith(hook());
    server.on("pre-apply", { kind: "ok" });
    server.on("post-apply", { kind: "ok" });
    const hooks = hooksOf(spec);
    await hooks.render([configMap("a")], io(), { send: true });
    await hooks.afterStep({ status: "ok", reason: "1 created" }, io(), async () => undefined);
    const req = server.requests.at(-1)!;
    assert.equal(req.body.phase, "post-apply");
    assert.deepEqual(req.body.context.outcome, { status: "ok", reason: "1 created" });
    assert.deepEqual(Object.keys(req.body.children), ["ConfigMap/a"]);
    const before = server.count("finalize");
    await hooks.beforeTeardown(io());
    assert.equal(server.count("finalize"), before, "finalize is for destroy");
    await hooksOf(spec, "destroy").beforeTeardown(io());
    assert.equal(server.count("finalize"), before + 1);
  });

  test("post-apply: permanent: false is retried under the step's retries, then succeeds", async () => {
    const spec = specWith(hook());
    server.on("post-apply", { kind: "error", message: "busy" }, { kind: "error", message: "busy" }, { kind: "ok" });
    const before = server.count("post-apply");
    const sleeps: number[] = [];
    await hooksOf(spec).afterStep({ status: "ok", reason: "x" }, io(), async (ms) => void sleeps.push(ms));
    assert.equal(server.count("post-apply"), before + 3);
    assert.equal(sleeps.length, 2);
  });
});

/** A process is gone once it no longer exists or is a zombie its new parent has yet to reap. */
function assertGone(pid: number): void {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return;
  }
  assert.equal(
    stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3),
    "Z",
    `process ${pid} outlived its function: ${stat}`,
  );
}

/** Runs an executable with stdin, asynchronously (the bridge's server lives in this process). */
function runWith(file: string, input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, [], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("helm's post-renderer bridge (the executable helm runs, a real process)", () => {
  test("pipes the manifest through the khook process and prints the transformed one; a hook's error exits 1 with its message", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-pr-"));
    let fail = false;
    const pr = await startPostRenderer(dir, async (manifest) => {
      if (fail) throw new Error("post-render hook limits rejected the step's objects");
      return objectsManifest(
        manifestObjects(manifest).map((o) => ({
          ...o,
          metadata: { ...(o.metadata as object), labels: { hooked: "yes" } },
        })),
      );
    });
    try {
      const manifest =
        "---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
      const ok = await runWith(pr.executable, manifest);
      assert.equal(ok.status, 0, ok.stderr);
      assert.deepEqual(
        manifestObjects(ok.stdout).map((o) => [
          (o.metadata as { name: string }).name,
          (o.metadata as { labels: unknown }).labels,
        ]),
        [
          ["a", { hooked: "yes" }],
          ["b", { hooked: "yes" }],
        ],
      );
      fail = true;
      const bad = await runWith(pr.executable, manifest);
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /rejected the step's objects/);
      assert.equal(bad.stdout, "");
    } finally {
      await pr.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
