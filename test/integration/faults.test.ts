/**
 * Fault injection against the real control plane. These tests kill, freeze
 * and restart control-plane components, so they run on a private cluster this
 * file starts (and stops), never on the shared one.
 *
 * Every scenario runs a multi-step spec with `state:` through the real CLI,
 * injects the fault at a deterministic point (a step waiting on a ConfigMap
 * the test flips only after the fault, or a progress line), and then checks:
 * the run ends with a clear message and the right exit code (or completes);
 * no object is half-owned; the record is consistent (the final status, no
 * lease left behind); and a re-run converges without repeating completed steps.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { describe, test } from "node:test";
import { OWNED_BY, ownerValue } from "../../provider/ownership.js";
import { RESUME_REASON } from "../../provider/state/record.js";
import {
  freezeComponent,
  killComponent,
  restartComponent,
  testChartPath,
  thawComponent,
  toolPath,
} from "../harness/index.js";
import { privateCluster } from "../harness/private-cluster.js";
import {
  applyStep,
  cliEnv,
  cm,
  gatedChain,
  khookSpec,
  outputMatches,
  parseRun,
  recordShows,
  runKhook,
  specDir,
  startKhook,
  stateIn,
  stepOf,
  stepRecorded,
  type CliResult,
} from "./support/khook-cli.js";

const { state, cluster, kubectl } = privateCluster("faults");

let counter = 0;
async function namespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${++counter}`;
  await kubectl(["create", "namespace", ns]);
  return ns;
}

const env = (extra: NodeJS.ProcessEnv) => cliEnv(state().kubeconfig, extra);
const start = (file: string, extra: NodeJS.ProcessEnv = {}) =>
  startKhook(["apply", "-f", file, "-o", "json"], { env: env(extra) });
const apply = (file: string, extra: NodeJS.ProcessEnv = {}) =>
  runKhook(["apply", "-f", file, "-o", "json"], { env: env(extra) });
const openGate = (ns: string) =>
  kubectl(["patch", "configmap", "gate", "-n", ns, "--type", "merge", "-p", '{"data":{"ready":"yes"}}']);

interface RecordJson {
  runStatus: string;
  lease?: unknown;
  steps: Record<string, { status: string }>;
}

async function record(ns: string, spec: string): Promise<RecordJson | undefined> {
  const r = await cluster().kubectl([
    "get",
    "secret",
    `khook-state-${spec}`,
    "-n",
    ns,
    "-o",
    "jsonpath={.data.record\\.json}",
  ]);
  if (r.code !== 0) return undefined;
  return JSON.parse(Buffer.from(r.stdout, "base64").toString("utf8")) as RecordJson;
}

const statuses = (r: RecordJson | undefined) =>
  Object.fromEntries(Object.entries(r?.steps ?? {}).map(([k, v]) => [k, v.status]));

/** The record after a finished run: its final status, and no lease left behind. */
async function assertRecordFinal(
  ns: string,
  spec: string,
  runStatus: string,
  steps: Record<string, string>,
): Promise<void> {
  const r = await record(ns, spec);
  assert.ok(r, "the record exists");
  assert.equal(r.runStatus, runStatus);
  assert.equal(r.lease, undefined, "the lease was released");
  assert.deepEqual(statuses(r), steps);
}

/** No half-owned object: every object a step created carries khook's owned-by annotation for that spec and step. */
async function assertOwned(ns: string, spec: string, objects: Record<string, string>): Promise<void> {
  for (const [name, step] of Object.entries(objects)) {
    const owner = await kubectl([
      "get",
      "configmap",
      name,
      "-n",
      ns,
      "-o",
      `jsonpath={.metadata.annotations.${OWNED_BY.replace(/\./g, "\\.")}}`,
    ]);
    assert.equal(owner, ownerValue(spec, step), `configmap ${name} is owned by ${spec}/${step}`);
  }
}

/** A re-run of an unchanged spec resumes every step and touches nothing. */
async function assertRerunResumesAll(file: string, names: string[]): Promise<void> {
  const r = await apply(file);
  assert.equal(r.code, 0, r.stderr);
  for (const n of names) assert.equal(stepOf(parseRun(r), n).reason, RESUME_REASON, `step ${n} resumed`);
}

/** Resolves when the running khook has recorded step `name` as ok (a watch on the record Secret). */
const recorded = (ns: string, spec: string, name: string) =>
  stepRecorded(state().kubeconfig, ns, `khook-state-${spec}`, name);

interface ApiProxy {
  /** A kubeconfig for the private cluster that goes through the proxy. */
  kubeconfig: string;
  /** Resolves once this many connections could not be forwarded (the API server was down). */
  refusedAtLeast(n: number): Promise<void>;
  close(): void;
}

/**
 * A loopback TCP proxy in front of kube-apiserver. It lets a test see khook try
 * to reconnect while the API server is down — so the test can keep it down
 * "longer than khook's reconnect attempts" by counting them, not by sleeping.
 */
async function apiProxy(): Promise<ApiProxy> {
  const upstream = new URL(state().server);
  const sockets = new Set<net.Socket>();
  let refused = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => undefined);
    const up = net.connect(Number(upstream.port), upstream.hostname);
    sockets.add(up);
    up.on("close", () => sockets.delete(up));
    let connected = false;
    up.on("connect", () => {
      connected = true;
      client.pipe(up);
      up.pipe(client);
    });
    up.on("error", () => {
      if (connected) return client.destroy();
      refused++;
      for (const w of waiters.filter((x) => refused >= x.n)) w.resolve();
      client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  const kubeconfig = path.join(state().dir, `proxy-${port}.kubeconfig`);
  fs.writeFileSync(
    kubeconfig,
    fs.readFileSync(state().kubeconfig, "utf8").replace(state().server, `https://127.0.0.1:${port}`),
    { mode: 0o600 },
  );
  return {
    kubeconfig,
    refusedAtLeast: (n) =>
      refused >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
    close: () => {
      server.close();
      for (const sock of sockets) sock.destroy();
    },
  };
}

function failOn(t: { name: string }, r: CliResult): string {
  return `${t.name}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

describe("faults: the control plane breaks mid-run", { timeout: 600_000 }, () => {
  test("kube-apiserver killed and restarted during a run: the waiting step's watch re-establishes and the run completes", async (t) => {
    const ns = await namespace("apiserver-restart");
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const { file } = specDir(khookSpec("restart", gatedChain(ns, "last"), stateIn(ns)));
    const proxy = await apiProxy();
    t.after(() => proxy.close());
    const run = start(file, { KUBECONFIG: proxy.kubeconfig });
    await outputMatches(run, /\[blocked\] started/);
    await recorded(ns, "restart", "first");

    await killComponent(state(), "kube-apiserver");
    // A restart takes as long as it takes (a control-plane upgrade: minutes): the API server stays
    // down until khook has tried to reconnect 7 times, well within the step's 5m timeout.
    await Promise.race([proxy.refusedAtLeast(7), run.done]);
    await restartComponent(state(), "kube-apiserver");
    await openGate(ns);

    const r = await run.done;
    assert.equal(r.code, 0, failOn(t, r));
    assert.equal(stepOf(parseRun(r), "blocked").status, "ok");
    await assertRecordFinal(ns, "restart", "succeeded", { first: "ok", blocked: "ok", last: "ok" });
    await assertOwned(ns, "restart", { first: "first", last: "last" });
    await assertRerunResumesAll(file, ["first", "blocked", "last"]);
  });

  test("kube-apiserver frozen (SIGSTOP) past a step's timeout, then resumed: the step fails with its timeout, the record says so, and a re-run resumes", async (t) => {
    const ns = await namespace("apiserver-frozen");
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    // The step's timeout must not run out before the freeze lands: the freeze follows its start line at once.
    const steps = gatedChain(ns, "last").replace("    needs: [first]\n", "    needs: [first]\n    timeout: 15s\n");
    const { file } = specDir(khookSpec("frozen", steps, stateIn(ns)));
    const run = start(file);
    await outputMatches(run, /\[blocked\] started/);

    freezeComponent(state(), "kube-apiserver");
    try {
      await outputMatches(run, /\[blocked\] failed/);
    } finally {
      thawComponent(state(), "kube-apiserver");
    }

    const r = await run.done;
    assert.equal(r.code, 1, failOn(t, r));
    assert.match(stepOf(parseRun(r), "blocked").error ?? "", /timed out after 15s/);
    await assertRecordFinal(ns, "frozen", "failed", { first: "ok", blocked: "failed", last: "skipped" });
    await assertOwned(ns, "frozen", { first: "first" });

    await openGate(ns);
    const again = await apply(file);
    assert.equal(again.code, 0, failOn(t, again));
    assert.equal(stepOf(parseRun(again), "first").reason, RESUME_REASON);
    assert.equal(stepOf(parseRun(again), "blocked").status, "ok");
    assert.equal(stepOf(parseRun(again), "last").status, "ok");
    await assertRecordFinal(ns, "frozen", "succeeded", { first: "ok", blocked: "ok", last: "ok" });
  });

  test("etcd restarted during a run: the run completes once the API server is back", async (t) => {
    const ns = await namespace("etcd-restart");
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    const { file } = specDir(khookSpec("etcd", gatedChain(ns, "last"), stateIn(ns)));
    const run = start(file);
    await outputMatches(run, /\[blocked\] started/);
    await recorded(ns, "etcd", "first");

    await killComponent(state(), "etcd");
    await restartComponent(state(), "etcd");
    await openGate(ns);

    const r = await run.done;
    assert.equal(r.code, 0, failOn(t, r));
    await assertRecordFinal(ns, "etcd", "succeeded", { first: "ok", blocked: "ok", last: "ok" });
    await assertOwned(ns, "etcd", { first: "first", last: "last" });
    await assertRerunResumesAll(file, ["first", "blocked", "last"]);
  });

  test("the record Secret deleted by someone else during a run: recreated with this run's steps only, with a warning; a re-run resumes those", async (t) => {
    const ns = await namespace("record-deleted");
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    // An earlier run completed `zero`; this run resumes it, then its record is deleted under it.
    const zero = applyStep("zero", cm("zero", ns));
    const earlier = specDir(khookSpec("deleted", zero, stateIn(ns)));
    assert.equal((await apply(earlier.file)).code, 0);
    const { file } = specDir(khookSpec("deleted", `${zero}${gatedChain(ns, "last")}`, stateIn(ns)));
    const run = start(file);
    await outputMatches(run, /\[blocked\] started/);
    await recorded(ns, "deleted", "first");

    await kubectl(["delete", "secret", "khook-state-deleted", "-n", ns]);
    await openGate(ns);

    const r = await run.done;
    assert.equal(r.code, 0, failOn(t, r));
    assert.equal(stepOf(parseRun(r), "zero").reason, RESUME_REASON);
    assert.match(
      r.stderr,
      /warning: the state record .* was deleted by someone else during this run; khook recreated it with only the steps this run executed/,
    );
    await assertRecordFinal(ns, "deleted", "succeeded", { first: "ok", blocked: "ok", last: "ok" });
    await assertOwned(ns, "deleted", { zero: "zero", first: "first", last: "last" });

    // The deletion reset `zero` (as deleting the record is meant to): it re-runs; what this run did resumes.
    const again = await apply(file);
    assert.equal(again.code, 0, failOn(t, again));
    const rerun = parseRun(again);
    assert.notEqual(stepOf(rerun, "zero").reason, RESUME_REASON);
    for (const n of ["first", "blocked", "last"]) assert.equal(stepOf(rerun, n).reason, RESUME_REASON, n);
  });

  test("a target namespace stuck in Terminating: the step fails naming the namespace, and the run converges once it is gone", async (t) => {
    const ns = await namespace("terminating");
    const target = `${ns}-target`;
    await kubectl(["create", "configmap", "gate", "-n", ns, "--from-literal=ready=no"]);
    await kubectl(["create", "namespace", target]);
    await kubectl([
      "patch",
      "namespace",
      target,
      "--type",
      "merge",
      "-p",
      '{"metadata":{"finalizers":["khook.test/hold"]}}',
    ]);
    const nsManifest = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${target}\n---\n${cm("last", target)}`;
    const steps = gatedChain(ns, "last").replace(
      /  - name: last\n[\s\S]*$/,
      applyStep("last", nsManifest, "    needs: [blocked]\n"),
    );
    const { file } = specDir(khookSpec("terminating", steps, stateIn(ns)));
    const run = start(file);
    await outputMatches(run, /\[blocked\] started/);

    await kubectl(["delete", "namespace", target, "--wait=false"]);
    await kubectl(["wait", `namespace/${target}`, "--for=jsonpath={.status.phase}=Terminating", "--timeout=60s"]);
    await openGate(ns);

    const r = await run.done;
    assert.equal(r.code, 1, failOn(t, r));
    assert.match(
      stepOf(parseRun(r), "last").error ?? "",
      new RegExp(`unable to create new content in namespace ${target} because it is being terminated`),
    );
    await assertRecordFinal(ns, "terminating", "failed", { first: "ok", blocked: "ok", last: "failed" });
    assert.notEqual(
      (await cluster().kubectl(["get", "configmap", "last", "-n", target])).code,
      0,
      "nothing was created in the terminating namespace",
    );

    await kubectl([
      "patch",
      "namespace",
      target,
      "--type",
      "json",
      "-p",
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    await kubectl(["wait", `namespace/${target}`, "--for=delete", "--timeout=120s"]);
    const again = await apply(file);
    assert.equal(again.code, 0, failOn(t, again));
    const rerun = parseRun(again);
    assert.equal(stepOf(rerun, "first").reason, RESUME_REASON);
    assert.equal(stepOf(rerun, "blocked").reason, RESUME_REASON);
    assert.equal(stepOf(rerun, "last").status, "ok");
    await assertOwned(target, "terminating", { last: "last" });
  });

  test("the cluster unreachable at start: exit 1 with the connection message, and nothing written", async (t) => {
    const ns = await namespace("unreachable");
    const { file } = specDir(
      khookSpec(
        "unreachable",
        `${applyStep("one", cm("one", ns))}${applyStep("two", cm("two", ns), "    needs: [one]\n")}`,
        stateIn(ns),
      ),
    );
    await killComponent(state(), "kube-apiserver");
    let r: CliResult;
    try {
      r = await apply(file);
    } finally {
      await restartComponent(state(), "kube-apiserver");
    }
    assert.equal(r.code, 1, failOn(t, r));
    assert.match(
      r.stdout + r.stderr,
      new RegExp(
        `cannot reach the Kubernetes API server at ${state().server.replace(/[.]/g, "\\.")}.*ECONNREFUSED.*check that the cluster is running`,
      ),
    );
    assert.equal(await record(ns, "unreachable"), undefined, "no record was written");
    // kube-root-ca.crt is the controller-manager's, published into the namespace whenever it gets to it.
    const written = (await kubectl(["get", "configmaps", "-n", ns, "-o", "name"]))
      .split("\n")
      .filter((n) => n !== "" && n !== "configmap/kube-root-ca.crt");
    assert.deepEqual(written, [], "no object was written");
  });
});
describe("faults: helm killed during an upgrade", { timeout: 600_000 }, () => {
  test("the release is left pending-upgrade; the next run stops with the exact recovery command, which recovers it", async (t) => {
    const ns = await namespace("helm-killed");
    const helm = { KHOOK_HELM: toolPath("helm") };
    // A chart with a hook keeps helm's own --wait, so helm holds the release pending-upgrade while it waits.
    const chart = testChartPath("khook-test-hooked");
    const spec = (values: string) =>
      khookSpec(
        "helmkilled",
        `${applyStep("first", cm("first", ns))}  - name: web\n    needs: [first]\n    helm:\n      chart: ${chart}\n      namespace: ${ns}\n      wait: true\n      values: ${values}\n${applyStep("last", cm("last", ns), "    needs: [web]\n")}`,
        stateIn(ns),
      );
    const good = specDir(spec("{ replicas: 1 }"));
    const installed = await apply(good.file, helm);
    assert.equal(installed.code, 0, failOn(t, installed));

    // No node carries this label: the upgraded pod stays Pending and helm --wait keeps the release pending-upgrade.
    const stuck = specDir(spec(`{ replicas: 1, nodeSelector: { khook.io/nowhere: "true" } }`));
    const run = start(stuck.file, helm);
    await outputMatches(run, /\[web\] started/);
    const v2 = `secret/sh.helm.release.v1.web.v2`;
    assert.equal((await cluster().kubectl(["wait", v2, "-n", ns, "--for=create", "--timeout=120s"])).code, 0);
    assert.equal(
      (
        await cluster().kubectl([
          "wait",
          v2,
          "-n",
          ns,
          "--for=jsonpath={.metadata.labels.status}=pending-upgrade",
          "--timeout=120s",
        ])
      ).code,
      0,
    );
    const helmPid = childProcessNamed(run.child.pid!, "helm");
    process.kill(helmPid, "SIGKILL");

    const r = await run.done;
    assert.equal(r.code, 1, failOn(t, r));
    // The run that lost its helm says at once what state the release is in and how to recover it.
    const recovery = `helm rollback web 1 --namespace ${ns}`;
    const killed = stepOf(parseRun(r), "web").error ?? "";
    assert.match(killed, /failed \(signal SIGKILL\)/);
    assert.match(killed, new RegExp(`release web \\(namespace ${ns}\\) is pending-upgrade at revision 2`));
    assert.ok(killed.includes(`recover with: ${recovery} — then re-run khook`), killed);
    await assertRecordFinal(ns, "helmkilled", "failed", { first: "ok", web: "failed", last: "ok" });

    const next = await apply(good.file, helm);
    assert.equal(next.code, 1, failOn(t, next));
    const pending = stepOf(parseRun(next), "web").error ?? "";
    assert.match(pending, new RegExp(`release web \\(namespace ${ns}\\) is pending-upgrade at revision 2`));
    assert.ok(pending.includes(`recover with: ${recovery} — then re-run khook`), pending);

    const rollback = await runTool(toolPath("helm"), [
      "rollback",
      "web",
      "1",
      "--namespace",
      ns,
      "--kubeconfig",
      state().kubeconfig,
    ]);
    assert.equal(rollback.code, 0, rollback.stderr);
    const fixed = await apply(good.file, helm);
    assert.equal(fixed.code, 0, failOn(t, fixed));
    const rerun = parseRun(fixed);
    assert.equal(stepOf(rerun, "first").reason, RESUME_REASON);
    assert.equal(stepOf(rerun, "web").status, "ok");
    await assertRecordFinal(ns, "helmkilled", "succeeded", { first: "ok", web: "ok", last: "ok" });
  });
});

describe(
  "helm-recovers-own-dead-run: a release khook's own dead run left pending is recovered by the re-run",
  { timeout: 600_000 },
  () => {
    const helmEnv = () => ({ KHOOK_HELM: toolPath("helm") });
    /** A helm: step whose pods schedule only on a node labelled `gate=open`: until the test opens it, helm --wait (the chart has hooks) holds the release pending. */
    const gatedRelease = (
      name: string,
      ns: string,
      gate: string,
      values = `{ replicas: 1, nodeSelector: { ${gate}: "open" } }`,
    ) =>
      specDir(
        khookSpec(
          name,
          `  - name: web\n    timeout: 2m\n    helm:\n      chart: ${testChartPath("khook-test-hooked")}\n      namespace: ${ns}\n      wait: true\n      values: ${values}\n`,
          stateIn(ns),
        ),
      );
    const openGate = (gate: string) => kubectl(["label", "nodes", "--all", "--overwrite", `${gate}=open`]);
    /** Once the running khook has recorded its helm for step web and helm holds revision `revision` in `status`. */
    async function helmPending(ns: string, spec: string, revision: number, status: string): Promise<void> {
      await recordShows(
        state().kubeconfig,
        ns,
        `khook-state-${spec}`,
        "web's helm in flight",
        (r) => r.helmInFlight?.["web"]?.revision === revision,
      );
      const secret = `secret/sh.helm.release.v1.web.v${revision}`;
      assert.equal((await cluster().kubectl(["wait", secret, "-n", ns, "--for=create", "--timeout=120s"])).code, 0);
      assert.equal(
        (
          await cluster().kubectl([
            "wait",
            secret,
            "-n",
            ns,
            "--for=jsonpath={.metadata.labels.status}=" + status,
            "--timeout=120s",
          ])
        ).code,
        0,
      );
    }
    async function history(ns: string): Promise<{ revision: number; status: string }[]> {
      const r = await runTool(toolPath("helm"), [
        "history",
        "web",
        "--namespace",
        ns,
        "-o",
        "json",
        "--kubeconfig",
        state().kubeconfig,
      ]);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as { revision: number; status: string }[];
    }
    const lines = (r: CliResult, pattern: RegExp) => (r.stdout + r.stderr).split("\n").filter((l) => pattern.test(l));
    /** Runs `file` until its helm holds revision `revision` in `status`, then kill -9: of khook alone, or of khook and its helm. Returns their pids. */
    async function killedMidRelease(
      file: string,
      ns: string,
      spec: string,
      revision: number,
      status: string,
      kill: "khook" | "khook and helm",
    ): Promise<{ khook: number; helm: number }> {
      const run = start(file, helmEnv());
      await helmPending(ns, spec, revision, status);
      const pids = { khook: run.child.pid!, helm: childProcessNamed(run.child.pid!, "helm") };
      process.kill(pids.khook, "SIGKILL");
      if (kill === "khook and helm") process.kill(pids.helm, "SIGKILL");
      await run.done;
      return pids;
    }
    /** Opens the gate and re-runs `file`: it succeeds in one run, and says once that it recovered the release. */
    async function recoveredInOneRun(
      t: { name: string },
      file: string,
      gate: string,
    ): Promise<{ line: string; run: CliResult }> {
      await openGate(gate);
      const r = await apply(file, helmEnv());
      assert.equal(r.code, 0, failOn(t, r));
      const said = lines(r, /recovering release web/);
      assert.equal(said.length, 1, failOn(t, r));
      assert.equal(stepOf(parseRun(r), "web").status, "ok");
      return { line: said[0]!, run: r };
    }
    /** The release installed with the gate open from the start (no nodeSelector): revision 1 deployed. */
    async function installedOpen(t: { name: string }, spec: string, ns: string, gate: string): Promise<void> {
      const installed = await apply(gatedRelease(spec, ns, gate, "{ replicas: 1 }").file, helmEnv());
      assert.equal(installed.code, 0, failOn(t, installed));
    }

    test("helm-recovers-own-dead-run (install): kill -9 of khook and its helm during a first install; the re-run uninstalls the pending install, says so in one line, and installs", async (t) => {
      const ns = await namespace("helm-dead-install");
      const gate = `khook.io/gate-${ns}`;
      const { file } = gatedRelease("deadinstall", ns, gate);
      // kill -9 of khook and of the helm it started, as when the machine or the CI job dies.
      const killed = await killedMidRelease(file, ns, "deadinstall", 1, "pending-install", "khook and helm");
      const { line } = await recoveredInOneRun(t, file, gate);
      assert.match(
        line,
        new RegExp(
          `recovering release web \\(namespace ${ns}\\): pending-install at revision 1 was left by khook run \\S+ \\(pid ${killed.khook} on .*, no longer running\\), and its helm \\(pid ${killed.helm}\\) is gone: uninstalling the first install \\(helm uninstall web --namespace ${ns}\\)$`,
        ),
      );
      assert.deepEqual(
        (await history(ns)).map((h) => h.status),
        ["deployed"],
      );
      await assertRecordFinal(ns, "deadinstall", "succeeded", { web: "ok" });
      assert.equal(
        ((await record(ns, "deadinstall")) as { helmInFlight?: unknown } | undefined)?.helmInFlight,
        undefined,
        "the helm mark is cleared with the step",
      );
    });

    test("helm-recovers-own-dead-run (upgrade): kill -9 of khook and its helm during an upgrade; the re-run rolls back to the last deployed revision, says so in one line, and upgrades", async (t) => {
      const ns = await namespace("helm-dead-upgrade");
      const gate = `khook.io/gate-${ns}`;
      await installedOpen(t, "deadupgrade", ns, gate);
      const { file } = gatedRelease("deadupgrade", ns, gate);
      await killedMidRelease(file, ns, "deadupgrade", 2, "pending-upgrade", "khook and helm");
      const { line } = await recoveredInOneRun(t, file, gate);
      assert.match(
        line,
        new RegExp(
          `pending-upgrade at revision 2 was left by khook run .*: rolling back to revision 1 \\(helm rollback web 1 --namespace ${ns}\\)$`,
        ),
      );
      // 2 the interrupted upgrade (helm's rollback leaves it as it was), 3 the rollback to 1, 4 the upgrade this run made.
      assert.deepEqual(
        (await history(ns)).map((h) => `${h.revision} ${h.status}`),
        ["1 superseded", "2 pending-upgrade", "3 superseded", "4 deployed"],
      );
      await assertRecordFinal(ns, "deadupgrade", "succeeded", { web: "ok" });
    });

    test("helm-waits-for-dead-runs-helm: kill -9 of khook alone during an upgrade; its helm lives on, and the re-run waits for it instead of rolling back under it", async (t) => {
      const ns = await namespace("helm-dead-waits");
      const gate = `khook.io/gate-${ns}`;
      await installedOpen(t, "deadwaits", ns, gate);
      const { file } = gatedRelease("deadwaits", ns, gate);
      const orphan = (await killedMidRelease(file, ns, "deadwaits", 2, "pending-upgrade", "khook")).helm;

      const rerun = start(file, helmEnv());
      await outputMatches(
        rerun,
        new RegExp(
          `release web \\(namespace ${ns}\\) is pending-upgrade at revision 2, started by khook run .*; its helm \\(pid ${orphan}\\) may still be working: waiting for it to finish`,
        ),
      );
      // The orphaned helm's pods can now schedule: it finishes its upgrade itself, and the re-run goes on from there.
      await openGate(gate);
      const r = await rerun.done;
      assert.equal(r.code, 0, failOn(t, r));
      assert.deepEqual(lines(r, /recovering release web/), [], "nothing to recover: the dead run's helm finished");
      assert.match(stepOf(parseRun(r), "web").reason, /no-op: revision 2 .*deployed.* is up to date/);
      assert.deepEqual(
        (await history(ns)).map((h) => `${h.revision} ${h.status}`),
        ["1 superseded", "2 deployed"],
      );
      await assertRecordFinal(ns, "deadwaits", "succeeded", { web: "ok" });
    });
  },
);

/** The pid of the direct child of `parent` whose command name is `name`. */
function childProcessNamed(parent: number, name: string): number {
  for (const task of fs.readdirSync(`/proc/${parent}/task`)) {
    const children = fs
      .readFileSync(path.join(`/proc/${parent}/task`, task, "children"), "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    for (const c of children) if (fs.readFileSync(`/proc/${c}/comm`, "utf8").trim() === name) return Number(c);
  }
  throw new Error(`no child process named ${name} under pid ${parent}`);
}

async function runTool(bin: string, args: string[]): Promise<CliResult> {
  const { run } = await import("../harness/util.js");
  const r = await run(bin, args, { env: { ...process.env, HOME: state().dir } });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}
