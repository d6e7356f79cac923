/**
 * The process helm runs as its post-renderer (see post-renderer.ts): forwards
 * stdin to the khook process over the socket given as the only argument, and
 * prints the answer. Kept dependency-free so it starts fast.
 */
import * as net from "node:net";

function main(socket: string): void {
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

const socket = process.argv[2];
if (socket === undefined) {
  process.stderr.write("usage: post-renderer-client SOCKET\n");
  process.exitCode = 2;
} else main(socket);
