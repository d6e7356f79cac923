/**
 * docs/fleet.md's recipes: the Kubernetes Job manifests, exactly as the page shows them, are
 * accepted by the real API server in a server-side dry run (schema, defaulting, validation of
 * podFailurePolicy, backoffLimitPerIndex, the projected volume). No pod runs: the test cluster's
 * nodes are kwok's. The Argo Workflow cannot be dry-run here (no Argo CRDs): its retry expression
 * is checked against the exit codes khook documents.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { EXIT_CODES } from "../../provider/errors.js";
import { testCluster, withNamespace } from "../harness/index.js";

const FLEET_MD = path.join(__dirname, "..", "..", "..", "docs", "fleet.md");

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
    const r = await cluster.kubectl(["apply", "--dry-run=server", "-n", ns, "-f", "-", "-o", "json"], { input: manifests });
    assert.equal(r.code, 0, r.stderr);
    const items = (JSON.parse(r.stdout) as { items: { kind: string; spec?: Record<string, unknown> }[] }).items;
    assert.deepEqual(items.map((i) => i.kind), ["ConfigMap", "Job"]);
    const job = items[1]!.spec as { completionMode: string; backoffLimitPerIndex: number; podFailurePolicy: { rules: { action: string; onExitCodes?: { values: number[] } }[] } };
    assert.equal(job.completionMode, "Indexed");
    // The server kept the exit-code rule: exit 2 (invalid input) fails the index, never retried.
    assert.deepEqual(job.podFailurePolicy.rules.find((rule) => rule.action === "FailIndex")?.onExitCodes?.values, [EXIT_CODES["invalid-input"]]);
    // The spec inside is a valid khook spec with a record, which is what makes retries resume.
    const configMap = parseAllDocuments(manifests)[0]!.toJS() as { data: Record<string, string> };
    assert.match(configMap.data["spec.yaml"]!, /^state: \{\}$/m);
  });

  test("the Argo Workflow retries exit 1 and never exit 2", () => {
    const workflow = parseAllDocuments(recipe("argo-workflow"))[0]!.toJS() as { spec: { templates: { retryStrategy?: { expression: string } }[] } };
    const expression = workflow.spec.templates.find((tpl) => tpl.retryStrategy !== undefined)!.retryStrategy!.expression;
    assert.equal(expression, `asInt(lastRetry.exitCode) == ${EXIT_CODES.execution}`);
    assert.notEqual(EXIT_CODES.execution, EXIT_CODES["invalid-input"]);
  });
});
