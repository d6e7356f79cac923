/**
 * The loader fuzz, bounded for the suite: a fixed seed (the same inputs every run) and one fresh seed
 * per commit (printed, so a failure can be replayed with `./dev fuzz --seed N`), plus every failure the fuzzer
 * has found, kept with its exact input. `./dev fuzz` runs it without a bound.
 *
 * Invariants (test/fuzz/check.ts): exit 0 or 2 only; validate and plan --offline agree; an exit 2
 * lists its problems with file:line:column; no secret in any output. Each input also runs under a
 * time budget and a heap cap (test/fuzz/run.ts), as safety nets, not as timings.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { checkLoaderInput, createWorkspace } from "../fuzz/check.js";
import { LOADER_REGRESSIONS } from "../fuzz/regressions.js";
import { describeReport, runLoaderFuzz, type FuzzReport } from "../fuzz/run.js";
import { repoRoot } from "./support/spec-files.js";

const FIXED_SEED = 13;
const FIXED_RUNS = 400;
const FRESH_RUNS = 150;

/**
 * New inputs for every commit, the same inputs for every run of one commit: CI and a developer
 * checking a red CI run see the same result. Outside a git checkout it falls back to the clock.
 */
function freshSeed(): number {
  try {
    const head = execFileSync("git", ["rev-parse", "HEAD"], {
      cwd: repoRoot(),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    if (/^[0-9a-f]{8,}$/.test(head)) return Number.parseInt(head.slice(0, 8), 16) >>> 0;
  } catch {
    /* not a git checkout */
  }
  return (Date.now() ^ (process.pid << 8)) >>> 0;
}

function assertNoFailure(report: FuzzReport): void {
  if (report.failure === undefined) return;
  assert.fail(
    `loader fuzz, seed ${report.seed}: ${report.failure.reason}\n${report.failure.message}\n\nthe input (keep it in test/fuzz/regressions.ts):\n${JSON.stringify(report.failure.input, null, 2)}`,
  );
}

describe("loader fuzz", () => {
  test(`a fixed seed (${FIXED_SEED}), ${FIXED_RUNS} inputs: exit 0 or 2, validate and plan agree, problems have lines, no secret printed`, async (t) => {
    const report = await runLoaderFuzz(repoRoot(), { seed: FIXED_SEED, runs: FIXED_RUNS });
    t.diagnostic(describeReport(report));
    assertNoFailure(report);
    assert.equal(report.inputs, FIXED_RUNS);
    // The generators must reach past the first checks, or the deeper invariants test nothing.
    assert.ok(report.valid > 0, "no generated input was valid");
    assert.ok(report.valid < report.inputs, "no generated input was invalid");
  });

  test(`a fresh seed per commit, ${FRESH_RUNS} inputs (replay one with ./dev fuzz --seed N)`, async (t) => {
    const seed = freshSeed();
    t.diagnostic(`seed ${seed}`);
    const report = await runLoaderFuzz(repoRoot(), { seed, runs: FRESH_RUNS });
    t.diagnostic(describeReport(report));
    assertNoFailure(report);
  });

  describe("every failure the fuzzer found, with its exact input", () => {
    for (const regression of LOADER_REGRESSIONS) {
      test(
        regression.finding,
        { ...(regression.issue10 !== undefined ? { todo: `issue 10: ${regression.issue10}` } : {}) },
        async () => {
          const workspace = createWorkspace(repoRoot());
          try {
            const { violations, validateStderr } = await checkLoaderInput(regression.input, workspace);
            assert.deepEqual(violations, []);
            if (regression.reports !== undefined)
              assert.ok(validateStderr.includes(regression.reports), validateStderr);
          } finally {
            workspace.dispose();
          }
        },
      );
    }
  });
});
