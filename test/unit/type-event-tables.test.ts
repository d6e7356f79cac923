/**
 * Every step type and every hook event answers to one source: STEP_TYPES and
 * HOOK_EVENTS (provider/dsl/types.ts). The per-type and per-event tables are
 * typed against them, so the compiler asks for a new entry; these tests ask for
 * what it cannot see. A step of every type (the fixture below is typed against
 * STEP_TYPES, so a new type must add one) loads, summarizes, is bundled and is
 * recognized before substitution; a hook on every event loads, and fires exactly
 * in the runs, at the points, the lifecycle table (HOOK_LIFECYCLE) says.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { planOnline } from "../../provider/engine/plan.js";
import { runSpec } from "../../provider/engine/run.js";
import { collectBundle } from "../../provider/pulumi/bundle.js";
import { rawSteps } from "../../provider/pulumi/unknowns.js";
import { fileReferences } from "../../provider/dsl/hash.js";
import { eventApplies, HOOK_LIFECYCLE, lifecycleOf, type HookRun } from "../../provider/dsl/hooks.js";
import { loadSpec } from "../../provider/dsl/load.js";
import type { LoadedSpec } from "../../provider/dsl/loaded.js";
import { HOOK_EVENTS, LOCAL_FILE_KEYS, STEP_TYPES, type HookEvent, type StepType } from "../../provider/dsl/types.js";
import { HookServer } from "../harness/hook-server.js";
import { noExtras, StubExecutors } from "./support/engine-fixtures.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

/** One step of each type, referencing every kind of local file its type can (LOCAL_FILE_KEYS). */
const ONE_STEP_OF_EACH_TYPE = {
  helm: "{chart: ./chart, valuesFrom: [{file: ./values.yaml}]}",
  apply: "{manifests: [{file: ./cm.yaml}, {kustomize: ./kust}]}",
  delete: "{manifests: [{file: ./cm.yaml}]}",
  patch: "{target: deployment/web, namespace: apps, patch: {spec: {replicas: 2}}}",
  wait: "{for: condition=Available, on: deployment/web, namespace: apps}",
  rollout: "{status: deployment/web, namespace: apps}",
  job: "{image: busybox, namespace: apps}",
} satisfies Record<StepType, string>;

const FILES: Record<string, string> = {
  "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
  "values.yaml": "replicas: 1\n",
  "chart/Chart.yaml": "apiVersion: v2\nname: local\nversion: 0.1.0\n",
  "kust/kustomization.yaml": "resources: [cm.yaml]\n",
  "kust/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kcm}\n",
};

const stepsYaml = (): string =>
  STEP_TYPES.map((t) => `  - name: s-${t}\n    ${t}: ${ONE_STEP_OF_EACH_TYPE[t]}\n`).join("");

describe("a step of every type", () => {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml()), ...FILES });
  const text = fs.readFileSync(path.join(dir, "spec.yaml"), "utf8");

  test("loads (the schema and the rules know every type), with a summary each", () => {
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
    assert.deepEqual(
      spec.steps.map((s) => s.type),
      [...STEP_TYPES],
    );
    for (const s of spec.steps) assert.ok(s.summary !== "" && !/undefined/.test(s.summary), `${s.type}: ${s.summary}`);
  });

  test("references local files only under the keys LOCAL_FILE_KEYS lists for its type, and the bundle carries them", () => {
    const spec = loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
    const referenced = new Set<string>();
    for (const s of spec.steps) {
      for (const ref of fileReferences(s.type, s.action, dir)) {
        const key = ref.field.split("/").at(-1)!;
        assert.ok(
          (LOCAL_FILE_KEYS[s.type] as readonly string[]).includes(key),
          `${s.type} references ${ref.field}, a key LOCAL_FILE_KEYS.${s.type} does not list`,
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
      [...STEP_TYPES],
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
        spec.steps.filter((s) => eventApplies(e, s.type, s.action)).map((s) => s.name),
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
    for (const t of STEP_TYPES) {
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
