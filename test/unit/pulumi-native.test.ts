/**
 * The native provider's shell (provider/pulumi/native.ts) without the engine:
 * how it turns a non-Node program's inputs into the handlers' inputs, how it
 * carries secrets across, its schema, and that its methods are the dynamic
 * resource's handlers (one engine, two shells).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, test } from "node:test";
import * as handlers from "../../provider/pulumi/handlers.js";
import {
  conceal,
  configureSettings,
  nativeProvider,
  parseUrn,
  programInputs,
  reveal,
} from "../../provider/pulumi/native.js";
import { khookSchema, KHOOK_TOKEN } from "../../provider/pulumi/native-schema.js";
import { BUNDLE_KEY, UNKNOWN, type Bundle } from "../../provider/pulumi/wire.js";
import { KHOOK_VERSION } from "../../provider/version.js";

const URN = `urn:pulumi:dev::platform::${KHOOK_TOKEN}::boot`;
const SECRET = (value: unknown) => ({ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value });

const SPEC = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: native-demo
steps:
  - name: config
    apply:
      namespace: \${NS}
      manifests:
        - file: ./manifests/config.yaml
`;

function programDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-native-"));
  fs.mkdirSync(path.join(dir, "boot", "manifests"), { recursive: true });
  fs.writeFileSync(path.join(dir, "boot", "bootstrap.khook.yaml"), SPEC);
  fs.writeFileSync(
    path.join(dir, "boot", "manifests", "config.yaml"),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  a: "1"\n',
  );
  fs.writeFileSync(path.join(dir, "vars.yaml"), "NS: apps\n");
  return dir;
}

afterEach(() => handlers.setTestHooks());

test("the URN gives the resource name, project and stack the dynamic SDK sends as inputs (the record's owner)", () => {
  assert.deepEqual(parseUrn(URN), { stack: "dev", project: "platform", name: "boot" });
  assert.deepEqual(parseUrn(`urn:pulumi:dev::platform::pulumi:pulumi:Stack$${KHOOK_TOKEN}::a::b`), {
    stack: "dev",
    project: "platform",
    name: "a::b",
  });
});

test("programInputs reads the spec, its var files and the files it references relative to the program's directory, like the TypeScript SDK at program time", () => {
  const dir = programDir();
  const { inputs, failures } = programInputs(
    URN,
    { specFile: "boot/bootstrap.khook.yaml", varFiles: ["vars.yaml"], vars: { REPLICAS: 3 } },
    dir,
  );
  assert.deepEqual(failures, []);
  assert.equal(inputs.spec, SPEC);
  assert.equal(inputs.specFile, "boot/bootstrap.khook.yaml");
  assert.deepEqual(inputs.vars, { REPLICAS: "3" });
  assert.deepEqual(inputs.varFiles, [{ file: "vars.yaml", values: { NS: "apps" } }]);
  const bundle = inputs[BUNDLE_KEY] as Bundle;
  assert.deepEqual(Object.keys(bundle.files), ["manifests/config.yaml"], "named relative to the spec's directory");
  assert.equal(bundle.baseDir, ".");
  assert.deepEqual([inputs.resourceName, inputs.pulumiProject, inputs.pulumiStack], ["boot", "platform", "dev"]);
  assert.ok(!JSON.stringify(inputs).includes(dir), "no absolute path of the machine lands in state");
});

test("an edited referenced file changes the checked inputs, so preview shows it", () => {
  const dir = programDir();
  const before = programInputs(URN, { specFile: "boot/bootstrap.khook.yaml", vars: { NS: "apps" } }, dir).inputs;
  fs.writeFileSync(
    path.join(dir, "boot", "manifests", "config.yaml"),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  a: "2"\n',
  );
  const after = programInputs(URN, { specFile: "boot/bootstrap.khook.yaml", vars: { NS: "apps" } }, dir).inputs;
  assert.notDeepEqual((before[BUNDLE_KEY] as Bundle).files, (after[BUNDLE_KEY] as Bundle).files);
});

test("bundle (native): a function outside the spec's directory tree is refused unless allowFunctionsOutsideSpecDir, and the cap names the largest files: check failures, by the SDK's own rules", () => {
  const dir = programDir();
  fs.mkdirSync(path.join(dir, "tools"));
  fs.writeFileSync(path.join(dir, "tools", "fn"), "#!/bin/sh\ncat\n", { mode: 0o755 });
  fs.writeFileSync(
    path.join(dir, "boot", "bootstrap.khook.yaml"),
    `${SPEC}hooks:\n  - {name: labels, on: [post-render], function: {exec: ../tools/fn}}\n`,
  );
  const args = { specFile: "boot/bootstrap.khook.yaml", vars: { NS: "apps" } };
  const refused = programInputs(URN, args, dir);
  assert.deepEqual(
    refused.failures.map((f) => f.property),
    ["specFile"],
  );
  assert.match(
    refused.failures[0]!.reason,
    /the hook function \.\.\/tools\/fn is outside the spec's directory \(through \.\.\/\).*allowFunctionsOutsideSpecDir: true/,
  );
  const allowed = programInputs(URN, { ...args, allowFunctionsOutsideSpecDir: true }, dir);
  assert.deepEqual(allowed.failures, []);
  assert.deepEqual((allowed.inputs[BUNDLE_KEY] as Bundle).executables, ["../tools/fn"]);
  const capped = programInputs(URN, { ...args, allowFunctionsOutsideSpecDir: true, maxBundleBytes: 16 }, dir);
  assert.match(
    capped.failures[0]?.reason ?? "",
    /over the bundle's limit of 0\.0 KiB .*largest: manifests\/config\.yaml \([\d.]+ KiB\), \.\.\/tools\/fn .*maxBundleBytes/,
  );
  assert.deepEqual(
    programInputs(URN, { ...args, maxBundleBytes: "4MiB" }, dir).failures.map((f) => f.property),
    ["maxBundleBytes", "specFile"],
  );
  const schema = JSON.parse(khookSchema()) as {
    resources: Record<string, { inputProperties: Record<string, { type: string }> }>;
  };
  const inputs = schema.resources[KHOOK_TOKEN]!.inputProperties;
  assert.deepEqual([inputs.allowFunctionsOutsideSpecDir?.type, inputs.maxBundleBytes?.type], ["boolean", "integer"]);
});

test("a missing spec file, a missing var file, or both spec and specFile are check failures naming the property", () => {
  const dir = programDir();
  const r = programInputs(URN, { specFile: "nope.yaml", varFiles: ["missing.yaml"] }, dir);
  assert.deepEqual(
    r.failures.map((f) => f.property),
    ["specFile", "varFiles[0]"],
  );
  assert.match(r.failures[0]!.reason, /cannot read the spec nope\.yaml .*no such file/);
  assert.deepEqual(
    programInputs(URN, { spec: SPEC, specFile: "x" }, dir).failures.map((f) => f.property),
    ["spec"],
  );
  assert.deepEqual(
    programInputs(URN, {}, dir).failures.map((f) => f.property),
    ["spec"],
  );
});

test("an unknown spec during preview plans nothing yet instead of failing", () => {
  const { inputs, failures } = programInputs(URN, { spec: UNKNOWN }, os.tmpdir());
  assert.deepEqual(failures, []);
  assert.equal(inputs.spec, UNKNOWN);
  assert.deepEqual((inputs[BUNDLE_KEY] as Bundle).files, {});
});

test("secrets: the handlers see plain values; kubeconfig, secretVars and whatever arrived secret leave wrapped", () => {
  const { plain, secret } = reveal({
    spec: "x",
    vars: { A: SECRET("1") },
    secretVars: { T: "t0ken" },
    kubeconfig: SECRET("kc"),
  });
  assert.deepEqual(plain, { spec: "x", vars: { A: "1" }, secretVars: { T: "t0ken" }, kubeconfig: "kc" });
  assert.deepEqual([...secret].sort(), ["kubeconfig", "vars"]);
  const out = conceal({ ...plain, steps: [], gone: undefined }, secret);
  assert.deepEqual(out, {
    spec: "x",
    vars: SECRET({ A: "1" }),
    secretVars: SECRET({ T: "t0ken" }),
    kubeconfig: SECRET("kc"),
    steps: [],
  });
  assert.equal(conceal({ kubeconfig: UNKNOWN }, new Set()).kubeconfig, UNKNOWN, "an unknown stays an unknown");
});

test("Configure: stack config (khook:config:x or khook:x) and an explicit provider's inputs reach the handlers' settings", () => {
  assert.deepEqual(
    configureSettings(
      { "khook:config:kubeconfig": "kc", "khook:previewMode": "online", "kubernetes:config:kubeconfig": "other" },
      { deleteUnreachable: true, context: SECRET("ctx") },
    ),
    {
      kubeconfig: "kc",
      previewMode: "online",
      deleteUnreachable: "true",
      context: "ctx",
    },
  );
});

test("the schema declares khook:index:Khook with the dynamic resource's outputs, secrets marked, and the package version", () => {
  const schema = JSON.parse(khookSchema()) as {
    name: string;
    version: string;
    resources: Record<
      string,
      { inputProperties: Record<string, { secret?: boolean }>; properties: Record<string, unknown> }
    >;
    config: { variables: Record<string, { secret?: boolean }> };
  };
  assert.equal(schema.name, "khook");
  assert.equal(schema.version, KHOOK_VERSION);
  const khook = schema.resources[KHOOK_TOKEN]!;
  for (const out of [
    "steps",
    "runStatus",
    "recordNamespace",
    "recordName",
    "recordUpdatedAt",
    "engineVersion",
    "plan",
    "specName",
  ])
    assert.ok(out in khook.properties, `output ${out}`);
  for (const input of [
    "spec",
    "specFile",
    "vars",
    "varFiles",
    "secretVars",
    "kubeconfig",
    "context",
    "parallelism",
    "timeout",
    "previewMode",
  ])
    assert.ok(input in khook.inputProperties, `input ${input}`);
  assert.equal(khook.inputProperties.secretVars?.secret, true);
  assert.equal(khook.inputProperties.kubeconfig?.secret, true);
  assert.equal(schema.config.variables.kubeconfig?.secret, true);
});

test("one engine, two shells: the native check is the handlers' check, and its plan lines leave through the native sink", async () => {
  const dir = programDir();
  const cwd = process.cwd();
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.chdir(dir);
  // Without an engine address the lines go to stderr (with one, to the engine's log under the URN).
  (process.stderr as { write: unknown }).write = (s: string) => (written.push(String(s)), true);
  try {
    const provider = nativeProvider(undefined);
    assert.equal(provider.version, KHOOK_VERSION);
    const result = await provider.check!(URN, {}, { specFile: "boot/bootstrap.khook.yaml", vars: { NS: "apps" } });
    assert.deepEqual(result.failures, []);
    assert.equal((result.inputs as { plan: string[] }).plan.length, 1);
  } finally {
    (process.stderr as { write: unknown }).write = write;
    process.chdir(cwd);
  }
  assert.match(written.join(""), /\[boot\] plan: config: run apply/);
});
