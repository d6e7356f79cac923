/**
 * A server on loopback that accepts TCP connections and never answers: what a cluster whose load
 * balancer has no healthy backend, or a half-started API server, looks like to a client. Real
 * sockets, no fake transport: the client's own connection and handshake bounds meet it.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface SilentServer {
  readonly port: number;
  /** `https://127.0.0.1:<port>` (or `http://`): what a kubeconfig names. */
  readonly url: string;
  /** How many connections it accepted (and left unanswered). */
  accepted(): number;
  close(): Promise<void>;
}

/** `scheme` is only the URL's: the listener is the same, and it is what the client's bounds meet (https: its handshake; http: its first response). */
export async function silentServer(scheme: "https" | "http" = "https"): Promise<SilentServer> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `${scheme}://127.0.0.1:${port}`,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A kubeconfig file for `server` with the context `context` (a token user; nothing is ever checked). */
export function kubeconfigFor(server: string, context: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "khook-silent-"));
  const file = path.join(dir, "kubeconfig");
  fs.writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]`,
      "users: [{name: u, user: {token: not-a-secret}}]",
      `contexts: [{name: ${context}, context: {cluster: c, user: u}}]`,
      `current-context: ${context}`,
      "",
    ].join("\n"),
  );
  return file;
}
