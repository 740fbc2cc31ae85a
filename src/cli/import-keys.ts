import { createHash } from 'node:crypto';
import type { ImportKind } from './import-record.js';

/**
 * The Idempotency-Key of a batch of an import, derived from the file's content: the kind, the
 * line its first item starts on and the items themselves. The same file imported again is cut
 * into the same batches (by count and bytes only), so each batch gets the key it had, and the
 * service replays its reply instead of storing it again. The line keeps two equal batches at
 * different places in a file apart: both are stored, as the file asks.
 */
export function batchKey(kind: ImportKind, firstLine: number, itemsJson: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(`tracking import\n${kind}\n${firstLine}\n`);
  for (const json of itemsJson) hash.update(`${json}\n`);
  return `import-${hash.digest('hex')}`;
}

function digestOf(json: string): string {
  return createHash('sha256').update(json).digest('base64url');
}

/**
 * The keys of the batches of one import. The client hands the key function copies of the items
 * of a batch, not the objects sent, so each item sent is noted here, in order, with its line and
 * a digest of its JSON; a batch's items are matched to the notes in order. Items the client
 * refused to queue (and so are in no batch) are skipped by their digest. Notes are dropped as
 * their batches are keyed: memory follows the items held by the client.
 */
export class BatchKeys {
  private notes: { line: number; digest: string }[] = [];
  private head = 0;

  constructor(private readonly kind: ImportKind) {}

  /** Notes an item as it is sent: `json` is its JSON text, as the client sends it. */
  sent(line: number, json: string): void {
    this.notes.push({ line, digest: digestOf(json) });
  }

  /** The key of a batch of the items noted next. Throws if they were not noted (the batch then fails). */
  keyOf(items: readonly unknown[]): string {
    const jsons = items.map((item) => JSON.stringify(item));
    let firstLine: number | null = null;
    for (const json of jsons) {
      const digest = digestOf(json);
      while (this.head < this.notes.length && this.notes[this.head]?.digest !== digest) this.head += 1;
      const note = this.notes[this.head];
      if (!note) throw new Error(`an item of a ${this.kind} batch was not sent by this import`);
      firstLine ??= note.line;
      this.head += 1;
    }
    if (firstLine === null) throw new Error(`an empty ${this.kind} batch`);
    if (this.head >= 1024 && this.head * 2 >= this.notes.length) {
      this.notes = this.notes.slice(this.head);
      this.head = 0;
    }
    return batchKey(this.kind, firstLine, jsons);
  }
}
