/**
 * The khook CLI. Thin: flags -> engine -> text or JSON.
 * Exit codes: 0 ok, 1 execution failure, 2 invalid input (including bad flags).
 */
import { DEFAULT_PARALLELISM } from "../engine/run-types.js";
import { EXIT_CODES, invalidInput, isKhookError } from "../errors.js";
import { CLUSTER_OPTIONS, COMMON_OPTIONS, parseCommandArgs } from "./args.js";
import {
  graphCommand,
  offlinePlanCommand,
  schemaCommand,
  validateCommand,
  versionCommand,
} from "./commands/offline.js";
import { Output, type Streams } from "./output.js";
import { isOfflineCommand } from "./offline-commands.js";
import { ProcessOutput } from "./process-output.js";

type Command = (argv: string[], out: Output) => Promise<number>;

export const USAGE = `khook: declarative cluster bootstrap (khook.io/v1)

Usage: khook <command> [flags]

Commands:
  validate      check a spec without touching a cluster
  plan          show what apply would do (--offline: no cluster; --diff: server-side dry-run diff;
                --live: which completed steps drifted in the cluster, --exit-code: exit 3 when one did)
  apply         run the spec against the cluster (--repair: re-run only the steps plan --live finds drifted)
  destroy       undo what khook created, in reverse order
  status        show the state record of the last run
  unlock        clear the lease on the state record left by a run that is gone
  graph         print the step graph (--format mermaid|dot, or -o json)
  schema        print the JSON Schema of khook.io/v1
  version       print the version

Common flags:
  -f, --filename FILE     the spec (- for stdin)
      --set NAME=value    set a variable (repeatable; highest precedence)
      --var-file FILE     a flat NAME: value YAML map (repeatable)
      --var-prefix P      environment prefix for variables (default KHOOK_VAR_)
      --secret-prefix P   environment prefix for secret variables (default KHOOK_SECRET_)
  -o, --output FORMAT     text (default) or json

Cluster flags (plan, apply, destroy, status, unlock):
      --kubeconfig FILE   kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, in-cluster)
      --context NAME      kubeconfig context
      --parallelism N     steps to run at once (default ${DEFAULT_PARALLELISM})
      --wait-for-cluster D  first wait up to D (e.g. 10m) for the API server's /readyz (0s: do not wait)

khook unlock -f FILE clears the lease of the spec's state record (--record NAMESPACE/NAME names the record
instead of a spec, e.g. for a Pulumi resource's record).

Variables: \${NAME}, \${NAME:-default}, \${NAME|pipeline}; write $\${ for a literal \${.`;

async function planCommand(argv: string[], out: Output): Promise<number> {
  const { values } = parseCommandArgs("plan", argv, {
    ...COMMON_OPTIONS,
    offline: { type: "boolean" },
    diff: { type: "boolean" },
    live: { type: "boolean" },
    "exit-code": { type: "boolean" },
    ...CLUSTER_OPTIONS,
  });
  if (values.offline && values.diff) {
    throw invalidInput(
      "khook plan: --diff compares with the live cluster (a server-side dry run), so it cannot be combined with --offline; drop --offline to see the diff, or drop --diff",
      [],
    );
  }
  if (values.live && (values.offline || values.diff)) {
    throw invalidInput(
      `khook plan: --live compares what the state record calls completed with the cluster; it cannot be combined with ${values.offline ? "--offline" : "--diff"} (run them separately)`,
      [],
    );
  }
  if (values["exit-code"] && !values.live) {
    throw invalidInput("khook plan: --exit-code goes with --live (exit 3 when a step drifted)", []);
  }
  if (values.offline) return offlinePlanCommand(argv, out, values);
  const online = await import("./commands/cluster.js");
  return values.live ? online.livePlanCommand(argv, out) : online.onlinePlanCommand(argv, out);
}

async function clusterCommand(
  name: "apply" | "destroy" | "status" | "unlock",
  argv: string[],
  out: Output,
): Promise<number> {
  const cluster = await import("./commands/cluster.js");
  return cluster.clusterCommands[name](argv, out);
}

export const COMMANDS: Record<string, Command> = {
  validate: validateCommand,
  plan: planCommand,
  apply: (argv, out) => clusterCommand("apply", argv, out),
  destroy: (argv, out) => clusterCommand("destroy", argv, out),
  status: (argv, out) => clusterCommand("status", argv, out),
  unlock: (argv, out) => clusterCommand("unlock", argv, out),
  graph: graphCommand,
  schema: schemaCommand,
  version: versionCommand,
};

/**
 * The process's streams for `command`, made only when needed: stdin when read (`-f -`); for the
 * commands that never run a step, stdout and stderr written to their descriptors until a write
 * needs the stream (process-output.ts says when and why). The others keep Node's streams: on a
 * pipe they queue what a slow reader has not taken, where a blocking write would stop the event
 * loop, and with it an apply's lease renewals, watches and children.
 */
export function processStreams(command: string | undefined): Streams {
  const direct = isOfflineCommand(command);
  return {
    stdout: direct ? new ProcessOutput(1, () => process.stdout) : process.stdout,
    stderr: direct ? new ProcessOutput(2, () => process.stderr) : process.stderr,
    get stdin() {
      return process.stdin;
    },
    env: process.env,
  };
}

/**
 * With `-o json`, an error that a command did not print as its own summary (apply, destroy, status
 * and the online plans print theirs, with what they learnt of the cluster) is still one JSON
 * document on stdout: its outcome, error, problems and exit code; nothing of a cluster is known.
 * Returns the exit code it printed, or undefined when text was asked for.
 */
async function printedAsJson(e: unknown, argv: readonly string[], out: Output): Promise<number | undefined> {
  // Loaded on this path alone: a command that succeeds, or prints text, does not pay for it.
  const { failureSummary, jsonRequested, NOT_TRIED, outcomeOfError } = await import("./outcome-summary.js");
  if (!jsonRequested(argv)) return undefined;
  const { document, exitCode } = failureSummary(e, outcomeOfError(e, NOT_TRIED), {
    head: {},
    cluster: { server: null, kubeSystemUid: null },
  });
  out.json(document);
  out.err(`Error: ${e instanceof Error ? e.message : String(e)}`);
  return exitCode;
}

export async function main(argv: string[], streams: Streams = processStreams(argv[0])): Promise<number> {
  const out = new Output(streams);
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    out.out(USAGE);
    return name === undefined ? EXIT_CODES["invalid-input"] : 0;
  }
  if (name === "--version") return versionCommand([], out);
  const command = COMMANDS[name];
  if (command === undefined) {
    out.err(`khook: unknown command "${name}"\nRun 'khook --help' for usage.`);
    return EXIT_CODES["invalid-input"];
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    out.out(USAGE);
    return 0;
  }
  try {
    return await command(rest, out);
  } catch (e) {
    const printed = await printedAsJson(e, rest, out);
    if (printed !== undefined) return printed;
    if (isKhookError(e)) {
      out.err(`Error: ${e.message}`);
      return e.exitCode;
    }
    out.err(`Error: ${e instanceof Error ? e.message : String(e)}`);
    return EXIT_CODES.execution;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
