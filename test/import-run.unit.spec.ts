import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ItemResult } from '@tracking-ingestion/sdk';
import { importKeys, lastBatchPieces, probeSizes } from '../src/cli/import-keys.js';
import type { ImportCounts } from '../src/cli/import-progress.js';
import type { ImportRecord } from '../src/cli/import-record.js';
import { RejectedLines } from '../src/cli/import-rejects.js';
import { runImport, type BulkReply, type BulkSink } from '../src/cli/import-run.js';

describe('import: batch keys, rejected lines and sending (unit)', () => {
  describe('batch keys', () => {
    const first = { userId: 'u1', attributes: {} };

    it('names a place in a file: the kind, the first item, the batch and the offset, not the items sent from there', () => {
      const keys = importKeys('users', first);
      const key = keys.at(0, 0);
      expect(key).to.match(/^import-[0-9a-f]{64}$/);
      expect(importKeys('users', structuredClone(first)).at(0, 0)).to.equal(key);
      expect(keys.at(1, 0)).not.to.equal(key);
      expect(keys.at(0, 16)).not.to.equal(key);
      expect(importKeys('events', first).at(0, 0)).not.to.equal(key);
      expect(importKeys('users', { userId: 'u2', attributes: {} }).at(0, 0)).not.to.equal(key);
      const content = keys.ofContent(0, 0, [first]);
      expect(content).not.to.equal(key);
      expect(keys.ofContent(0, 0, [{ userId: 'u3', attributes: {} }])).not.to.equal(content);
    });

    it('cuts a last batch that is not full into pieces of powers of two, its last item alone, and probes those sizes only', () => {
      expect(lastBatchPieces(30)).to.deep.equal([
        [0, 16],
        [16, 24],
        [24, 28],
        [28, 29],
        [29, 30],
      ]);
      expect(lastBatchPieces(1)).to.deep.equal([[0, 1]]);
      expect(lastBatchPieces(2)).to.deep.equal([
        [0, 1],
        [1, 2],
      ]);
      expect(lastBatchPieces(99).map(([start, end]) => end - start)).to.deep.equal([64, 32, 2, 1]);
      expect(probeSizes(100)).to.deep.equal([64, 32, 16, 8, 4, 2, 1]);
      expect(probeSizes(16)).to.deep.equal([8, 4, 2, 1]);
      expect(probeSizes(1)).to.deep.equal([]);
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

  describe('sending', () => {
    /**
     * The service as the importer sees it: a key is bound to the body it first came with (another
     * body gets a conflict, 422), a repeat of that body stores nothing and is a replay, a new key
     * stores its items.
     */
    class IdempotentService implements BulkSink {
      readonly bound = new Map<string, string>();
      readonly stored: Record<string, unknown>[] = [];
      requests = 0;

      async post(items: Record<string, unknown>[], key: string): Promise<BulkReply | 'conflict'> {
        this.requests += 1;
        const body = JSON.stringify(items);
        const known = this.bound.get(key);
        if (known !== undefined && known !== body) return 'conflict';
        if (known === undefined) {
          this.bound.set(key, body);
          this.stored.push(...items);
        }
        const results = items.map((item): ItemResult => (item.bad ? { status: 'error', message: 'bad item' } : { status: 'queued', trackID: String(item.n) }));
        return { results, replayed: known !== undefined };
      }

      failedBatch(): boolean {
        return false;
      }

      stopReason(): string | null {
        return null;
      }
    }

    async function* records(count: number, change: (n: number) => Record<string, unknown> = (n) => ({ n })): AsyncGenerator<ImportRecord> {
      for (let n = 1; n <= count; n += 1) {
        if (n % 100 === 50) yield { line: n, problem: 'unreadable', input: `line ${n}` };
        else yield { line: n, item: n % 250 === 1 ? { n, bad: true } : change(n) };
      }
    }

    async function run(service: BulkSink, input: AsyncIterable<ImportRecord>): Promise<{ counts: ImportCounts; rejectedLines: number[] }> {
      const counts: ImportCounts = { read: 0, accepted: 0, alreadyStored: 0, rejected: 0, failed: 0, bytesRead: 0 };
      const rejectedLines: number[] = [];
      const stopped = await runImport(input, 'events', service, { items: 100, bytes: 5 * 1024 * 1024 }, counts, {
        reject: async (rejection) => {
          rejectedLines.push(rejection.line);
        },
      });
      expect(stopped).to.equal(null);
      return { counts, rejectedLines };
    }

    const storedOnce = (service: IdempotentService, lines: number[]): void => {
      expect(service.stored.map((item) => item.n).sort((a, b) => Number(a) - Number(b))).to.deep.equal(lines);
    };
    const itemLines = (count: number): number[] => Array.from({ length: count }, (_, i) => i + 1).filter((n) => n % 100 !== 50);

    it('takes every result in the file order, the rejected lines with them', async () => {
      const service = new IdempotentService();
      const { counts, rejectedLines } = await run(service, records(1_005));
      // 10 unreadable lines and 5 bad items of 1,005.
      expect(counts).to.deep.equal({ read: 1_005, accepted: 990, alreadyStored: 0, rejected: 15, failed: 0, bytesRead: 0 });
      expect(rejectedLines).to.deep.equal([1, 50, 150, 250, 251, 350, 450, 501, 550, 650, 750, 751, 850, 950, 1001]);
      storedOnce(service, itemLines(1_005));
    });

    it('stores nothing twice when a truncated copy of a file is imported twice, then the whole file', async () => {
      const service = new IdempotentService();
      await run(service, records(230));
      storedOnce(service, itemLines(230));
      const requests = service.requests;
      const again = await run(service, records(230));
      expect(again.counts).to.include({ accepted: 0, alreadyStored: 227, rejected: 3 });
      expect(service.requests - requests).to.equal(requests);
      storedOnce(service, itemLines(230));
      const whole = await run(service, records(250));
      // The copy's 227 items found under their keys (replayed), the 19 lines it lacked new.
      expect(whole.counts).to.include({ read: 250, accepted: 19, alreadyStored: 227, rejected: 4, failed: 0 });
      storedOnce(service, itemLines(250));
      // Copies cut at two more places inside one batch, then the whole file of 420 lines.
      await run(service, records(317));
      await run(service, records(361));
      await run(service, records(420));
      storedOnce(service, itemLines(420));
    });

    it('stores the last line of a copy cut inside it as it was read, and every whole line once', async () => {
      const service = new IdempotentService();
      await run(service, records(230, (n) => (n === 230 ? { n, cut: true } : { n })));
      await run(service, records(250));
      expect(service.stored.filter((item) => item.n === 230)).to.deep.equal([{ n: 230, cut: true }, { n: 230 }]);
      storedOnce(service, [...itemLines(250), 230].sort((a, b) => a - b));
    });

    it('stores the batches of an edited file that changed, again, and a second import of it nothing more', async () => {
      const service = new IdempotentService();
      await run(service, records(250));
      const edited = (n: number): Record<string, unknown> => (n === 120 ? { n, edited: true } : { n });
      const changed = await run(service, records(250, edited));
      const stored = service.stored.length;
      expect(stored).to.equal(247 + 100);
      // Only the batch of the edited line is sent under a content key, and stored: the others replay.
      expect(changed.counts).to.include({ accepted: 100, alreadyStored: 146, rejected: 4 });
      const again = await run(service, records(250, edited));
      expect(service.stored).to.have.length(stored);
      expect(again.counts).to.include({ accepted: 0, alreadyStored: 246, rejected: 4 });
    });
  });
});
