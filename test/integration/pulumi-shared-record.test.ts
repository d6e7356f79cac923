/**
 * Two `Khook` resources of one stack with one spec name (issue 20 item 13), with the real pulumi
 * CLI, a file backend and the real cluster. khook now refuses the second at preview; an earlier
 * khook let both run on one state record, taking it from each other, and its `pulumi destroy`
 * left the objects of the resource that did not hold the record in the cluster. Such a stack is
 * rebuilt here exactly as that khook left it (the state and the record), then destroyed.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { pulumiFixture, withLauncher } from "./support/pulumi-env.js";
import { configMapStep, KHOOK_TYPE } from "./support/pulumi-specs.js";

/** One spec, two renderings: `mine` differs by WHO, `common` is the same for both; the record's name is a variable so the stack can first be built on two records. */
const TWIN = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: twin
state:
  namespace: \${NS}
  name: \${REC}
steps:
${configMapStep("common", { shared: "yes" })}  - name: mine
    apply:
      namespace: \${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: cm-\${WHO}
            data:
              who: \${WHO}
`;

const PROGRAM = `"use strict";
const fs = require("fs");
const { Khook } = require("khook");
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const kubeconfig = fs.readFileSync(a.kubeconfigFile, "utf8");
for (const r of a.resources) new Khook(r.name, { specFile: "./twin.khook.yaml", vars: { NS: a.ns, ...r.vars }, kubeconfig });
`;

const RECORD = "khook-state-twin";

interface StateResource {
  urn: string;
  type: string;
  id?: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

test("two Khook resources with one spec name: preview refuses the second naming the first and the fix; a stack an earlier khook left on one record is destroyed completely", { timeout: 900_000 }, async (t) => {
  const { project, kubeconfig, namespace: ns, cluster } = await pulumiFixture(t, { program: PROGRAM, files: { "twin.khook.yaml": TWIN } });
  const write = (secondRecord: string): void =>
    project.write("args.json", JSON.stringify({ ns, kubeconfigFile: kubeconfig, resources: [{ name: "first", vars: { WHO: "a", REC: RECORD } }, { name: "second", vars: { WHO: "b", REC: secondRecord } }] }));
  await project.init();

  // khook now: the second resource on the first's record fails the preview, naming the first and the fix.
  write(RECORD);
  const refused = await project.run(["preview"]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.output, /Khook second: the Khook resource "first" of this program already uses the state record Secret "khook-state-twin" in namespace "khook-pulumi-[^"]+" \(spec name "twin"\)/, refused.output);
  assert.match(refused.output, /distinct metadata\.name \(or state\.name\)/, refused.output);

  // Build the stack an earlier khook left: both resources applied, then the second holding the one record.
  write("twin-second");
  await project.ok(["up", "--yes", "--skip-preview"]);
  for (const n of ["common", "cm-a", "cm-b"]) assert.ok(await cluster.configMap(ns, n), `${n} exists`);
  const exported = JSON.parse(await project.exportText()) as { deployment: { resources: StateResource[] } };
  const khooks = exported.deployment.resources.filter((r) => r.type === KHOOK_TYPE);
  const second = khooks.find((r) => r.urn.endsWith("::second"))!;
  for (const bag of [second.inputs, second.outputs]) (bag["vars"] as Record<string, string>)["REC"] = RECORD;
  second.outputs["recordName"] = RECORD;
  const file = path.join(project.dir, "earlier-khook-state.json");
  fs.writeFileSync(file, JSON.stringify(exported));
  await project.ok(["stack", "import", "--file", file]);
  // The second's last run wrote the shared record: its steps' hashes and its owner token.
  await cluster.copySecretData(ns, "twin-second", RECORD);
  await cluster.deleteSecret(ns, "twin-second");
  const record = await cluster.record(ns, RECORD);
  assert.equal(record?.owner?.token, second.outputs["ownerToken"], "the record names the second as its owner, as the earlier khook left it");
  assert.notEqual(record?.owner?.token, khooks.find((r) => r.urn.endsWith("::first"))!.outputs["ownerToken"]);

  const destroyed = await project.run(["destroy", "--yes", "--skip-preview"]);
  assert.equal(destroyed.code, 0, destroyed.output);
  for (const n of ["common", "cm-a", "cm-b"]) assert.equal(await cluster.configMap(ns, n), undefined, `${n} is left in the cluster after destroy:\n${destroyed.output}`);
  assert.equal(await cluster.record(ns, RECORD), undefined, "the record is removed");
  assert.equal((await project.khookResources()).length, 0);
});

test("two khook:Khook resources with one spec name in a Pulumi YAML program (the native provider): preview refuses the second, naming the first and the fix", { timeout: 600_000 }, async (t) => {
  const { project, kubeconfig, namespace: ns } = await pulumiFixture(t, { program: "", bare: true, files: { "twin.khook.yaml": TWIN } });
  const resource = (name: string, who: string): string => `  ${name}:
    type: khook:Khook
    properties:
      specFile: ./twin.khook.yaml
      vars:
        NS: ${ns}
        WHO: ${who}
        REC: ${RECORD}
      kubeconfig:
        fn::readFile: ${kubeconfig}
`;
  project.write("Pulumi.yaml", `name: khook-twin-yaml\nruntime: yaml\nresources:\n${resource("first", "a")}${resource("second", "b")}`);
  Object.assign(project.env, withLauncher(project.env));
  await project.init();
  const refused = await project.run(["preview"]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.output, /the Khook resource "(first|second)" of this program already uses the state record Secret "khook-state-twin" in namespace "khook-pulumi-[^"]+" \(spec name "twin"\)/, refused.output);
  assert.match(refused.output, /distinct metadata\.name \(or state\.name\)/, refused.output);
});
