/**
 * Ctrl-C in the provider process (provider/pulumi/cancel.ts): the engine's
 * `Cancel` call and process signals abort the runs in flight, which reject
 * with a resumable partial state. The real CLI test is
 * test/integration/pulumi-cancel.test.ts.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { afterEach, test } from "node:test";
import { Cancellation, cancellation, watchCancelCalls } from "../../provider/pulumi/cancel.js";
import * as handlers from "../../provider/pulumi/handlers.js";
import { Redactor } from "../../provider/redact.js";
import { runTool } from "../../provider/tools/exec.js";
import { isAlive } from "../harness/util.js";
import { fakeRecordOperations, fakeSessions } from "./support/fake-sessions.js";
import { specText, tempSpecDir } from "./support/spec-files.js";

afterEach(() => {
  handlers.setTestHooks();
  cancellation.reset();
});

test("a Cancel call to the provider's gRPC server (as the engine sends on the first Ctrl-C) is seen", async () => {
  // The grpc-js and protocol the dynamic provider itself loads.
  const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
  const from = path.join(pulumiDir, "cmd", "dynamic-provider", "index.js");
  const grpc = require(require.resolve("@grpc/grpc-js", { paths: [from] })) as typeof import("@grpc/grpc-js");
  const rpc = require(path.join(pulumiDir, "proto", "provider_grpc_pb.js")) as {
    ResourceProviderService: import("@grpc/grpc-js").ServiceDefinition;
    ResourceProviderClient: new (
      addr: string,
      creds: unknown,
    ) => { cancel(req: unknown, cb: (e: Error | null) => void): void; close(): void };
  };
  const { Empty } = require("google-protobuf/google/protobuf/empty_pb") as { Empty: new () => unknown };
  let seen = 0;
  assert.equal(
    watchCancelCalls(() => seen++, from),
    true,
    "the watch is in place",
  );
  const server = new grpc.Server();
  server.addService(rpc.ResourceProviderService, {
    cancel: (_call: unknown, cb: (e: null, v: unknown) => void) => cb(null, new Empty()),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  const client = new rpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    await new Promise<void>((resolve, reject) => client.cancel(new Empty(), (e) => (e ? reject(e) : resolve())));
    assert.equal(seen, 1);
  } finally {
    client.close();
    server.forceShutdown();
  }
});

test("cancellation aborts every run in flight, and settles once they are done", async () => {
  const c = new Cancellation();
  let release!: () => void;
  const run = c.track(new Promise<void>((resolve) => (release = resolve)));
  c.cancel("SIGINT");
  assert.equal(c.signal.aborted, true);
  assert.equal(c.reason, "SIGINT");
  let settled = false;
  const waiting = c.settled().then(() => (settled = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, "a run is still in flight");
  release();
  await run;
  await waiting;
  assert.equal(settled, true);
});

test("after a cancellation, a run is over only once the tools it started have exited (helm's own SIGTERM shutdown outlived a Ctrl-C)", async () => {
  const c = new Cancellation();
  // A tool that takes its time to stop, as helm does (it writes the release's status before exiting).
  let pid = 0;
  const tool = runTool("sh", {
    args: ["-c", "trap 'sleep 1; exit 0' TERM; while :; do sleep 0.1; done"],
    redactor: new Redactor(),
    signal: c.signal,
    processGroup: true,
    onSpawn: (p) => (pid = p),
  });
  // The engine returns at once when its signal aborts, whether or not the executor has (engine/attempt.ts).
  const run = c.track(
    new Promise<void>((resolve) => c.signal.addEventListener("abort", () => resolve(), { once: true })),
  );
  while (pid === 0) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 200)); // the trap is set
  c.cancel("Cancel");
  await run;
  assert.equal(isAlive(pid), false, "the tool exited before the run was over");
  assert.equal((await tool).aborted, true);
});

test("a cancelled apply rejects with a partial state that resumes, naming what stopped it", async () => {
  const dir = tempSpecDir({
    "boot.khook.yaml": specText("  - name: w\n    wait: { for: condition=Ready, on: pods }\n"),
  });
  const text = fs.readFileSync(path.join(dir, "boot.khook.yaml"), "utf8");
  let sawSignal: AbortSignal | undefined;
  handlers.setTestHooks({
    sink: () => undefined,
    operations: {
      openSession: fakeSessions().openSession,
      ...fakeRecordOperations(),
      statusOperation: async () => undefined,
      destroyOperation: async () => {
        throw new Error("no");
      },
      applyOperation: async (spec, o) => {
        sawSignal = o.signal;
        await new Promise((resolve) => o.signal!.addEventListener("abort", resolve, { once: true }));
        const step = spec.steps[0]!;
        return {
          mode: "apply",
          status: "cancelled",
          durationMs: 1,
          steps: [
            {
              name: step.name,
              type: step.type,
              status: "failed",
              reason: "cancelled",
              attempts: 1,
              durationMs: 1,
              inputHash: step.inputHash,
              error: "cancelled",
            },
          ],
        } as never;
      },
    },
  });
  const pending = handlers.create({ spec: text, __provider: "code" });
  await new Promise((r) => setImmediate(r));
  assert.ok(sawSignal && !sawSignal.aborted);
  cancellation.cancel("SIGTERM");
  await assert.rejects(pending, (e: handlers.PartialFailure) => {
    assert.equal(e.name, "PartialFailure");
    assert.match(e.message, /was cancelled/);
    assert.match(e.message, /stopped by SIGTERM: running steps were aborted and the journal written/);
    assert.match(e.message, /run `pulumi up` again to resume/);
    assert.equal(e.properties.runStatus, "cancelled");
    return true;
  });
});
