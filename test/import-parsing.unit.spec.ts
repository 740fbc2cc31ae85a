import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvRows, type CsvRow } from '../src/cli/import-csv.js';
import { readLines, type Line } from '../src/cli/import-lines.js';
import { ndjsonRecords } from '../src/cli/import-ndjson.js';
import type { ImportRecord } from '../src/cli/import-record.js';

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('import: reading NDJSON and CSV files (unit)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'import-parsing-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function file(name: string, content: string | Buffer): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, content);
    return path;
  }

  const lines = async (content: string | Buffer, maxLineBytes = 1024): Promise<Line[]> =>
    collect(readLines(await file('lines.txt', content), { maxLineBytes }));

  describe('lines', () => {
    it('numbers lines from 1, drops the CR of CRLF (saying it did) and a leading byte order mark, and reads a last line without a newline', async () => {
      expect(await lines('\ufeffa\r\nb\n\nc')).to.deep.equal([
        { number: 1, text: 'a', crlf: true },
        { number: 2, text: 'b' },
        { number: 3, text: '' },
        { number: 4, text: 'c' },
      ]);
    });

    it('reports a line longer than the limit, keeping an excerpt only, and reads on from the next line', async () => {
      const read = await lines(`ok\n${'x'.repeat(5000)}\nafter\n`, 100);
      expect(read[1]).to.deep.equal({ number: 2, problem: 'line is longer than 100 bytes', text: 'x'.repeat(200), bytes: 5000, quotes: 0 });
      expect(read[2]).to.deep.equal({ number: 3, text: 'after' });
    });

    it('reports a line that is not UTF-8 by its number', async () => {
      const read = await lines(Buffer.concat([Buffer.from('good\n'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), Buffer.from('é\n')]));
      expect(read.map((l) => ('problem' in l ? `${l.number} ${l.problem}` : `${l.number} ${l.text}`))).to.deep.equal([
        '1 good',
        '2 line is not valid UTF-8',
        '3 é',
      ]);
    });

    it('reads lines across read chunks (64 KiB) whole, and reports the bytes read', async () => {
      const long = 'y'.repeat(100_000);
      let bytes = 0;
      const read = await collect(readLines(await file('chunks.txt', `${long}\nz\n`), { maxLineBytes: 200_000, onBytes: (b) => (bytes = b) }));
      expect(read).to.deep.equal([
        { number: 1, text: long },
        { number: 2, text: 'z' },
      ]);
      expect(bytes).to.equal(100_003);
    });
  });

  describe('NDJSON', () => {
    const records = async (content: string): Promise<ImportRecord[]> =>
      collect(ndjsonRecords(readLines(await file('items.ndjson', content), { maxLineBytes: 1024 })));

    it('gives one item a line, numbered by its line, skipping blank lines', async () => {
      expect(await records('{"userId":"u1"}\n\n   \n{"userId":"u2"}\n')).to.deep.equal([
        { line: 1, item: { userId: 'u1' } },
        { line: 4, item: { userId: 'u2' } },
      ]);
    });

    it('rejects a line that is not JSON, or not a JSON object, with the reason and the line as read', async () => {
      const read = await records('{"userId":\n[1,2]\n"text"\nnull\n{"ok":true}\n');
      expect(read.map((r) => ('problem' in r ? `${r.line} ${r.problem.split(':')[0]}` : `${r.line} item`))).to.deep.equal([
        '1 not valid JSON',
        '2 an item must be a JSON object, not an array',
        '3 an item must be a JSON object, not a string',
        '4 an item must be a JSON object, not null',
        '5 item',
      ]);
      expect(read[0]).to.have.property('input', '{"userId":');
    });
  });

  describe('CSV', () => {
    const rows = async (content: string, maxRecordBytes = 1024): Promise<CsvRow[]> =>
      collect(csvRows(readLines(await file('items.csv', content), { maxLineBytes: 1024 }), maxRecordBytes));
    const brief = (row: CsvRow): string =>
      'unclosed' in row ? `${row.line} unclosed: ${row.unclosed}` : 'problem' in row ? `${row.line} problem: ${row.problem}` : `${row.line} ${JSON.stringify(row.cells)}`;

    it('parses quoted fields with commas, doubled quotes and line breaks, numbering a record by its first line', async () => {
      const read = await rows('id,note\n1,"a, b"\n\n2,"say ""hi""\nsecond line"\n3,\n');
      expect(read.map(brief)).to.deep.equal([
        '1 ["id","note"]',
        '2 ["1","a, b"]',
        '4 ["2","say \\"hi\\"\\nsecond line"]',
        '6 ["3",""]',
      ]);
    });

    it('keeps a CR, and the CR of a CRLF, inside a quoted field as data; the CRLF that ends a record is no part of it', async () => {
      const read = await rows('id,note\r\n1,"a\r\nb"\r\n2,"c\rd"\r\n3,"e\r\n\r\nf\r"\r\n4,g\r\n');
      expect(read.map((row) => ('cells' in row ? row.cells : row))).to.deep.equal([['id', 'note'], ['1', 'a\r\nb'], ['2', 'c\rd'], ['3', 'e\r\n\r\nf\r'], ['4', 'g']]);
      expect(read.map((row) => row.line)).to.deep.equal([1, 2, 4, 5, 8]);
    });

    it('rejects a record that does not parse on its own and reads the records around it', async () => {
      const read = await rows('a,b\n1,2\n"bad"x,3\n4,5\n');
      expect(read.map(brief)).to.deep.equal([
        '1 ["a","b"]',
        '2 ["1","2"]',
        '3 problem: not a valid CSV record: Invalid Closing Quote: got "x" instead of delimiter, record delimiter, trimable character (if activated) or comment',
        '4 ["4","5"]',
      ]);
    });

    it('ends at a quote left open at the end of the file, or past the record limit, naming the line it opened on, and reads nothing after it', async () => {
      expect((await rows('a\n1\n"open\nmore\n')).map(brief)).to.deep.equal([
        '1 ["a"]',
        '2 ["1"]',
        '3 unclosed: a quoted field opened on line 3 is not closed at the end of the file',
      ]);
      const resyncable = Array.from({ length: 50 }, (_, i) => `${i},"x"`).join('\n');
      const read = await rows(`a,b\n1,2\n3,"open\n${resyncable}\n`, 100);
      expect(read.map(brief)).to.deep.equal(['1 ["a","b"]', '2 ["1","2"]', '3 unclosed: a quoted field opened on line 3 is not closed within 100 bytes']);
    });

    it('counts the quotes of a line it cannot read, so that a quote it opens is not closed by the next line', async () => {
      const read = await rows(`a,b\n1,"${'x'.repeat(2000)}\n2,"y"\n`, 1024);
      expect(read.map(brief)).to.deep.equal(['1 ["a","b"]', '2 unclosed: a quoted field opened on line 2 is not closed within 1024 bytes']);
      const closed = await rows(`a,b\n1,"${'x'.repeat(2000)}"\n2,"y"\n`, 1024);
      expect(closed.map(brief)).to.deep.equal(['1 ["a","b"]', '2 problem: line is longer than 1024 bytes', '3 ["2","y"]']);
    });

    it('keeps rows of different lengths for the mapping to judge, and parses many records at once the same as one by one', async () => {
      const many = Array.from({ length: 1_200 }, (_, i) => `${i},"v ${i}"`).join('\n');
      const read = await rows(`a,b\n1\n${many}\n`);
      expect(read).to.have.length(1_202);
      expect(brief(read[1] as CsvRow)).to.equal('2 ["1"]');
      expect(brief(read[1_201] as CsvRow)).to.equal('1202 ["1199","v 1199"]');
    });
  });
});
