/**
 * Secrets: with secretVars and a kubeconfig input, neither the exported stack
 * nor anything any pulumi command printed may contain a secret value — only
 * ciphertext.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { encodedForms } from "../../provider/redact.js";
import { pulumiFixture } from "./support/pulumi-env.js";
import { kubeconfigSecrets } from "./support/pulumi-kube.js";
import { KHOOK_PROGRAM, programArgs } from "./support/pulumi-project.js";
import { configMapStep, spec } from "./support/pulumi-specs.js";

const TOKEN = "tok-9f3b7c21-do-not-leak";
const PASSWORD = "pw-4471-also-secret";

const SPEC = spec(
  "secrets",
  configMapStep("creds", { token: "${TOKEN}", digest: "${PASSWORD|b64enc}" }) +
    // Fails, quoting the secret in the error: the target's name is built from it.
    `  - name: leaky
    needs: [creds]
    onError: continue
    patch:
      target: configmap/missing-\${TOKEN}
      namespace: \${NS}
      type: merge
      patch: { data: { a: "1" } }
`,
);

test("secrets never appear in plaintext in the stack or in any CLI output", { timeout: 900_000 }, async (t) => {
  const {
    project,
    kubeconfig,
    namespace: ns,
    cluster,
  } = await pulumiFixture(t, { program: KHOOK_PROGRAM, files: { "boot.khook.yaml": SPEC } });
  project.write(
    "args.json",
    programArgs({
      args: { specFile: "./boot.khook.yaml", vars: { NS: ns } },
      kubeconfigFile: kubeconfig,
      secretVars: { TOKEN, PASSWORD },
    }),
  );
  await project.init();

  await project.run(["preview", "--diff"]);
  const up = await project.run(["up", "--yes", "--skip-preview", "--diff"]);
  assert.notEqual(up.code, 0, "the leaky step fails");
  assert.match(up.output, /step "leaky" failed: .*missing-\*\*\*/, up.output);
  // The secret did reach the cluster where the spec put it.
  assert.equal((await cluster.configMap(ns, "creds"))?.data?.token, TOKEN);

  await project.run(["preview", "--diff"]);
  await project.run(["refresh", "--yes", "--skip-preview", "--diff"]);
  const outputs = await project.run(["stack", "output", "--json"]);
  const exported = await project.exportText();
  assert.match(exported, /"ciphertext"/, "secret values are stored as ciphertext");
  await project.run(["destroy", "--yes", "--skip-preview"]);

  const secrets = [...encodedForms(TOKEN), ...encodedForms(PASSWORD), ...kubeconfigSecrets(kubeconfig)];
  assert.ok(secrets.length > 4, "the kubeconfig has credentials to look for");
  const haystacks: [string, string][] = [
    ["pulumi stack export", exported],
    ["pulumi stack output", outputs.output],
    ...project.transcript.map((text, i): [string, string] => [`command #${i + 1}`, text]),
  ];
  for (const [where, text] of haystacks) {
    for (const s of secrets) assert.ok(!text.includes(s), `a secret (${s.slice(0, 6)}...) leaked into ${where}`);
  }
});
