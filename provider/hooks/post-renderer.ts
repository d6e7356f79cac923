/**
 * helm charts reach the post-render (and pre-apply) hooks through helm's own
 * `--post-renderer`, which takes the path of an executable: helm pipes the
 * rendered manifest to it and installs what it prints.
 *
 * The executable khook gives helm is a two-line wrapper, written into the
 * run's private (0700) helm home, that forwards the manifest over a Unix socket
 * in the same directory to the khook process. So the hooks run in khook itself,
 * through the same StepHooks as apply: the same ordering, redaction, results,
 * retries and events, and webhooks are still called only from provider/hooks.
 *
 * Wire format, both ways: the payload, then the writer half-closes. The answer
 * starts with one byte, `O` (the transformed manifest follows) or `E` (an error
 * message follows).
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { inSingleExecutable } from "../sea-assets.js";
import { yamlLibrary } from "../dsl/yaml.js";
import { POST_RENDERER_NAME, POST_RENDERER_SOCKET } from "./post-renderer-client.js";

export type ManifestTransform = (manifest: string) => Promise<string>;

export interface PostRenderer {
  /** The executable to pass as `--post-renderer`. */
  readonly executable: string;
  close(): Promise<void>;
}

/** Starts the socket server and writes the wrapper into `dir` (the helm session's private directory). */
export async function startPostRenderer(dir: string, transform: ManifestTransform): Promise<PostRenderer> {
  const socket = path.join(dir, POST_RENDERER_SOCKET);
  // allowHalfOpen: the client half-closes after sending; the answer is written after the (async) hooks ran.
  const server = net.createServer({ allowHalfOpen: true }, (conn) => {
    const chunks: Buffer[] = [];
    conn.on("data", (c: Buffer) => chunks.push(c));
    conn.on("error", () => undefined);
    conn.on("end", () => {
      transform(Buffer.concat(chunks).toString("utf8")).then(
        (out) => conn.end(Buffer.concat([Buffer.from("O"), Buffer.from(out, "utf8")])),
        (e: unknown) =>
          conn.end(Buffer.concat([Buffer.from("E"), Buffer.from((e as Error).message ?? String(e), "utf8")])),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  fs.chmodSync(socket, 0o600);
  const executable = path.join(dir, POST_RENDERER_NAME);
  if (inSingleExecutable()) {
    // The executable itself, under the name that makes it the client (cli/sea.ts): no shell, no Node, no file beside it.
    fs.symlinkSync(process.execPath, executable);
  } else {
    // From dist/provider/hooks/, or from the CLI bundle in dist/provider/cli/: a real file either way.
    const client = path.join(__dirname, "..", "hooks", "post-renderer-client.js");
    fs.writeFileSync(
      executable,
      `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(client)} ${shellQuote(socket)}\n`,
      { mode: 0o700 },
    );
  }
  return {
    executable,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** helm's rendered manifest as objects (helm's `# Source:` comments are dropped). */
export function manifestObjects(manifest: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const doc of yamlLibrary().parseAllDocuments(manifest)) {
    if ("errors" in doc && doc.errors.length > 0)
      throw new Error(`helm's rendered manifest is not valid YAML: ${doc.errors[0]!.message}`);
    const v: unknown = doc.toJS();
    if (v !== null && typeof v === "object" && !Array.isArray(v)) out.push(v as Record<string, unknown>);
  }
  return out;
}

/**
 * The manifest helm reads back: one JSON document per object. helm parses YAML 1.1,
 * where a plain `yes` or `on` is a boolean; JSON keeps every string a string.
 */
export function objectsManifest(objects: readonly Record<string, unknown>[]): string {
  return objects.map((o) => `---\n${JSON.stringify(o)}\n`).join("");
}
