import type { Connection, Submittable } from 'pg';
import type { Db } from './runner/projection.js';

/**
 * `COPY ... FROM STDIN` over a pg connection: the text is sent as CopyData messages once the server
 * asks for it. pg runs any object with `submit` as a query (its Submittable); the handlers below are
 * those it calls for the messages of a COPY. Resolves to the rows copied.
 */

/** The CopyData methods of pg's Connection, which its type declarations leave out. */
interface CopyingConnection {
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
  sendCopyFail(message: string): void;
}

function isCopying(connection: Connection): connection is Connection & CopyingConnection {
  const c = connection as Connection & Partial<CopyingConnection>;
  return typeof c.sendCopyFromChunk === 'function' && typeof c.endCopyFrom === 'function' && typeof c.sendCopyFail === 'function';
}

class CopyFromStdin implements Submittable {
  /** Set by pg's query(): called once with the outcome (also when the connection fails). */
  callback: ((error: Error | null) => void) | undefined;
  rowCount = 0;
  private failed: Error | null = null;
  private settled = false;

  constructor(
    private readonly statement: string,
    private readonly chunks: readonly Buffer[],
    private readonly done: (error: Error | null, rows: number) => void,
  ) {}

  submit(connection: Connection): void {
    connection.query(this.statement);
  }

  handleCopyInResponse(connection: Connection): void {
    if (!isCopying(connection)) throw new Error('this pg version has no COPY FROM STDIN messages');
    for (const chunk of this.chunks) connection.sendCopyFromChunk(chunk);
    connection.endCopyFrom();
  }

  handleCommandComplete(message: { text?: string }): void {
    // "COPY <rows>"
    this.rowCount = Number(message.text?.split(' ')[1] ?? 0);
  }

  handleError(error: Error): void {
    // The server follows its error with ReadyForQuery; a lost connection does not.
    this.failed = error;
    this.settle();
  }

  handleReadyForQuery(): void {
    this.settle();
  }

  // A COPY FROM answers none of these; pg may still call them on a stray message.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.callback?.(this.failed);
    this.done(this.failed, this.rowCount);
  }
}

/** Runs `statement` (a `COPY <table> (<columns>) FROM STDIN`) with `text` as its data. */
export function copyFromStdin(db: Db, statement: string, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const copy = new CopyFromStdin(statement, [Buffer.from(text, 'utf8')], (error, rows) => (error ? reject(error) : resolve(rows)));
    db.query(copy);
  });
}
