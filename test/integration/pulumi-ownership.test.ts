/**
 * Renames and replaces never tear the bootstrap down (provider/pulumi/record-owner/owner.ts),
 * with the real pulumi CLI, a file backend and the real cluster.
 *
 * Pulumi renames and replaces create the new resource first and delete the
 * old one last; both point at the same record and the same objects. Each test
 * checks the objects in the cluster afterwards, not only exit codes. Renames
 * and replaces run on both shells (the native provider takes the resource's
 * name, project and stack from the URN).
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import type { RecordOwner } from "../../provider/pulumi/record-owner/owner.js";
import { OWNER_MARKER_KEY, ownerMarkerLocation } from "../../provider/pulumi/record-owner/marker.js";
import { onShell, pulumiFixture, pulumiTools, SHELLS, type KhookShell } from "./support/pulumi-env.js";
import {
  KHOOK_PROGRAM,
  programArgs,
  PulumiProject,
  type ProgramArgs,
  type PulumiRun,
} from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";
import type { ClusterView } from "./support/pulumi-kube.js";
import { testCluster } from "../harness/index.js";

const NAMES = ["alpha", "beta", "gamma"];

function ownedSpec(name: string, head = ""): string {
  return spec(
    name,
    configMapStep("alpha", { a: "1" }) +
      configMapStep("beta", { b: "1" }, "    needs: [alpha]\n") +
      configMapStep("gamma", { c: "1" }, "    needs: [beta]\n"),
    head,
  );
}

/** The spec with the journal off: the owner lives in the owner marker. */
function journalOffSpec(name: string): string {
  return ownedSpec(name).replace("state:\n  namespace: ${NS}\n", "state:\n  enabled: false\n");
}

/** uid and resourceVersion of each ConfigMap: a re-created object has a new uid, a re-applied one a new resourceVersion. */
async function identities(cluster: ClusterView, ns: string): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const n of NAMES) {
    const cm = await cluster.get<{ metadata: { uid: string; resourceVersion: string } }>(
      `/api/v1/namespaces/${ns}/configmaps/${n}`,
    );
    out[n] = cm === undefined ? undefined : `${cm.metadata.uid}@${cm.metadata.resourceVersion}`;
  }
  return out;
}

async function khookTokens(project: PulumiProject): Promise<{ name: string; token: string | undefined }[]> {
  return (await project.khookResources()).map((r) => ({
    name: r.urn.split("::").pop()!,
    token: r.outputs.ownerToken as string | undefined,
  }));
}

/** The distinct messages matching `pattern` (pulumi shows each diagnostic live and again in its summary). */
function distinctLines(output: string, pattern: RegExp): string[] {
  return [
    ...new Set(
      output
        .split("\n")
        .map((l) => pattern.exec(l)?.[0])
        .filter((m): m is string => m !== undefined),
    ),
  ];
}

/** KHOOK_SHOW_PULUMI_OUTPUT=1 prints what each pulumi command printed (for people reviewing the behaviour). */
function show(t: TestContext, what: string, r: PulumiRun): void {
  if (process.env.KHOOK_SHOW_PULUMI_OUTPUT) t.diagnostic(`--- ${what} ---\n${r.output}`);
}

/** ...and `kubectl get` of the namespace's ConfigMaps and Secrets. */
async function showObjects(t: TestContext, what: string, ns: string): Promise<void> {
  if (!process.env.KHOOK_SHOW_PULUMI_OUTPUT) return;
  const r = await (
    await testCluster()
  ).kubectl(["get", "configmaps,secrets", "-n", ns, "-L", "app.kubernetes.io/managed-by"]);
  t.diagnostic(`--- kubectl get configmaps,secrets -n ${ns} (${what}) ---\n${r.stdout}${r.stderr}`);
}

async function setUp(
  t: TestContext,
  specText: string,
  args: Omit<ProgramArgs, "args" | "kubeconfigFile"> = {},
  shell: KhookShell = "dynamic",
) {
  const f = await pulumiFixture(t, { program: KHOOK_PROGRAM, files: { "boot.khook.yaml": specText }, shell });
  const write = (a: Omit<ProgramArgs, "args" | "kubeconfigFile">): void =>
    f.project.write(
      "args.json",
      programArgs({
        ...a,
        args: { specFile: "./boot.khook.yaml", vars: { NS: f.namespace } },
        kubeconfigFile: f.kubeconfig,
      }),
    );
  write(args);
  await f.project.init();
  return { ...f, write };
}

for (const shell of SHELLS)
  test(
    onShell(
      shell,
      "a rename (no alias) creates the new resource, takes the record over, and the old resource's delete tears nothing down",
    ),
    { timeout: 900_000 },
    async (t) => {
      const {
        project,
        namespace: ns,
        cluster,
        write,
      } = await setUp(t, ownedSpec("owner-rename"), { name: "bootstrap" }, shell);
      const record = "khook-state-owner-rename";
      await project.ok(["up", "--yes", "--skip-preview"]);
      const before = await identities(cluster, ns);
      for (const n of NAMES) assert.ok(before[n], `${n} exists`);
      const [old] = await khookTokens(project);
      assert.ok(old?.token, "create keeps its token in the outputs");
      assert.equal((await cluster.record(ns, record))?.owner?.token, old.token);

      write({ name: "cluster-bootstrap" });
      const preview = await project.ok(["preview", "--diff"]);
      show(t, "preview after the rename", preview);
      assert.match(preview.output, /\+ 1 to create/);
      assert.match(preview.output, /- 1 to delete/);
      const up = await project.ok(["up", "--yes", "--skip-preview"]);
      show(t, "up after the rename", up);
      await showObjects(t, "after the rename", ns);
      assert.equal(distinctLines(up.output, /\[[^\]]+\] nothing torn down.*/).length, 1, up.output);
      assert.match(
        up.output,
        /\[bootstrap\] nothing torn down: the state record \(Secret "khook-state-owner-rename" in namespace "[^"]+"\) now belongs to another Khook resource of stack "test"/,
      );
      assert.match(up.output, /\[cluster-bootstrap\] took over the state record/);

      assert.deepEqual(await identities(cluster, ns), before, "every object is still there, untouched");
      const after = await khookTokens(project);
      assert.deepEqual(
        after.map((r) => r.name),
        ["cluster-bootstrap"],
      );
      assert.notEqual(after[0]!.token, old.token);
      const rec = await cluster.record(ns, record);
      assert.equal(rec?.owner?.token, after[0]!.token, "the record belongs to the new resource");
      assert.equal(rec?.runStatus, "succeeded");
      assert.equal((await project.run(["preview", "--expect-no-changes"])).code, 0);

      // The new resource owns the bootstrap: its destroy removes everything.
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      assert.deepEqual(
        Object.values(await identities(cluster, ns)),
        NAMES.map(() => undefined),
      );
      assert.equal(await cluster.record(ns, record), undefined);
    },
  );

for (const shell of SHELLS)
  test(
    onShell(shell, "pulumi up --replace keeps every object, with the journal on and with it off (the owner marker)"),
    { timeout: 900_000 },
    async (t) => {
      for (const journal of ["on", "off"] as const) {
        await t.test(`journal ${journal}`, async (t) => {
          const specName = `owner-replace-${journal}`;
          const {
            project,
            namespace: ns,
            cluster,
          } = await setUp(t, journal === "on" ? ownedSpec(specName) : journalOffSpec(specName), {}, shell);
          await project.ok(["up", "--yes", "--skip-preview"]);
          const before = await identities(cluster, ns);
          const [old] = await khookTokens(project);
          const urn = (await project.khookResources())[0]!.urn;
          const marker = ownerMarkerLocation(specName);
          const markerOwner = async (): Promise<RecordOwner | undefined> => {
            const cm = await cluster.get<{ data?: Record<string, string> }>(
              `/api/v1/namespaces/${marker.namespace}/configmaps/${marker.name}`,
            );
            return cm?.data?.[OWNER_MARKER_KEY] === undefined
              ? undefined
              : (JSON.parse(cm.data[OWNER_MARKER_KEY]) as RecordOwner);
          };
          const ownerNow = async (): Promise<string | undefined> =>
            journal === "on"
              ? (await cluster.record(ns, `khook-state-${specName}`))?.owner?.token
              : (await markerOwner())?.token;
          assert.equal(await ownerNow(), old!.token);

          const preview = await project.ok(["preview", "--diff", "--replace", urn]);
          show(t, `preview --replace (journal ${journal})`, preview);
          assert.match(preview.output, /\+-\s*1 to replace/);
          const up = await project.ok(["up", "--yes", "--skip-preview", "--replace", urn]);
          show(t, `up --replace (journal ${journal})`, up);
          await showObjects(t, `after up --replace, journal ${journal}`, ns);
          assert.equal(distinctLines(up.output, /\[[^\]]+\] nothing torn down.*/).length, 1, up.output);
          const after = await identities(cluster, ns);
          for (const n of NAMES) assert.ok(after[n], `${n} still exists after the replace`);
          if (journal === "on") assert.deepEqual(after, before, "resumed from the journal: nothing re-applied");
          else
            for (const n of NAMES)
              assert.equal(after[n]!.split("@")[0], before[n]!.split("@")[0], `${n} was never deleted (same uid)`);
          const [now] = await khookTokens(project);
          assert.notEqual(now!.token, old!.token);
          assert.equal(await ownerNow(), now!.token);

          await project.ok(["destroy", "--yes", "--skip-preview"]);
          assert.deepEqual(
            Object.values(await identities(cluster, ns)),
            NAMES.map(() => undefined),
          );
          assert.equal(await markerOwner(), undefined, "destroy removes the owner marker");
        });
      }
    },
  );

test(
  "deleteBeforeReplace: true is a real replace: teardown first, then every step re-runs",
  { timeout: 900_000 },
  async (t) => {
    const {
      project,
      namespace: ns,
      cluster,
    } = await setUp(t, ownedSpec("owner-dbr"), { opts: { deleteBeforeReplace: true } });
    await project.ok(["up", "--yes", "--skip-preview"]);
    const before = await identities(cluster, ns);
    const urn = (await project.khookResources())[0]!.urn;
    const up = await project.ok(["up", "--yes", "--skip-preview", "--replace", urn]);
    show(t, "up --replace with deleteBeforeReplace", up);
    assert.doesNotMatch(up.output, /nothing torn down/);
    const after = await identities(cluster, ns);
    for (const n of NAMES) {
      assert.ok(after[n], `${n} exists again`);
      assert.notEqual(after[n]!.split("@")[0], before[n]!.split("@")[0], `${n} was deleted and created anew (new uid)`);
    }
    const out = await project.outputs();
    assert.deepEqual(
      (out.steps as { name: string; status: string }[]).map((s) => [s.name, s.status]),
      NAMES.map((n) => [n, "ok"]),
      "every step ran again",
    );
    await project.ok(["destroy", "--yes", "--skip-preview"]);
  },
);

test(
  "two stacks applying one spec to one cluster: the second up fails naming the owner, and changes nothing",
  { timeout: 900_000 },
  async (t) => {
    const { project: first, namespace: ns, cluster, kubeconfig } = await setUp(t, ownedSpec("owner-two-stacks"));
    await first.ok(["up", "--yes", "--skip-preview"]);
    const before = await identities(cluster, ns);

    const second = new PulumiProject(pulumiTools(), {
      name: "khook-it-other",
      program: KHOOK_PROGRAM,
      files: { "boot.khook.yaml": ownedSpec("owner-two-stacks") },
      stack: "elsewhere",
    });
    t.after(() => second.cleanup());
    second.write(
      "args.json",
      programArgs({ args: { specFile: "./boot.khook.yaml", vars: { NS: ns } }, kubeconfigFile: kubeconfig }),
    );
    await second.init();
    const up = await second.run(["up", "--yes", "--skip-preview"]);
    show(t, "up in another stack", up);
    assert.notEqual(up.code, 0, up.output);
    assert.match(
      up.output,
      /refused: the state record \(Secret "khook-state-owner-two-stacks" in namespace "[^"]+"\) belongs to the Khook resource of stack "test" of project "khook-it"/,
    );
    assert.deepEqual(await second.khookResources(), [], "the refused create left nothing in the second stack");
    assert.deepEqual(await identities(cluster, ns), before, "nothing in the cluster changed");

    await first.ok(["destroy", "--yes", "--skip-preview"]);
    assert.deepEqual(
      Object.values(await identities(cluster, ns)),
      NAMES.map(() => undefined),
    );
  },
);
