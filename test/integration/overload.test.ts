/**
 * An API server under strain (issue 19 §2), produced by the real kube-apiserver and etcd, on a
 * private control plane this file starts with API Priority and Fairness on (the harness's shared
 * cluster runs without it) and two etcd members:
 *
 * - a FlowSchema sends one ServiceAccount's requests to a priority level of one seat that rejects
 *   what does not fit (`limitResponse: Reject`), as a tenant's tiny share does in a busy cluster;
 * - the test holds that seat with a request of its own whose body it never finishes (the API
 *   server keeps the seat while it reads the body), so every request of khook, running as that
 *   ServiceAccount, is answered `429 Too Many Requests` by APF itself;
 * - when khook says it waits for the API server (429), the test drops its request, the seat is
 *   free, and the spec, with no `retries:`, converges in one run.
 *
 * - etcd without a quorum: the cluster runs two etcd members and the API server talks to one;
 *   freezing the other (SIGSTOP) leaves it unable to commit or serve a consistent read. khook's
 *   apply reads first, and that read goes unanswered until khook's own timeout ("no response") or
 *   the API server's (504); a write would get `etcdserver: request timed out` (kubectl create does,
 *   on this cluster). khook says it waits, the member is thawed, and the spec converges in one run.
 *
 * What a real part here cannot produce, and is therefore covered by unit tests only
 * (test/unit/transient.test.ts):
 * - a 429 WITHOUT Retry-After: the API server's own overload answers (APF and the older
 *   max-in-flight filter) always carry a Retry-After header; the 429 it sends without one is the
 *   eviction API's (a PodDisruptionBudget), which khook never calls.
 * - the `etcdserver: request timed out` line itself, from khook: the apply step reads before it
 *   writes, and that read times out first (above).
 * - `etcdserver: leader changed`: it answers a write that is in flight at the moment etcd's leader
 *   changes; no test can put khook's write at that moment without a race.
 *
 * The test acts when khook prints that it waits, never after a sleep.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import { describe, test } from "node:test";
import { freezeEtcdPeers, thawEtcdPeers } from "../harness/index.js";
import { privateCluster } from "../harness/private-cluster.js";
import {
  applyStep,
  cliEnv,
  cm,
  khookSpec,
  outputMatches,
  parseRun,
  specDir,
  startKhook,
  stepOf,
} from "./support/khook-cli.js";

const { state, kubectl } = privateCluster("overload", {
  // APF on, with a server-wide concurrency small enough that a priority level of one share gets one seat.
  apiserverFlags: [
    "--enable-priority-and-fairness=true",
    "--max-requests-inflight=100",
    "--max-mutating-requests-inflight=50",
  ],
  // Two etcd members, the API server talking to one: freezing the other takes the quorum away.
  etcdMembers: 2,
});

/** A ServiceAccount with cluster-admin (not system:masters, which APF exempts), its token, and a kubeconfig for it. */
async function tenant(ns: string, name: string): Promise<{ token: string; kubeconfig: string; ca: Buffer }> {
  await kubectl(["create", "serviceaccount", name, "-n", ns]);
  await kubectl([
    "create",
    "clusterrolebinding",
    `${ns}-${name}`,
    "--clusterrole=cluster-admin",
    `--serviceaccount=${ns}:${name}`,
  ]);
  const token = await kubectl(["create", "token", name, "-n", ns, "--duration=1h"]);
  const caData = /certificate-authority-data: (\S+)/.exec(fs.readFileSync(state().kubeconfig, "utf8"))![1]!;
  const kubeconfig = path.join(state().dir, `${name}.kubeconfig`);
  fs.writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `- name: c\n  cluster:\n    server: ${state().server}\n    certificate-authority-data: ${caData}`,
      "users:",
      `- name: ${name}\n  user:\n    token: ${token}`,
      "contexts:",
      `- name: ${name}\n  context:\n    cluster: c\n    user: ${name}`,
      `current-context: ${name}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  return { token, kubeconfig, ca: Buffer.from(caData, "base64") };
}

/** A priority level of one seat that rejects what does not fit, and a FlowSchema sending `ns:name`'s requests to it. */
function oneSeatFor(ns: string, name: string): string {
  const level = {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name: `${ns}-one-seat` },
    spec: {
      type: "Limited",
      limited: {
        nominalConcurrencyShares: 1,
        lendablePercent: 0,
        borrowingLimitPercent: 0,
        limitResponse: { type: "Reject" },
      },
    },
  };
  const schema = {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name: `${ns}-${name}` },
    spec: {
      priorityLevelConfiguration: { name: `${ns}-one-seat` },
      matchingPrecedence: 50,
      distinguisherMethod: { type: "ByUser" },
      rules: [
        {
          subjects: [{ kind: "ServiceAccount", serviceAccount: { name, namespace: ns } }],
          resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"] }],
          nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
        },
      ],
    },
  };
  return JSON.stringify({ apiVersion: "v1", kind: "List", items: [level, schema] });
}

interface Answer {
  status: number;
  flowSchemaUid: string;
  retryAfter: string | undefined;
}

/** One request as the tenant, no retries: its status, and which FlowSchema APF classified it by. */
function ask(token: string, ca: Buffer, p: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${state().server}${p}`,
      { ca, headers: { authorization: `Bearer ${token}` }, timeout: 30_000 },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            flowSchemaUid: String(res.headers["x-kubernetes-pf-flowschema-uid"] ?? ""),
            retryAfter: res.headers["retry-after"] as string | undefined,
          }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${p} timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/**
 * Holds the tenant's one seat: a create whose body never finishes arriving. The API server
 * dispatches it (APF takes the seat) as soon as its headers are in, then waits for the body.
 */
function holdSeat(token: string, ca: Buffer, ns: string): { release: () => void } {
  const body = JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "seat-holder" } });
  const req = https.request(`${state().server}/api/v1/namespaces/${ns}/configmaps`, {
    method: "POST",
    ca,
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    },
  });
  req.on("error", () => undefined); // released by destroying it
  req.write(body.slice(0, 10));
  return { release: () => req.destroy() };
}

/** Asks until `holds` is true of the answer (APF digests new objects, and dispatches the holder, in its own time). */
async function askUntil(
  token: string,
  ca: Buffer,
  p: string,
  what: string,
  holds: (a: Answer) => boolean,
): Promise<Answer> {
  let last: Answer | undefined;
  for (let i = 0; i < 600; i++) {
    last = await ask(token, ca, p);
    if (holds(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what} never happened; last answer: ${JSON.stringify(last)}`);
}

describe("overload: the API server answers 429 (API Priority and Fairness)", { timeout: 600_000 }, () => {
  test("khook waits for a seat, without retries:, and the spec converges in one run once it is free", async (t) => {
    const ns = "overload-1";
    await kubectl(["create", "namespace", ns]);
    const who = await tenant(ns, "tenant");
    await kubectl(["apply", "-f", "-"], oneSeatFor(ns, "tenant"));
    const schemaUid = await kubectl(["get", "flowschema", `${ns}-tenant`, "-o", "jsonpath={.metadata.uid}"]);
    const probe = `/api/v1/namespaces/${ns}/configmaps`;
    await askUntil(
      who.token,
      who.ca,
      probe,
      "APF classifying the tenant's requests by the test's FlowSchema",
      (a) => a.flowSchemaUid === schemaUid,
    );

    const seat = holdSeat(who.token, who.ca, ns);
    t.after(() => seat.release());
    const refused = await askUntil(who.token, who.ca, probe, "a 429 while the seat is held", (a) => a.status === 429);
    assert.ok(refused.retryAfter !== undefined, "APF's 429 carries Retry-After");

    const { file } = specDir(khookSpec("overload", applyStep("first", cm("first", ns), "    timeout: 10m\n")));
    const run = startKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(who.kubeconfig) });
    await outputMatches(run, /waiting for the API server \(429 TooManyRequests\); retrying until \d\d:\d\d:\d\d/);
    seat.release();
    const r = await run.done;
    assert.equal(r.code, 0, r.stderr);
    const step = stepOf(parseRun(r), "first") as ReturnType<typeof stepOf> & { transientRetries: number };
    assert.deepEqual([step.status, step.attempts], ["ok", 1]);
    assert.ok(step.transientRetries >= 1, JSON.stringify(step));
    assert.equal((r.stderr.match(/waiting for the API server/g) ?? []).length, 1, `one waiting line:\n${r.stderr}`);
    assert.match(r.stderr, /the API server cleared after .* \(\d+ transient retr(y|ies)\); going on/);
    assert.equal(await kubectl(["get", "configmap", "first", "-n", ns, "-o", "jsonpath={.data.a}"]), "1");
  });
});

describe("etcd without a quorum: the API server cannot commit or read", { timeout: 600_000 }, () => {
  test("khook waits for the API server, without retries:, and the spec converges in one run once etcd has its quorum again", async (t) => {
    const ns = "quorum-1";
    await kubectl(["create", "namespace", ns]);
    const { file } = specDir(khookSpec("quorum", applyStep("first", cm("first", ns), "    timeout: 10m\n")));
    freezeEtcdPeers(state());
    t.after(() => thawEtcdPeers(state()));
    const run = startKhook(["apply", "-f", file, "-o", "json"], { env: cliEnv(state().kubeconfig) });
    // The apply reads first, and a read goes unanswered until a timeout (khook's own, or the API
    // server's 504): the line names whichever comes first. Writes get "etcdserver: request timed out".
    await outputMatches(
      run,
      /\[first\] waiting for the API server \((no response|etcdserver: request timed out|Timeout: request did not complete within the allotted timeout)\); retrying until \d\d:\d\d:\d\d/,
    );
    thawEtcdPeers(state());
    const r = await run.done;
    assert.equal(r.code, 0, r.stderr);
    const step = stepOf(parseRun(r), "first") as ReturnType<typeof stepOf> & { transientRetries: number };
    assert.deepEqual([step.status, step.attempts], ["ok", 1]);
    assert.ok(step.transientRetries >= 1, JSON.stringify(step));
    assert.match(r.stderr, /\[first\] the API server cleared after .* \(\d+ transient retr(y|ies)\); going on/);
    assert.equal(await kubectl(["get", "configmap", "first", "-n", ns, "-o", "jsonpath={.data.a}"]), "1");
  });
});
