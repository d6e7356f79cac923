/** Loaded steps and step contexts for executor unit tests (the cluster is a FakeKube). */
import path from "node:path";
import { loadSpec } from "../../../provider/load-spec.js";
import type { LoadedSpec } from "../../../provider/dsl/loaded.js";
import type { KindName, StepOf } from "../../../provider/steps/index.js";
import type { StepContext } from "../../../provider/steps/contract.js";
import type { FakeKube } from "./fake-kube.js";
import { specText, tempSpecDir } from "./spec-files.js";

/** Loads a spec named `demo` made of the given steps YAML, exactly as the CLI would. */
export function loadSteps(stepsYaml: string, files: Record<string, string> = {}): LoadedSpec {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml).replace("name: test", "name: demo"), ...files });
  return loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
}

/** The named step, checked to be of `type`. */
export function stepOf<K extends KindName>(spec: LoadedSpec, name: string, kind: K): StepOf<K> {
  const s = spec.stepsByName.get(name);
  if (s === undefined || s.type !== kind) throw new Error(`no ${kind} step ${name}`);
  return s as StepOf<K>;
}

/** What an executor sees, with its progress lines collected in `lines`. */
export function contextFor(spec: LoadedSpec, kube: FakeKube, lines: string[] = []): StepContext {
  const redactor = spec.redactor.child();
  return {
    spec,
    kube,
    signal: new AbortController().signal,
    redactor,
    deadline: 60_000,
    log: (m) => lines.push(redactor.redact(m)),
  };
}
