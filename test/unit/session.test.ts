/**
 * Issue 23 §3: a Session per command. It reads the kubeconfig once, connects once, knows where
 * the record lives, and its redactor masks the kubeconfig's credentials (kube/kubeconfig.ts says
 * which, for the CLI and the Pulumi provider alike). Operations handed a session use it.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, mock, test } from "node:test";
import { main } from "../../provider/cli/main.js";
import { KubeClient } from "../../provider/kube/index.js";
import { credentialsToMask, parseKubeconfig } from "../../provider/kube/kubeconfig.js";
import { applyOperation, destroyOperation } from "../../provider/operations.js";
import { ownerOperation } from "../../provider/pulumi/record-owner/resource-operations.js";
import { MASK } from "../../provider/redact.js";
import { Session, withSession } from "../../provider/session.js";
import { specFixture, StubExecutors } from "./support/engine-fixtures.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

const TOKEN = "session-token-0123456789";
const OTHER_USERS_PASSWORD = "other-users-password-42";

/** Two users; the server is never contacted (nothing listens on port 1, and static credentials connect without a request). */
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: { server: "http://127.0.0.1:1" }
users:
- name: u
  user: { token: "${TOKEN}" }
- name: other
  user: { username: admin, password: "${OTHER_USERS_PASSWORD}" }
contexts:
- name: ctx
  context: { cluster: c, user: u }
current-context: ctx
`;

describe("kubeconfig: which credentials to mask", () => {
  test("every user's token, password, client key and certificate data and auth-provider secrets; not paths, names or short values", () => {
    const config = parseKubeconfig(
      `apiVersion: v1
kind: Config
users:
- name: a
  user: { token: "token-of-user-a", client-key-data: "a2V5LWRhdGEtb2YtYQ==", client-certificate-data: "Y2VydC1kYXRhLW9mLWE=" }
- name: b
  user: { username: "admin-user-b", password: "password-of-b" }
- name: c
  user: { tokenFile: /var/run/token-file-path, client-certificate: /etc/cert-path.pem, client-key: /etc/key-path.pem }
- name: d
  user:
    auth-provider:
      name: oidc
      config: { client-id: public-client-id, client-secret: "client-secret-of-d", id-token: "id-token-of-d", refresh-token: "refresh-token-of-d", idp-issuer-url: "https://issuer.example" }
- name: e
  user: { token: short }
`,
      undefined,
    );
    assert.deepEqual(credentialsToMask(config).sort(), [
      "Y2VydC1kYXRhLW9mLWE=",
      "a2V5LWRhdGEtb2YtYQ==",
      "client-secret-of-d",
      "id-token-of-d",
      "password-of-b",
      "refresh-token-of-d",
      "token-of-user-a",
    ]);
  });
});

describe("a session per command", () => {
  afterEach(() => mock.restoreAll());

  test("opening loads the kubeconfig and connects once; its redactor masks the kubeconfig's credentials, the spec's does not learn them", async () => {
    const connect = mock.method(KubeClient, "connect");
    const spec = specFixture([{ name: "a" }]);
    const session = await Session.open(spec, { target: { kubeconfigContent: KUBECONFIG } });
    try {
      assert.equal(connect.mock.callCount(), 1);
      assert.ok(session.target.loaded !== undefined, "helm gets the loaded target");
      assert.equal(session.kube.server, "http://127.0.0.1:1");
      assert.equal(
        session.redactor.redact(`token ${TOKEN}, password ${OTHER_USERS_PASSWORD}`),
        `token ${MASK}, password ${MASK}`,
      );
      assert.equal(spec.redactor.redact(TOKEN), TOKEN, "the loaded spec stays as it was");
    } finally {
      session.close();
    }
  });

  test("the record's location: the spec's under the policy, or the one given", async () => {
    const client = {} as KubeClient;
    const withState = specFixture([{ name: "a" }], { name: "s", state: { namespace: "ops", name: "rec" } });
    const without = specFixture([{ name: "a" }], { name: "s", state: false });
    assert.deepEqual((await Session.open(withState, { target: {}, client })).record, { namespace: "ops", name: "rec" });
    assert.equal(
      (await Session.open(without, { target: {}, client })).record,
      undefined,
      "policy spec: no state: block, no record",
    );
    assert.deepEqual((await Session.open(without, { target: {}, client, journal: "default-on" })).record, {
      namespace: "default",
      name: "khook-state-s",
    });
    assert.deepEqual(
      (await Session.open(undefined, { target: {}, client, record: { namespace: "n", name: "r" } })).record,
      { namespace: "n", name: "r" },
    );
  });

  test("operations handed a session use its client and its redactor: no second connect; closing it closes the client it connected, once", async () => {
    const connect = mock.method(KubeClient, "connect");
    const spec = specFixture([{ name: "a" }], { state: false });
    const stubs = new StubExecutors().on("a", ({ ctx, kind }) => {
      if (kind === "destroy") return;
      ctx.redactor.add("learned-in-the-run");
      throw new Error(`failed with ${TOKEN} and learned-in-the-run`);
    });
    const session = await Session.open(spec, { target: { kubeconfigContent: KUBECONFIG } });
    const close = mock.method(session.kube, "close");
    const applied = await applyOperation(spec, { session, executors: stubs.map });
    const destroyed = await destroyOperation(spec, { session, executors: stubs.map });
    assert.equal(connect.mock.callCount(), 1);
    assert.equal(stubs.started("a"), 1);
    assert.equal(stubs.started("a", "destroy"), 1);
    assert.equal(applied.steps[0]!.error, `failed with ${MASK} and ${MASK}`, "the run's redactor is the session's");
    assert.equal(destroyed.status, "succeeded");
    assert.equal(close.mock.callCount(), 0, "the operations leave the session's client open");
    session.close();
    session.close();
    assert.equal(close.mock.callCount(), 1);
  });

  test("a session opened with a caller's client leaves that client open", async () => {
    let closed = 0;
    const client = { close: () => closed++ } as unknown as KubeClient;
    await withSession(undefined, { target: {}, client }, async () => undefined);
    assert.equal(closed, 0);
  });

  test("an operation refuses the session of another spec", async () => {
    const session = await Session.open(specFixture([{ name: "a" }], { name: "one" }), {
      target: {},
      client: {} as KubeClient,
    });
    await assert.rejects(
      ownerOperation(specFixture([{ name: "a" }], { name: "two" }), { session }),
      /spec "two" was handed the session of spec "one"/,
    );
  });

  test("without a session an operation opens its own and closes it", async () => {
    const connect = mock.method(KubeClient, "connect");
    const spec = specFixture([{ name: "a" }], { state: false });
    const result = await applyOperation(spec, {
      target: { kubeconfigContent: KUBECONFIG },
      executors: new StubExecutors().map,
    });
    assert.equal(result.status, "succeeded");
    assert.equal(connect.mock.callCount(), 1);
    const client = (await connect.mock.calls[0]!.result)!;
    await assert.rejects(client.request({ path: "/version" }), /closed/);
  });
});

describe("the CLI prints through its session's redactor", () => {
  test("a kubeconfig credential that an API server's answer quotes is masked in the CLI's error", async () => {
    // A loopback API server that refuses every request, quoting the credential it was configured with.
    const server = http.createServer((_req, res) => {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          reason: "Forbidden",
          code: 403,
          message: `secrets is forbidden for the user of token ${TOKEN}`,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const dir = tempSpecDir({
        "spec.yaml": specText("  - name: w\n    wait: { for: delete, on: pods }\n", "state: {}\n"),
        kubeconfig: KUBECONFIG.replace(
          "http://127.0.0.1:1",
          `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        ),
      });
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let err = "";
      stderr.on("data", (d: Buffer) => (err += d.toString()));
      const code = await main(
        ["status", "-f", path.join(dir, "spec.yaml"), "--kubeconfig", path.join(dir, "kubeconfig")],
        { stdout, stderr, env: {} },
      );
      assert.equal(code, 1, err);
      assert.match(err, /forbidden for the user of token \*\*\*/);
      assert.ok(!err.includes(TOKEN), err);
    } finally {
      server.close();
    }
  });
});
