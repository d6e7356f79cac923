/** The CLI's run views: the live TTY view (spinner, elapsed time, attempt n/m, NO_COLOR) and the line view. */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { Output } from "../../provider/cli/output.js";
import { createProgressView } from "../../provider/cli/progress.js";
import type { RunEvent } from "../../provider/engine/run.js";

function streams(tty: boolean, env: NodeJS.ProcessEnv) {
  const stdout = Object.assign(new PassThrough(), { isTTY: tty, columns: 120 });
  const stderr = Object.assign(new PassThrough(), { isTTY: tty });
  let err = "";
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  return { out: new Output({ stdout, stderr, env }), text: () => err };
}

const STEPS = [
  { name: "cert-manager", type: "helm" },
  { name: "issuer", type: "apply" },
];
const EVENTS: RunEvent[] = [
  { type: "run-started", spec: "boot", mode: "apply", steps: 2 },
  { type: "step-started", step: "cert-manager", stepType: "helm" },
  { type: "attempt-started", step: "cert-manager", attempt: 2, of: 3 },
  { type: "step-log", step: "cert-manager", message: "waiting for deployment/cert-manager" },
];

test("on a TTY the view redraws each step with a spinner, elapsed time and attempt n/m", () => {
  const { out, text } = streams(true, {});
  const view = createProgressView(out, STEPS, "Applying");
  for (const e of EVENTS) view.onEvent(e);
  view.finish();
  assert.match(
    text(),
    /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏].*cert-manager\s+helm\s+running\s+\S+\s+attempt 2\/3 waiting for deployment\/cert-manager/,
  );
  assert.match(text(), /\x1b\[\d+F/, "redraws in place");
  assert.match(text(), /\x1b\[36m/, "colour on a TTY");
});

test("NO_COLOR turns colour off on a TTY", () => {
  const { out, text } = streams(true, { NO_COLOR: "1" });
  const view = createProgressView(out, STEPS, "Applying");
  for (const e of EVENTS) view.onEvent(e);
  view.finish();
  assert.doesNotMatch(text(), /\x1b\[\d+m/);
});

test("without a TTY (or in CI) every event is one plain line", () => {
  const { out, text } = streams(false, {});
  const view = createProgressView(out, STEPS, "Applying");
  for (const e of EVENTS) view.onEvent(e);
  view.onEvent({
    type: "attempt-failed",
    step: "cert-manager",
    attempt: 2,
    of: 3,
    error: "boom",
    willRetry: true,
    retryInMs: 10_000,
  });
  view.finish();
  assert.match(text(), /^Applying boot: 2 steps$/m);
  assert.match(text(), /^\[cert-manager\] attempt 2\/3 failed: boom; retrying in 10s$/m);
  assert.doesNotMatch(text(), /\x1b/);
});
