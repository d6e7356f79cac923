/**
 * The SDK's Khook resource under Pulumi's mocks: what it reads at program
 * time, what it sends, and what is secret.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";
import * as pulumi from "@pulumi/pulumi";
import { specText, tempSpecDir } from "./support/spec-files.js";
import { BUNDLE_KEY, type Bundle } from "../../provider/pulumi/wire.js";

interface Registered {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}
const registered: Registered[] = [];

before(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push({ type: args.type, name: args.name, inputs: args.inputs as Record<string, unknown> });
        return { id: `${args.name}-id`, state: { ...args.inputs, runStatus: "succeeded", steps: [] } };
      },
      call: () => ({}),
    },
    "proj",
    "stack",
    false,
  );
});

/** Resolves an output's value and secretness. */
async function look<T>(o: pulumi.Input<T> | undefined): Promise<{ value: T | undefined; secret: boolean }> {
  if (o === undefined) return { value: undefined, secret: false };
  const out = pulumi.output(o);
  const secret = await pulumi.isSecret(out);
  const value = await new Promise<T>((resolve) => out.apply((v) => resolve(v as T)));
  return { value, secret };
}

const SPEC = specText(`  - name: config
    apply:
      manifests:
        - file: ./manifests/\${WHICH:-a}.yaml
  - name: w
    wait: { for: condition=Ready, on: pods, namespace: \${NS:-default} }
`);

describe("Khook (SDK): two resources, one record", () => {
  test("two Khook resources of one stack with the same spec name are told apart from a rename: the second fails, naming the first and the fix", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    const dir = tempSpecDir({
      "boot.khook.yaml": SPEC,
      "manifests/a.yaml": "kind: A\n",
      "manifests/b.yaml": "kind: B\n",
    });
    const specFile = path.join(dir, "boot.khook.yaml");
    const program = new Map<string, string>();
    khookInputs("boot-a", { specFile, vars: { WHICH: "a" } }, program);
    assert.throws(
      () => khookInputs("boot-b", { specFile, vars: { WHICH: "b" } }, program),
      (e: unknown) => {
        assert.match(
          String(e),
          /Khook boot-b: the Khook resource "boot-a" of this program already uses the state record Secret "khook-state-test" in namespace "default" \(spec name "test"\)/,
        );
        assert.match(String(e), /distinct metadata\.name \(or state\.name\)/);
        return true;
      },
    );
    // A rename has one resource in the program; the same resource registered again is itself.
    khookInputs("boot-a", { specFile, vars: { WHICH: "a" } }, program);
    // A distinct state.name (or metadata.name) is a distinct record.
    const other = tempSpecDir({
      "boot.khook.yaml": SPEC.replace("steps:", "state: { name: khook-state-other }\nsteps:"),
      "manifests/a.yaml": "kind: A\n",
    });
    khookInputs("boot-c", { specFile: path.join(other, "boot.khook.yaml") }, program);
    // A metadata.name made from a variable only an Output holds is not known here: not refused.
    khookInputs(
      "boot-d",
      {
        specFile: path.join(
          tempSpecDir({ "boot.khook.yaml": SPEC.replace("name: test", "name: ${N}") }),
          "boot.khook.yaml",
        ),
        vars: { N: pulumi.output("test") },
      },
      program,
    );
  });
});

describe("Khook (SDK)", () => {
  test("reads the spec file and every referenced file at program time, and sends them as inputs", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    const dir = tempSpecDir({
      "boot.khook.yaml": SPEC,
      "manifests/a.yaml": "kind: A\n",
      "manifests/b.yaml": "kind: B\n",
    });
    const inputs = khookInputs("boot", { specFile: path.join(dir, "boot.khook.yaml"), vars: { WHICH: "b", N: 3 } });
    assert.equal(inputs.resourceName, "boot");
    assert.equal(inputs.spec, SPEC);
    const files = await look(inputs[BUNDLE_KEY] as pulumi.Input<Bundle>);
    assert.deepEqual(Object.values(files.value?.files ?? {}), ["kind: B\n"]);
    assert.equal(files.secret, false);
    assert.deepEqual((await look(inputs.vars as pulumi.Input<Record<string, string>>)).value, { WHICH: "b", N: "3" });
    assert.equal(inputs.secretVars, undefined);
    assert.equal(inputs.envVars, undefined);
  });

  test("secretVars and kubeconfig are Pulumi secrets", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    const dir = tempSpecDir({ "boot.khook.yaml": SPEC, "manifests/a.yaml": "kind: A\n" });
    const inputs = khookInputs("boot", {
      specFile: path.join(dir, "boot.khook.yaml"),
      secretVars: { NS: "hush-hush" },
      kubeconfig: "apiVersion: v1\nkind: Config\n",
    });
    const sv = await look(inputs.secretVars as pulumi.Input<Record<string, string>>);
    assert.deepEqual(sv, { value: { NS: "hush-hush" }, secret: true });
    assert.equal((await look(inputs.kubeconfig as pulumi.Input<string>)).secret, true);
    // The file bundle does not become secret just because secrets exist.
    assert.equal((await look(inputs[BUNDLE_KEY] as pulumi.Input<Bundle>)).secret, false);
  });

  test("a file path built from a secret keeps the bundle secret", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    const dir = tempSpecDir({ "boot.khook.yaml": SPEC, "manifests/hidden-name.yaml": "kind: H\n" });
    const inputs = khookInputs("boot", {
      specFile: path.join(dir, "boot.khook.yaml"),
      secretVars: { WHICH: "hidden-name" },
    });
    const files = await look(inputs[BUNDLE_KEY] as pulumi.Input<Bundle>);
    assert.equal(files.secret, true);
    assert.deepEqual(Object.values(files.value?.files ?? {}), ["kind: H\n"]);
  });

  test("the environment is read only when opted in, with the configured prefixes", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    const dir = tempSpecDir({ "boot.khook.yaml": SPEC, "manifests/a.yaml": "kind: A\n" });
    process.env.KHOOK_VAR_NS = "from-env";
    process.env.KHOOK_SECRET_TOKEN = "env-secret";
    process.env.MY_NS = "mine";
    try {
      const off = khookInputs("boot", { specFile: path.join(dir, "boot.khook.yaml") });
      assert.equal(off.envVars, undefined);
      assert.equal(off.secretVars, undefined);
      const on = khookInputs("boot", { specFile: path.join(dir, "boot.khook.yaml"), fromEnvironment: true });
      assert.equal((on.envVars as Record<string, string>).NS, "from-env");
      const sv = await look(on.secretVars as pulumi.Input<Record<string, string>>);
      assert.equal(sv.secret, true);
      assert.equal(sv.value?.TOKEN, "env-secret");
      const prefixed = khookInputs("boot", { specFile: path.join(dir, "boot.khook.yaml"), varPrefix: "MY_" });
      assert.deepEqual(prefixed.envVars, { NS: "mine" });
    } finally {
      delete process.env.KHOOK_VAR_NS;
      delete process.env.KHOOK_SECRET_TOKEN;
      delete process.env.MY_NS;
    }
  });

  test("the SDK reads the environment with the loader's own scan: the same prefixes, and a name under both is a secret", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    const { scanEnvironment } = await import("../../provider/dsl/vars.js");
    const keys = ["KHOOK_VAR_SCAN_A", "KHOOK_SECRET_SCAN_B"];
    process.env["KHOOK_VAR_SCAN_A"] = "a";
    process.env["KHOOK_SECRET_SCAN_B"] = "b";
    try {
      const inputs = khookInputs("boot", { spec: SPEC, fromEnvironment: true });
      assert.deepEqual(inputs.envVars, scanEnvironment(process.env, {}).vars);
      assert.equal((inputs.envVars as Record<string, string>)["SCAN_A"], "a");
      assert.equal(
        (inputs.envVars as Record<string, string>)["SCAN_B"],
        undefined,
        "a secret never travels as a plain variable",
      );
      assert.deepEqual(scanEnvironment({ P_S_X: "1", P_Y: "2" }, { varPrefix: "P_", secretPrefix: "P_S_" }), {
        vars: { Y: "2" },
        secrets: { X: "1" },
      });
    } finally {
      for (const k of keys) delete process.env[k];
    }
  });

  test("var files are read and parsed at program time", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    const dir = tempSpecDir({
      "boot.khook.yaml": SPEC,
      "manifests/b.yaml": "kind: B\n",
      "vars.yaml": "WHICH: b\nN: 4\n",
    });
    const inputs = khookInputs("boot", {
      specFile: path.join(dir, "boot.khook.yaml"),
      varFiles: [path.join(dir, "vars.yaml")],
    });
    assert.deepEqual((inputs.varFiles as { values: unknown }[])[0]!.values, { WHICH: "b", N: "4" });
    assert.deepEqual(Object.values((await look(inputs[BUNDLE_KEY] as pulumi.Input<Bundle>)).value?.files ?? {}), [
      "kind: B\n",
    ]);
  });

  test("exactly one of spec and specFile; an unreadable spec file fails at program time", async () => {
    const { khookInputs } = await import("../../sdk/index.js");
    assert.throws(() => khookInputs("boot", {}), /exactly one of spec and specFile/);
    assert.throws(() => khookInputs("boot", { spec: "x", specFile: "y" }), /exactly one of spec and specFile/);
    assert.throws(
      () => khookInputs("boot", { specFile: "/nonexistent/boot.yaml" }),
      /cannot read the spec \/nonexistent\/boot\.yaml: no such file/,
    );
  });

  test("registers a pulumi-nodejs dynamic resource whose outputs are typed properties", async () => {
    const { Khook } = await import("../../sdk/index.js");
    const dir = tempSpecDir({ "boot.khook.yaml": SPEC, "manifests/a.yaml": "kind: A\n" });
    const text = fs.readFileSync(path.join(dir, "boot.khook.yaml"), "utf8");
    const k = new Khook("inline", { spec: text, baseDir: dir });
    const status = await look(k.runStatus);
    assert.equal(status.value, "succeeded");
    const reg = registered.find((r) => r.name === "inline");
    assert.equal(reg?.type, "pulumi-nodejs:dynamic/khook:Khook");
    assert.equal(typeof reg?.inputs.__provider, "string");
    assert.match(String(reg?.inputs.__provider), /"khook\/provider\/pulumi\/handlers"/);
    assert.equal(reg?.inputs.__provider, (await import("../../sdk/provider.js")).KHOOK_PROVIDER_TEXT);
  });
});
