/**
 * One set of inputs (provider/inputs.ts) for every shell: the CLI's flags, the TypeScript SDK's
 * `KhookArgs` (the dynamic resource), the native provider's schema and what its check hands the
 * handlers, and the inputs table of docs/pulumi.md. An input one shell has and another lacks fails
 * here, and a value is judged the same in every shell.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { before, describe, test } from "node:test";
import * as pulumi from "@pulumi/pulumi";
import {
  CLI_ONLY_FLAGS,
  INPUTS,
  inputsTable,
  RUN_INPUTS,
  DOCS_ROWS,
  waitForClusterMs,
  type InputName,
} from "../../provider/inputs.js";
import { CLUSTER_OPTIONS, COMMON_OPTIONS } from "../../provider/cli/args.js";
import { khookSchema, KHOOK_TOKEN } from "../../provider/pulumi/native-schema.js";
import { programInputs } from "../../provider/pulumi/native.js";
import { check } from "../../provider/pulumi/check.js";
import { BUNDLE_KEY } from "../../provider/pulumi/wire.js";
import type { KhookArgs } from "../../sdk/index.js";
import { main } from "../../provider/cli/main.js";
import { PassThrough } from "node:stream";

/**
 * The TypeScript SDK's arguments are exactly the table's inputs: an input added to one and not the
 * other does not compile (`npm run build` fails on this line, naming the difference).
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : { onlyIn: Exclude<B, A> }) : { onlyIn: Exclude<A, B> };
const sdkArgsAreTheTable: Same<keyof KhookArgs, InputName> = true;

const URN = `urn:pulumi:dev::platform::${KHOOK_TOKEN}::boot`;
const SPEC = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: inputs
steps:
  - name: config
    apply:
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: config, namespace: default}
`;

/** A value of each run input, as a program gives it (and as the handlers get it). */
const RUN_VALUES: Record<string, unknown> = {
  kubeconfig: "apiVersion: v1\nkind: Config\nclusters: []\n",
  context: "prod",
  parallelism: 3,
  timeout: "30m",
  waitForCluster: "30s",
  previewMode: "online",
  refresh: "live",
};

before(async () => {
  await pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: () => ({}) },
    "proj",
    "stack",
    false,
  );
});

describe("one set of inputs", () => {
  test("the TypeScript SDK's KhookArgs are the table's inputs (checked by the compiler)", () => {
    assert.equal(sdkArgsAreTheTable, true);
  });

  test("the native provider's schema declares exactly the table's inputs, secrets marked", () => {
    const schema = JSON.parse(khookSchema()) as {
      resources: Record<string, { inputProperties: Record<string, { secret?: boolean; type?: string }> }>;
    };
    const props = schema.resources[KHOOK_TOKEN]!.inputProperties;
    assert.deepEqual(Object.keys(props).sort(), INPUTS.map((i) => i.name).sort());
    assert.deepEqual(
      Object.keys(props)
        .filter((k) => props[k]!.secret === true)
        .sort(),
      ["kubeconfig", "secretVars"],
    );
    assert.equal(props["waitForCluster"]!.type, "string");
  });

  test("every run input reaches the handlers from both shells alike: the SDK's khookInputs and the native check's programInputs", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-inputs-"));
    fs.writeFileSync(path.join(dir, "boot.khook.yaml"), SPEC);
    assert.deepEqual(Object.keys(RUN_VALUES).sort(), [...RUN_INPUTS].sort(), "a sample value for every run input");
    const native = programInputs(URN, { specFile: "boot.khook.yaml", ...RUN_VALUES }, dir);
    assert.deepEqual(native.failures, []);
    const { khookInputs } = await import("../../sdk/index.js");
    const sdk = khookInputs("boot", {
      specFile: path.join(dir, "boot.khook.yaml"),
      ...(RUN_VALUES as Partial<KhookArgs>),
    });
    for (const name of RUN_INPUTS) {
      assert.deepEqual(native.inputs[name], RUN_VALUES[name], `the native provider hands ${name} to the handlers`);
      const fromSdk = await new Promise((resolve) =>
        pulumi.output(sdk[name] as pulumi.Input<string | number>).apply(resolve),
      );
      assert.deepEqual(fromSdk, RUN_VALUES[name], `the SDK hands ${name} to the handlers`);
    }
    const keys = (bag: Record<string, unknown>) =>
      Object.keys(bag)
        .filter((k) => bag[k] !== undefined && k !== BUNDLE_KEY && k !== "pulumiProject" && k !== "pulumiStack")
        .sort();
    assert.deepEqual(keys(native.inputs), keys(sdk), "the two shells send the handlers the same properties");
  });

  test("docs/pulumi.md's inputs table is the table's (every input, once)", () => {
    const named = DOCS_ROWS.flatMap((r) => r.names);
    assert.deepEqual(
      [...named].sort(),
      [...INPUTS.map((i) => i.name), "pulumiProject", "pulumiStack"].sort(),
      "each input in one row",
    );
    const docs = fs.readFileSync(path.join(__dirname, "..", "..", "..", "docs", "pulumi.md"), "utf8");
    assert.ok(docs.includes(`\n${inputsTable()}\n`), `docs/pulumi.md under "## Inputs" must read:\n${inputsTable()}`);
  });

  test("every CLI flag is an input's counterpart or says why the CLI alone has it, and every input's flag exists", () => {
    const cliFlags = new Set(Object.keys({ ...COMMON_OPTIONS, ...CLUSTER_OPTIONS }).map((f) => `--${f}`));
    const counterparts = new Set<string>();
    for (const input of INPUTS) {
      if (!("flags" in input.cli)) {
        assert.ok(input.cli.none.length > 20, `${input.name}: why the CLI has no counterpart`);
        continue;
      }
      for (const flag of input.cli.flags) {
        const name = flag === "-f -" ? "--filename" : flag;
        assert.ok(cliFlags.has(name), `${input.name}: the CLI has ${flag}`);
        counterparts.add(name);
      }
    }
    for (const flag of cliFlags)
      assert.ok(counterparts.has(flag) || flag in CLI_ONLY_FLAGS, `${flag}: an input's counterpart, or CLI_ONLY_FLAGS`);
  });
});

describe("values judged the same in every shell", () => {
  test("waitForCluster 0s means do not wait, in the CLI and the Pulumi check alike; a non-duration is refused by both in the same words", async () => {
    assert.deepEqual(waitForClusterMs("0s", "--wait-for-cluster"), { ms: 0 });
    const inputs = { spec: SPEC, waitForCluster: "0s" };
    assert.deepEqual(check({}, inputs).failures, [], "the Pulumi check accepts 0s");
    const refused = check({}, { spec: SPEC, waitForCluster: "soon" }).failures;
    assert.deepEqual(refused, [
      {
        property: "waitForCluster",
        reason: 'waitForCluster expects a duration such as 10m, 90s or 1h30m (0s: do not wait), got "soon"',
      },
    ]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-inputs-"));
    fs.writeFileSync(path.join(dir, "spec.yaml"), SPEC);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = "";
    stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await main(["apply", "-f", path.join(dir, "spec.yaml"), "--wait-for-cluster", "soon"], {
      stdout,
      stderr,
      env: {},
    });
    assert.equal(code, 2);
    assert.match(
      err,
      /--wait-for-cluster expects a duration such as 10m, 90s or 1h30m \(0s: do not wait\), got "soon"/,
    );
  });
});
