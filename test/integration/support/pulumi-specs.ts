/** Specs and preview parsing shared by the Pulumi integration tests. */

export const KHOOK_TYPE = "pulumi-nodejs:dynamic/khook:Khook";
/** The native provider's type token. */
export const NATIVE_TYPE = "khook:index:Khook";

/** An apply step that puts one ConfigMap into `${NS}`. */
export function configMapStep(name: string, data: Record<string, string>, extra = ""): string {
  return inlineObjectStep("ConfigMap", "data", name, data, extra);
}

/** An apply step that puts one Secret (from `stringData`) into `${NS}`. */
export function secretStep(name: string, stringData: Record<string, string>, extra = ""): string {
  return inlineObjectStep("Secret", "stringData", name, stringData, extra);
}

function inlineObjectStep(
  kind: string,
  field: string,
  name: string,
  data: Record<string, string>,
  extra: string,
): string {
  const body = Object.entries(data)
    .map(([k, v]) => `                ${k}: ${JSON.stringify(v)}`)
    .join("\n");
  return `  - name: ${name}
${extra}    apply:
      namespace: \${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ${kind}
            metadata:
              name: ${name}
            ${field}:
${body}
`;
}

/** Steps with one problem each (a duplicate name, a bad wait.for, an unknown need, a missing file), after `alpha`. */
export const INVALID_STEPS = `  - name: alpha
    wait:
      for: sideways=now
      on: pods
      namespace: \${NS}
  - name: gamma
    needs: [missing-step]
    apply:
      namespace: \${NS}
      manifests:
        - file: ./manifests/not-there.yaml
`;

/** A Pulumi YAML program declaring `khook:Khook` for ./boot.khook.yaml, with NS and the kubeconfig file's content. */
export const yamlProgram = (ns: string, kubeconfig: string): string => `name: khook-yaml
runtime: yaml
description: khook from a Pulumi YAML program
resources:
  boot:
    type: khook:Khook
    properties:
      specFile: ./boot.khook.yaml
      vars:
        NS: ${ns}
      kubeconfig:
        fn::readFile: ${kubeconfig}
outputs:
  runStatus: \${boot.runStatus}
  steps: \${boot.steps}
`;

export function spec(name: string, steps: string, head = ""): string {
  return `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: ${name}
state:
  namespace: \${NS}
${head}steps:
${steps}`;
}

export interface PreviewStep {
  op: string;
  urn: string;
  type?: string;
  oldState?: { inputs?: Record<string, unknown>; outputs?: Record<string, unknown> };
  newState?: { inputs?: Record<string, unknown> };
  diffReasons?: string[];
}

export interface PreviewJson {
  steps?: PreviewStep[];
  changeSummary?: Record<string, number>;
  diagnostics?: { message: string; severity: string; urn?: string }[];
}

/** `pulumi preview --json` output (the JSON document on stdout). */
export function parsePreview(stdout: string): PreviewJson {
  const start = stdout.indexOf("{");
  return JSON.parse(stdout.slice(start)) as PreviewJson;
}

export function khookStep(p: PreviewJson): PreviewStep | undefined {
  return p.steps?.find((s) =>
    [KHOOK_TYPE, NATIVE_TYPE].some((type) => s.urn.includes(`::${type}::`) || s.type === type),
  );
}

/** Indexes of the plan lines that differ between the old and the new inputs of a preview step. */
export function changedPlanLines(step: PreviewStep): number[] {
  const before = (step.oldState?.inputs?.plan ?? []) as string[];
  const after = (step.newState?.inputs?.plan ?? []) as string[];
  const out: number[] = [];
  for (let i = 0; i < Math.max(before.length, after.length); i++) if (before[i] !== after[i]) out.push(i);
  return out;
}
