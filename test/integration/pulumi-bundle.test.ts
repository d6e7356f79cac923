/**
 * The file bundle in the Pulumi state (provider/pulumi/bundle.ts), with the real pulumi CLI, a
 * file backend and the real cluster, for the dynamic resource and the native provider alike:
 * entries named by their path relative to the spec's directory, bundled contents hidden from
 * `pulumi preview --diff` (they travel under `__bundle`), a hook function outside the spec's
 * directory tree refused, the size cap naming the largest files, and a stack written with the
 * earlier key names previewing no change.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { pulumiFixture, withLauncher } from "./support/pulumi-env.js";
import { KHOOK_PROGRAM, programArgs, type PulumiProject } from "./support/pulumi-project.js";
import { KHOOK_TYPE, NATIVE_TYPE } from "./support/pulumi-specs.js";

/** Text that is only in the referenced files: wherever it shows, bundled content showed. */
const MARKER = "bundled-content-c0ffee";

const cm = (name: string, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  marker: "${value}"\n`;

/** A spec in boot/ that references one file under it and one beside it (../shared). */
const SPEC = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: NAME
state:
  namespace: \${NS}
steps:
  - name: local
    apply:
      namespace: \${NS}
      manifests:
        - file: ./manifests/local.yaml
  - name: shared
    apply:
      namespace: \${NS}
      manifests:
        - file: ../shared/shared.yaml
`;

function projectFiles(name: string): Record<string, string> {
  return {
    "boot/boot.khook.yaml": SPEC.replace("NAME", name),
    "boot/manifests/local.yaml": cm("local", `${MARKER}-1`),
    "shared/shared.yaml": cm("shared", `${MARKER}-shared`),
  };
}

interface StateResource {
  urn: string;
  type: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

/** The stack's state file as the file backend keeps it on disk. */
function stateFile(project: PulumiProject): { text: string; resources: StateResource[] } {
  const stacks = path.join(project.stateDir, ".pulumi", "stacks");
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (e.name === `${project.stack}.json`) files.push(path.join(d, e.name));
    }
  };
  walk(stacks);
  assert.equal(files.length, 1, `one state file for the stack under ${stacks}`);
  const text = fs.readFileSync(files[0]!, "utf8");
  const doc = JSON.parse(text) as { checkpoint?: { latest?: { resources?: StateResource[] } } };
  return {
    text,
    resources: (doc.checkpoint?.latest?.resources ?? []).filter((r) => r.type === KHOOK_TYPE || r.type === NATIVE_TYPE),
  };
}

/** The bundle's entry names in the state, in inputs and outputs, and what else the state says about it. */
function assertBundleInState(project: PulumiProject): void {
  const { text, resources } = stateFile(project);
  assert.equal(resources.length, 1);
  const machine = path.basename(project.dir);
  for (const [where, bag] of [
    ["inputs", resources[0]!.inputs],
    ["outputs", resources[0]!.outputs],
  ] as const) {
    const bundle = bag["__bundle"] as { baseDir: string; files: Record<string, string> } | undefined;
    assert.ok(bundle !== undefined, `${where} carry __bundle: ${Object.keys(bag).join(", ")}`);
    assert.deepEqual(
      Object.keys(bundle.files).sort(),
      ["../shared/shared.yaml", "manifests/local.yaml"],
      `${where}: entries named relative to the spec's directory`,
    );
    assert.equal(bundle.baseDir, "boot", `${where}: only the spec directory's own name, which ../shared walks through`);
    for (const old of ["files", "binaryFiles", "baseDir", "executables"])
      assert.equal(bag[old], undefined, `${where} have no top-level ${old}`);
  }
  assert.ok(text.includes(MARKER), "the content is in the state (destroy runs from it)");
  for (const key of text.matchAll(/"([^"\n]*(?:local|shared)\.yaml)"\s*:/g))
    assert.ok(!key[1]!.includes(machine) && !key[1]!.startsWith("/"), `a key with a machine path: ${key[1]}`);
}

test(
  "bundle (dynamic resource): entries are named relative to the spec's directory, bundled contents are hidden from preview --diff, a stack with the earlier key names previews no change",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, { program: KHOOK_PROGRAM, files: projectFiles("bundle-dynamic") });
    project.write(
      "args.json",
      programArgs({ args: { specFile: "./boot/boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
    );
    await project.init();

    const created = await project.ok(["preview", "--diff"]);
    assert.match(created.output, /\+ pulumi-nodejs:dynamic\/khook:Khook: \(create\)/, created.output);
    assert.ok(!created.output.includes(MARKER), `bundled content in preview --diff:\n${created.output}`);
    assert.ok(
      !/__bundle|manifests\/local\.yaml"?:/.test(created.output),
      `the bundle's entries in preview --diff:\n${created.output}`,
    );

    await project.ok(["up", "--yes", "--skip-preview"]);
    assert.equal((await cluster.configMap(ns, "local"))?.data?.marker, `${MARKER}-1`);
    assertBundleInState(project);

    // The stack as an earlier khook wrote it: the bundle in files/baseDir, keyed under a root above the project.
    const exported = JSON.parse(await project.exportText()) as { deployment: { resources: StateResource[] } };
    const top = path.basename(project.dir);
    for (const r of exported.deployment.resources.filter((x) => x.type === KHOOK_TYPE)) {
      for (const bag of [r.inputs, r.outputs]) {
        const b = bag["__bundle"] as { files: Record<string, string>; binaryFiles: Record<string, string> };
        delete bag["__bundle"];
        Object.assign(bag, {
          baseDir: `${top}/boot`,
          files: Object.fromEntries(Object.entries(b.files).map(([k, v]) => [path.posix.join(top, "boot", k), v])),
          binaryFiles: {},
          executables: [],
        });
      }
    }
    const legacy = path.join(project.dir, "legacy-state.json");
    fs.writeFileSync(legacy, JSON.stringify(exported));
    await project.ok(["stack", "import", "--file", legacy]);
    assert.ok(
      stateFile(project).text.includes(`"${top}/boot/manifests/local.yaml"`),
      "the imported state has the earlier key names",
    );
    const versions = await cluster.versions(ns, ["local", "shared"]);
    const upgraded = await project.run(["preview", "--diff", "--expect-no-changes"]);
    assert.equal(upgraded.code, 0, `a stack with the earlier key names shows a change:\n${upgraded.output}`);
    assert.doesNotMatch(upgraded.output, /replace|\+-/, upgraded.output);
    // The first `up` after the upgrade is a no-op in the cluster that stores the inputs under __bundle
    // (until then, a preview of a real change would show the earlier keys' content going away, once).
    await project.ok(["up", "--yes", "--skip-preview"]);
    assert.deepEqual(await cluster.versions(ns, ["local", "shared"]), versions, "nothing re-applied");
    const inputs = stateFile(project).resources[0]!.inputs;
    assert.deepEqual(
      [inputs["files"], Object.keys((inputs["__bundle"] as { files: object }).files).sort()],
      [undefined, ["../shared/shared.yaml", "manifests/local.yaml"]],
    );

    // An edited file: preview says what changes, never the content.
    project.write("boot/manifests/local.yaml", cm("local", `${MARKER}-2`));
    const edited = await project.ok(["preview", "--diff"]);
    assert.match(edited.output, /~ pulumi-nodejs:dynamic\/khook:Khook: \(update\)/, edited.output);
    assert.match(edited.output, /\[boot\] change: step local: inputs changed/, edited.output);
    assert.ok(!edited.output.includes(MARKER), `bundled content in preview --diff of an edit:\n${edited.output}`);
    assert.deepEqual(await cluster.versions(ns, ["local", "shared"]), versions, "preview writes nothing");

    // Destroy from outputs that still hold the earlier key names (a no-op up leaves outputs as they were): it still reads its bundle.
    await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.deepEqual(await cluster.versions(ns, ["local", "shared"]), { local: undefined, shared: undefined });
  },
);

test(
  "bundle (dynamic resource): a hook function reached through a symlink out of the spec's directory is refused at preview, naming it and the opt-in",
  { timeout: 600_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: { ...projectFiles("bundle-outside"), "tools/fn": "#!/bin/sh\ncat\n" },
    });
    fs.chmodSync(path.join(project.dir, "tools", "fn"), 0o755);
    fs.symlinkSync(path.join(project.dir, "tools"), path.join(project.dir, "boot", "linked"));
    project.write(
      "boot/boot.khook.yaml",
      `${SPEC.replace("NAME", "bundle-outside")}hooks:\n  - {name: labels, on: [post-render], function: {exec: ./linked/fn}}\n`,
    );
    project.write(
      "args.json",
      programArgs({ args: { specFile: "./boot/boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
    );
    await project.init();
    const refused = await project.run(["preview"]);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.output,
      /the hook function \.\/linked\/fn is outside the spec's directory \(through a symlink\).*allowFunctionsOutsideSpecDir: true/,
      refused.output,
    );
  },
);

const yamlProgram = (ns: string, kubeconfig: string, extra = ""): string => `name: khook-bundle-yaml
runtime: yaml
resources:
  boot:
    type: khook:Khook
    properties:
      specFile: ./boot/boot.khook.yaml
      vars:
        NS: ${ns}
      kubeconfig:
        fn::readFile: ${kubeconfig}
${extra}`;

test(
  "bundle (native provider): entries are named relative to the spec's directory, contents hidden from preview --diff; an outside function and an oversized bundle fail preview naming the files",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: "",
      bare: true,
      files: { ...projectFiles("bundle-native"), "tools/fn": "#!/bin/sh\ncat\n" },
    });
    fs.chmodSync(path.join(project.dir, "tools", "fn"), 0o755);
    project.write("Pulumi.yaml", yamlProgram(ns, kubeconfig));
    Object.assign(project.env, withLauncher(project.env));
    await project.init();

    const created = await project.ok(["preview", "--diff"]);
    assert.match(created.output, /\+ khook:index:Khook: \(create\)/, created.output);
    assert.ok(!created.output.includes(MARKER), `bundled content in preview --diff:\n${created.output}`);
    await project.ok(["up", "--yes", "--skip-preview"]);
    assertBundleInState(project);
    project.write("boot/manifests/local.yaml", cm("local", `${MARKER}-2`));
    const edited = await project.ok(["preview", "--diff"]);
    assert.match(edited.output, /~ khook:index:Khook: \(update\)/, edited.output);
    assert.ok(!edited.output.includes(MARKER), `bundled content in preview --diff of an edit:\n${edited.output}`);

    project.write(
      "boot/boot.khook.yaml",
      `${SPEC.replace("NAME", "bundle-native")}hooks:\n  - {name: labels, on: [post-render], function: {exec: ../tools/fn}}\n`,
    );
    const outside = await project.run(["preview"]);
    assert.notEqual(outside.code, 0);
    assert.match(
      outside.output,
      /the hook function \.\.\/tools\/fn is outside the spec's directory \(through \.\.\/\).*allowFunctionsOutsideSpecDir: true/,
      outside.output,
    );
    project.write(
      "Pulumi.yaml",
      yamlProgram(ns, kubeconfig, "      allowFunctionsOutsideSpecDir: true\n      maxBundleBytes: 100\n"),
    );
    const capped = await project.run(["preview"]);
    assert.notEqual(capped.code, 0);
    assert.match(
      capped.output,
      /over the bundle's limit of 0\.1 KiB .*largest: (manifests\/local\.yaml|\.\.\/shared\/shared\.yaml) \([\d.]+ KiB\)/,
      capped.output,
    );

    project.write("boot/boot.khook.yaml", SPEC.replace("NAME", "bundle-native"));
    project.write("Pulumi.yaml", yamlProgram(ns, kubeconfig));
    await project.ok(["destroy", "--yes", "--skip-preview"]);
    assert.deepEqual(await cluster.versions(ns, ["local", "shared"]), { local: undefined, shared: undefined });
  },
);
