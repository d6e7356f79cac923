/**
 * Preview with the real pulumi CLI: planning while the cluster is still
 * unknown (a dynamic resource stands in for eks.Cluster and feeds the
 * kubeconfig, as an object, and a variable), the tools apply will need, and
 * the opt-in online preview against the real cluster.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parse as parseYaml } from "yaml";
import { onShell, pulumiFixture, SHELLS } from "./support/pulumi-env.js";
import { DECLARE_KHOOK, KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, INVALID_STEPS, secretStep, spec } from "./support/pulumi-specs.js";

/**
 * A program whose cluster is created in the same `up`: `FakeCluster` is a
 * dynamic resource whose `kubeconfig` (an object, like @pulumi/eks's) and
 * `region` exist only once it is created, so at preview both are unknown.
 */
const CLUSTER_PROGRAM = `"use strict";
const fs = require("fs");
const pulumi = require("@pulumi/pulumi");
${DECLARE_KHOOK}
const a = JSON.parse(fs.readFileSync("args.json", "utf8"));
const clusterProvider = {
  async create(inputs) {
    const kubeconfig = JSON.parse(require("fs").readFileSync(inputs.kubeconfigJson, "utf8"));
    return { id: "fake-cluster", outs: { kubeconfigJson: inputs.kubeconfigJson, kubeconfig, region: "eu-west-1" } };
  },
};
class FakeCluster extends pulumi.dynamic.Resource {
  constructor(name, kubeconfigJson) {
    super(clusterProvider, name, { kubeconfigJson, kubeconfig: undefined, region: undefined }, {});
  }
}
const cluster = new FakeCluster("cluster", a.kubeconfigJson);
const boot = khook("boot", { specFile: "./boot.khook.yaml", vars: { NS: a.ns, REGION: cluster.region }, kubeconfig: cluster.kubeconfig }, a.deletedWith ? { deletedWith: cluster } : {});
exports.steps = boot.steps;
exports.plan = boot.plan;
`;

const REGION_STEP = configMapStep("beta", { region: "${REGION}" });

for (const shell of SHELLS)
  test(
    onShell(
      shell,
      "preview plans while the cluster is unknown: full validation, the plan printed, waiting steps named; invalid specs fail with every problem",
    ),
    { timeout: 900_000 },
    async (t) => {
      const {
        project,
        kubeconfig,
        namespace: ns,
        cluster,
      } = await pulumiFixture(t, {
        program: CLUSTER_PROGRAM,
        files: { "boot.khook.yaml": spec("unknown", configMapStep("alpha", { a: "1" }) + REGION_STEP) },
        shell,
      });
      // The object the fake cluster outputs: the test cluster's kubeconfig, parsed, as @pulumi/eks outputs one.
      project.write("kubeconfig.json", JSON.stringify(parseYaml(fs.readFileSync(kubeconfig, "utf8"))));
      project.write("args.json", JSON.stringify({ ns, kubeconfigJson: path.join(project.dir, "kubeconfig.json") }));
      project.env.KUBECONFIG = path.join(project.dir, "no-such-kubeconfig"); // only the cluster's output can reach the cluster
      await project.init();

      const preview = await project.ok(["preview", "--diff"]);
      t.diagnostic(`unknown-kubeconfig preview:\n${preview.stdout}`);
      if (process.env.KHOOK_RECORD_OUTPUT)
        fs.writeFileSync(
          path.join(
            process.env.KHOOK_RECORD_OUTPUT,
            `${shell === "native" ? "native-" : ""}unknown-kubeconfig-preview.txt`,
          ),
          preview.output,
        );
      assert.match(
        preview.output,
        /\[boot\] plan: alpha: run apply \[inputs [0-9a-f]{12}, when included\] /,
        preview.output,
      );
      assert.match(
        preview.output,
        /\[boot\] plan: beta: apply - known after the cluster\/values exist \(unknown: REGION\)/,
        preview.output,
      );
      assert.doesNotMatch(preview.output, /04da6b54/, "the unknown placeholder never shows");

      // An invalid spec fails the same preview, every problem listed, although the kubeconfig is unknown.
      const invalid = spec("unknown", configMapStep("alpha", { a: "1" }) + INVALID_STEPS);
      project.write("boot.khook.yaml", invalid);
      const bad = await project.run(["preview"]);
      assert.notEqual(bad.code, 0, bad.output);
      for (const [re, what] of [
        [/spec\.steps\[1\]\.name .*alpha/, "duplicate step name"],
        [/spec\.steps\[1\]\.wait\.for /, "bad wait.for"],
        [/spec\.steps\[2\]\.needs.*missing-step/, "unknown need"],
        [/spec\.steps\[2\]\.apply\.manifests\[0\]\.file .*not-there\.yaml/, "missing file"],
      ] as const) {
        assert.match(bad.output, re, `${what}:\n${bad.output}`);
      }

      // The real up: the cluster resource is created first, then the bootstrap reaches it through the object kubeconfig.
      project.write("boot.khook.yaml", spec("unknown", configMapStep("alpha", { a: "1" }) + REGION_STEP));
      await project.ok(["up", "--yes", "--skip-preview"]);
      assert.equal((await cluster.configMap(ns, "alpha"))?.data?.a, "1");
      assert.equal((await cluster.configMap(ns, "beta"))?.data?.region, "eu-west-1");
      // The fake cluster keeps its kubeconfig in plain text (its business); the Khook stores it as a secret.
      const [khook] = await project.khookResources();
      assert.ok(khook, "the Khook is in the state");
      assert.doesNotMatch(
        JSON.stringify(khook),
        /client-key-data|client-certificate-data/,
        "the object kubeconfig is stored as a secret",
      );
      assert.match(JSON.stringify(khook.inputs.kubeconfig), /ciphertext/);

      // Destroy works from state alone, with the stored object kubeconfig.
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      assert.equal(await cluster.configMap(ns, "alpha"), undefined);
      assert.equal(await cluster.configMap(ns, "beta"), undefined);

      // With deletedWith: cluster, destroying the cluster skips the bootstrap's teardown (the guide's claim).
      project.write(
        "args.json",
        JSON.stringify({ ns, kubeconfigJson: path.join(project.dir, "kubeconfig.json"), deletedWith: true }),
      );
      await project.ok(["up", "--yes", "--skip-preview"]);
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      assert.equal((await project.khookResources()).length, 0);
      assert.ok(await cluster.configMap(ns, "alpha"), "deletedWith: the Khook's destroy did not run");
    },
  );

/** PATH without any directory that holds one of `tools`: what a machine without them sees. */
function pathWithout(tools: string[], envPath: string | undefined): string {
  return (envPath ?? "")
    .split(path.delimiter)
    .filter((d) => d !== "" && !tools.some((t) => fs.existsSync(path.join(d, t))))
    .join(path.delimiter);
}

const HELM_STEP = (extra = ""): string => `  - name: cert-manager
${extra}    helm:
      chart: cert-manager
      repo: https://charts.jetstack.io
      version: v1.16.2
      namespace: \${NS}
`;

const KUSTOMIZE_STEP = `  - name: overlay
    apply:
      namespace: \${NS}
      manifests:
        - kustomize: ./overlay
`;

test(
  "preview fails when apply would need a tool that is missing, with the install hint; steps when: excludes need nothing",
  { timeout: 600_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: {
        "boot.khook.yaml": spec("tools", HELM_STEP() + KUSTOMIZE_STEP),
        "overlay/kustomization.yaml": "resources:\n  - cm.yaml\n",
        "overlay/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-overlay\ndata:\n  a: "1"\n',
      },
    });
    project.env.PATH = pathWithout(["helm", "kustomize", "kubectl"], project.env.PATH);
    delete project.env.KHOOK_HELM;
    delete project.env.KHOOK_KUSTOMIZE;
    delete project.env.KHOOK_KUBECTL;
    project.write(
      "args.json",
      programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
    );
    await project.init();

    const missing = await project.run(["preview"]);
    assert.notEqual(missing.code, 0, missing.output);
    assert.match(
      missing.output,
      /spec\.steps\[0\].*step cert-manager needs helm.*helm was not found on PATH.*Install helm/,
      missing.output,
    );
    assert.match(missing.output, /spec\.steps\[1\].*step overlay needs kustomize.*Install kustomize/, missing.output);

    // The same spec with both steps excluded by when: previews and applies without either tool.
    const gate = `    when: vars.get("WITH_TOOLS", "no") == "yes"\n`;
    project.write(
      "boot.khook.yaml",
      spec(
        "tools",
        HELM_STEP(gate) +
          KUSTOMIZE_STEP.replace("    apply:", `${gate}    apply:`) +
          configMapStep("plain", { a: "1" }),
      ),
    );
    await project.ok(["preview"]);
    await project.ok(["up", "--yes", "--skip-preview"]);
    assert.ok(await cluster.configMap(ns, "plain"));
    assert.equal(await cluster.configMap(ns, "from-overlay"), undefined);
    await project.ok(["destroy", "--yes", "--skip-preview"]);
  },
);

const SECRET_STEP = secretStep("creds", { token: "${TOKEN}" });

test(
  "online preview: live actions and a masked unified diff in the preview output, nothing written; an unreachable cluster falls back with one warning",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      kubeconfig,
      namespace: ns,
      cluster,
    } = await pulumiFixture(t, {
      program: KHOOK_PROGRAM,
      files: { "boot.khook.yaml": spec("online", configMapStep("alpha", { a: "1" }) + SECRET_STEP) },
    });
    const first = "first-s3cret-value";
    const second = "second-s3cret-value";
    project.write(
      "args.json",
      programArgs({
        args: { specFile: "./boot.khook.yaml", vars: { NS: ns } },
        kubeconfigFile: kubeconfig,
        secretVars: { TOKEN: first },
      }),
    );
    await project.init();
    await project.ok(["up", "--yes", "--skip-preview"]);

    // An edited step and a new secret value: what would the next up do to the live objects?
    project.write("boot.khook.yaml", spec("online", configMapStep("alpha", { a: "edited" }) + SECRET_STEP));
    project.write(
      "args.json",
      programArgs({
        args: { specFile: "./boot.khook.yaml", vars: { NS: ns } },
        kubeconfigFile: kubeconfig,
        secretVars: { TOKEN: second },
      }),
    );
    const recordName = "khook-state-online";
    const before = await resourceVersions(cluster, ns, recordName);

    const offline = await project.ok(["preview", "--diff"]);
    assert.doesNotMatch(offline.output, /\[boot\] live:/, "offline by default");

    await project.ok(["config", "set", "khook:previewMode", "online"]);
    const online = await project.ok(["preview", "--diff"]);
    t.diagnostic(`online preview:\n${online.stdout}`);
    if (process.env.KHOOK_RECORD_OUTPUT)
      fs.writeFileSync(path.join(process.env.KHOOK_RECORD_OUTPUT, "online-preview.txt"), online.output);
    assert.match(online.output, /\[boot\] live: alpha: (?!no-op)\S+ - /, online.output);
    assert.match(online.output, /\[boot\] live: creds: (?!no-op)\S+ - /, online.output);
    assert.match(online.output, /\[boot\] diff: alpha:/, online.output);
    assert.match(online.output, /\[boot\] +-\s+a: "?1"?/, online.output);
    assert.match(online.output, /\[boot\] +\+\s+a: "?edited"?/, online.output);
    assert.match(online.output, /\[boot\] live plan: 2 steps to run/, online.output);
    for (const s of [first, second]) {
      for (const form of [s, Buffer.from(s).toString("base64")])
        assert.ok(
          !online.output.includes(form),
          `a secret value (${form === s ? "raw" : "base64"}) leaked into the preview`,
        );
    }

    // Nothing was written: the objects and the record keep their resourceVersions and contents.
    assert.deepEqual(await resourceVersions(cluster, ns, recordName), before);
    assert.equal((await cluster.configMap(ns, "alpha"))?.data?.a, "1");

    // An unreachable cluster: one warning line, the offline plan stands, preview succeeds.
    const dead = path.join(project.dir, "dead-kubeconfig.yaml");
    fs.writeFileSync(dead, fs.readFileSync(kubeconfig, "utf8").replace(/server: \S+/g, "server: https://127.0.0.1:1"));
    project.write(
      "args.json",
      programArgs({
        args: { specFile: "./boot.khook.yaml", vars: { NS: ns } },
        kubeconfigFile: dead,
        secretVars: { TOKEN: second },
      }),
    );
    const fallback = await project.ok(["preview"]);
    // Pulumi shows each provider line twice (the progress view and the Diagnostics section): one distinct warning.
    const warnings = [
      ...new Set(
        fallback.output
          .split("\n")
          .filter((l) => /online preview/.test(l))
          .map((l) => l.slice(l.indexOf("[boot]"))),
      ),
    ];
    assert.equal(warnings.length, 1, fallback.output);
    assert.match(warnings[0]!, /warning: online preview: cannot read the cluster: .*; showing the offline plan/);
    assert.doesNotMatch(fallback.output, /\[boot\] live:/, fallback.output);

    await project.ok(["config", "rm", "khook:previewMode"]);
    project.write(
      "args.json",
      programArgs({
        args: { specFile: "./boot.khook.yaml", vars: { NS: ns } },
        kubeconfigFile: kubeconfig,
        secretVars: { TOKEN: second },
      }),
    );
    await project.ok(["destroy", "--yes", "--skip-preview"]);
  },
);

async function resourceVersions(
  cluster: import("./support/pulumi-kube.js").ClusterView,
  ns: string,
  record: string,
): Promise<Record<string, string | undefined>> {
  const rv = async (p: string): Promise<string | undefined> =>
    (await cluster.get<{ metadata: { resourceVersion: string } }>(p))?.metadata.resourceVersion;
  return {
    alpha: await rv(`/api/v1/namespaces/${ns}/configmaps/alpha`),
    creds: await rv(`/api/v1/namespaces/${ns}/secrets/creds`),
    record: await rv(`/api/v1/namespaces/${ns}/secrets/${record}`),
  };
}
