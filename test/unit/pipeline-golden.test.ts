/**
 * Golden vectors: the output of Go's text/template + sprig v3 for `{{ . | <pipeline> }}`, recorded by
 * test/golden/pipeline (Go program) into vectors.json. The evaluator must render exactly what Go
 * renders, and fail (with PipelineError) exactly where Go fails. No Go is needed here: only JSON.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { PipelineError } from "../../provider/gotemplate/index.js";
import { evaluatePipeline } from "./support/gotemplate.js";
import { repoRoot } from "../harness/util.js";

interface Vector {
  value: string;
  pipeline: string;
  output?: string;
  error?: boolean;
  errorContains?: string;
  goError?: string;
}

const vectors: Vector[] = JSON.parse(
  fs.readFileSync(path.join(repoRoot(), "test", "golden", "pipeline", "vectors.json"), "utf8"),
);

/** Error texts that differ from Go's on purpose (khook explains exclusions instead of "not defined"). */
const KHOOK_WORDING: ReadonlyMap<string, string> = new Map([["not defined", "not"]]);

test("golden vectors file is substantial", () => {
  assert.ok(vectors.length >= 300, `only ${vectors.length} vectors`);
});

test("every golden vector renders exactly like Go text/template + sprig", () => {
  const failures: string[] = [];
  for (const v of vectors) {
    const label = `${JSON.stringify(v.value.length > 60 ? v.value.slice(0, 60) + "…" : v.value)} | ${v.pipeline.length > 120 ? v.pipeline.slice(0, 120) + "…" : v.pipeline}`;
    if (v.error) {
      try {
        const out = evaluatePipeline(v.value, v.pipeline);
        failures.push(`${label}: Go fails (${v.goError}) but khook rendered ${JSON.stringify(out)}`);
      } catch (e) {
        if (!(e instanceof PipelineError)) {
          failures.push(
            `${label}: threw ${(e as Error)?.constructor?.name}, not PipelineError: ${(e as Error)?.message}`,
          );
        } else if (v.errorContains && !e.message.includes(v.errorContains)) {
          const alt = KHOOK_WORDING.get(v.errorContains);
          if (!alt || !e.message.includes(alt))
            failures.push(`${label}: error ${JSON.stringify(e.message)} lacks ${JSON.stringify(v.errorContains)}`);
        }
      }
      continue;
    }
    try {
      const out = evaluatePipeline(v.value, v.pipeline);
      if (out !== v.output)
        failures.push(`${label}: got ${JSON.stringify(out)}, Go renders ${JSON.stringify(v.output)}`);
    } catch (e) {
      failures.push(`${label}: threw ${(e as Error).message}; Go renders ${JSON.stringify(v.output)}`);
    }
  }
  assert.equal(
    failures.length,
    0,
    `${failures.length}/${vectors.length} vectors differ from Go:\n` + failures.join("\n"),
  );
});
