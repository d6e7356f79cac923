/**
 * The process helm runs as its post-renderer (see post-renderer.ts): forwards
 * stdin to the khook process over its socket, and prints the answer. Kept
 * dependency-free so it starts fast.
 *
 * Two ways in: `node post-renderer-client.js SOCKET` (from an npm install or a
 * checkout, through a two-line shell wrapper), or khook's single executable
 * started through a symlink named POST_RENDERER_NAME, whose socket is the one
 * beside the symlink (no shell, no argument: what helm's --post-renderer runs).
 */
import net from "node:net";

/** The post-renderer executable's file name, in the helm session's private directory. */
export const POST_RENDERER_NAME = "khook-post-renderer";
/** The socket's file name, beside the post-renderer executable. */
export const POST_RENDERER_SOCKET = "post-render.sock";

/** Forwards this process's stdin to khook at `socket` and prints the transformed manifest (or the error). */
export function forwardToKhook(socket: string): void {
  const input: Buffer[] = [];
  process.stdin.on("data", (c: Buffer) => input.push(c));
  process.stdin.on("end", () => {
    const answer: Buffer[] = [];
    const conn = net.createConnection({ path: socket, allowHalfOpen: true }, () => conn.end(Buffer.concat(input)));
    conn.on("data", (c: Buffer) => answer.push(c));
    conn.on("error", (e) => {
      process.stderr.write(`khook post-renderer: cannot reach khook at ${socket}: ${e.message}\n`);
      process.exitCode = 1;
    });
    conn.on("end", () => {
      const all = Buffer.concat(answer);
      if (all.subarray(0, 1).toString() === "O") process.stdout.write(all.subarray(1));
      else {
        process.stderr.write(`${all.subarray(1).toString("utf8")}\n`);
        process.exitCode = 1;
      }
    });
  });
}

if (require.main === module) {
  const socket = process.argv[2];
  if (socket === undefined) {
    process.stderr.write("usage: post-renderer-client SOCKET\n");
    process.exitCode = 2;
  } else forwardToKhook(socket);
}
