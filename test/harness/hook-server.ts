/**
 * A real HTTP hook server on loopback implementing the Scoby hooks v1 contract
 * (seed 003), for tests and benchmarks. Its behaviour is a queue of answers per
 * phase (the last one repeats); it records every request, headers included.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type HookBehaviour =
  /** 200 with the children changed by `change` (or no body when it is absent). */
  | {
      kind: "ok";
      change?: (children: Record<string, Record<string, unknown>>) => Record<string, Record<string, unknown>>;
    }
  /** A non-2xx error answer in the contract's shape. */
  | { kind: "error"; status?: number; message: string; permanent?: boolean; continue?: boolean };

export interface RecordedRequest {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: {
    phase: string;
    object: unknown;
    children: Record<string, Record<string, unknown>>;
    context: Record<string, unknown>;
  };
}

export class HookServer {
  readonly requests: RecordedRequest[] = [];
  private readonly plans = new Map<string, HookBehaviour[]>();
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<HookServer> {
    const server = http.createServer();
    const hs = new HookServer(server);
    server.on("request", (req, res) => hs.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    return hs;
  }

  get url(): string {
    const a = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${a.port}/hook`;
  }

  /** Answers for `phase`, in order; the last one repeats. */
  on(phase: string, ...answers: HookBehaviour[]): this {
    this.plans.set(phase, answers);
    return this;
  }

  count(phase?: string): number {
    return this.requests.filter((r) => phase === undefined || r.body.phase === phase).length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedRequest["body"];
      this.requests.push({ path: req.url ?? "", headers: req.headers, body });
      const plan = this.plans.get(body.phase) ?? [{ kind: "ok" }];
      const answer = plan.length > 1 ? plan.shift()! : plan[0]!;
      if (answer.kind === "ok") {
        if (answer.change === undefined) {
          res.writeHead(200).end();
          return;
        }
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ children: answer.change(structuredClone(body.children)) }));
        return;
      }
      res.writeHead(answer.status ?? 500, { "content-type": "application/json" }).end(
        JSON.stringify({
          message: answer.message,
          ...(answer.permanent !== undefined ? { permanent: answer.permanent } : {}),
          ...(answer.continue !== undefined ? { continue: answer.continue } : {}),
        }),
      );
    });
  }
}

/** A port on loopback that nothing listens on (bound, then released). */
export async function deadLoopbackUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hook`;
}
