/**
 * The process's stdout and stderr as the commands that never run a step write them (validate,
 * graph, schema, version: main.ts chooses): with `fs.writeSync` on the descriptor until something
 * needs Node's stream itself.
 *
 * Why: `process.stdout` is made on first use, and making it loads Node's stream modules and its tty
 * or net module: 1.2 ms to a file and 2 ms to a pipe of a 35 ms `khook validate`, and as much again
 * for stderr, which a command that succeeds never writes. Node's stream writes files and terminals
 * synchronously on POSIX, as this does. On a pipe it writes asynchronously: what a slow reader has
 * not taken waits in memory while the event loop runs. These commands have nothing else to run and
 * cannot exit before the reader has taken their output either way, so waiting in the write instead
 * changes nothing they do. The stream takes over where a synchronous write cannot do its work:
 * - a descriptor someone else made non-blocking answers EAGAIN: from there on every write goes
 *   through the stream, which waits for the reader (the order of the output is kept: what came
 *   before was written whole);
 * - isTTY and columns are the stream's.
 * A reader that went away (EPIPE) is reported to the 'error' listeners, as the stream reports it.
 */
import fs from "node:fs";

/** What Output needs of a stream: Node's streams and this both fit. */
export interface OutputSink {
  write(text: string): unknown;
  on(event: "error", listener: (e: NodeJS.ErrnoException) => void): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export class ProcessOutput implements OutputSink {
  private stream: NodeJS.WriteStream | undefined;
  /** Once a write has gone through the stream, every later one does, so they stay in order. */
  private throughStream = false;
  private readonly errorListeners: ((e: NodeJS.ErrnoException) => void)[] = [];

  constructor(
    private readonly fd: number,
    private readonly openStream: () => NodeJS.WriteStream,
  ) {}

  write(text: string): boolean {
    if (this.throughStream) return this.real().write(text);
    const bytes = Buffer.from(text, "utf8");
    let written = 0;
    try {
      while (written < bytes.length) written += fs.writeSync(this.fd, bytes, written);
    } catch (e) {
      const error = e as NodeJS.ErrnoException;
      if (error.code !== "EAGAIN") {
        this.report(error);
        return false;
      }
      this.throughStream = true;
      return this.real().write(bytes.subarray(written));
    }
    return true;
  }

  on(event: "error", listener: (e: NodeJS.ErrnoException) => void): this {
    this.errorListeners.push(listener);
    this.stream?.on(event, listener);
    return this;
  }

  get isTTY(): boolean {
    return this.real().isTTY === true;
  }

  get columns(): number | undefined {
    return this.real().columns;
  }

  private real(): NodeJS.WriteStream {
    if (this.stream === undefined) {
      this.stream = this.openStream();
      for (const listener of this.errorListeners) this.stream.on("error", listener);
    }
    return this.stream;
  }

  /** As a stream does: to the 'error' listeners, and thrown when there are none. */
  private report(error: NodeJS.ErrnoException): void {
    if (this.errorListeners.length === 0) throw error;
    for (const listener of this.errorListeners) listener(error);
  }
}
