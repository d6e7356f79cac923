/**
 * A credential refresh that fails mid-run (issue 10, item 23): a real exec plugin script
 * that hands out an already-expired token once, then fails. The error must say that the
 * plugin failed, not that the API server is unreachable, and keep its KhookError class.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { KhookError } from "../../provider/errors.js";
import { KubeClient, type ResourceType } from "../../provider/kube/index.js";
import { KubeConfigError } from "../../provider/kube/api-errors.js";

const CM: ResourceType = { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true };

test("exec-refresh-failure-reported: a failed exec-plugin token refresh is reported as such, not as an unreachable API server", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-exec-refresh-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const plugin = path.join(dir, "cred.sh");
  // First call: a token that has already expired, so the next request must run the plugin again; later calls fail.
  fs.writeFileSync(
    plugin,
    `#!/bin/sh
if [ -e "${dir}/used" ]; then echo "refresh denied: the SSO session ended" >&2; exit 1; fi
touch "${dir}/used"
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"first-token","expirationTimestamp":"2000-01-01T00:00:00Z"}}'
`,
    { mode: 0o700 },
  );
  const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;
  const kube = await KubeClient.connect({ kubeconfigContent: kubeconfig });
  t.after(() => kube.close());
  assert.ok(fs.existsSync(path.join(dir, "used")), "connect ran the plugin once");
  const err = await kube.list(CM, { namespace: "default" }).then(
    () => assert.fail("the request succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof KhookError, String(err));
  assert.ok(err instanceof KubeConfigError, `kept its class: ${(err as Error).name}: ${(err as Error).message}`);
  assert.doesNotMatch(err.message, /cannot reach/);
  assert.match(err.message, /exec plugin/);
  assert.match(err.message, /refresh denied: the SSO session ended/);
});
