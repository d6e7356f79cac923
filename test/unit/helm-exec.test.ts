/** The one process runner helm and kustomize go through (provider/tools/exec.ts). */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { Redactor } from "../../provider/redact.js";
import { describeFailure, runTool } from "../../provider/tools/exec.js";

function script(body: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-exec-"));
  const file = path.join(dir, "tool");
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

function redactor(...secrets: string[]): Redactor {
  const r = new Redactor();
  for (const s of secrets) r.add(s);
  return r;
}

describe("tools/exec: one process runner", () => {
  test("exit codes are values, and stdout, stderr and the command line are redacted", async () => {
    const bin = script(`echo "out hunter2-secret"; echo "err hunter2-secret http://u:pw@host/x" >&2; exit 3`);
    const r = await runTool(bin, { args: ["--flag", "hunter2-secret"], redactor: redactor("hunter2-secret") });
    assert.equal(r.ok, false);
    assert.equal(r.exitCode, 3);
    assert.equal(r.stdout, "out ***\n");
    assert.equal(r.stderr, "err *** http://***:***@host/x\n");
    assert.ok(r.command.endsWith("--flag ***"));
    assert.equal(r.rawStdout, undefined, "raw output only on request");
    const msg = describeFailure(r, "doing things");
    assert.match(msg, /^doing things failed \(exit code 3\):\nerr \*\*\*/);
  });

  test("raw stdout is available only when asked for, for parsing, never printing", async () => {
    const bin = script(`echo "value hunter2-secret"`);
    const r = await runTool(bin, { args: [], redactor: redactor("hunter2-secret"), keepRawStdout: true });
    assert.equal(r.rawStdout, "value hunter2-secret\n");
    assert.equal(r.stdout, "value ***\n");
  });

  test("stdin is fed to the child and closed", async () => {
    const bin = script(`cat`);
    const r = await runTool(bin, { args: [], redactor: new Redactor(), stdin: "from stdin" });
    assert.equal(r.stdout, "from stdin");
  });

  test("a missing program is a value with the spawn error, not an exception", async () => {
    const r = await runTool("/nonexistent/tool", { args: [], redactor: new Redactor() });
    assert.equal(r.ok, false);
    assert.equal(r.spawnError?.code, "ENOENT");
    assert.match(describeFailure(r, "x"), /could not start/);
  });

  test("an abort stops the child with SIGTERM, then SIGKILL when it ignores SIGTERM", async () => {
    const polite = script(`echo started; exec sleep 30`);
    const ctl = new AbortController();
    const p = runTool(polite, { args: [], redactor: new Redactor(), signal: ctl.signal });
    setImmediate(() => ctl.abort(new Error("stop")));
    const r = await p;
    assert.equal(r.aborted, true);
    assert.equal(r.ok, false);
    assert.equal(r.exitSignal, "SIGTERM");

    const ready = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "khook-exec-")), "ready");
    const stubborn = script(`trap '' TERM; touch ${ready}; while :; do sleep 1; done`);
    const ctl2 = new AbortController();
    const p2 = runTool(stubborn, {
      args: [],
      redactor: new Redactor(),
      signal: ctl2.signal,
      killGraceMs: 50,
    });
    // Abort once the trap is installed.
    while (!fs.existsSync(ready)) await new Promise((r) => setTimeout(r, 20));
    ctl2.abort();
    const r2 = await p2;
    assert.equal(r2.aborted, true);
    assert.equal(r2.exitSignal, "SIGKILL");
  });

  test("an already-aborted signal starts nothing", async () => {
    const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "khook-exec-")), "ran");
    const bin = script(`touch ${marker}`);
    const ctl = new AbortController();
    ctl.abort();
    const r = await runTool(bin, { args: [], redactor: new Redactor(), signal: ctl.signal });
    assert.equal(r.aborted, true);
    assert.equal(fs.existsSync(marker), false);
  });

  test("output beyond the cap is dropped and flagged", async () => {
    const bin = script(`head -c 100000 /dev/zero | tr '\\0' a; echo; head -c 5000 /dev/zero | tr '\\0' e >&2`);
    const r = await runTool(bin, { args: [], redactor: new Redactor(), maxStdoutBytes: 1000, maxStderrBytes: 100 });
    assert.equal(r.ok, true);
    assert.equal(r.truncated, true);
    assert.equal(r.stdout.length, 1000);
    assert.equal(r.stderr.length, 100, "the last bytes of stderr are kept");
  });

  test("the environment is process.env plus overrides; undefined removes a variable", async () => {
    const bin = script(`echo "A=$KHOOK_T_A B=\${KHOOK_T_B-unset}"`);
    process.env.KHOOK_T_B = "inherited";
    try {
      const r = await runTool(bin, {
        args: [],
        redactor: new Redactor(),
        env: { KHOOK_T_A: "set", KHOOK_T_B: undefined },
      });
      assert.equal(r.stdout, "A=set B=unset\n");
    } finally {
      delete process.env.KHOOK_T_B;
    }
  });
});
