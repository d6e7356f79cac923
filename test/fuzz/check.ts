/**
 * The loader fuzz's invariants, checked for one input by running the CLI in-process:
 * - `validate` and `plan --offline`, each as text and as JSON, exit 0 or 2, never anything else
 *   (the CLI turns an unexpected exception into exit 1);
 * - they agree on validity;
 * - an exit 2 lists its problems, each with file:line:column;
 * - no secret value, nor a fragment of one, nor a common encoding of one, is in any output.
 * Time and memory are measured by the runner (run.ts), which bounds them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { main } from "../../provider/cli/main.js";
import { encodedForms } from "../../provider/redact.js";
import { SECRET_PREFIX, secretValues, type LoaderInput } from "./inputs.js";

/** A scratch copy of examples/, so mutated examples still find the files they reference. */
export interface Workspace {
  examplesDir: string;
  specFile: string;
  dispose(): void;
}

export function createWorkspace(repoRoot: string): Workspace {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-fuzz-"));
  const examplesDir = path.join(dir, "examples");
  fs.cpSync(path.join(repoRoot, "examples"), examplesDir, {
    recursive: true,
    filter: (src) => !src.includes("node_modules"),
  });
  return {
    examplesDir,
    specFile: path.join(examplesDir, "fuzz.khook.yaml"),
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

interface CliRun {
  argv: string[];
  code: number;
  stdout: string;
  stderr: string;
}

async function runCli(argv: string[], env: Record<string, string>): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await main(argv, { stdout, stderr, env });
  return { argv, code, stdout: out, stderr: err };
}

/** The command without its spec and variable flags, for messages. */
function command(r: CliRun): string {
  return r.argv.slice(0, r.argv.indexOf("-f")).join(" ");
}

/** The shortest fragment of a secret that counts as a leak when it shows up in output. */
const FRAGMENT = 8;

/** Every output form a secret must not take: raw, encoded, and (for long ones) any 8-character run of it. */
function leakForms(secret: string, publicText: string): string[] {
  // Messages quote public text (Go-style, like JSON) and JSON output escapes it again (`\"` becomes
  // `\\\"`); a short form of the secret that the public input yields that way, once or twice, is
  // printed legitimately, like a public run below.
  const escapedOnce = JSON.stringify(publicText);
  const escapedTwice = JSON.stringify(escapedOnce);
  const isPublic = (f: string): boolean =>
    publicText.includes(f) || escapedOnce.includes(f) || escapedTwice.includes(f);
  // A short line of a multi-line secret (`\"|`) also occurs by chance, e.g. as the JSON escaping of a
  // token a message quotes: lines count from FRAGMENT characters, like any other piece of the secret.
  const lines = new Set(secret.includes("\n") ? secret.split(/\r?\n/).map((l) => l.trim()) : []);
  const forms = encodedForms(secret).filter(
    (f) => f.length >= 3 && (f === secret || !isPublic(f)) && (!lines.has(f) || f.length >= FRAGMENT),
  );
  const chars = [...secret];
  for (let i = 0; i + FRAGMENT <= chars.length; i++) {
    const run = chars.slice(i, i + FRAGMENT).join("");
    // A run the input also holds in the open (spec text, plain variables) may be printed legitimately.
    if (run.trim().length === FRAGMENT && !isPublic(run)) forms.push(run);
  }
  return forms;
}

const PROBLEM_LINE = /^ {2}- (.*?):(\d+):(\d+): /;

/** The invariants' violations (none when the input passes), and what validate printed. */
export async function checkLoaderInput(
  input: LoaderInput,
  workspace: Workspace,
): Promise<{ violations: string[]; exitCode: number; validateStderr: string }> {
  fs.writeFileSync(workspace.specFile, input.spec);
  const flags = ["-f", workspace.specFile, ...input.set.flatMap((s) => ["--set", s])];
  const runs = [
    await runCli(["validate", ...flags], input.env),
    await runCli(["validate", "-o", "json", ...flags], input.env),
    await runCli(["plan", "--offline", ...flags], input.env),
    await runCli(["plan", "--offline", "-o", "json", ...flags], input.env),
  ];
  const violations: string[] = [];
  for (const r of runs) {
    if (r.code !== 0 && r.code !== 2)
      violations.push(`${command(r)}: exit ${r.code}, not 0 or 2: ${firstLines(r.stderr)}`);
  }
  if (new Set(runs.map((r) => r.code)).size > 1)
    violations.push(
      `validate and plan --offline disagree: exits ${runs.map((r) => `${command(r)}=${r.code}`).join(", ")}`,
    );

  const validate = runs[0]!;
  if (validate.code === 2) violations.push(...problemListViolations(validate.stderr, workspace.specFile));

  const secrets = secretValues(input).filter((s) => s.length >= 3);
  const publicText = [
    input.spec,
    ...input.set,
    ...Object.entries(input.env)
      .filter(([k]) => !k.startsWith(SECRET_PREFIX))
      .map(([, v]) => v),
  ].join("\n");
  for (const secret of secrets) {
    for (const form of leakForms(secret, publicText)) {
      for (const r of runs) {
        if (r.stdout.includes(form) || r.stderr.includes(form))
          violations.push(
            `${command(r)} prints ${JSON.stringify(form)}, a secret's ${form === secret ? "value" : "form or fragment"}`,
          );
      }
    }
  }
  return { violations: [...new Set(violations)], exitCode: validate.code, validateStderr: validate.stderr };
}

/** Exit 2's message: "Error: FILE is invalid: N problem(s)" and N lines "  - FILE:LINE:COL: ...". */
function problemListViolations(stderr: string, file: string): string[] {
  const lines = stderr.split("\n");
  const header = /^Error: (.*) is invalid: (\d+) problems?$/.exec(lines[0] ?? "");
  if (header === null) return [`exit 2 without the problem list header: ${firstLines(stderr)}`];
  const problems = lines.filter((l) => l.startsWith("  - "));
  const out: string[] = [];
  if (problems.length !== Number(header[2]))
    out.push(`exit 2 announces ${header[2]} problems and lists ${problems.length}: ${firstLines(stderr)}`);
  for (const p of problems) {
    const m = PROBLEM_LINE.exec(p);
    if (m === null || m[1] !== file) out.push(`a problem without file:line:column: ${p.slice(0, 200)}`);
  }
  return out;
}

function firstLines(text: string): string {
  return text.split("\n").slice(0, 3).join(" | ").slice(0, 300);
}
