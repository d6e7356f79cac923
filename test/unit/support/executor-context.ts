/** Loaded steps and step contexts for executor unit tests (the cluster is a FakeKube). */
import * as path from "node:path";
import { loadSpec } from "../../../provider/dsl/load.js";
import type { LoadedSpec, LoadedStepBase } from "../../../provider/dsl/loaded.js";
import type { StepType } from "../../../provider/dsl/types.js";
import type { StepContext } from "../../../provider/steps/contract.js";
import type { FakeKube } from "./fake-kube.js";
import { specText, tempSpecDir } from "./spec-files.js";

/** Loads a spec named `demo` made of the given steps YAML, exactly as the CLI would. */
export function loadSteps(stepsYaml: string, files: Record<string, string> = {}): LoadedSpec {
  const dir = tempSpecDir({ "spec.yaml": specText(stepsYaml).replace("name: test", "name: demo"), ...files });
  return loadSpec({ file: path.join(dir, "spec.yaml"), env: {} });
}

/** The named step, checked to be of `type`. */
export function stepOf<T extends StepType>(spec: LoadedSpec, name: string, type: T): LoadedStepBase<T> {
  const s = spec.stepsByName.get(name);
  if (s === undefined || s.type !== type) throw new Error(`no ${type} step ${name}`);
  return s as LoadedStepBase<T>;
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
