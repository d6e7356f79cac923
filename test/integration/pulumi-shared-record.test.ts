/**
 * Two `Khook` resources of one stack with one spec name (issue 20 item 13), with the real pulumi
 * CLI, a file backend and the real cluster. khook now refuses the second at preview; an earlier
 * khook let both run on one state record, taking it from each other, and its `pulumi destroy`
 * left the objects of the resource that did not hold the record in the cluster. Such a stack is
 * rebuilt here exactly as that khook left it (the state and the record), then destroyed, as is,
 * and after the fix khook advises (one resource moves to its own `state.name`), which left the
 * shared record behind until records an owner leaves were marked and removed. A single resource
 * that moves its record leaves nothing behind either.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { onShell, pulumiFixture, SHELLS, withLauncher } from "./support/pulumi-env.js";
import { DECLARE_KHOOK } from "./support/pulumi-project.js";
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
const pulumi = require("@pulumi/pulumi");
${DECLARE_KHOOK}
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const kubeconfig = fs.readFileSync(a.kubeconfigFile, "utf8");
for (const r of a.resources) khook(r.name, { specFile: "./twin.khook.yaml", vars: { NS: a.ns, ...r.vars }, kubeconfig }, {});
`;

const RECORD = "khook-state-twin";

interface StateResource {
  urn: string;
  type: string;
  id?: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

type PulumiFixture = Awaited<ReturnType<typeof pulumiFixture>>;

/**
 * The stack an earlier khook left: both resources applied, then the second holding the one record
 * (its steps' hashes and its owner token), as that khook's takeovers did. `write` sets the
 * program's arguments: the record each resource names.
 */
async function earlierKhookStack(
  fixture: PulumiFixture,
): Promise<{ write: (first: string, second: string) => void; tokens: { first: string; second: string } }> {
  const { project, kubeconfig, namespace: ns, cluster } = fixture;
  const write = (firstRecord: string, secondRecord: string): void =>
    project.write(
      "args.json",
      JSON.stringify({
        ns,
        kubeconfigFile: kubeconfig,
        resources: [
          { name: "first", vars: { WHO: "a", REC: firstRecord } },
          { name: "second", vars: { WHO: "b", REC: secondRecord } },
        ],
      }),
    );
  write(RECORD, "twin-second");
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
  await cluster.copySecretData(ns, "twin-second", RECORD);
  await cluster.deleteSecret(ns, "twin-second");
  const tokens = {
    first: String(khooks.find((r) => r.urn.endsWith("::first"))!.outputs["ownerToken"]),
    second: String(second.outputs["ownerToken"]),
  };
  const record = await cluster.record(ns, RECORD);
  assert.equal(
    record?.owner?.token,
    tokens.second,
    "the record names the second as its owner, as the earlier khook left it",
  );
  assert.notEqual(record?.owner?.token, tokens.first);
  return { write, tokens };
}

test(
  "two Khook resources with one spec name: preview refuses the second naming the first and the fix; a stack an earlier khook left on one record is destroyed completely",
  { timeout: 900_000 },
  async (t) => {
    const fixture = await pulumiFixture(t, { program: PROGRAM, files: { "twin.khook.yaml": TWIN } });
    const { project, kubeconfig, namespace: ns, cluster } = fixture;
    await project.init();

    // khook now: the second resource on the first's record fails the preview, naming the first and the fix.
    project.write(
      "args.json",
      JSON.stringify({
        ns,
        kubeconfigFile: kubeconfig,
        resources: [
          { name: "first", vars: { WHO: "a", REC: RECORD } },
          { name: "second", vars: { WHO: "b", REC: RECORD } },
        ],
      }),
    );
    const refused = await project.run(["preview"]);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.output,
      /Khook second: the Khook resource "first" of this program already uses the state record Secret "khook-state-twin" in namespace "khook-pulumi-[^"]+" \(spec name "twin"\)/,
      refused.output,
    );
    assert.match(refused.output, /distinct metadata\.name \(or state\.name\)/, refused.output);

    await earlierKhookStack(fixture);
    const destroyed = await project.run(["destroy", "--yes", "--skip-preview"]);
    assert.equal(destroyed.code, 0, destroyed.output);
    for (const n of ["common", "cm-a", "cm-b"])
      assert.equal(
        await cluster.configMap(ns, n),
        undefined,
        `${n} is left in the cluster after destroy:\n${destroyed.output}`,
      );
    assert.equal(await cluster.record(ns, RECORD), undefined, "the record is removed");
    assert.equal((await project.khookResources()).length, 0);
  },
);

test(
  "two Khook resources on one record, fixed as khook advises (the holder gets its own state.name): the move removes nothing and marks the old record as left; destroy then leaves no object and no record behind",
  { timeout: 900_000 },
  async (t) => {
    const fixture = await pulumiFixture(t, { program: PROGRAM, files: { "twin.khook.yaml": TWIN } });
    const { project, namespace: ns, cluster } = fixture;
    await project.init();
    const { write, tokens } = await earlierKhookStack(fixture);

    // The fix: the resource that holds the shared record moves to a record of its own.
    write(RECORD, "twin-second-own");
    const moved = await project.run(["up", "--yes", "--skip-preview"]);
    assert.equal(moved.code, 0, moved.output);
    for (const n of ["common", "cm-a", "cm-b"])
      assert.ok(await cluster.configMap(ns, n), `${n} is still there after the move:\n${moved.output}`);
    const left = (await cluster.record(ns, RECORD))?.owner;
    const own = (await cluster.record(ns, "twin-second-own"))?.owner;

    const destroyed = await project.run(["destroy", "--yes", "--skip-preview"]);
    assert.equal(destroyed.code, 0, destroyed.output);
    for (const n of ["common", "cm-a", "cm-b"])
      assert.equal(
        await cluster.configMap(ns, n),
        undefined,
        `${n} is left in the cluster after destroy:\n${destroyed.output}`,
      );
    assert.equal(await cluster.record(ns, "twin-second-own"), undefined, "the mover's record is removed");
    assert.equal(
      await cluster.record(ns, RECORD),
      undefined,
      `the record both shared is removed:\n${destroyed.output}`,
    );
    assert.equal((await project.khookResources()).length, 0);

    // What the move wrote: the old record stayed the mover's, marked as left; the new one remembers it.
    assert.equal(left?.token, tokens.second);
    assert.match(left?.movedTo ?? "", /Secret "twin-second-own"/);
    assert.deepEqual(own?.movedFrom, [`${ns}/${RECORD}`]);
    assert.match(
      moved.output,
      new RegExp(`left the state record ${ns}/${RECORD} for the state record \\(Secret "twin-second-own"`),
      moved.output,
    );
  },
);

for (const shell of SHELLS)
  test(
    onShell(
      shell,
      "a resource whose state.name changes: the move keeps every object, and destroy removes the new record and the one it left",
    ),
    { timeout: 600_000 },
    async (t) => {
      const {
        project,
        kubeconfig,
        namespace: ns,
        cluster,
      } = await pulumiFixture(t, { program: PROGRAM, files: { "twin.khook.yaml": TWIN }, shell });
      const write = (record: string): void =>
        project.write(
          "args.json",
          JSON.stringify({
            ns,
            kubeconfigFile: kubeconfig,
            resources: [{ name: "only", vars: { WHO: "a", REC: record } }],
          }),
        );
      await project.init();
      write("twin-before");
      await project.ok(["up", "--yes", "--skip-preview"]);
      write("twin-after");
      const moved = await project.run(["up", "--yes", "--skip-preview"]);
      assert.equal(moved.code, 0, moved.output);
      for (const n of ["common", "cm-a"])
        assert.ok(await cluster.configMap(ns, n), `${n} is still there after the move`);
      assert.ok(await cluster.record(ns, "twin-before"), "the left record stays until the resource is destroyed");
      const destroyed = await project.run(["destroy", "--yes", "--skip-preview"]);
      assert.equal(destroyed.code, 0, destroyed.output);
      for (const n of ["common", "cm-a"])
        assert.equal(await cluster.configMap(ns, n), undefined, `${n} is left after destroy`);
      assert.equal(await cluster.record(ns, "twin-after"), undefined);
      assert.equal(
        await cluster.record(ns, "twin-before"),
        undefined,
        `the record it left is removed:\n${destroyed.output}`,
      );
      assert.match(
        destroyed.output,
        new RegExp(`removed the state record ${ns}/twin-before, which its owner had left for another`),
        destroyed.output,
      );
    },
  );

for (const shell of SHELLS)
  test(
    onShell(
      shell,
      "a rename without an alias that also moves the state record: the old resource's delete leaves the objects the new one declares, and removes its record",
    ),
    { timeout: 600_000 },
    async (t) => {
      const {
        project,
        kubeconfig,
        namespace: ns,
        cluster,
      } = await pulumiFixture(t, { program: PROGRAM, files: { "twin.khook.yaml": TWIN }, shell });
      const write = (name: string, record: string): void =>
        project.write(
          "args.json",
          JSON.stringify({ ns, kubeconfigFile: kubeconfig, resources: [{ name, vars: { WHO: "a", REC: record } }] }),
        );
      await project.init();
      write("before", "twin-before");
      await project.ok(["up", "--yes", "--skip-preview"]);
      // One update: Pulumi creates "after" (on its new record), then deletes "before" (on the old one).
      write("after", "twin-after");
      const renamed = await project.run(["up", "--yes", "--skip-preview"]);
      assert.equal(renamed.code, 0, renamed.output);
      for (const n of ["common", "cm-a"])
        assert.ok(
          await cluster.configMap(ns, n),
          `${n}, which "after" declares, was removed by the delete of "before":\n${renamed.output}`,
        );
      assert.equal(
        await cluster.record(ns, "twin-before"),
        undefined,
        `the old resource's record is removed:\n${renamed.output}`,
      );
      assert.ok(await cluster.record(ns, "twin-after"));
      const destroyed = await project.run(["destroy", "--yes", "--skip-preview"]);
      assert.equal(destroyed.code, 0, destroyed.output);
      for (const n of ["common", "cm-a"])
        assert.equal(await cluster.configMap(ns, n), undefined, `${n} is left after destroy`);
      assert.equal(await cluster.record(ns, "twin-after"), undefined);
    },
  );

test(
  "two khook:Khook resources with one spec name in a Pulumi YAML program (the native provider): preview refuses the second, naming the first and the fix",
  { timeout: 600_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
    } = await pulumiFixture(t, { program: "", bare: true, files: { "twin.khook.yaml": TWIN } });
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
    project.write(
      "Pulumi.yaml",
      `name: khook-twin-yaml\nruntime: yaml\nresources:\n${resource("first", "a")}${resource("second", "b")}`,
    );
    Object.assign(project.env, withLauncher(project.env));
    await project.init();
    const refused = await project.run(["preview"]);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.output,
      /the Khook resource "(first|second)" of this program already uses the state record Secret "khook-state-twin" in namespace "khook-pulumi-[^"]+" \(spec name "twin"\)/,
      refused.output,
    );
    assert.match(refused.output, /distinct metadata\.name \(or state\.name\)/, refused.output);
  },
);
