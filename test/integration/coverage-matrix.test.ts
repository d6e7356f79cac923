/**
 * The spec's command coverage matrix as a test table: one row per CLI
 * equivalent, each run through the real khook CLI against the real cluster and
 * checked with the real kubectl. (The helm rows live in helm-matrix.test.ts.)
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { startHttpServer, testCluster, withNamespace } from "../harness/index.js";
import { cliEnv, khookSpec, parseRun, runKhook, specDir, stepOf } from "./support/khook-cli.js";

type Kubectl = (args: string[]) => Promise<string>;

interface Row {
  cli: string;
  steps(ns: string, extra: { url: string }): string;
  files?: (ns: string) => Record<string, string>;
  verify(ns: string, kubectl: Kubectl, run: ReturnType<typeof parseRun>): Promise<void>;
}

const cm = (name: string, ns: string, data = 'a: "1"', labels = "") =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n${labels ? `  labels: {${labels}}\n` : ""}data:\n  ${data}\n`;

const deployment = (name: string, replicas = 1) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels: { app: ${name} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      containers:
        - name: main
          image: registry.example/${name}:1.0
`;

const indent = (text: string, n: number) => text.replace(/^/gm, " ".repeat(n));

const rows: Row[] = [
  {
    cli: "kubectl apply -f file/url/- → apply: (file, url and inline sources)",
    files: (ns) => ({ "manifests/a.yaml": cm("from-file", ns) }),
    steps: (ns, { url }) => `  - name: apply
    apply:
      namespace: ${ns}
      manifests:
        - file: ./manifests/a.yaml
        - url: ${url}/b.yaml
        - inline: |
${indent(`${cm("from-inline", ns)}---\n${cm("second-doc", ns)}`, 12)}
`,
    async verify(ns, kubectl) {
      const names = (await kubectl(["get", "configmaps", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}"])).split(
        " ",
      );
      for (const n of ["from-file", "from-url", "from-inline", "second-doc"])
        assert.ok(names.includes(n), `${n} missing from ${names.join(",")}`);
    },
  },
  {
    cli: "kubectl apply --server-side → apply.serverSide",
    steps: (ns) => `  - name: ssa
    apply:
      serverSide: true
      manifests:
        - inline: |
${indent(cm("ssa", ns), 12)}
`,
    async verify(ns, kubectl) {
      const managers = await kubectl([
        "get",
        "configmap",
        "ssa",
        "-n",
        ns,
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}/{.metadata.managedFields[*].operation}",
      ]);
      assert.match(managers, /khook.*\/.*Apply/);
    },
  },
  {
    cli: "kubectl apply -f x && kubectl wait -f x → apply.waitFor",
    steps: (ns) => `  - name: app
    apply:
      namespace: ${ns}
      waitFor: condition=Available
      manifests:
        - inline: |
${indent(deployment("web"), 12)}
`,
    async verify(ns, kubectl, run) {
      assert.match(stepOf(run, "app").reason, /condition=Available met/);
      assert.equal(
        await kubectl([
          "get",
          "deployment",
          "web",
          "-n",
          ns,
          "-o",
          'jsonpath={.status.conditions[?(@.type=="Available")].status}',
        ]),
        "True",
      );
    },
  },
  {
    cli: "kubectl delete -f / by selector → delete:",
    steps: (ns) => `  - name: seed
    apply:
      manifests:
        - inline: |
${indent(`${cm("by-file", ns)}---\n${cm("by-label-1", ns, 'a: "1"', "tier: old")}---\n${cm("by-label-2", ns, 'a: "1"', "tier: old")}---\n${cm("keep", ns, 'a: "1"', "tier: new")}`, 12)}
  - name: by-manifests
    needs: [seed]
    delete:
      manifests:
        - inline: |
${indent(cm("by-file", ns), 12)}
  - name: by-selector
    needs: [seed]
    delete:
      resource: configmaps
      namespace: ${ns}
      selector: tier=old
`,
    async verify(ns, kubectl) {
      const names = await kubectl(["get", "configmaps", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}"]);
      assert.doesNotMatch(names, /by-file|by-label/);
      assert.match(names, /keep/);
    },
  },
  {
    cli: "kubectl patch (strategic/merge/json) → patch:",
    steps: (ns) => `  - name: seed
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
${indent(deployment("patched"), 12)}
  - name: strategic
    needs: [seed]
    patch:
      target: deployment/patched
      namespace: ${ns}
      patch:
        spec:
          template:
            spec:
              nodeSelector:
                khook.io/non-existing: "true"
  - name: merge
    needs: [strategic]
    patch:
      target: deployment/patched
      namespace: ${ns}
      type: merge
      patch:
        metadata:
          annotations:
            merged: "yes"
  - name: json
    needs: [merge]
    patch:
      target: deployment/patched
      namespace: ${ns}
      type: json
      patch:
        - op: replace
          path: /spec/template/spec/containers/0/image
          value: registry.example/patched:2.0
`,
    async verify(ns, kubectl) {
      const out = await kubectl([
        "get",
        "deployment",
        "patched",
        "-n",
        ns,
        "-o",
        "jsonpath={.spec.template.spec.nodeSelector.khook\\.io/non-existing} {.metadata.annotations.merged} {.spec.template.spec.containers[0].image}",
      ]);
      assert.equal(out, "true yes registry.example/patched:2.0");
    },
  },
  {
    cli: "kubectl wait --for=condition=... → wait:",
    steps: (ns) => `  - name: seed
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
${indent(deployment("waited"), 12)}
  - name: wait
    needs: [seed]
    wait:
      for: condition=Available
      on: deployment/waited
      namespace: ${ns}
`,
    async verify(_ns, _kubectl, run) {
      assert.equal(stepOf(run, "wait").status, "ok");
    },
  },
  {
    cli: "kubectl wait --for=jsonpath=... → wait.for: jsonpath=...",
    steps: (ns) => `  - name: seed
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
${indent(deployment("jp", 2), 12)}
  - name: wait-pods
    needs: [seed]
    wait:
      for: jsonpath={.status.conditions[?(@.type=="Ready")].status}=True
      on: pods
      selector: app=jp
      namespace: ${ns}
  - name: wait-replicas
    needs: [seed]
    wait:
      for: jsonpath={.status.readyReplicas}=2
      on: deployment/jp
      namespace: ${ns}
`,
    async verify(ns, kubectl, run) {
      assert.equal(stepOf(run, "wait-pods").status, "ok");
      assert.equal(stepOf(run, "wait-replicas").status, "ok");
      assert.equal(await kubectl(["get", "deployment", "jp", "-n", ns, "-o", "jsonpath={.status.readyReplicas}"]), "2");
    },
  },
  {
    cli: "kubectl rollout restart/status → rollout:",
    steps: (ns) => `  - name: seed
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
${indent(deployment("rolled"), 12)}
  - name: restart
    needs: [seed]
    rollout:
      restart: deployment/rolled
      namespace: ${ns}
  - name: status
    needs: [restart]
    rollout:
      status: deployment/rolled
      namespace: ${ns}
`,
    async verify(ns, kubectl, run) {
      assert.equal(stepOf(run, "status").status, "ok");
      assert.match(
        await kubectl([
          "get",
          "deployment",
          "rolled",
          "-n",
          ns,
          "-o",
          "jsonpath={.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}",
        ]),
        /^\d{4}-\d\d-\d\dT/,
      );
    },
  },
  {
    cli: "kubectl create namespace → createNamespace: true",
    steps: (ns) => `  - name: in-new-namespace
    apply:
      namespace: ${ns}-created
      createNamespace: true
      manifests:
        - inline: |
${indent(cm("in-new", `${ns}-created`), 12)}
`,
    async verify(ns, kubectl) {
      try {
        assert.equal(
          await kubectl(["get", "configmap", "in-new", "-n", `${ns}-created`, "-o", "jsonpath={.metadata.name}"]),
          "in-new",
        );
      } finally {
        await kubectl(["delete", "namespace", `${ns}-created`, "--wait=false"]);
      }
    },
  },
  {
    cli: "arbitrary in-cluster commands → job:",
    steps: (ns) => `  - name: migrate
    job:
      image: busybox:1.36
      command: ["sh", "-c"]
      args: ["echo migrating $\${HOME}"]
      env: { MODE: once }
      namespace: ${ns}
`,
    async verify(ns, kubectl) {
      const job = JSON.parse(await kubectl(["get", "job", "migrate", "-n", ns, "-o", "json"])) as {
        metadata: { labels: Record<string, string> };
        spec: {
          backoffLimit: number;
          activeDeadlineSeconds: number;
          template: { spec: { restartPolicy: string; containers: { args: string[] }[] } };
        };
      };
      assert.equal(job.metadata.labels["app.kubernetes.io/managed-by"], "khook");
      assert.equal(job.spec.backoffLimit, 0);
      assert.equal(job.spec.activeDeadlineSeconds, 300);
      assert.equal(job.spec.template.spec.restartPolicy, "Never");
      assert.deepEqual(job.spec.template.spec.containers[0]!.args, ["echo migrating ${HOME}"]);
    },
  },
  {
    cli: "kubectl label / annotate → patch: (or apply: a minimal manifest)",
    steps: (ns) => `  - name: seed
    apply:
      manifests:
        - inline: |
${indent(cm("labelled", ns), 12)}
  - name: label
    needs: [seed]
    patch:
      target: configmap/labelled
      namespace: ${ns}
      type: merge
      patch:
        metadata:
          labels: { team: platform }
`,
    async verify(ns, kubectl) {
      assert.equal(
        await kubectl(["get", "configmap", "labelled", "-n", ns, "-o", "jsonpath={.metadata.labels.team}"]),
        "platform",
      );
    },
  },
  {
    cli: "kubectl scale → patch: spec.replicas",
    steps: (ns) => `  - name: seed
    apply:
      namespace: ${ns}
      manifests:
        - inline: |
${indent(deployment("scaled"), 12)}
  - name: scale
    needs: [seed]
    patch:
      target: deployment/scaled
      namespace: ${ns}
      type: merge
      patch:
        spec: { replicas: 3 }
`,
    async verify(ns, kubectl) {
      assert.equal(await kubectl(["get", "deployment", "scaled", "-n", ns, "-o", "jsonpath={.spec.replicas}"]), "3");
    },
  },
];

describe("command coverage matrix (kubectl rows)", () => {
  for (const row of rows) {
    test(row.cli, async (t: TestContext) => {
      const cluster = await testCluster();
      const ns = await withNamespace(t, "matrix");
      const server = await startHttpServer({ "b.yaml": cm("from-url", ns) });
      t.after(() => server.close());
      const { file } = specDir(khookSpec("matrix", row.steps(ns, { url: server.url })), row.files?.(ns) ?? {});
      const r = await runKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(cluster.kubeconfig) });
      assert.equal(r.code, 0, `khook apply failed:\n${r.stdout}\n${r.stderr}`);
      const run = parseRun(r);
      assert.equal(run.status, "succeeded");
      const kubectl: Kubectl = async (args) => {
        const k = await cluster.kubectl(args);
        assert.equal(k.code, 0, `kubectl ${args.join(" ")}: ${k.stderr}`);
        return k.stdout.trim();
      };
      await row.verify(ns, kubectl, run);
    });
  }
});
