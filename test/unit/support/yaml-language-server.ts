/**
 * The real yaml-language-server (the devDependency, pinned), driven headlessly over LSP stdio
 * as an editor drives it: open a document, wait for its published diagnostics, ask for
 * completions. Every wait is on a message from the server, never on a clock.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

export interface LspDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  message: string;
  severity?: number;
  source?: string;
}

export interface LspCompletionItem {
  label: string;
  insertText?: string;
  textEdit?: { newText: string };
  kind?: number;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class YamlLanguageServer {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private version = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly diagnosticWaiters = new Map<string, (d: LspDiagnostic[]) => void>();
  private stderr = "";

  private constructor() {
    const bin = path.join(
      path.dirname(require.resolve("yaml-language-server/package.json")),
      "bin",
      "yaml-language-server",
    );
    this.child = spawn(process.execPath, [bin, "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk: Buffer) => this.onData(chunk));
    this.child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.child.on("exit", (code) => {
      for (const p of this.pending.values())
        p.reject(new Error(`yaml-language-server exited (${code}): ${this.stderr}`));
      this.pending.clear();
    });
  }

  /** Starts the server with validation and completion on, and no network schema stores. */
  static async start(): Promise<YamlLanguageServer> {
    const server = new YamlLanguageServer();
    await server.request("initialize", {
      processId: process.pid,
      rootUri: null,
      capabilities: {
        textDocument: { completion: { completionItem: { snippetSupport: true } }, publishDiagnostics: {} },
        workspace: { configuration: false },
      },
    });
    server.notify("initialized", {});
    server.notify("workspace/didChangeConfiguration", {
      settings: {
        yaml: {
          validate: true,
          completion: true,
          hover: false,
          schemaStore: { enable: false },
          kubernetesCRDStore: { enable: false },
          schemas: {},
        },
      },
    });
    return server;
  }

  /** Opens a document and resolves with the diagnostics the server publishes for it. */
  async diagnose(uri: string, text: string): Promise<LspDiagnostic[]> {
    const published = new Promise<LspDiagnostic[]>((resolve) => this.diagnosticWaiters.set(uri, resolve));
    this.notify("textDocument/didOpen", { textDocument: { uri, languageId: "yaml", version: ++this.version, text } });
    const diagnostics = await published;
    this.notify("textDocument/didClose", { textDocument: { uri } });
    return diagnostics;
  }

  /** Opens a document, asks for completions at a line/character, and closes it. */
  async complete(uri: string, text: string, line: number, character: number): Promise<LspCompletionItem[]> {
    const published = new Promise<LspDiagnostic[]>((resolve) => this.diagnosticWaiters.set(uri, resolve));
    this.notify("textDocument/didOpen", { textDocument: { uri, languageId: "yaml", version: ++this.version, text } });
    await published; // the document and its schema are loaded
    const result = (await this.request("textDocument/completion", {
      textDocument: { uri },
      position: { line, character },
    })) as { items?: LspCompletionItem[] } | LspCompletionItem[] | null;
    this.notify("textDocument/didClose", { textDocument: { uri } });
    if (result === null) return [];
    return Array.isArray(result) ? result : (result.items ?? []);
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    await this.request("shutdown", null);
    this.notify("exit", null);
    await exited;
  }

  private request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    const reply = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.send({ jsonrpc: "2.0", id, method, params });
    return reply;
  }

  private notify(method: string, params: unknown): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  private send(message: unknown): void {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf("\r\n\r\n");
      if (headerEnd === -1) return;
      const header = this.buffer.subarray(0, headerEnd).toString("ascii");
      const length = Number(/Content-Length: *([0-9]+)/i.exec(header)?.[1] ?? NaN);
      if (this.buffer.length < headerEnd + 4 + length) return;
      const body = this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8");
      this.buffer = this.buffer.subarray(headerEnd + 4 + length);
      this.onMessage(
        JSON.parse(body) as {
          id?: number;
          method?: string;
          params?: unknown;
          result?: unknown;
          error?: { message: string };
        },
      );
    }
  }

  private onMessage(m: {
    id?: number;
    method?: string;
    params?: unknown;
    result?: unknown;
    error?: { message: string };
  }): void {
    if (m.method === undefined && m.id !== undefined) {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error) p?.reject(new Error(m.error.message));
      else p?.resolve(m.result);
      return;
    }
    if (m.method === "textDocument/publishDiagnostics") {
      const { uri, diagnostics } = m.params as { uri: string; diagnostics: LspDiagnostic[] };
      const waiter = this.diagnosticWaiters.get(uri);
      if (waiter) {
        this.diagnosticWaiters.delete(uri);
        waiter(diagnostics);
      }
      return;
    }
    // Requests from the server (client/registerCapability, window/workDoneProgress/create, ...): acknowledge.
    if (m.method !== undefined && m.id !== undefined) this.send({ jsonrpc: "2.0", id: m.id, result: null });
  }
}

/** The spec text with its first-line modeline pointing at a local schema file (no network). */
export function withLocalSchema(text: string, schemaFile: string): string {
  const modeline = `# yaml-language-server: $schema=${pathToFileURL(schemaFile).href}`;
  const lines = text.split("\n");
  if (/^#\s*yaml-language-server:\s*\$schema=/.test(lines[0] ?? "")) lines[0] = modeline;
  else lines.unshift(modeline);
  return lines.join("\n");
}
