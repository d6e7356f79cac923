/**
 * Every step kind and every hook event answers to one list: KINDS (provider/steps/index.ts)
 * and HOOK_EVENT_DEFINITIONS (provider/dsl/hook-events.ts). These tests ask for what the
 * compiler cannot see. A step of every kind (the fixture below is typed against the kinds, so
 * a new kind must add one) loads, summarizes, is bundled and is recognized before
 * substitution; a hook on every event loads, and fires exactly in the runs, at the points,
 * its definition says.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { planOnline } from "../../provider/engine/plan.js";
import { runSpec } from "../../provider/engine/run.js";
import { collectBundle } from "../../provider/pulumi/bundle.js";
import { rawSteps } from "../../provider/pulumi/unknowns.js";
import { eventApplies } from "../../provider/dsl/hooks.js";
import {
  HOOK_EVENTS,
  HOOK_LIFECYCLE,
  lifecycleOf,
  type HookEvent,
  type HookRun,
} from "../../provider/dsl/hook-events.js";
import { loadSpec } from "../../provider/load-spec.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { KINDS, KIND_NAMES, type KindName } from "../../provider/steps/index.js";
import type { Kind } from "../../provider/steps/contract.js";
import { HookServer } from "../harness/hook-server.js";
import { noExtras, StubExecutors } from "./support/engine-fixtures.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

/** One step of each kind, referencing every kind of local file its kind can (localFileKeys). */
const ONE_STEP_OF_EACH_TYPE = {
  helm: "{chart: ./chart, valuesFrom: [{file: ./values.yaml}]}",
  apply: "{manifests: [{file: ./cm.yaml}, {kustomize: ./kust}]}",
  delete: "{manifests: [{file: ./cm.yaml}]}",
  patch: "{target: deployment/web, namespace: apps, patch: {spec: {replicas: 2}}}",
  wait: "{for: condition=Available, on: deployment/web, namespace: apps}",
  rollout: "{status: deployment/web, namespace: apps}",
  job: "{image: busybox, namespace: apps}",
} satisfies Record<KindName, string>;

const FILES: Record<string, string> = {
  "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
  "values.yaml": "replicas: 1\n",
  "chart/Chart.yaml": "apiVersion: v2\nname: local\nversion: 0.1.0\n",
  "kust/kustomization.yaml": "resources: [cm.yaml]\n",
  "kust/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kcm}\n",
};

const stepsYaml = (): string =>
  KIND_NAMES.map((t) => `  - name: s-${t}\n    ${t}: ${ONE_STEP_OF_EACH_TYPE[t]}\n`).join("");

describe("a step of every type", () => {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml()), ...FILES });
  const text = fs.readFileSync(path.join(dir, "spec.yaml"), "utf8");

  test("loads (the schema and the rules know every type), with a summary each", () => {
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
    assert.deepEqual(
      spec.steps.map((s) => s.type),
      [...KIND_NAMES],
    );
    for (const s of spec.steps) assert.ok(s.summary !== "" && !/undefined/.test(s.summary), `${s.type}: ${s.summary}`);
  });

  test("references local files only under the keys its kind's localFileKeys lists, and the bundle carries them", () => {
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
    const referenced = new Set<string>();
    for (const s of spec.steps) {
      const kind: Kind = KINDS[s.type as KindName];
      for (const ref of kind.files(s.action, dir)) {
        const key = ref.field.split("/").at(-1)!;
        assert.ok(
          (kind.localFileKeys as readonly string[]).includes(key),
          `${s.type} references ${ref.field}, a key its localFileKeys does not list`,
        );
        referenced.add(path.relative(dir, ref.resolved));
      }
    }
    assert.deepEqual([...referenced].sort(), ["chart", "cm.yaml", "kust", "values.yaml"]);
    const bundle = collectBundle(text, dir, {});
    assert.deepEqual(
      Object.keys(bundle.files).sort(),
      Object.keys(FILES).sort(),
      "named by their paths relative to the spec's directory",
    );
  });

  test("is recognized before substitution (a Pulumi preview names each step's type)", () => {
    assert.deepEqual(
      rawSteps(text, [])?.map((s) => s.type),
      [...KIND_NAMES],
    );
  });
});

describe("a hook on every event", () => {
  let server: HookServer;
  let dir: string;
  let spec: LoadedSpec;
  before(async () => {
    server = await HookServer.start();
    dir = tempSpecDir({ ...FILES });
    // A function that passes its ResourceList through and keeps a copy (its context names the event).
    const log = path.join(dir, "function-inputs.log");
    fs.writeFileSync(path.join(dir, "record"), `#!/bin/sh\ntee -a '${log}'\n`, { mode: 0o755 });
    const hooks = HOOK_EVENTS.map(
      (e) =>
        `  - name: on-${e}\n    on: [${e}]\n    ${lifecycleOf(e).handler === "function" ? "function: {exec: ./record}" : `webhook: {url: '${server.url}'}`}\n`,
    ).join("");
    fs.writeFileSync(path.join(dir, "spec.yaml"), specText(stepsYaml(), `hooks:\n${hooks}`));
    spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
  });
  after(() => server.close());

  test("loads (the schema's enum and the handler rule know every event), and matches the steps the table says", () => {
    for (const e of HOOK_EVENTS) {
      const hook = spec.hooks.find((h) => h.name === `on-${e}`)!;
      assert.deepEqual(
        hook.steps,
        spec.steps.filter((s) => eventApplies(e, KINDS[s.type as KindName], s.action)).map((s) => s.name),
        `${e} hook matches`,
      );
      assert.ok(hook.steps.length > 0, `${e} happens on some step`);
    }
  });

  /** Runs `run` with stub executors that render their objects where real ones do, and returns the events that fired. */
  async function fired(run: HookRun): Promise<HookEvent[]> {
    server.requests.length = 0;
    const log = path.join(dir, "function-inputs.log");
    fs.rmSync(log, { force: true });
    const stubs = new StubExecutors();
    const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } };
    for (const t of KIND_NAMES) {
      stubs.on(`s-${t}`, async ({ ctx, kind }) => {
        await ctx.hooks?.render([object], { send: kind === "apply" });
        return kind === "assess" ? { action: "run", reason: "stub" } : { status: "ok", reason: "stub" };
      });
    }
    if (run === "plan") await planOnline(spec, stubs.map, noExtras);
    else await runSpec(spec, { mode: run, executors: stubs.map, context: noExtras });
    const functionEvents = fs.existsSync(log)
      ? [...fs.readFileSync(log, "utf8").matchAll(/\\"event\\":\\"([a-z-]+)\\"|"event":"([a-z-]+)"/g)].map(
          (m) => m[1] ?? m[2],
        )
      : [];
    const seen = new Set([...server.requests.map((r) => r.body.phase), ...functionEvents]);
    return HOOK_EVENTS.filter((e) => seen.has(e));
  }

  for (const run of ["apply", "destroy", "plan"] as const) {
    test(`in ${run === "apply" ? "an" : "a"} ${run} run, exactly the events whose lifecycle row lists ${run} fire`, async () => {
      const expected = HOOK_EVENTS.filter((e) => (HOOK_LIFECYCLE[e].runs as readonly HookRun[]).includes(run));
      assert.deepEqual(await fired(run), expected);
    });
  }
});
