/**
 * When a cluster does not answer, every run says so in the same shape: `khook apply`, `destroy` and
 * `status` with `-o json` print exactly one JSON document on stdout for every outcome (success on
 * the real test cluster, a failed step, invalid input, no usable kubeconfig, no answer, a wait that
 * ran out), with the outcome, the exit code and what is known of the cluster. The "no answer"
 * cluster is a real loopback server that accepts TCP connections and never answers
 * (support/silent-server.ts); the CLI is the real one, as a subprocess.
 *
 * No timed assertion: the bounds are checked by what the errors say (the server, the context, the
 * flag and its setting) and by the outcome; `./dev bench` reports the durations.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { testCluster, withNamespace } from "../harness/index.js";
import { applyStep, cliEnv, cm, khookSpec, runKhook, specDir, stateIn, type CliResult } from "./support/khook-cli.js";
import { kubeconfigFor, silentServer, type SilentServer } from "./support/silent-server.js";

interface Summary {
  spec: string | null;
  /** plan's word for the spec's name. */
  name?: string | null;
  mode?: string;
  status?: string;
  outcome: string;
  error?: string;
  problems?: { path: string; message: string; position?: { line: number; column: number } }[];
  steps?: { name: string; status: string }[];
  cluster: { server: string | null; kubeSystemUid: string | null };
  exitCode: number;
}

/** The one JSON document on stdout; fails the test, with both streams, when stdout is anything else. */
function summary(r: CliResult): Summary {
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.stdout);
  } catch {
    assert.fail(`stdout is not one JSON document (exit ${r.code}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  const s = parsed as Summary;
  assert.equal(s.exitCode, r.code, "the summary carries the exit code");
  return s;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const COMMANDS = ["apply", "destroy", "status"] as const;

let silent: SilentServer;
before(async () => {
  silent = await silentServer();
});
after(async () => {
  await silent.close();
});

describe("one summary for every outcome (khook apply/destroy/status -o json)", { timeout: 600_000 }, () => {
  test("success on a cluster that answers: outcome ok, and the cluster's server and kube-system UID", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "unanswered-ok");
    const { file } = specDir(khookSpec("answers", applyStep("cm", cm("cm", ns)), stateIn(ns)));
    const uid = (await cluster.kubectl(["get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}"])).stdout;
    const server = (
      await cluster.kubectl(["config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"])
    ).stdout;
    for (const command of ["apply", "status", "destroy"]) {
      const r = await runKhook([command, "-f", file, "-o", "json"], { env: cliEnv(cluster.kubeconfig) });
      const s = summary(r);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(s.outcome, "ok", command);
      assert.deepEqual(s.cluster, { server, kubeSystemUid: uid }, command);
    }
  });

  test("a failed step: outcome step-failed, exit 1, the step's error in its entry, the cluster known", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "unanswered-step");
    const failing = `  - name: never\n    timeout: 2s\n    wait:\n      for: jsonpath={.data.ready}=yes\n      on: configmap/absent\n      namespace: ${ns}\n`;
    const { file } = specDir(khookSpec("stepfails", failing));
    const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(cluster.kubeconfig) });
    const s = summary(r);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(s.outcome, "step-failed");
    assert.deepEqual(
      s.steps?.map((x) => [x.name, x.status]),
      [["never", "failed"]],
    );
    assert.notEqual(s.cluster.kubeSystemUid, null, "the cluster answered: its identity is known");
  });

  test("invalid input: outcome invalid-input, exit 2, every problem with its path and position; nothing asked of any cluster", async () => {
    const { file } = specDir(khookSpec("Bad_Name", applyStep("cm", cm("cm", "default")), stateIn("default")));
    const kubeconfig = kubeconfigFor(silent.url, "edge-7");
    const before = silent.accepted();
    for (const command of COMMANDS) {
      const r = await runKhook([command, "-f", file, "-o", "json"], { env: cliEnv(kubeconfig) });
      const s = summary(r);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(s.outcome, "invalid-input");
      assert.ok(
        s.problems?.some((p) => p.path === "/metadata/name" && p.position !== undefined),
        JSON.stringify(s.problems),
      );
      assert.deepEqual(s.cluster, { server: silent.url, kubeSystemUid: null }, "the kubeconfig names the server");
    }
    assert.equal(silent.accepted(), before, "invalid input touches no cluster");
  });

  test("no usable kubeconfig (KUBECONFIG names a file that does not exist): outcome no-kubeconfig, the cluster all null", async () => {
    const { file } = specDir(khookSpec("nokubeconfig", applyStep("cm", cm("cm", "default")), stateIn("default")));
    for (const command of COMMANDS) {
      const r = await runKhook([command, "-f", file, "-o", "json"], {
        env: cliEnv("/nonexistent/khook/kubeconfig"),
      });
      const s = summary(r);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(s.outcome, "no-kubeconfig");
      assert.match(s.error ?? "", /\/nonexistent\/khook\/kubeconfig/);
      assert.deepEqual(s.cluster, { server: null, kubeSystemUid: null });
    }
  });

  test("no answer (a server that accepts connections and never answers), without --wait-for-cluster: outcome unreachable; the error names the server, the context and the flag", async () => {
    const { file } = specDir(khookSpec("silent", applyStep("cm", cm("cm", "default")), stateIn("default")));
    const kubeconfig = kubeconfigFor(silent.url, "edge-7");
    for (const command of COMMANDS) {
      const r = await runKhook([command, "-f", file, "-o", "json"], { env: cliEnv(kubeconfig) });
      const s = summary(r);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(s.outcome, "unreachable", `${command}: ${r.stdout}`);
      assert.deepEqual(s.cluster, { server: silent.url, kubeSystemUid: null });
      const said = `${r.stdout}\n${r.stderr}`;
      assert.match(said, new RegExp(`the Kubernetes API server at ${escape(silent.url)}`));
      assert.match(said, /context "edge-7" from kubeconfig /);
      assert.match(said, new RegExp(`run khook ${command} with --wait-for-cluster 10m`));
      assert.doesNotMatch(said, /operation was aborted/);
    }
  });

  test("nothing listens (connection refused): the same outcome and the same names as a silent server", async () => {
    const { file } = specDir(khookSpec("refused", applyStep("cm", cm("cm", "default")), stateIn("default")));
    const kubeconfig = kubeconfigFor("https://127.0.0.1:9", "edge-8");
    const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(kubeconfig) });
    const s = summary(r);
    assert.equal(s.outcome, "unreachable");
    assert.match(r.stderr, /context "edge-8"/);
    assert.match(r.stderr, /--wait-for-cluster 10m/);
  });

  test("a wait that runs out (--wait-for-cluster 1s and 3s against a silent server): outcome cluster-not-ready, naming the setting, the server and the context", async () => {
    const { file } = specDir(khookSpec("shortwait", applyStep("cm", cm("cm", "default")), stateIn("default")));
    const kubeconfig = kubeconfigFor(silent.url, "edge-7");
    for (const [command, wait] of [
      ["apply", "1s"],
      ["destroy", "3s"],
      ["status", "1s"],
    ] as const) {
      const r = await runKhook([command, "-f", file, "--wait-for-cluster", wait, "-o", "json"], {
        env: cliEnv(kubeconfig),
      });
      const s = summary(r);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(s.outcome, "cluster-not-ready", `${command}: ${r.stdout}`);
      assert.match(
        s.error ?? "",
        new RegExp(
          `the Kubernetes API server at ${escape(silent.url)} \\(context "edge-7" from kubeconfig [^)]+\\) was not ready within --wait-for-cluster ${wait} \\(no answer: it accepts connections but does not answer\\)`,
        ),
      );
      assert.deepEqual(s.cluster, { server: silent.url, kubeSystemUid: null });
    }
  });

  test('--wait-for-cluster 0s means do not wait, as without the flag (the Pulumi input waitForCluster: "0s" too)', async (t) => {
    const { file } = specDir(khookSpec("nowait", applyStep("cm", cm("cm", "default")), stateIn("default")));
    const down = await runKhook(["apply", "-f", file, "--wait-for-cluster", "0s", "-o", "json"], {
      env: cliEnv(kubeconfigFor("https://127.0.0.1:9", "edge-9")),
    });
    assert.equal(summary(down).outcome, "unreachable", down.stderr);
    assert.doesNotMatch(down.stderr, /waiting for the API server/);
    assert.match(down.stderr, /--wait-for-cluster 10m to wait until it answers/);
    const cluster = await testCluster();
    const ns = await withNamespace(t, "unanswered-0s");
    const { file: up } = specDir(khookSpec("nowaitup", applyStep("cm", cm("cm", ns))));
    const r = await runKhook(["apply", "-f", up, "--wait-for-cluster", "0s", "-o", "json"], {
      env: cliEnv(cluster.kubeconfig),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(summary(r).outcome, "ok");
  });
});

describe(
  "a plain http:// server that accepts connections and never answers is treated like one that refuses them",
  { timeout: 600_000 },
  () => {
    let plain: SilentServer;
    before(async () => {
      plain = await silentServer("http");
    });
    after(async () => {
      await plain.close();
    });
    // plan --live reads the record: the spec has one.
    const PLAN_COMMANDS = [["apply"], ["destroy"], ["status"], ["plan"], ["plan", "--live"]] as const;

    test("without --wait-for-cluster: outcome unreachable, after a new connection's bound (not a request's own timeout), naming the server, the context and the flag", async () => {
      const { file } = specDir(khookSpec("plainsilent", applyStep("cm", cm("cm", "default")), stateIn("default")));
      const kubeconfig = kubeconfigFor(plain.url, "edge-h");
      for (const command of PLAN_COMMANDS) {
        const asked = plain.accepted();
        const r = await runKhook([...command, "-f", file, "-o", "json"], { env: cliEnv(kubeconfig) });
        const s = summary(r);
        const what = command.join(" ");
        assert.equal(plain.accepted() - asked, 1, `${what}: a server that never answered is not asked again`);
        assert.equal(r.code, 1, `${what}: ${r.stderr}`);
        assert.equal(s.outcome, "unreachable", `${what}: ${r.stdout}`);
        assert.deepEqual(s.cluster, { server: plain.url, kubeSystemUid: null }, what);
        const said = `${r.stdout}\n${r.stderr}`;
        assert.match(
          said,
          new RegExp(`the Kubernetes API server at ${escape(plain.url)} \\(context "edge-h" from kubeconfig `),
        );
        // The first answer of a plain-http server has the bound of an https server's handshake.
        assert.match(
          said,
          /ETIMEDOUT no response within 10s — something accepts connections there but never answers/,
          what,
        );
        assert.match(said, new RegExp(`run khook ${command[0]} with --wait-for-cluster 10m`), what);
        assert.doesNotMatch(said, /operation was aborted/);
      }
    });

    test("with --wait-for-cluster 1s: outcome cluster-not-ready, naming the setting, the server and the context", async () => {
      const { file } = specDir(khookSpec("plainwait", applyStep("cm", cm("cm", "default")), stateIn("default")));
      const kubeconfig = kubeconfigFor(plain.url, "edge-h");
      for (const command of PLAN_COMMANDS) {
        const r = await runKhook([...command, "-f", file, "--wait-for-cluster", "1s", "-o", "json"], {
          env: cliEnv(kubeconfig),
        });
        const s = summary(r);
        const what = command.join(" ");
        assert.equal(r.code, 1, `${what}: ${r.stderr}`);
        assert.equal(s.outcome, "cluster-not-ready", `${what}: ${r.stdout}`);
        assert.match(
          s.error ?? "",
          new RegExp(
            `the Kubernetes API server at ${escape(plain.url)} \\(context "edge-h" from kubeconfig [^)]+\\) was not ready within --wait-for-cluster 1s \\(no answer: it accepts connections but does not answer\\)`,
          ),
          what,
        );
        assert.deepEqual(s.cluster, { server: plain.url, kubeSystemUid: null }, what);
      }
    });
  },
);

describe(
  "plan, plan --live and apply --repair with -o json: one summary for every outcome too",
  { timeout: 600_000 },
  () => {
    const COMMANDS_ALSO = [["plan"], ["plan", "--live"], ["apply", "--repair"]] as const;

    test("success on a cluster that answers: outcome ok, exit 0, the cluster's server and kube-system UID", async (t) => {
      const cluster = await testCluster();
      const ns = await withNamespace(t, "unanswered-plan-ok");
      const { file } = specDir(khookSpec("planok", applyStep("cm", cm("cm", ns)), stateIn(ns)));
      const env = cliEnv(cluster.kubeconfig);
      assert.equal((await runKhook(["apply", "-f", file], { env })).code, 0);
      const uid = (await cluster.kubectl(["get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}"])).stdout;
      for (const command of COMMANDS_ALSO) {
        const r = await runKhook([...command, "-f", file, "-o", "json"], { env });
        const s = summary(r);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(s.outcome, "ok", command.join(" "));
        assert.equal(s.cluster.kubeSystemUid, uid, command.join(" "));
      }
    });

    test("invalid input: outcome invalid-input, exit 2, every problem with its path; nothing asked of any cluster", async () => {
      const silent = await silentServer();
      try {
        const { file } = specDir(khookSpec("Bad_Name", applyStep("cm", cm("cm", "default")), stateIn("default")));
        const kubeconfig = kubeconfigFor(silent.url, "edge-7");
        for (const command of COMMANDS_ALSO) {
          const r = await runKhook([...command, "-f", file, "-o", "json"], { env: cliEnv(kubeconfig) });
          const s = summary(r);
          assert.equal(r.code, 2, r.stderr);
          assert.equal(s.outcome, "invalid-input", command.join(" "));
          assert.equal(command[0] === "plan" ? s.name : s.spec, null, "the spec did not load: no name");
          assert.ok(
            s.problems?.some((p) => p.path === "/metadata/name"),
            JSON.stringify(s.problems),
          );
          assert.deepEqual(s.cluster, { server: silent.url, kubeSystemUid: null });
        }
        assert.equal(silent.accepted(), 0, "invalid input touches no cluster");
      } finally {
        await silent.close();
      }
    });

    test("no usable kubeconfig: outcome no-kubeconfig, the cluster all null", async () => {
      const { file } = specDir(khookSpec("plannokc", applyStep("cm", cm("cm", "default")), stateIn("default")));
      for (const command of COMMANDS_ALSO) {
        const r = await runKhook([...command, "-f", file, "-o", "json"], {
          env: cliEnv("/nonexistent/khook/kubeconfig"),
        });
        const s = summary(r);
        assert.equal(r.code, 1, r.stderr);
        assert.equal(s.outcome, "no-kubeconfig", command.join(" "));
        assert.deepEqual(s.cluster, { server: null, kubeSystemUid: null });
      }
    });

    test("nothing listens: outcome unreachable, naming the context and the flag", async () => {
      const { file } = specDir(khookSpec("planrefused", applyStep("cm", cm("cm", "default")), stateIn("default")));
      const kubeconfig = kubeconfigFor("https://127.0.0.1:9", "edge-8");
      for (const command of COMMANDS_ALSO) {
        const r = await runKhook([...command, "-f", file, "-o", "json"], { env: cliEnv(kubeconfig) });
        const s = summary(r);
        assert.equal(r.code, 1, r.stderr);
        assert.equal(s.outcome, "unreachable", command.join(" "));
        assert.equal(command[0] === "plan" ? s.name : s.spec, "planrefused", "the spec loaded: its name");
        assert.match(s.error ?? "", /context "edge-8"/);
        assert.match(s.error ?? "", new RegExp(`run khook ${command[0]} with --wait-for-cluster 10m`));
        assert.deepEqual(s.cluster, { server: "https://127.0.0.1:9", kubeSystemUid: null });
      }
    });
  },
);

describe("the other commands with -o json", () => {
  test("unlock, graph and plan's own flag checks print one document when they fail too, with the outcome and exit code", async () => {
    const { file: bad } = specDir(khookSpec("Bad_Name", applyStep("cm", cm("cm", "default")), stateIn("default")));
    const { file } = specDir(khookSpec("unlocknokc", applyStep("cm", cm("cm", "default")), stateIn("default")));
    const env = cliEnv("/nonexistent/khook/kubeconfig");
    for (const [args, outcome, code] of [
      [["unlock", "-f", file], "no-kubeconfig", 1],
      [["graph", "-f", bad], "invalid-input", 2],
      [["plan", "--offline", "-f", bad], "invalid-input", 2],
      [["plan", "--live", "--diff", "-f", file], "invalid-input", 2],
    ] as const) {
      const r = await runKhook([...args, "-o", "json"], { env });
      const s = summary(r);
      assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(s.outcome, outcome, args.join(" "));
      assert.deepEqual(s.cluster, { server: null, kubeSystemUid: null });
    }
  });
});
