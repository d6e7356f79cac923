/**
 * Transient failures (issue 19 §2): which API server failures are retried within the step's
 * deadline (provider/kube/transient.ts), and how the engine retries them without spending
 * `retries:` (provider/engine/transient-retry.ts). The API server texts below are the ones the local
 * kube-apiserver writes (see test/integration/races.test.ts for them on the real cluster).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApplyAllError } from "../../provider/kube/apply.js";
import { Discovery, staleGroupVersions, UnknownResourceError } from "../../provider/kube/discovery.js";
import type { Transport } from "../../provider/kube/transport.js";
import { waitForCluster } from "../../provider/kube/ready.js";
import { stepOutput } from "../../provider/pulumi/outputs.js";
import { beginRecord, entryFromOutcome, parseRecord, summarizeRecord, withEntry } from "../../provider/state/record.js";
import { apiErrorFromResponse, KubeApiError, KubeConnectionError } from "../../provider/kube/api-errors.js";
import { describeCause, transientCause } from "../../provider/kube/transient.js";
import {
  FIRST_RETRY_MS,
  MAX_RETRY_MS,
  TransientDeadlineError,
  TransientRetries,
  transientDelayMs,
} from "../../provider/engine/transient-retry.js";
import { planOnline } from "../../provider/engine/plan.js";
import { runSpec, type RunEvent, type RunOptions, type RunResult } from "../../provider/engine/run.js";
import {
  noExtras,
  recordingSleep,
  resultOf,
  specFixture,
  StubExecutors,
  type StepFixture,
} from "./support/engine-fixtures.js";

const CM = { resource: { group: "", resource: "configmaps" }, name: "x", namespace: "ns" };
const apiError = (
  status: number,
  reason: string,
  message: string,
  target: object = CM,
  details?: Record<string, unknown>,
) => new KubeApiError(status, reason, message, target, details);

const REFUSED = apiError(
  500,
  "InternalError",
  'Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: Post "https://127.0.0.1:40123/validate?timeout=5s": dial tcp 127.0.0.1:40123: connect: connection refused',
);
const UNKNOWN_CA = apiError(
  500,
  "InternalError",
  'Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: Post "https://127.0.0.1:40123/validate?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority',
);
const DENIED = apiError(400, "BadRequest", 'admission webhook "policy.example.com" denied the request: no');

describe("transient: the classification (provider/kube/transient.ts)", () => {
  test("an admission webhook that could not be called is transient, named with why", () => {
    assert.equal(describeCause(transientCause(REFUSED)!), "admission webhook policy.example.com (connection refused)");
    assert.equal(
      describeCause(transientCause(UNKNOWN_CA)!),
      "admission webhook policy.example.com (x509: certificate signed by unknown authority)",
    );
    const noEndpoints = apiError(
      500,
      "InternalError",
      'Internal error occurred: failed calling webhook "w.example.com": failed to call webhook: Post "https://svc.ns.svc:443/v?timeout=10s": no endpoints available for service "svc"',
    );
    assert.equal(
      describeCause(transientCause(noEndpoints)!),
      "admission webhook w.example.com (no endpoints available for service)",
    );
    const hung = apiError(
      500,
      "InternalError",
      'Internal error occurred: failed calling webhook "w.example.com": failed to call webhook: Post "https://127.0.0.1:1/v?timeout=1s": context deadline exceeded',
    );
    assert.equal(transientCause(hung)!.detail, "timeout");
    const answered500 = apiError(
      500,
      "InternalError",
      'Internal error occurred: failed calling webhook "w.example.com": failed to call webhook: an error on the server ("the webhook\'s backend is not ready") has prevented the request from succeeding (post mutate.v1.k8s.io? "https://127.0.0.1:1/v?timeout=1s")',
    );
    assert.notEqual(transientCause(answered500)!.detail, "timeout", "the URL's ?timeout= is not the reason");
  });

  test("a conversion webhook that could not be called is transient", () => {
    const e = apiError(
      500,
      "InternalError",
      'conversion webhook for example.com/v2, Kind=Widget failed: Post "https://127.0.0.1:4/convert?timeout=30s": dial tcp 127.0.0.1:4: connect: connection refused',
    );
    assert.equal(
      describeCause(transientCause(e)!),
      "conversion webhook for example.com/v2, Kind=Widget (connection refused)",
    );
  });

  test("never retried: a webhook's deliberate denial, 400, 401, 403, 422", () => {
    assert.equal(transientCause(DENIED), undefined);
    // A denial with a 5xx code the webhook chose is still a denial.
    assert.equal(
      transientCause(apiError(500, "InternalError", 'admission webhook "policy.example.com" denied the request: no')),
      undefined,
    );
    for (const [status, reason] of [
      [400, "BadRequest"],
      [401, "Unauthorized"],
      [403, "Forbidden"],
      [422, "Invalid"],
    ] as const) {
      assert.equal(
        transientCause(apiError(status, reason, `failed calling webhook "x": connection refused`)),
        undefined,
        `${status}`,
      );
    }
    assert.equal(transientCause(apiError(404, "NotFound", 'configmaps "x" not found')), undefined);
    assert.equal(transientCause(apiError(409, "AlreadyExists", 'configmaps "x" already exists')), undefined);
    assert.equal(
      transientCause(new Error("job/x failed: BackoffLimitExceeded; logs: connection reset by peer")),
      undefined,
      "a Job's own failure, whatever its logs say",
    );
  });

  test("429 keeps the server's pace from its Retry-After header: the API server's own 429 (APF, max-in-flight) has a plain-text body and the pace only in the header", () => {
    // What kube-apiserver's APF filter writes (test/integration/overload.test.ts sees it on the real one).
    const apf = apiErrorFromResponse(429, undefined, "Too many requests, please try again later.\n", CM, {
      "retry-after": "4",
    });
    assert.equal(transientCause(apf)!.retryAfterMs, 4000);
    assert.equal(describeCause(transientCause(apf)!), "the API server (429 TooManyRequests)");
    // A Status body's own retryAfterSeconds wins; a header that is not a number of seconds is ignored.
    const status = {
      kind: "Status",
      reason: "TooManyRequests",
      message: "slow down",
      details: { retryAfterSeconds: 2 },
    };
    assert.equal(
      transientCause(apiErrorFromResponse(429, status, JSON.stringify(status), CM, { "retry-after": "9" }))!
        .retryAfterMs,
      2000,
    );
    assert.equal(
      transientCause(
        apiErrorFromResponse(429, undefined, "busy", CM, { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" }),
      )!.retryAfterMs,
      undefined,
    );
    assert.equal(transientCause(apiErrorFromResponse(429, undefined, "busy", CM))!.retryAfterMs, undefined);
  });

  test("the API server's 504 from its timeout filter, a Status without its kind, is read as a Status: the waiting line shows its message, not its JSON", () => {
    // What kube-apiserver writes when a request outlives --request-timeout (test/integration/overload.test.ts: etcd without a quorum).
    const body = {
      metadata: {},
      status: "Failure",
      message: "Timeout: request did not complete within the allotted timeout",
      reason: "Timeout",
      details: {},
      code: 504,
    };
    const e = apiErrorFromResponse(504, body, JSON.stringify(body), CM);
    assert.equal(e.apiMessage, "Timeout: request did not complete within the allotted timeout");
    assert.equal(e.reason, "Timeout");
    assert.equal(
      describeCause(transientCause(e)!),
      "the API server (Timeout: request did not complete within the allotted timeout)",
    );
    // Other JSON that is not a Status stays text.
    assert.equal(apiErrorFromResponse(500, { error: "x" }, '{"error":"x"}', CM).apiMessage, '{"error":"x"}');
  });

  test("an unavailable aggregated API, etcd timeouts and leader changes, 429, conflicts and resets are transient", () => {
    const metrics = apiError(503, "ServiceUnavailable", "the server is currently unable to handle the request", {
      resource: { group: "metrics.k8s.io", resource: "pods" },
    });
    assert.equal(
      describeCause(transientCause(metrics)!),
      "aggregated API metrics.k8s.io (the server is currently unable to handle the request)",
    );
    assert.equal(
      transientCause(apiError(500, "InternalError", "etcdserver: request timed out"))!.detail,
      "etcdserver: request timed out",
    );
    assert.equal(
      transientCause(apiError(500, "InternalError", "etcdserver: leader changed"))!.detail,
      "etcdserver: leader changed",
    );
    const paced = transientCause(apiError(429, "TooManyRequests", "too many requests", CM, { retryAfterSeconds: 3 }))!;
    assert.equal(paced.retryAfterMs, 3000);
    assert.equal(transientCause(apiError(429, "TooManyRequests", "too many requests"))!.retryAfterMs, undefined);
    assert.equal(
      transientCause(
        apiError(409, "Conflict", 'Operation cannot be fulfilled on configmaps "x": the object has been modified'),
      )!.subject,
      "a conflicting update",
    );
    const reset = new KubeConnectionError(
      "cannot reach ...",
      "https://127.0.0.1:6443",
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
    );
    assert.equal(transientCause(reset)!.detail, "connection reset");
    const refused = new KubeConnectionError(
      "cannot reach ...",
      "https://127.0.0.1:6443",
      Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    );
    assert.equal(
      transientCause(refused),
      undefined,
      "a cluster that is not there is --wait-for-cluster's case, not a step's",
    );
  });

  test("a kind that is not served yet (a CRD not Established) is transient", () => {
    assert.ok(transientCause(new UnknownResourceError('no matches for kind "Widget" in version "example.com/v1"')));
    const notServed = apiError(404, "NotFound", "the server could not find the requested resource", {
      resource: { group: "example.com", resource: "widgets" },
    });
    assert.equal(describeCause(transientCause(notServed)!), "widgets.example.com to be served (not served yet)");
  });

  test("several objects failing: transient only when every failure is", () => {
    assert.ok(
      transientCause(
        new ApplyAllError(
          [],
          [
            { index: 0, error: REFUSED },
            { index: 1, error: UNKNOWN_CA },
          ],
        ),
      ),
    );
    assert.equal(
      transientCause(
        new ApplyAllError(
          [],
          [
            { index: 0, error: REFUSED },
            { index: 1, error: DENIED },
          ],
        ),
      ),
      undefined,
    );
    // As the apply executor rethrows it: a message for people, the objects' errors as its cause.
    assert.ok(
      transientCause(
        new Error("configmaps ... connection refused", {
          cause: new ApplyAllError([], [{ index: 0, error: REFUSED }]),
        }),
      ),
    );
    assert.equal(
      transientCause(new Error("denied", { cause: new ApplyAllError([], [{ index: 0, error: DENIED }]) })),
      undefined,
    );
  });

  test("text the API server wrote that a tool relayed (helm's stderr) is classified by the same rules", () => {
    const relayed = (text: string) => Object.assign(new Error("helm upgrade failed"), { apiServerText: text });
    assert.equal(
      transientCause(
        relayed(
          'Error: INSTALLATION FAILED: 1 error occurred:\n\t* Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: Post "https://127.0.0.1:1/v": dial tcp 127.0.0.1:1: connect: connection refused',
        ),
      )!.subject,
      "admission webhook policy.example.com",
    );
    assert.equal(
      transientCause(relayed('Error: UPGRADE FAILED: admission webhook "policy.example.com" denied the request: no')),
      undefined,
    );
    assert.equal(
      transientCause(
        relayed(
          'Error: INSTALLATION FAILED: unable to build kubernetes objects from release manifest: resource mapping not found for name: "w" namespace: "" from "": no matches for kind "Widget" in version "example.com/v1"',
        ),
      )!.subject,
      "kind Widget in example.com/v1 to be served",
    );
    assert.equal(
      transientCause(relayed("Error: INSTALLATION FAILED: context deadline exceeded")),
      undefined,
      "helm's own wait running out is not transient",
    );
  });
});

describe("transient: backoff with jitter", () => {
  test("the first retry comes within 250 ms, pauses double and are capped at 1 s; 429 keeps the server's pace", () => {
    for (const r of [0, 0.5, 0.999]) {
      const first = transientDelayMs(1, {}, () => r);
      assert.ok(first > 0 && first <= FIRST_RETRY_MS, `${first}`);
      for (let n = 1; n < 12; n++) assert.ok(transientDelayMs(n, {}, () => r) <= MAX_RETRY_MS);
    }
    assert.equal(
      transientDelayMs(10, {}, () => 1),
      MAX_RETRY_MS,
    );
    assert.ok(transientDelayMs(2, {}, () => 1) > transientDelayMs(1, {}, () => 1));
    assert.equal(
      transientDelayMs(1, { retryAfterMs: 3000 }, () => 0),
      3000,
    );
  });
});

function runOf(
  steps: StepFixture[],
  stubs: StubExecutors,
  extra: Partial<RunOptions> = {},
): Promise<RunResult> & { events: RunEvent[] } {
  const events: RunEvent[] = [];
  const p = runSpec(specFixture(steps), {
    mode: "apply",
    executors: stubs.map,
    context: noExtras,
    onEvent: (e) => events.push(e),
    sleep: recordingSleep().sleep,
    ...extra,
  }) as Promise<RunResult> & { events: RunEvent[] };
  p.events = events;
  return p;
}
const logsOf = (events: RunEvent[], step: string) =>
  events.flatMap((e) => (e.type === "step-log" && e.step === step ? [e.message] : []));

describe("transient: the engine retries within the step's deadline", { timeout: 10_000 }, () => {
  test("a transient failure is retried without spending retries: and the step converges in one attempt", async () => {
    const rec = recordingSleep();
    const stubs = new StubExecutors().on("a", ({ attempt }) => {
      if (attempt <= 3) throw REFUSED;
      return { status: "ok", reason: "applied" };
    });
    const p = runOf([{ name: "a" }], stubs, { sleep: rec.sleep });
    const r = await p;
    const a = resultOf(r, "a");
    assert.deepEqual([a.status, a.attempts, a.transientRetries], ["ok", 1, 3]);
    assert.equal(p.events.filter((e) => e.type === "attempt-failed").length, 0, "no attempt failed");
    assert.equal(rec.sleeps.length, 3);
    assert.ok(rec.sleeps[0]! <= FIRST_RETRY_MS && rec.sleeps.every((ms) => ms <= MAX_RETRY_MS));
    const lines = logsOf(p.events, "a");
    assert.equal(lines.length, 2, lines.join("\n"));
    assert.match(
      lines[0]!,
      /^waiting for admission webhook policy\.example\.com \(connection refused\); retrying until \d\d:\d\d:\d\d$/,
    );
    assert.match(
      lines[1]!,
      /^admission webhook policy\.example\.com cleared after .* \(3 transient retries\); going on$/,
    );
  });

  test("the backoff spaces the starts of tries: a slow try (a helm run) is followed by a shorter pause", async () => {
    let clock = 0;
    const pauses: number[] = [];
    const retries = new TransientRetries({
      now: () => clock,
      sleep: async (ms) => void pauses.push(ms),
      log: () => undefined,
      random: () => 1,
    });
    let tries = 0;
    await retries.run({ signal: new AbortController().signal, deadlineAt: 60_000 }, async () => {
      clock += 600; // each try takes 600 ms
      if (++tries < 4) throw REFUSED;
    });
    assert.deepEqual(
      pauses,
      [0, 0, 400],
      "250 and 500 ms are already spent by the try; 1 s between starts leaves 400 ms",
    );
  });

  test("say it once: one line per distinct cause, not one per try", async () => {
    const stubs = new StubExecutors().on("a", ({ attempt }) => {
      if (attempt <= 4) throw REFUSED;
      if (attempt <= 8) throw UNKNOWN_CA;
    });
    const p = runOf([{ name: "a" }], stubs);
    await p;
    const lines = logsOf(p.events, "a");
    assert.deepEqual(
      lines.map((l) => l.replace(/ until .*| after .*/, "")),
      [
        "waiting for admission webhook policy.example.com (connection refused); retrying",
        "waiting for admission webhook policy.example.com (x509: certificate signed by unknown authority); retrying",
        "admission webhook policy.example.com cleared",
      ],
    );
  });

  test("an executor's line is said once, not once per transient try; a try's own progress lines pass", async () => {
    const stubs = new StubExecutors().on("a", ({ attempt, ctx }) => {
      ctx.log(`upgrading release app: revision ${attempt} (failed) -> 0.1.0`);
      if (attempt <= 3) throw REFUSED;
      ctx.log("1/2 pods ready");
      ctx.log("1/2 pods ready");
    });
    const p = runOf([{ name: "a" }], stubs);
    await p;
    const lines = logsOf(p.events, "a").map((l) => l.replace(/ until .*| after .*/, ""));
    assert.deepEqual(lines, [
      "upgrading release app: revision 1 (failed) -> 0.1.0",
      "waiting for admission webhook policy.example.com (connection refused); retrying",
      "1/2 pods ready",
      "1/2 pods ready",
      "admission webhook policy.example.com cleared",
    ]);
  });

  test("a deliberate denial fails at once: no retry, no waiting line", async () => {
    const stubs = new StubExecutors().on("a", () => {
      throw DENIED;
    });
    const p = runOf([{ name: "a", retries: 0 }], stubs);
    const a = resultOf(await p, "a");
    assert.deepEqual([a.status, a.attempts, a.transientRetries], ["failed", 1, undefined]);
    assert.match(a.error!, /denied the request: no/);
    assert.equal(stubs.started("a"), 1);
    assert.deepEqual(logsOf(p.events, "a"), []);
  });

  test("the deadline: the step fails with the last transient error, saying it still failed at the deadline", async () => {
    let clock = 0;
    const now = () => clock;
    const sleep = async (ms: number) => {
      clock += ms;
    };
    const stubs = new StubExecutors().on("a", () => {
      throw REFUSED;
    });
    const p = runOf([{ name: "a", timeoutMs: 5_000 }], stubs, { now, sleep });
    const a = resultOf(await p, "a");
    assert.equal(a.status, "failed");
    assert.equal(a.attempts, 1);
    assert.match(
      a.error!,
      /failed calling webhook "policy\.example\.com".*connection refused \(InternalError\) — still failing at the step's deadline after waiting .* for admission webhook policy\.example\.com \(connection refused\) \(\d+ transient retries\)/s,
    );
    assert.ok(a.transientRetries! >= 5);
  });

  test("a transient error still failing when the attempt's timer fires is named in the timeout error", async () => {
    const stubs = new StubExecutors().on("a", ({ attempt }) => {
      if (attempt === 1) throw REFUSED;
      return new Promise(() => undefined); // the second try hangs past the deadline
    });
    // A frozen clock leaves room for the retry; the attempt's real timer then fires during the hung try.
    const a = resultOf(
      await runOf([{ name: "a", timeoutMs: 300 }], stubs, { sleep: async () => undefined, now: () => 0 }),
      "a",
    );
    assert.match(a.error!, /^timed out after 300ms; the last transient error: .*connection refused/);
  });

  test("retries: still apply after a transient deadline, each attempt with its own deadline", async () => {
    const retries = new TransientRetries({ now: () => 0, sleep: async () => undefined, log: () => undefined });
    await assert.rejects(
      retries.run({ signal: new AbortController().signal, deadlineAt: 0 }, () => Promise.reject(REFUSED)),
      TransientDeadlineError,
    );
    assert.equal(retries.count, 0, "no time for a retry: none counted");
  });
});

describe("discovery: an unavailable aggregated API", () => {
  const doc = (items: unknown[]) =>
    JSON.stringify({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2", items });
  const configmaps = {
    resource: "configmaps",
    responseKind: { group: "", version: "v1", kind: "ConfigMap" },
    scope: "Namespaced",
    verbs: ["get"],
  };
  const transport = (groups: unknown[]): Transport => {
    const answer = (path: string) =>
      path === "/api"
        ? doc([{ metadata: { name: "" }, versions: [{ version: "v1", resources: [configmaps] }] }])
        : doc(groups);
    return {
      server: "https://127.0.0.1:6443",
      request: async (o) => ({ status: 200, headers: {}, text: answer(o.path) }),
      requestJson: async <T>(o: { path: string }) => JSON.parse(answer(o.path)) as T,
      stream: async () => {
        throw new Error("no streams here");
      },
    };
  };

  test("does not fail the steps that do not use its group; warns once, as kubectl does", async () => {
    const d = new Discovery(
      transport([
        { metadata: { name: "metrics.k8s.io" }, versions: [{ version: "v1beta1", resources: [], freshness: "Stale" }] },
      ]),
    );
    const warnings: string[] = [];
    d.onWarning = (m) => warnings.push(m);
    assert.equal((await d.resolveKind("v1", "ConfigMap")).resource, "configmaps");
    await d.refresh();
    await assert.rejects(d.resolveKind("metrics.k8s.io/v1beta1", "PodMetrics"), UnknownResourceError);
    assert.deepEqual(warnings, [
      "couldn't get resource list for metrics.k8s.io/v1beta1: stale discovery: its APIService is not available; steps that use this API wait for it, the others go on",
    ]);
    assert.deepEqual(
      staleGroupVersions(
        JSON.parse(
          doc([
            {
              metadata: { name: "a.io" },
              versions: [
                { version: "v1", freshness: "Current" },
                { version: "v2", freshness: "Stale" },
              ],
            },
          ]),
        ) as Record<string, unknown>,
      ),
      ["a.io/v2"],
    );
  });
});

describe("--wait-for-cluster: waiting for /readyz (provider/kube/ready.ts)", () => {
  const probing = (answers: ("refused" | "not-ready" | "ok" | "unauthorized")[]): Transport & { probes: string[] } => {
    const probes: string[] = [];
    return {
      probes,
      server: "https://10.0.0.1:6443",
      request: async (o) => {
        probes.push(o.path);
        const a = answers.length > 1 ? answers.shift()! : answers[0]!;
        if (a === "refused")
          throw new KubeConnectionError(
            "cannot reach",
            "https://10.0.0.1:6443",
            Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
          );
        if (a === "not-ready")
          throw apiError(500, "InternalError", "[-]etcd failed: reason withheld", { what: "GET /readyz" });
        if (a === "unauthorized") throw apiError(401, "Unauthorized", "Unauthorized", { what: "GET /readyz" });
        return { status: 200, headers: {}, text: "ok" };
      },
      requestJson: async () => undefined as never,
      stream: async () => {
        throw new Error("no streams here");
      },
    };
  };
  const clock = () => {
    let t = 0;
    return { now: () => t, delayMs: (n: number) => ((t += transientDelayMs(n, {}, () => 1)), 0) };
  };

  test("asks /readyz until it answers ok: one line when waiting starts, one when it is ready", async () => {
    const lines: string[] = [];
    const server = probing(["refused", "refused", "not-ready", "ok"]);
    const c = clock();
    await waitForCluster(server, {
      timeoutMs: 600_000,
      say: (l) => lines.push(l),
      setting: "--wait-for-cluster 10m",
      ...c,
    });
    assert.deepEqual(server.probes, ["/readyz", "/readyz", "/readyz", "/readyz"]);
    assert.equal(lines.length, 2, lines.join("\n"));
    assert.match(
      lines[0]!,
      /^waiting for the API server at https:\/\/10\.0\.0\.1:6443 to be ready \(ECONNREFUSED\); up to \d\d:\d\d:\d\d$/,
    );
    assert.match(lines[1]!, /^the API server at https:\/\/10\.0\.0\.1:6443 is ready after \d+\.\ds$/);
  });

  test("says nothing when the server is ready at once; 401 counts as an answer", async () => {
    const lines: string[] = [];
    const setting = "--wait-for-cluster 1s";
    await waitForCluster(probing(["ok"]), { timeoutMs: 1000, say: (l) => lines.push(l), setting, ...clock() });
    await waitForCluster(probing(["unauthorized"]), {
      timeoutMs: 1000,
      say: (l) => lines.push(l),
      setting,
      ...clock(),
    });
    assert.deepEqual(lines, []);
  });

  test("fails with the last reason when the server is not ready in time", async () => {
    await assert.rejects(
      waitForCluster(probing(["refused", "not-ready"]), {
        timeoutMs: 5_000,
        say: () => undefined,
        setting: "--wait-for-cluster 5s",
        ...clock(),
      }),
      /the API server at https:\/\/10\.0\.0\.1:6443 was not ready within --wait-for-cluster 5s \(\/readyz answered HTTP 500\)/,
    );
  });
});

describe("transient: the record counts the retries per step", () => {
  test("written with the step's entry, read back, and shown by status (0 when none)", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const id = { spec: "s", specHash: "sha256:x", khookVersion: "0" };
    const redactor = { redact: (s: string) => s };
    let record = beginRecord(undefined, id, "apply", now);
    record = withEntry(
      record,
      "a",
      entryFromOutcome(
        { inputHash: "h", status: "ok", reason: "applied", attempts: 1, transientRetries: 7, durationMs: 5 },
        redactor,
        now,
      ),
      now,
    );
    record = withEntry(
      record,
      "b",
      entryFromOutcome({ inputHash: "h", status: "ok", reason: "applied", attempts: 1, durationMs: 5 }, redactor, now),
      now,
    );
    const parsed = parseRecord(JSON.stringify(record));
    assert.ok(parsed.ok);
    assert.equal(parsed.record.steps["a"]!.transientRetries, 7);
    assert.equal("transientRetries" in parsed.record.steps["b"]!, false, "absent when none");
    const summary = summarizeRecord(parsed.record);
    assert.deepEqual(
      summary.steps.map((s) => [s.name, s.transientRetries]),
      [
        ["a", 7],
        ["b", 0],
      ],
    );
  });
});

describe("transient: the Pulumi outputs show the retries", () => {
  test("steps[].transientRetries, 0 when none", () => {
    const spec = specFixture([{ name: "a" }, { name: "b" }]);
    const base = {
      type: "apply" as const,
      status: "ok" as const,
      reason: "applied",
      attempts: 1,
      durationMs: 3,
      inputHash: "h",
    };
    assert.equal(stepOutput(spec, { ...base, name: "a", transientRetries: 4 }).transientRetries, 4);
    assert.equal(stepOutput(spec, { ...base, name: "b" }).transientRetries, 0);
  });
});

describe("transient: plan uses the same classification", () => {
  test("an assess refused by a webhook that could not be called says apply waits for it; a denial does not", async () => {
    const stubs = new StubExecutors()
      .on("refused", ({ kind }) => {
        if (kind === "assess") throw REFUSED;
      })
      .on("denied", ({ kind }) => {
        if (kind === "assess") throw DENIED;
      });
    const steps = await planOnline(
      specFixture([{ name: "refused" }, { name: "denied" }], { state: false }),
      stubs.map,
      noExtras,
    );
    const [refused, denied] = steps;
    assert.equal(refused!.decidedBy, "error");
    assert.match(
      refused!.reason,
      /\(transient: apply waits for admission webhook policy\.example\.com \(connection refused\) until the step's timeout\)$/,
    );
    assert.equal(stubs.started("refused", "assess"), 1, "plan never waits");
    assert.doesNotMatch(denied!.reason, /transient/);
    assert.match(denied!.reason, /denied the request/);
  });
});
