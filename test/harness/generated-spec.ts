/** Large generated specs, for the offline benchmark (bench/offline.ts) and the tests that want a big realistic input. */

/** A realistic mix of step types, with fan-in every 10 steps and a few pipelines and when:s. */
export function generateSpec(steps: number): string {
  const lines = [
    "apiVersion: khook.io/v1",
    "kind: Khook",
    "metadata:",
    "  name: bench",
    "defaults:",
    "  timeout: 2m",
    "state: {}",
    "steps:",
  ];
  for (let i = 0; i < steps; i++) {
    const needs =
      i >= 10 && i % 10 === 0
        ? `    needs: [s${i - 1}, s${i - 5}, s${i - 10}]\n`
        : i > 0 && i % 3 === 0
          ? `    needs: [s${i - 1}]\n`
          : "";
    const when = i % 50 === 7 ? `    when: 'vars.get("ENV", "dev") == "prod"'\n` : "";
    const head = `  - name: s${i}\n${needs}${when}`;
    switch (i % 5) {
      case 0:
        lines.push(
          `${head}    apply:\n      namespace: ns-\${ENV:-dev|lower}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata:\n              name: cm-${i}\n            data:\n              key: "\${APP:-bench|upper|trunc 5}"`,
        );
        break;
      case 1:
        lines.push(
          `${head}    helm:\n      chart: app-${i}\n      repo: https://charts.example.com\n      version: 1.${i}.0\n      namespace: apps\n      values:\n        replicas: 2\n        image: { tag: "v${i}" }`,
        );
        break;
      case 2:
        lines.push(
          `${head}    wait:\n      for: jsonpath={.status.conditions[?(@.type=="Ready")].status}=True\n      on: deployment/d-${i}\n      namespace: apps`,
        );
        break;
      case 3:
        lines.push(
          `${head}    patch:\n      target: deployment/d-${i}\n      namespace: apps\n      type: merge\n      patch:\n        spec: { replicas: 3 }`,
        );
        break;
      default:
        lines.push(
          `${head}    job:\n      image: busybox:1.36\n      command: ["sh", "-c"]\n      args: ["echo $\${HOME} ${i}"]\n      env: { STEP: "${i}" }`,
        );
    }
  }
  return `${lines.join("\n")}\n`;
}
