/**
 * Every failure the loader fuzz found, kept with its exact input (as the fuzzer shrank it) and run by
 * test/unit/loader-fuzz.test.ts. `issue10` marks a case that belongs to issue 10's items, which
 * other branches fix: the test runs it as a todo until their fix lands, then the mark goes.
 */
import type { LoaderInput } from "./inputs.js";

export interface LoaderRegression {
  /** What went wrong, as the fuzzer reported it. */
  finding: string;
  /** How it was found: seed and date. */
  found: string;
  issue10?: string;
  input: LoaderInput;
}

export const LOADER_REGRESSIONS: readonly LoaderRegression[] = [
  {
    finding: "a `${` left open swallowed the next lines into an 'invalid variable reference' message that printed them raw, so one problem spanned several lines of the problem list",
    found: "seed 1 (and 2-5), 2026-11-23",
    input: {
      "kind": "template",
      "spec": "apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: ${APP}\ndefaults:\n  timeout: \nstate: {}\nsteps:\n  - name: config\n    apply:\n      namespace: ${APP}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata:\n              name: settings-$${HOME}\n            data:\n              key: ${APP}\n              quoted: \"$${HOME}\"\n  - name: chart\n    needs: [config]\n    when: 'vars.get(\"ENV\", \"dev\") != \"0\"'\n    helm:\n      chart: hello\n      repo: https://charts.example.com\n      version: \"${APP}\"\n      values:\n        token: ${\n  - name: job\n    needs: [chart]\n    job:\n      image: busybox:\n      args: [\"echo\", \"0\"]\n      env:\n        TOKEN: ${APP}\n",
      "env": {},
      "set": []
    },
  },
];
