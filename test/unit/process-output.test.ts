/**
 * The CLI writes stdout and stderr to their descriptors (provider/cli/process-output.ts) and hands
 * over to Node's stream where a synchronous write cannot do what the stream would. Real processes
 * and real pipes: the cases are what the kernel answers.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { processStreams } from "../../provider/cli/main.js";
import { ProcessOutput } from "../../provider/cli/process-output.js";
import { repoRoot } from "./support/spec-files.js";

const PROCESS_OUTPUT = path.join(repoRoot(), "dist", "provider", "cli", "process-output.js");
const LINES = 20_000;

/** A child that writes LINES numbered lines to stdout through ProcessOutput, then says so on stderr. */
function writerScript(makeStreamFirst: boolean): string {
  return `
    const fs = require("node:fs");
    const { ProcessOutput } = require(${JSON.stringify(PROCESS_OUTPUT)});
    // Node's stdout stream for a pipe makes the descriptor non-blocking, as a parent or a library may.
    ${makeStreamFirst ? "process.stdout;" : ""}
    const out = new ProcessOutput(1, () => process.stdout);
    for (let i = 0; i < ${LINES}; i++) out.write("line " + i + " " + "x".repeat(100) + "\\n");
    fs.writeSync(2, "written\\n");
  `;
}

/**
 * Runs the writer; with `readLate`, nobody reads its stdout until it has written every line (a
 * blocking write would then wait forever: only the non-blocking case can be read late).
 */
function runWriter(
  makeStreamFirst: boolean,
  readLate: boolean,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["-e", writerScript(makeStreamFirst)], { stdio: ["ignore", "pipe", "pipe"] });
  if (readLate) child.stdout.pause();
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    if (stderr.includes("written")) child.stdout.resume();
  });
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

function assertEveryLineInOrder(stdout: string): void {
  const lines = stdout.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, LINES);
  lines.forEach((l, i) => assert.ok(l.startsWith(`line ${i} `), `line ${i}: ${l.slice(0, 20)}`));
}

test("a reader slower than the writer on a non-blocking pipe loses nothing: the rest goes through Node's stream, in order", async () => {
  // 2 MB against a 64 KiB pipe: the descriptor answers EAGAIN long before the last line.
  const r = await runWriter(true, true);
  assert.equal(r.code, 0, r.stderr);
  assertEveryLineInOrder(r.stdout);
});

test("a blocking pipe takes every line by descriptor writes, which wait for the reader", async () => {
  const r = await runWriter(false, false);
  assert.equal(r.code, 0, r.stderr);
  assertEveryLineInOrder(r.stdout);
});

test("a file gets the text as written, and a reader that went away is reported to the 'error' listeners", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-process-output-"));
  const file = path.join(dir, "out.txt");
  const fd = fs.openSync(file, "w");
  const unused = (): NodeJS.WriteStream => assert.fail("a file needs no stream");
  const out = new ProcessOutput(fd, unused);
  out.write("héllo\n");
  out.write("world\n");
  fs.closeSync(fd);
  assert.equal(fs.readFileSync(file, "utf8"), "héllo\nworld\n");

  const [readEnd, writeEnd] = pipePair();
  fs.closeSync(readEnd);
  const errors: string[] = [];
  const broken = new ProcessOutput(writeEnd, unused);
  broken.on("error", (e) => errors.push(e.code ?? ""));
  broken.write("nobody reads this\n");
  fs.closeSync(writeEnd);
  assert.deepEqual(errors, ["EPIPE"]);
  fs.rmSync(dir, { recursive: true });
});

/** A pipe's two descriptors, from the shell (Node makes none without a child or a socket). */
function pipePair(): [number, number] {
  const fifo = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "khook-fifo-")), "fifo");
  const made = spawnSync("mkfifo", [fifo]);
  assert.equal(made.status, 0, String(made.stderr));
  const readEnd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const writeEnd = fs.openSync(fifo, fs.constants.O_WRONLY);
  return [readEnd, writeEnd];
}

test("the commands that run steps keep Node's streams, which queue what a slow reader of a pipe has not taken; the offline ones write their descriptors", () => {
  // A blocking write to a pipe nobody reads would stop apply's event loop: its lease renewals, watches and children.
  for (const command of ["apply", "plan", "destroy", "status", "unlock", "a-future-command", undefined]) {
    const streams = processStreams(command);
    assert.equal(streams.stdout, process.stdout, `${String(command)}: stdout`);
    assert.equal(streams.stderr, process.stderr, `${String(command)}: stderr`);
  }
  for (const command of ["validate", "graph", "schema", "version"]) {
    const streams = processStreams(command);
    assert.ok(streams.stdout instanceof ProcessOutput, `${command}: stdout`);
    assert.ok(streams.stderr instanceof ProcessOutput, `${command}: stderr`);
  }
});
