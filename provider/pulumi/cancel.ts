/**
 * Ctrl-C and termination in the dynamic provider's process.
 *
 * Two things reach the provider when someone stops a `pulumi up`:
 *  - the first Ctrl-C: the engine stops starting resources and sends the
 *    provider a `Cancel` call, then waits for the operations in flight;
 *  - a second Ctrl-C, the end of the command, or a CI runner's kill: the
 *    engine interrupts the provider's process group (SIGINT; a SIGTERM from
 *    elsewhere is treated alike) and kills it 5 s later.
 *
 * Either way every apply and destroy in flight is aborted through one signal:
 * the engine stops starting steps, aborts running attempts (helm and other
 * children get SIGTERM, then SIGKILL after 5 s), writes the journal
 * `cancelled`, and once those children have exited the handler rejects with a
 * partial state, so the next `pulumi up` resumes. After a
 * process signal, the process exits as soon as those runs have settled, well
 * inside the engine's grace; a second signal exits at once.
 *
 * About `Cancel`: @pulumi/pulumi's Node.js dynamic provider answers it and
 * does nothing (its handlers are bound when its gRPC server starts, before any
 * khook code loads). khook therefore watches the server's lookup of the
 * `Cancel` method in the @grpc/grpc-js copy the dynamic provider itself
 * loaded. That is a private method of grpc-js; when it is not there, nothing
 * is patched and the first Ctrl-C waits for the run as for any dynamic
 * resource (the second one still cancels it cleanly).
 */
import { createRequire } from "node:module";
import type * as ExecModule from "../tools/exec.js";

const CANCEL_METHOD = "/pulumirpc.ResourceProvider/Cancel";
const SIGNALS = ["SIGINT", "SIGTERM"] as const;

export class Cancellation {
  private controller = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** What stopped the runs, for messages: "SIGINT", "SIGTERM" or "Cancel". */
  reason: string | undefined;

  /**
   * `childrenSettled`: resolves once the processes the runs started have exited (tools/exec.ts).
   * Required on use: a provider process that starts no tool (a preview, a no-op up) never loads
   * node:child_process, and one that started some has the module already, with its tools in it.
   */
  constructor(
    private readonly childrenSettled: () => Promise<void> = () =>
      (require("../tools/exec.js") as typeof ExecModule).toolsSettled(),
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * The run, counted as in flight until it settles. After a cancellation it is over only once the
   * tools it started (helm, kustomize) have exited too: the engine leaves an aborted attempt at
   * once, and a helm finishing its own SIGTERM shutdown must not outlive the Ctrl-C that stopped it.
   */
  track<T>(run: Promise<T>): Promise<T> {
    const whole = run.finally(() => (this.controller.signal.aborted ? this.childrenSettled() : undefined));
    this.inFlight.add(whole);
    const done = (): void => void this.inFlight.delete(whole);
    whole.then(done, done);
    return whole;
  }

  /** Aborts every run in flight (and any started later: the command is being stopped). */
  cancel(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.reason = reason;
    this.controller.abort(new Error(`cancelled (${reason})`));
  }

  /** Resolves once nothing is in flight. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** For tests: a fresh state. */
  reset(): void {
    this.controller = new AbortController();
    this.reason = undefined;
    this.inFlight.clear();
  }
}

/** The process's one cancellation. */
export const cancellation = new Cancellation();

let installed = false;

/**
 * Installs the signal handlers and the `Cancel` watch, once per process.
 * `exit` is how the process ends after a signal (tests pass their own).
 */
export function installCancellation(exit: (signal: NodeJS.Signals) => void = exitBySignal): void {
  if (installed) return;
  installed = true;
  let received = 0;
  for (const sig of SIGNALS) {
    process.on(sig, () => {
      received++;
      if (received > 1) return exit(sig);
      cancellation.cancel(sig);
      void cancellation.settled().then(() => setImmediate(() => exit(sig)));
    });
  }
  watchCancelCalls(() => cancellation.cancel("Cancel"));
}

/** Ends the process the way the signal would have without a handler. */
function exitBySignal(sig: NodeJS.Signals): void {
  for (const s of SIGNALS) process.removeAllListeners(s);
  process.kill(process.pid, sig);
}

interface GrpcServerPrototype {
  _retrieveHandler?: (path: string) => unknown;
  __khookCancelWatch?: true;
}

/**
 * Calls `onCancel` whenever the gRPC server of this process looks up the
 * provider's `Cancel` method. Returns whether the watch is in place.
 */
export function watchCancelCalls(onCancel: () => void, from: string | undefined = require.main?.filename): boolean {
  if (from === undefined) return false;
  let proto: GrpcServerPrototype | undefined;
  try {
    proto = (createRequire(from)("@grpc/grpc-js") as { Server?: { prototype?: GrpcServerPrototype } }).Server
      ?.prototype;
  } catch {
    return false;
  }
  const original = proto?._retrieveHandler;
  if (proto === undefined || typeof original !== "function") return false;
  if (proto.__khookCancelWatch) return true;
  proto.__khookCancelWatch = true;
  proto._retrieveHandler = function (this: unknown, path: string) {
    if (path === CANCEL_METHOD) onCancel();
    return original.call(this, path);
  };
  return true;
}
