/**
 * Process start-up (issue 13): a whole `khook validate` process on a one-step spec, against a bare
 * `node -e 0`, run in turn so both see the same machine load. Target: <= 100 ms wall (median).
 * Also the same command without the compile cache, and a Pulumi provider's first handler call
 * (require the handlers, check a spec), which every `pulumi preview` pays. Figures, not assertions.
 *
 * CPU time is the children's user + system time from /proc/self/stat (cutime, cstime), which counts
 * every waited-for child: on a busy machine it moves far less than wall time.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";

const RUNS = 15;
const TARGET_MS = 100;

/** Clock ticks spent by this process's waited-for children so far. */
export function childTicks(): number {
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  // Fields after the parenthesised command name; cutime and cstime are fields 16 and 17 (1-based).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[13]) + Number(fields[14]);
}

export const TICKS_PER_SECOND = ((): number => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Figure {
  wallMs: number;
  cpuMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs the commands in turn (A B C A B C ...) after one warm-up each; wall is the median, CPU the mean. */
function measureInTurn(commands: Record<string, { args: string[]; env?: NodeJS.ProcessEnv }>): Record<string, Figure> {
  const names = Object.keys(commands);
  const walls = new Map<string, number[]>(names.map((n) => [n, []]));
  const ticks = new Map<string, number>(names.map((n) => [n, 0]));
  const run = (name: string): number => {
    const c = commands[name]!;
    const t0 = performance.now();
    execFileSync(process.execPath, c.args, { stdio: "ignore", env: c.env ?? process.env });
    return performance.now() - t0;
  };
  for (const n of names) run(n);
  for (let i = 0; i < RUNS; i++) {
    for (const n of names) {
      const before = childTicks();
      walls.get(n)!.push(run(n));
      ticks.set(n, ticks.get(n)! + childTicks() - before);
    }
  }
  return Object.fromEntries(names.map((n) => [n, { wallMs: median(walls.get(n)!), cpuMs: (ticks.get(n)! / RUNS / TICKS_PER_SECOND) * 1000 }]));
}

const SPEC = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: startup
steps:
  - name: config
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings
            data:
              mode: bootstrap
`;

export async function benchStartup(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-bench-startup-"));
  try {
    const file = path.join(dir, "spec.yaml");
    fs.writeFileSync(file, SPEC);
    const bin = path.resolve(__dirname, "../../bin/khook");
    const handlers = path.resolve(__dirname, "../provider/pulumi/handlers.js");
    // The inputs the SDK sends: the spec text, not its path.
    const providerCheck = `require(${JSON.stringify(handlers)}).check({}, { spec: ${JSON.stringify(SPEC)} }).then((r) => { if (r.failures.length > 0) process.exit(3); })`;
    const cacheOff = { ...process.env, NODE_DISABLE_COMPILE_CACHE: "1" };
    const f = measureInTurn({
      khook: { args: [bin, "validate", "-f", file] },
      bare: { args: ["-e", "0"] },
      uncached: { args: [bin, "validate", "-f", file], env: cacheOff },
      provider: { args: ["-e", providerCheck] },
    });
    const row = (label: string, x: Figure): string => `  ${label.padEnd(44)} ${x.wallMs.toFixed(0).padStart(4)} ms wall  ${x.cpuMs.toFixed(0).padStart(4)} ms cpu`;
    console.log(`== start-up: whole processes, in turn (median wall, mean cpu of ${RUNS} runs after a warm-up) ==`);
    console.log(`${row("khook validate, one-step spec", f.khook!)}  (target <= ${TARGET_MS} ms wall: ${f.khook!.wallMs <= TARGET_MS ? "met" : "NOT met"})`);
    console.log(row("bare node -e 0 (the floor)", f.bare!));
    console.log(`${row("khook validate without the compile cache", f.uncached!)}  (the cache saves ${(f.uncached!.cpuMs - f.khook!.cpuMs).toFixed(0)} ms cpu)`);
    console.log(row("Pulumi provider: load handlers + check", f.provider!));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
