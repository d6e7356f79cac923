/**
 * A real exec credential plugin (the `users[].user.exec` of an EKS or GKE
 * kubeconfig): a small executable that prints an ExecCredential holding the
 * test cluster's admin credentials and appends one line to a counter file on
 * every run, so a test can count how often khook ran it.
 */
import fs from "node:fs";
import path from "node:path";
import { parse as parseYaml, stringify as toYaml } from "yaml";

export interface ExecPluginKubeconfig {
  /** The kubeconfig whose user has no credentials of its own, only the exec plugin. */
  readonly kubeconfig: string;
  /** How many times the plugin has run so far. */
  runs(): number;
}

/** Writes the plugin, its credential and the kubeconfig into `dir`, from the cluster's kubeconfig. */
export function execPluginKubeconfig(clusterKubeconfig: string, dir: string): ExecPluginKubeconfig {
  const doc = parseYaml(fs.readFileSync(clusterKubeconfig, "utf8")) as {
    "current-context": string;
    contexts: { name: string; context: { user: string } }[];
    users: { name: string; user: Record<string, unknown> }[];
  };
  const userName = doc.contexts.find((c) => c.name === doc["current-context"])!.context.user;
  const user = doc.users.find((u) => u.name === userName)!.user as Record<string, string | undefined>;
  const base = path.dirname(clusterKubeconfig);
  const fileOrData = (data: string | undefined, file: string | undefined): string | undefined =>
    data !== undefined
      ? Buffer.from(data, "base64").toString("utf8")
      : file !== undefined
        ? fs.readFileSync(path.resolve(base, file), "utf8")
        : undefined;
  const status: Record<string, string> = {};
  const cert = fileOrData(user["client-certificate-data"], user["client-certificate"]);
  const key = fileOrData(user["client-key-data"], user["client-key"]);
  if (cert !== undefined && key !== undefined) {
    status.clientCertificateData = cert;
    status.clientKeyData = key;
  }
  if (user.token !== undefined) status.token = user.token;
  if (Object.keys(status).length === 0)
    throw new Error(`the test user in ${clusterKubeconfig} has neither a client certificate nor a token to hand out`);
  fs.mkdirSync(dir, { recursive: true });
  const credential = path.join(dir, "exec-credential.json");
  fs.writeFileSync(
    credential,
    JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status }),
    { mode: 0o600 },
  );
  const counter = path.join(dir, "exec-plugin-runs");
  fs.writeFileSync(counter, "");
  const plugin = path.join(dir, "get-credential");
  fs.writeFileSync(
    plugin,
    `#!/bin/sh\necho "run $$" >> ${JSON.stringify(counter)}\ncat ${JSON.stringify(credential)}\n`,
    { mode: 0o755 },
  );
  doc.users = doc.users.map((u) =>
    u.name === userName
      ? {
          name: u.name,
          user: { exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" } },
        }
      : u,
  );
  const kubeconfig = path.join(dir, "exec-kubeconfig.yaml");
  // Relative paths of the cluster entry stay valid from the new location.
  fs.writeFileSync(
    kubeconfig,
    toYaml(doc).replace(
      /certificate-authority: (?!\/)(\S+)/g,
      (_m, p: string) => `certificate-authority: ${path.resolve(base, p)}`,
    ),
  );
  return {
    kubeconfig,
    runs: () =>
      fs
        .readFileSync(counter, "utf8")
        .split("\n")
        .filter((l) => l !== "").length,
  };
}
