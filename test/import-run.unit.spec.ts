import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ItemResult } from '@tracking-ingestion/sdk';
import { batchKey } from '../src/cli/import-keys.js';
import type { ImportCounts } from '../src/cli/import-progress.js';
import type { ImportRecord } from '../src/cli/import-record.js';
import { RejectedLines } from '../src/cli/import-rejects.js';
import { runImport, type ItemSink } from '../src/cli/import-run.js';

describe('import: batch keys, rejected lines and backpressure (unit)', () => {
  describe('batch keys', () => {
    const items = [{ userId: 'u1', attributes: {} }, { userId: 'u2', attributes: {} }];

    it('derives the same key from the same kind, batch number and items, and another when any of them differs', () => {
      const key = batchKey({ kind: 'users', sequence: 0, items });
      expect(key).to.match(/^import-[0-9a-f]{64}$/);
      expect(batchKey({ kind: 'users', sequence: 0, items: structuredClone(items) })).to.equal(key);
      expect(batchKey({ kind: 'users', sequence: 1, items })).not.to.equal(key);
      expect(batchKey({ kind: 'events', sequence: 0, items })).not.to.equal(key);
      expect(batchKey({ kind: 'users', sequence: 0, items: [...items].reverse() })).not.to.equal(key);
    });
  });

  describe('rejected-lines file', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'import-rejects-'));
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it('is created by the first rejection, one JSON object a line', async () => {
      const rejects = RejectedLines.beside(join(dir, 'users.csv'));
      expect(rejects.path).to.equal(join(dir, 'users.csv.rejected.ndjson'));
      await rejects.write({ line: 2, message: 'bad', input: 'x,y' });
      await rejects.write({ line: 5, message: 'worse', item: { userId: 'u' } });
      expect(await rejects.close()).to.deep.equal({ removedStale: false });
      const lines = (await readFile(rejects.path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as unknown);
      expect(lines).to.deep.equal([
        { line: 2, message: 'bad', input: 'x,y' },
        { line: 5, message: 'worse', item: { userId: 'u' } },
      ]);
    });

    it('is not created when nothing is rejected, and one of an earlier import is removed then', async () => {
      const fresh = RejectedLines.beside(join(dir, 'a.ndjson'));
      expect(await fresh.close()).to.deep.equal({ removedStale: false });
      await stat(fresh.path).then(
        () => expect.fail('the file was created'),
        () => undefined,
      );
      const path = join(dir, 'b.ndjson');
      await writeFile(`${path}.rejected.ndjson`, '{"line":1}\n');
      expect(await RejectedLines.beside(path).close()).to.deep.equal({ removedStale: true });
    });
  });

  describe('backpressure', () => {
    /**
     * A sink like the client with flushIntervalMs 0: items are settled a batch at a time, only
     * once a batch is full (or at flush), and one batch at a time, a tick later.
     */
    class BatchingSink implements ItemSink {
      pending: ((result: ItemResult) => void)[] = [];
      unsettled = 0;
      mostUnsettled = 0;

      constructor(private readonly batchSize: number) {}

      send(item: Record<string, unknown>): Promise<ItemResult> {
        this.unsettled += 1;
        this.mostUnsettled = Math.max(this.mostUnsettled, this.unsettled);
        return new Promise((resolve) => {
          this.pending.push((result) => {
            this.unsettled -= 1;
            resolve(result);
          });
          if (this.pending.length >= this.batchSize) this.cut();
        }).then((): ItemResult => (item.bad ? { status: 'error', message: 'bad item' } : { status: 'queued', trackID: String(item.n) }));
      }

      async flush(): Promise<void> {
        this.cut();
      }

      private cut(): void {
        const batch = this.pending.splice(0);
        setImmediate(() => batch.forEach((settle) => settle({ status: 'queued', trackID: '' })));
      }

      failedBatch(): boolean {
        return false;
      }

      stopReason(): string | null {
        return null;
      }
    }

    async function* records(count: number): AsyncGenerator<ImportRecord> {
      for (let n = 1; n <= count; n += 1) {
        if (n % 100 === 0) yield { line: n, problem: 'unreadable', input: `line ${n}` };
        else yield { line: n, item: n % 250 === 1 ? { n, bad: true } : { n } };
      }
    }

    it('holds at most the window of unsettled items, cuts the last batch with flush, and takes every result in order', async () => {
      const sink = new BatchingSink(10);
      const counts: ImportCounts = { read: 0, accepted: 0, rejected: 0, failed: 0, bytesRead: 0 };
      const rejectedLines: number[] = [];
      const stoppedAt = await runImport(records(1_005), sink, { items: 25, bytes: 1_000_000 }, counts, {
        reject: async (rejection) => {
          rejectedLines.push(rejection.line);
        },
      });
      expect(stoppedAt).to.equal(null);
      expect(sink.mostUnsettled).to.be.at.most(25);
      // 10 unreadable lines and 5 bad items of 1,005.
      expect(counts).to.deep.equal({ read: 1_005, accepted: 990, rejected: 15, failed: 0, bytesRead: 0 });
      expect(rejectedLines.filter((line) => line % 100 !== 0)).to.deep.equal([1, 251, 501, 751, 1001]);
    });
  });
});
