/** The native kubeconfig loader (provider/kube/kubeconfig.ts): kubectl's sources, merge rules, paths, checks and credentials. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { KubeClient, KubeConfigError } from "../../provider/kube/index.js";
import {
  credentialsFor,
  loadKubeconfig,
  parseKubeconfig,
  selectContext,
  StaticCredentials,
  type HostEnvironment,
  type KubeconfigSelection,
} from "../../provider/kube/kubeconfig.js";

const b64 = (s: string): string => Buffer.from(s).toString("base64");
const CA = b64("the-ca");

function tmpdir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "khook-kubeconfig-unit-"));
}

function write(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** A host with no KUBECONFIG, an empty home and no service account, unless overridden. */
function host(
  over: { env?: Record<string, string>; homeDir?: string; serviceAccountDir?: string } = {},
): HostEnvironment {
  return {
    env: over.env ?? {},
    homeDir: over.homeDir ?? tmpdir(),
    serviceAccountDir: over.serviceAccountDir ?? path.join(tmpdir(), "no-sa"),
  };
}

interface Entry {
  name: string;
  body: string;
}
function kubeconfig(o: { clusters?: Entry[]; users?: Entry[]; contexts?: Entry[]; current?: string }): string {
  const list = (key: string, entries: Entry[] | undefined): string =>
    entries === undefined
      ? ""
      : `${key}:\n${entries.map((e) => `- name: ${e.name}\n  ${key.slice(0, -1)}: ${e.body}\n`).join("")}`;
  return `apiVersion: v1\nkind: Config\n${list("clusters", o.clusters)}${list("users", o.users)}${list("contexts", o.contexts)}${o.current !== undefined ? `current-context: ${o.current}\n` : ""}`;
}

/** One cluster, one user, one context "x" (current). */
function simple(
  user: string,
  cluster = `{server: "https://k.example:6443", certificate-authority-data: ${CA}}`,
  ns?: string,
): string {
  return kubeconfig({
    clusters: [{ name: "c", body: cluster }],
    users: [{ name: "u", body: user }],
    contexts: [{ name: "x", body: `{cluster: c, user: u${ns ? `, namespace: ${ns}` : ""}}` }],
    current: "x",
  });
}

function select(content: string, context?: string): KubeconfigSelection {
  return selectContext(loadKubeconfig({ kubeconfigContent: content }, host()), context);
}

async function headersOf(content: string): Promise<Record<string, unknown>> {
  const creds = await credentialsFor(select(content));
  return (await creds.current()).headers as Record<string, unknown>;
}

function throwsConfig(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KubeConfigError, String(e));
    assert.match(e.message, re);
    return true;
  });
}

describe("kubeconfig: sources", () => {
  test("KUBECONFIG: missing entries are skipped, the first file to define a name wins, the first non-empty current-context wins", () => {
    const dir = tmpdir();
    const a = write(
      path.join(dir, "a"),
      kubeconfig({
        clusters: [{ name: "shared", body: `{server: "https://a.example"}` }],
        contexts: [{ name: "ctx-a", body: `{cluster: shared, user: ua, namespace: from-a}` }],
        users: [{ name: "ua", body: `{token: ta}` }],
      }),
    );
    const b = write(
      path.join(dir, "b"),
      kubeconfig({
        clusters: [
          { name: "shared", body: `{server: "https://b.example"}` },
          { name: "only-b", body: `{server: "https://only-b.example"}` },
        ],
        users: [{ name: "ua", body: `{token: tb}` }],
        contexts: [
          { name: "ctx-a", body: `{cluster: only-b, user: ua, namespace: from-b}` },
          { name: "ctx-b", body: `{cluster: only-b, user: ua}` },
        ],
        current: "ctx-a",
      }),
    );
    const c = write(path.join(dir, "c"), kubeconfig({ current: "ctx-b" }));
    const loaded = loadKubeconfig(
      {},
      host({ env: { KUBECONFIG: [path.join(dir, "missing"), a, b, c].join(path.delimiter) } }),
    );
    assert.deepEqual(loaded.source, { kind: "file", files: [path.join(dir, "missing"), a, b, c] });
    assert.deepEqual([...loaded.config.contexts.keys()], ["ctx-a", "ctx-b"], "file order");
    assert.equal(loaded.config.currentContext, "ctx-a", "a defines none; b's is the first non-empty one");
    const sel = selectContext(loaded);
    assert.equal(sel.namespace, "from-a", "ctx-a comes from a, whole");
    assert.equal(sel.server, "https://a.example", "the cluster 'shared' comes from a");
    assert.equal(selectContext(loaded, "ctx-b").server, "https://only-b.example");
    assert.equal(loaded.config.users.get("ua")?.token, "ta");
  });

  test("an explicit path wins over KUBECONFIG and must exist; content wins over both", () => {
    const dir = tmpdir();
    const env = { KUBECONFIG: write(path.join(dir, "env"), simple("{token: env}")) };
    const explicit = write(path.join(dir, "explicit"), simple("{token: explicit}"));
    assert.equal(loadKubeconfig({ kubeconfigPath: explicit }, host({ env })).config.users.get("u")?.token, "explicit");
    const both = loadKubeconfig(
      { kubeconfigPath: explicit, kubeconfigContent: simple("{token: content}") },
      host({ env }),
    );
    assert.deepEqual(both.source, { kind: "content" });
    assert.equal(both.config.users.get("u")?.token, "content");
    throwsConfig(
      () => loadKubeconfig({ kubeconfigPath: path.join(dir, "nope") }, host({ env })),
      /^kubeconfig .*nope does not exist$/,
    );
  });

  test("~/.kube/config when KUBECONFIG is unset; the existing messages when nothing is found", () => {
    const home = tmpdir();
    throwsConfig(
      () => loadKubeconfig({}, host({ homeDir: home })),
      /^no kubeconfig found: pass one explicitly, set KUBECONFIG, or create .*\.kube\/config \(in a pod, the service account is used\)$/,
    );
    write(path.join(home, ".kube", "config"), simple("{token: home}"));
    assert.equal(loadKubeconfig({}, host({ homeDir: home })).config.users.get("u")?.token, "home");
    throwsConfig(
      () => loadKubeconfig({}, host({ homeDir: home, env: { KUBECONFIG: "/no/a:/no/b" } })),
      /^none of the kubeconfig files in KUBECONFIG exist: \/no\/a:\/no\/b$/,
    );
  });

  test("in-cluster: service account token, CA and namespace; POD_NAMESPACE first; also when the kubeconfig defines nothing", async () => {
    const sa = tmpdir();
    write(path.join(sa, "token"), "sa-token\n");
    write(path.join(sa, "ca.crt"), "sa-ca");
    write(path.join(sa, "namespace"), "team-a\n");
    const env = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
    const loaded = loadKubeconfig({}, host({ env, serviceAccountDir: sa }));
    assert.deepEqual(loaded.source, { kind: "in-cluster" });
    const sel = selectContext(loaded);
    assert.equal(sel.server, "https://10.0.0.1:443");
    assert.equal(sel.contextName, "inClusterContext");
    assert.equal(sel.namespace, "team-a");
    const auth = await (await credentialsFor(sel)).current();
    assert.equal(auth.headers["Authorization"], "Bearer sa-token", "trimmed");
    assert.equal(String(auth.tls.ca), "sa-ca");

    assert.equal(
      selectContext(loadKubeconfig({}, host({ env: { ...env, POD_NAMESPACE: "from-env" }, serviceAccountDir: sa })))
        .namespace,
      "from-env",
    );
    assert.equal(
      selectContext(
        loadKubeconfig(
          {},
          host({ env: { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" }, serviceAccountDir: sa }),
        ),
      ).server,
      "https://[fd00::1]:6443",
    );
    // An empty kubeconfig file, or a KUBECONFIG naming only missing files: kubectl falls back to the service account.
    const empty = write(path.join(tmpdir(), "empty"), "");
    assert.equal(
      loadKubeconfig({ kubeconfigPath: empty }, host({ env, serviceAccountDir: sa })).source.kind,
      "in-cluster",
    );
    assert.equal(
      loadKubeconfig({}, host({ env: { ...env, KUBECONFIG: "/no/such" }, serviceAccountDir: sa })).source.kind,
      "in-cluster",
    );
    // Without a CA file the system roots are used; without the port it is not in-cluster.
    fs.rmSync(path.join(sa, "ca.crt"));
    assert.equal(
      selectContext(loadKubeconfig({}, host({ env, serviceAccountDir: sa }))).cluster.certificateAuthority,
      undefined,
    );
    throwsConfig(
      () => loadKubeconfig({}, host({ env: { KUBERNETES_SERVICE_HOST: "10.0.0.1" }, serviceAccountDir: sa })),
      /^no kubeconfig found/,
    );
    // Content is never replaced by the service account.
    throwsConfig(
      () =>
        selectContext(loadKubeconfig({ kubeconfigContent: "kind: Config\n" }, host({ env, serviceAccountDir: sa }))),
      /^the given kubeconfig content has no current context/,
    );
  });
});

describe("kubeconfig: paths and fields", () => {
  test("relative file references resolve against the kubeconfig's directory; exec commands only when they are paths", () => {
    const dir = tmpdir();
    const file = write(
      path.join(dir, "sub", "config"),
      kubeconfig({
        clusters: [{ name: "c", body: `{server: "https://k", certificate-authority: ca.crt}` }],
        users: [
          { name: "cert", body: `{client-certificate: ../certs/c.crt, client-key: /abs/c.key}` },
          { name: "tok", body: `{tokenFile: tok/en}` },
          {
            name: "exec-path",
            body: `{exec: {command: ./bin/cred, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}`,
          },
          {
            name: "exec-lookup",
            body: `{exec: {command: cred, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}`,
          },
        ],
      }),
    );
    const { config } = loadKubeconfig({ kubeconfigPath: file }, host());
    const sub = path.join(dir, "sub");
    assert.equal(config.clusters.get("c")?.certificateAuthority, path.join(sub, "ca.crt"));
    assert.equal(config.users.get("cert")?.clientCertificate, path.join(dir, "certs", "c.crt"));
    assert.equal(config.users.get("cert")?.clientKey, "/abs/c.key");
    assert.equal(config.users.get("tok")?.tokenFile, path.join(sub, "tok", "en"));
    assert.equal(config.users.get("exec-path")?.exec?.["command"], path.join(sub, "bin", "cred"));
    assert.equal(config.users.get("exec-lookup")?.exec?.["command"], "cred");
    // Content has no directory: references stay as written.
    assert.equal(
      parseKubeconfig(
        kubeconfig({ clusters: [{ name: "c", body: `{server: s, certificate-authority: ca.crt}` }] }),
        undefined,
      ).clusters.get("c")?.certificateAuthority,
      "ca.crt",
    );
  });

  test("certificates and keys come from -data fields or from files; a key without a certificate is not used", async () => {
    const dir = tmpdir();
    write(path.join(dir, "ca.crt"), "file-ca");
    write(path.join(dir, "c.crt"), "file-cert");
    write(path.join(dir, "c.key"), "file-key");
    const fromFiles = write(
      path.join(dir, "kc"),
      simple(
        `{client-certificate: c.crt, client-key: c.key}`,
        `{server: "https://k", certificate-authority: ca.crt, tls-server-name: api.internal}`,
      ),
    );
    const tls = (
      await (await credentialsFor(selectContext(loadKubeconfig({ kubeconfigPath: fromFiles }, host())))).current()
    ).tls;
    assert.deepEqual(
      [String(tls.ca), String(tls.cert), String(tls.key), tls.servername, tls.rejectUnauthorized],
      ["file-ca", "file-cert", "file-key", "api.internal", undefined],
    );

    const fromData = (
      await (
        await credentialsFor(
          select(simple(`{client-certificate-data: ${b64("d-cert")}, client-key-data: ${b64("d-key")}}`)),
        )
      ).current()
    ).tls;
    assert.deepEqual([String(fromData.ca), String(fromData.cert), String(fromData.key)], ["the-ca", "d-cert", "d-key"]);

    const keyOnly = (await (await credentialsFor(select(simple(`{client-key-data: ${b64("k")}, token: t}`)))).current())
      .tls;
    assert.equal(keyOnly.key, undefined);
  });

  test("token, tokenFile (re-read each minute, preferred over token while readable) and basic auth", async () => {
    assert.equal((await headersOf(simple(`{token: abc}`)))["Authorization"], "Bearer abc");
    assert.equal(
      (await headersOf(simple(`{username: admin, password: 0123}`)))["Authorization"],
      `Basic ${b64("admin:0123")}`,
      "0123 is the text as written",
    );

    const dir = tmpdir();
    const tokenFile = write(path.join(dir, "token"), "first\n");
    let now = 1_000_000;
    const sel = selectContext(
      loadKubeconfig({ kubeconfigContent: simple(`{tokenFile: "${tokenFile}", token: fallback}`) }, host()),
    );
    const creds = new StaticCredentials(sel, () => now);
    assert.equal((await creds.current()).headers["Authorization"], "Bearer first");
    fs.writeFileSync(tokenFile, "second");
    now += 30_000;
    assert.equal((await creds.current()).headers["Authorization"], "Bearer first", "cached for a minute");
    now += 30_000;
    assert.equal((await creds.current()).headers["Authorization"], "Bearer second", "rotated token picked up");
    fs.rmSync(tokenFile);
    now += 60_000;
    assert.equal(
      (await creds.current()).headers["Authorization"],
      "Bearer second",
      "a failed re-read keeps the last token",
    );

    const onlyFallback = new StaticCredentials(
      selectContext(
        loadKubeconfig({ kubeconfigContent: simple(`{tokenFile: "${tokenFile}", token: fallback}`) }, host()),
      ),
    );
    assert.equal((await onlyFallback.current()).headers["Authorization"], "Bearer fallback");
    await assert.rejects(
      headersOf(simple(`{tokenFile: "${tokenFile}"}`)),
      /^KubeConfigError: the kubeconfig content is not valid: unable to read tokenFile .*token for u due to ENOENT/,
    );
  });

  test("impersonation headers, as client-go sends them", async () => {
    const h = await headersOf(
      simple(
        `{token: t, as: jane, as-uid: "42", as-groups: [devs, ops], as-user-extra: {"scopes.example.com/x y": [a, b]}}`,
      ),
    );
    assert.equal(h["Impersonate-User"], "jane");
    assert.equal(h["Impersonate-Uid"], "42");
    assert.deepEqual(h["Impersonate-Group"], ["devs", "ops"]);
    assert.deepEqual(h["Impersonate-Extra-scopes.example.com%2Fx%20y"], ["a", "b"]);
  });

  test("insecure-skip-tls-verify (YAML 1.1's plain spellings too) turns verification off", async () => {
    const insecure = (v: string): boolean =>
      select(simple(`{token: t}`, `{server: "https://k", insecure-skip-tls-verify: ${v}}`)).cluster
        .insecureSkipTlsVerify;
    assert.deepEqual(["true", "yes", "on", "false", "no", "off"].map(insecure), [
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    throwsConfig(() => insecure(`"true"`), /insecure-skip-tls-verify must be true or false/);
    throwsConfig(() => insecure(`1`), /insecure-skip-tls-verify must be true or false/);
    const a = await new StaticCredentials(
      select(simple(`{token: t}`, `{server: "https://k", insecure-skip-tls-verify: true}`)),
    ).current();
    assert.equal(a.tls.rejectUnauthorized, false);
  });

  test("http servers (and servers without a scheme, as in kubectl) get no credentials, only impersonation; no exec plugin runs", async () => {
    assert.equal(
      select(simple(`{token: t}`, `{server: "k.example:6443", certificate-authority-data: ${CA}}`)).server,
      "http://k.example:6443",
    );
    assert.equal(
      select(simple(`{token: t}`, `{server: "https://k.example/prefix/"}`)).server,
      "https://k.example/prefix",
    );
    assert.deepEqual(await headersOf(simple(`{token: t, as: jane}`, `{server: "http://k"}`)), {
      "Impersonate-User": "jane",
    });
    assert.deepEqual(await headersOf(simple(`{username: a, password: b}`, `{server: "k:8080"}`)), {});
    const tls = (
      await (
        await credentialsFor(
          select(simple(`{client-certificate-data: ${CA}, client-key-data: ${CA}}`, `{server: "http://k"}`)),
        )
      ).current()
    ).tls;
    assert.equal(tls.cert, undefined);
    const exec = await credentialsFor(
      select(
        simple(
          `{exec: {command: /bin/false, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}`,
          `{server: "http://k"}`,
        ),
      ),
    );
    assert.deepEqual((await exec.current()).headers, {});
    // kubectl's transport checks apply to https only.
    assert.ok(
      select(
        simple(`{token: t}`, `{server: "http://k", insecure-skip-tls-verify: true, certificate-authority-data: ${CA}}`),
      ),
    );
  });
});

describe("kubeconfig: choosing a context and checking it", () => {
  const two = kubeconfig({
    clusters: [{ name: "c", body: `{server: "https://k"}` }],
    users: [{ name: "u", body: `{token: t}` }],
    contexts: [
      { name: "a", body: `{cluster: c, user: u, namespace: team-a}` },
      { name: "b", body: `{cluster: c, user: nobody}` },
      { name: "broken", body: `{cluster: gone, user: u}` },
    ],
    current: "a",
  });

  test("the current context, or the one asked for; the messages kubectl users know", () => {
    assert.equal(select(two).contextName, "a");
    assert.equal(select(two).namespace, "team-a");
    const b = select(two, "b");
    assert.equal(b.namespace, "default");
    assert.equal(b.userDefined, false, "an undefined user is anonymous, as in kubectl");
    throwsConfig(
      () => select(two, "nope"),
      /^context "nope" does not exist in the given kubeconfig content \(contexts: a, b, broken\)$/,
    );
    throwsConfig(
      () => select(two, "broken"),
      /^context "broken" in the given kubeconfig content refers to a cluster that is not defined$/,
    );
    throwsConfig(
      () => select(two.replace("current-context: a", "")),
      /^the given kubeconfig content has no current context; set one \(kubectl config use-context\) or pass a context$/,
    );
    throwsConfig(() => select(two.replace("current-context: a", "current-context: zz")), /has no current context/);
    throwsConfig(() => select(kubeconfig({})), /^the given kubeconfig content has no current context/);
    throwsConfig(
      () => select(kubeconfig({}), "x"),
      /^context "x" does not exist in the given kubeconfig content \(contexts: none\)$/,
    );
  });

  test("file sources are named in messages, several files joined like KUBECONFIG", () => {
    const dir = tmpdir();
    const a = write(path.join(dir, "a"), kubeconfig({ contexts: [{ name: "x", body: "{cluster: c}" }] }));
    const loaded = loadKubeconfig({}, host({ env: { KUBECONFIG: `${a}${path.delimiter}${path.join(dir, "b")}` } }));
    throwsConfig(
      () => selectContext(loaded, "y"),
      new RegExp(`^context "y" does not exist in kubeconfig ${a}:${path.join(dir, "b")} \\(contexts: x\\)$`),
    );
  });

  test("kubectl's checks of the selected cluster and user, in kubectl's words", () => {
    const cases: [string, string, RegExp][] = [
      [`{token: t}`, `{certificate-authority-data: ${CA}}`, /no server found for cluster "c"/],
      [
        `{token: t}`,
        `{server: "https://k", certificate-authority: /x/ca.crt, certificate-authority-data: ${CA}}`,
        /certificate-authority-data and certificate-authority are both specified for c\. certificate-authority-data will override\./,
      ],
      [
        `{token: t}`,
        `{server: "https://k", certificate-authority: /no/such/ca.crt}`,
        /unable to read certificate-authority \/no\/such\/ca\.crt for c due to ENOENT/,
      ],
      [
        `{token: t}`,
        `{server: "https://k", insecure-skip-tls-verify: true, certificate-authority-data: ${CA}}`,
        /specifying a root certificates file with the insecure flag is not allowed/,
      ],
      [
        `{client-certificate-data: ${CA}}`,
        `{server: "https://k"}`,
        /client-key-data or client-key must be specified for u to use the clientCert authentication method\./,
      ],
      [
        `{token: t, username: a, password: b}`,
        `{server: "https://k"}`,
        /more than one authentication method found for u; found \[token basicAuth\], only one is allowed/,
      ],
      [
        `{tokenFile: /x, username: a}`,
        `{server: "https://k"}`,
        /username\/password or bearer token may be set, but not both/,
      ],
      [
        `{exec: {command: x, apiVersion: client.authentication.k8s.io/v1}}`,
        `{server: "https://k"}`,
        /interactiveMode must be specified for u to use exec authentication plugin/,
      ],
      [
        `{exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}`,
        `{server: "https://k"}`,
        /command must be specified for u to use exec authentication plugin/,
      ],
      [
        `{exec: {command: x, interactiveMode: Sometimes, apiVersion: v}}`,
        `{server: "https://k"}`,
        /invalid interactiveMode for u: "Sometimes"/,
      ],
    ];
    for (const [user, cluster, re] of cases) {
      throwsConfig(
        () => select(simple(user, cluster)),
        new RegExp(`^the kubeconfig content is not valid: .*${re.source}`),
      );
    }
    // The beta exec API defaults interactiveMode.
    assert.ok(
      select(simple(`{exec: {command: x, apiVersion: client.authentication.k8s.io/v1beta1}}`, `{server: "https://k"}`)),
    );
  });

  test("malformed kubeconfigs: YAML errors give a position but never the offending text; bad base64; duplicate names", () => {
    throwsConfig(
      () => loadKubeconfig({ kubeconfigContent: "users:\n- name: u\n  user: {token: s3cr3t-value: x}\n" }, host()),
      /^the kubeconfig content is not valid: .* at line 3, column \d+$/,
    );
    try {
      loadKubeconfig({ kubeconfigContent: "users:\n- name: u\n  user: {token: s3cr3t-value: x}\n" }, host());
    } catch (e) {
      assert.doesNotMatch((e as Error).message, /s3cr3t/);
    }
    throwsConfig(
      () => select(simple(`{token: t}`, `{server: "https://k", certificate-authority-data: "not base64!"}`)),
      /^the kubeconfig content is not valid: clusters\[0\]\.cluster\.certificate-authority-data is not valid base64$/,
    );
    throwsConfig(
      () =>
        select(
          kubeconfig({
            clusters: [
              { name: "c", body: "{server: a}" },
              { name: "c", body: "{server: b}" },
            ],
          }),
        ),
      /cluster "c" is defined twice/,
    );
    throwsConfig(() => select("clusters: {c: 1}\n"), /clusters must be a list/);
    throwsConfig(() => select("clusters:\n- cluster: {server: x}\n"), /clusters\[0\]\.name is missing/);
    const dir = tmpdir();
    const bad = write(path.join(dir, "bad"), "users: [\n");
    throwsConfig(
      () => loadKubeconfig({ kubeconfigPath: bad }, host()),
      new RegExp(`^kubeconfig ${bad} is not valid: `),
    );
  });
});

describe("kubeconfig: KubeClient.connect", () => {
  test("names the context, namespace and server; keeps the server URL message", async () => {
    const c = await KubeClient.connect({
      kubeconfigContent: simple(`{token: t}`, `{server: "https://k.example:6443/"}`, "team-a"),
    });
    try {
      assert.equal(c.server, "https://k.example:6443");
      assert.equal(c.contextName, "x");
      assert.equal(c.contextNamespace, "team-a");
    } finally {
      c.close();
    }
    await assert.rejects(
      KubeClient.connect({ kubeconfigContent: simple(`{token: t}`, `{server: "https://exa mple:x"}`) }),
      /^KubeConfigError: cluster "c" has an invalid server URL: https:\/\/exa mple:x$/,
    );
  });

  test("static credentials never load @kubernetes/client-node; an exec plugin does", () => {
    const probe = (user: string): string => {
      const script = `
        const seen = [];
        require("node:module").registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); if (r.url.includes("@kubernetes/client-node")) seen.push(r.url); return r; } });
        const { KubeClient } = require(${JSON.stringify(path.resolve(__dirname, "../../provider/kube/index.js"))});
        KubeClient.connect({ kubeconfigContent: ${JSON.stringify(simple(user))} }).then(
          (c) => { c.close(); console.log(seen.length > 0 ? "loaded" : "not loaded"); },
          (e) => { console.log("error: " + e.message); });`;
      const r = spawnSync(process.execPath, ["-e", script], {
        encoding: "utf8",
        env: { ...process.env, KUBECONFIG: "" },
      });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim();
    };
    assert.equal(probe(`{client-certificate-data: ${CA}, client-key-data: ${CA}}`), "not loaded");
    assert.equal(
      probe(
        `{exec: {command: /bin/echo, args: ['{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'], apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}`,
      ),
      "loaded",
    );
  });
});
