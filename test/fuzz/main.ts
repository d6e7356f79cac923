/**
 * `./dev fuzz [--seed N] [--runs N] [--minutes M]`: the loader fuzz without the test suite's bound.
 * Runs batches of inputs with fresh seeds until a failure, the time limit, or Ctrl-C, and prints
 * each batch's figures. A failure prints its exact input, to be kept in regressions.ts.
 */
import { parseArgs } from "node:util";
import { describeReport, runLoaderFuzz } from "./run.js";
import { repoRoot } from "../harness/util.js";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { seed: { type: "string" }, runs: { type: "string" }, minutes: { type: "string" } },
  });
  const runs = Number(values.runs ?? 1000);
  const deadline = values.minutes === undefined ? Infinity : Date.now() + Number(values.minutes) * 60_000;
  let seed = values.seed === undefined ? (Date.now() ^ (process.pid << 8)) >>> 0 : Number(values.seed);
  let total = 0;
  console.log(
    `loader fuzz: batches of ${runs} inputs${Number.isFinite(deadline) ? ` for ${values.minutes} min` : " until Ctrl-C"}`,
  );
  while (Date.now() < deadline) {
    const report = await runLoaderFuzz(repoRoot(), {
      seed,
      runs,
      ...(Number.isFinite(deadline) ? { timeLimitMs: Math.max(1000, deadline - Date.now()) } : {}),
    });
    total += report.inputs;
    console.log(describeReport(report));
    if (report.failure !== undefined) {
      console.log(
        `\nFAILED (${report.failure.reason}) after ${total} inputs:\n${report.failure.message}\n\nthe input (keep it in test/fuzz/regressions.ts):\n${JSON.stringify(report.failure.input, null, 2)}`,
      );
      return 1;
    }
    seed = (seed + 0x9e3779b9) >>> 0;
  }
  console.log(`no failure in ${total} inputs`);
  return 0;
}

void main().then((code) => (process.exitCode = code));
