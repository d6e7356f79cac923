/**
 * docs/fleet.md's recipes: the Kubernetes Job manifests, exactly as the page shows them, are
 * accepted by the real API server in a server-side dry run (schema, defaulting, validation of
 * podFailurePolicy, backoffLimitPerIndex, the projected volume). No pod runs: the test cluster's
 * nodes are kwok's. The Argo Workflow is accepted, with strict field validation, under Argo's own
 * Workflow CRD (its full schema, from the argo-workflows v3.7.6 module), and its retry expression is
 * evaluated by Argo's own evaluator and function map (support/argo-retry, its util/expr) for khook's
 * exit codes and for pods that left none or were killed. No Argo controller runs here.
 */
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { EXIT_CODES } from "../../provider/errors.js";
import { testCluster, withNamespace } from "../harness/index.js";
import { cacheDir, repoRoot } from "../harness/util.js";
import type { ClusterLine } from "../../examples/fleet/summaries.js";
import { runKhook } from "./support/khook-cli.js";
import { kubeconfigFor, silentServer } from "./support/silent-server.js";

const run = promisify(execFile);

const FLEET_MD = path.join(__dirname, "..", "..", "..", "docs", "fleet.md");
/** The aggregator of CLI summaries (examples/fleet/summaries.ts), built. */
const SUMMARIES = path.join(__dirname, "..", "..", "examples", "fleet", "summaries.js");

/** The ```yaml blocks of docs/fleet.md whose first line is `# recipe: NAME`. */
function recipe(name: string): string {
  const blocks = [...fs.readFileSync(FLEET_MD, "utf8").matchAll(/```yaml\n# recipe: ([a-z-]+)\n([\s\S]*?)```/g)];
  const found = blocks.find((b) => b[1] === name);
  assert.ok(found, `docs/fleet.md has a recipe ${name} (found: ${blocks.map((b) => b[1]).join(", ")})`);
  return found[2]!;
}

describe("docs/fleet.md recipes", () => {
  test("the Indexed Job per workload cluster is accepted by the API server (server-side dry run)", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "fleet-docs");
    const manifests = recipe("kubernetes-job");
    const r = await cluster.kubectl(["apply", "--dry-run=server", "-n", ns, "-f", "-", "-o", "json"], {
      input: manifests,
    });
    assert.equal(r.code, 0, r.stderr);
    const items = (JSON.parse(r.stdout) as { items: { kind: string; spec?: Record<string, unknown> }[] }).items;
    assert.deepEqual(
      items.map((i) => i.kind),
      ["ConfigMap", "Job"],
    );
    const job = items[1]!.spec as {
      completionMode: string;
      backoffLimitPerIndex: number;
      podFailurePolicy: { rules: { action: string; onExitCodes?: { values: number[] } }[] };
    };
    assert.equal(job.completionMode, "Indexed");
    // The server kept the exit-code rule: exit 2 (invalid input) fails the index, never retried.
    assert.deepEqual(job.podFailurePolicy.rules.find((rule) => rule.action === "FailIndex")?.onExitCodes?.values, [
      EXIT_CODES["invalid-input"],
    ]);
    // The spec inside is a valid khook spec with a record, which is what makes retries resume.
    const configMap = parseAllDocuments(manifests)[0]!.toJS() as { data: Record<string, string> };
    assert.match(configMap.data["spec.yaml"]!, /^state: \{\}$/m);
  });

  test("the Argo Workflow is accepted by the API server under Argo's own Workflow CRD (server-side dry run, strict fields)", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "fleet-argo");
    // The full CRD is ~1 MB of schema: too big for client-side apply's annotation, as Argo's README says.
    const crd = path.join(await argoModuleDir(), "manifests", "base", "crds", "full", "argoproj.io_workflows.yaml");
    const installed = await cluster.kubectl([
      "apply",
      "--server-side",
      "--field-manager=khook-fleet-docs-test",
      "-f",
      crd,
    ]);
    assert.equal(installed.code, 0, installed.stderr);
    t.after(() => cluster.kubectl(["delete", "crd", "workflows.argoproj.io", "--wait=false", "--ignore-not-found"]));
    // kubectl wait fails at once ("accessor error") while the new CRD has no conditions yet; it watches once they exist.
    let established = await cluster.kubectl([
      "wait",
      "--for=condition=Established",
      "crd/workflows.argoproj.io",
      "--timeout=60s",
    ]);
    for (
      let attempt = 0;
      attempt < 50 && established.code !== 0 && /accessor error/.test(established.stderr);
      attempt++
    ) {
      established = await cluster.kubectl([
        "wait",
        "--for=condition=Established",
        "crd/workflows.argoproj.io",
        "--timeout=60s",
      ]);
    }
    assert.equal(established.code, 0, established.stderr);

    const submit = (manifest: string) =>
      cluster.kubectl(["create", "--dry-run=server", "--validate=strict", "-n", ns, "-f", "-", "-o", "json"], {
        input: manifest,
      });
    const r = await submit(recipe("argo-workflow"));
    assert.equal(r.code, 0, r.stderr);
    const accepted = JSON.parse(r.stdout) as {
      kind: string;
      spec: { templates: { retryStrategy?: { expression?: string; limit?: unknown } }[] };
    };
    assert.equal(accepted.kind, "Workflow");
    assert.ok(
      accepted.spec.templates.some(
        (tpl) => tpl.retryStrategy?.expression !== undefined && tpl.retryStrategy.limit !== undefined,
      ),
      "the schema kept the retry strategy",
    );
    // The schema is enforced, so the acceptance above means something: a misspelt field is refused.
    const typo = await submit(recipe("argo-workflow").replace("retryStrategy:", "retryStrateg:"));
    assert.notEqual(typo.code, 0);
    assert.match(typo.stderr, /unknown field "spec\.templates\[1\]\.retryStrateg"/);
  });

  test("the Argo Workflow retries exit 1, a killed pod and a pod that left no exit code, and never exit 2 (Argo's evaluator)", async () => {
    const workflow = parseAllDocuments(recipe("argo-workflow"))[0]!.toJS() as {
      spec: { templates: { retryStrategy?: { expression: string } }[] };
    };
    const expression = workflow.spec.templates.find((tpl) => tpl.retryStrategy !== undefined)!.retryStrategy!
      .expression;
    // -1: what the controller puts in lastRetry.exitCode when the pod left none (deleted, never ran); 137: SIGKILL (OOM, eviction).
    const codes = [EXIT_CODES.execution, EXIT_CODES["invalid-input"], EXIT_CODES.cancelled, -1, 137].map(String);
    const { stdout } = await run(await argoRetry(), [expression, ...codes]);
    assert.deepEqual(JSON.parse(stdout), {
      [EXIT_CODES.execution]: true,
      [EXIT_CODES["invalid-input"]]: false,
      [EXIT_CODES.cancelled]: true,
      "-1": true,
      "137": true,
    });
  });
});

describe("docs/fleet.md: the summaries a fan-out aggregates", () => {
  test("the CI matrix's `khook apply -o json > summary.json`, one per cluster, aggregated by examples/fleet/summaries: the unreachable cluster is in the report, with its server and why", async (t) => {
    const cluster = await testCluster();
    const ns = await withNamespace(t, "fleet-summaries");
    // The recipe's own command line: ./khook apply ... -o json > summary.json
    const line = /\.\/khook (apply [^>\n]*-o json) > summary\.json/.exec(recipe("ci-matrix"));
    assert.ok(line, "the CI matrix runs khook apply -o json > summary.json");
    const args = line[1]!.trim().split(/\s+/);
    assert.deepEqual(args.slice(args.indexOf("--kubeconfig"), args.indexOf("--kubeconfig") + 2), [
      "--kubeconfig",
      "kubeconfig",
    ]);
    const silent = await silentServer();
    t.after(() => silent.close());
    const spec = `apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: platform\nstate:\n  namespace: ${ns}\nsteps:\n  - name: config\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: platform, namespace: ${ns}}\n`;
    const artifacts = fs.mkdtempSync(path.join(os.tmpdir(), "khook-fleet-artifacts-"));
    const kubeconfigs: Record<string, string> = {
      "prod-a": fs.readFileSync(cluster.kubeconfig, "utf8"),
      "prod-b": fs.readFileSync(kubeconfigFor(silent.url, "prod-b"), "utf8"),
    };
    for (const [name, kubeconfig] of Object.entries(kubeconfigs)) {
      // One matrix job: its checkout (the spec), its kubeconfig file, its artifact summary-<cluster>/summary.json.
      const job = path.join(artifacts, `summary-${name}`);
      fs.mkdirSync(job);
      fs.writeFileSync(path.join(job, "bootstrap.khook.yaml"), spec);
      fs.writeFileSync(path.join(job, "kubeconfig"), kubeconfig);
      const r = await runKhook(args, { cwd: job, env: { PATH: process.env.PATH, HOME: process.env.HOME, CI: "true" } });
      fs.writeFileSync(path.join(job, "summary.json"), r.stdout);
      fs.rmSync(path.join(job, "kubeconfig"));
      fs.rmSync(path.join(job, "bootstrap.khook.yaml"));
    }
    const report = path.join(artifacts, "report.json");
    const aggregated = spawnSync(process.execPath, [SUMMARIES, artifacts, "--json", report], { encoding: "utf8" });
    assert.equal(aggregated.status, EXIT_CODES.execution, `a failed cluster fails the fleet run: ${aggregated.stderr}`);
    const lines = (JSON.parse(fs.readFileSync(report, "utf8")) as { clusters: ClusterLine[] }).clusters;
    const uid = (await cluster.kubectl(["get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}"])).stdout;
    assert.deepEqual(
      lines.map((l) => [l.cluster, l.outcome, l.exitCode, l.ok, l.kubeSystemUid]),
      [
        ["prod-a", "ok", 0, 1, uid],
        ["prod-b", "unreachable", 1, 0, null],
      ],
    );
    const down = lines[1]!;
    assert.equal(down.server, silent.url);
    assert.match(down.error ?? "", /context "prod-b"/);
    assert.match(down.error ?? "", /--wait-for-cluster/);
    assert.match(aggregated.stdout, /prod-b\s+unreachable\s+1\s+https:\/\/127\.0\.0\.1:\d+/);
  });
});

const ARGO_RETRY_DIR = path.join(repoRoot(), "test", "integration", "support", "argo-retry");
const GO_ENV = { ...process.env, CGO_ENABLED: "0", GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly -trimpath" };

/** The argo-workflows module at the version support/argo-retry pins, from Go's module cache (downloaded once). */
async function argoModuleDir(): Promise<string> {
  const { stdout } = await run("go", ["mod", "download", "-json", "github.com/argoproj/argo-workflows/v3"], {
    cwd: ARGO_RETRY_DIR,
    env: GO_ENV,
    timeout: 600_000,
  });
  return (JSON.parse(stdout) as { Dir: string }).Dir;
}

/** support/argo-retry, built once per version of its sources into the cache (Go's module cache holds Argo's). */
async function argoRetry(): Promise<string> {
  const dir = ARGO_RETRY_DIR;
  const hash = createHash("sha256");
  for (const f of ["main.go", "go.mod", "go.sum"]) hash.update(fs.readFileSync(path.join(dir, f)));
  const bin = path.join(cacheDir(), "test-tools", `argo-retry-${hash.digest("hex").slice(0, 16)}`);
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    const partial = `${bin}.${process.pid}.partial`;
    await run("go", ["build", "-o", partial, "."], { cwd: dir, env: GO_ENV, timeout: 900_000 });
    fs.renameSync(partial, bin);
  }
  return bin;
}
