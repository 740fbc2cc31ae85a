import { open, rm, stat, type FileHandle } from 'node:fs/promises';

/** One rejected line: its number, why, and what was read (the line's text, or the item sent). */
export interface Rejection {
  line: number;
  message: string;
  input?: string;
  item?: Record<string, unknown>;
}

/**
 * The rejected-lines file beside the input (`<file>.rejected.ndjson`): one JSON object a line,
 * `{ line, message, input | item }`. It is created by the first rejection only; a file left by an
 * earlier import of the same input is replaced then, or removed when this import rejects nothing.
 * Calls must not overlap (the importer awaits each).
 */
export class RejectedLines {
  private handle: FileHandle | null = null;
  private written = 0;

  constructor(readonly path: string) {}

  static beside(input: string): RejectedLines {
    return new RejectedLines(`${input}.rejected.ndjson`);
  }

  get count(): number {
    return this.written;
  }

  async write(rejection: Rejection): Promise<void> {
    this.handle ??= await open(this.path, 'w');
    await this.handle.write(`${JSON.stringify(rejection)}\n`);
    this.written += 1;
  }

  /** Closes the file; with nothing rejected, removes one an earlier import left (true if it did). */
  async close(): Promise<{ removedStale: boolean }> {
    if (this.handle) {
      await this.handle.close();
      this.handle = null;
      return { removedStale: false };
    }
    const stale = await stat(this.path).then(
      (s) => s.isFile(),
      () => false,
    );
    if (stale) await rm(this.path);
    return { removedStale: stale };
  }
}
