import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { allQueued, bulkBodies, type BulkKind } from './bodies.js';
import { CeilingRows, createScratchTable, dropScratch, lastPosition, storedRowsAfter, writableColumns, type Template, type WriteMethod } from './ceiling-rows.js';
import { interrupted } from './children.js';
import { machineBusySeconds, treeCpuSeconds } from './cpu.js';
import { table } from './report.js';
import { setPhase } from './rss.js';
import type { Account } from './service.js';
import { say } from './settings.js';

/*
 * The raw write ceiling: PostgreSQL alone storing the rows the service stores, as fast as it can on
 * this machine. Per bulk kind, the rows one bulk request of the service wrote (read back from its
 * `events` table) are repeated with fresh event ids and stream names into a copy of that table
 * (CREATE TABLE ... LIKE events INCLUDING ALL: columns, defaults, identity, generated columns,
 * every index), in a scratch schema of the same server, by 2 connections at once (both cores), in
 * statements of 1,000 rows, each its own transaction, committed durably (synchronous_commit on).
 * Two ways: a multi-row INSERT ... VALUES sent by this process, and COPY FROM a file the server
 * reads itself; the better one is the kind's ceiling. None of the service's work is in it: no HTTP,
 * no validation, no stream locks or head lookups, no idempotency.
 */

export type { WriteMethod };

export interface WriteCeilingRow {
  kind: BulkKind;
  method: WriteMethod;
  rows: number;
  seconds: number;
  rowsPerSec: number;
  /** Bytes of a row as sent: its SQL literal (INSERT) or its COPY line. */
  bytesPerRow: number;
  cpuCores: { postgres: number | null; bench: number; other: number | null };
}

export interface WriteCeilings {
  rows: WriteCeilingRow[];
  /** The better method of each kind. */
  best: Record<BulkKind, { rowsPerSec: number; method: WriteMethod }>;
  /** The server's durability settings during the measure. */
  server: string;
}

/** Event types of the store, by the bulk kind whose rows stand for them in a mixed store. */
const kindOfType: Record<string, BulkKind> = {
  UserUpserted: 'users',
  ProfilesMerged: 'users',
  EventTracked: 'events',
  ProductSubmitted: 'products',
  ProductEventTracked: 'productsevents',
};

/**
 * The write ceiling of a store holding `byType` events: rows of each kind take 1/ceiling seconds
 * each, so the store's mix takes the sum of its shares' times (a weighted harmonic mean).
 */
export function mixedCeiling(ceilings: WriteCeilings, byType: Map<string, number>): number {
  let rows = 0;
  let seconds = 0;
  for (const [type, count] of byType) {
    const kind = kindOfType[type] ?? 'users';
    rows += count;
    seconds += count / ceilings.best[kind].rowsPerSec;
  }
  return seconds > 0 ? rows / seconds : 0;
}

/** Posts one bulk request of `kind` and reads back the rows the service stored for it. */
async function templateOf(kind: BulkKind, db: pg.Client, serviceUrl: string, account: Account, columns: string[]): Promise<Template> {
  const head = await lastPosition(db);
  const response = await fetch(`${serviceUrl}/v1/accounts/${account.licenseCode}/${kind}/bulk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
    body: bulkBodies(kind, 100)(1_000_000_000),
  });
  const reply = await response.text();
  if (response.status !== 200 || !allQueued(reply)) throw new Error(`ceilings: POST ${kind}/bulk answered ${response.status}: ${reply.slice(0, 300)}`);
  const results = (JSON.parse(reply) as { response?: { trackID?: string }[] }).response ?? [];
  const trackIds = results.map((r) => r.trackID).filter((id) => id !== undefined);
  return storedRowsAfter(db, columns, head, trackIds);
}

/**
 * Waits until nothing has been appended for a second: requests of the scenario before, in flight
 * when its load stopped, are still being stored, and the ceiling is of PostgreSQL alone.
 */
async function settled(db: pg.Client): Promise<void> {
  let last = await lastPosition(db);
  let quietSince = performance.now();
  while (performance.now() - quietSince < 1_000) {
    interrupted.throwIfAborted();
    await sleep(200);
    const now = await lastPosition(db);
    if (now !== last) [last, quietSince] = [now, performance.now()];
  }
}

interface Measured {
  rows: number;
  seconds: number;
  bytes: number;
}

/**
 * Statements of `rowsPerStatement` rows on two connections until `seconds` have passed; the rows
 * committed, and the time from the first statement sent to the last committed.
 */
async function writeFor(source: CeilingRows, clients: pg.Client[], fileDir: string, seconds: number, rowsPerStatement: number): Promise<Measured> {
  const measured: Measured = { rows: 0, seconds: 0, bytes: 0 };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    clients.map(async (client, k) => {
      const file = join(fileDir, `rows-${k}.tsv`);
      while (performance.now() < deadline) {
        interrupted.throwIfAborted();
        const rows = source.next(rowsPerStatement);
        measured.bytes += Buffer.byteLength(rows);
        await source.write(client, rows, file);
        measured.rows += rowsPerStatement;
      }
    }),
  );
  measured.seconds = (performance.now() - started) / 1000;
  return measured;
}

export interface CeilingOptions {
  storeUrl: string;
  serviceUrl: string;
  account: Account;
  pgPid: number | null;
  seconds: number;
  rowsPerStatement: number;
}

/**
 * The write ceilings, one kind at a time: the caller measures each right before the scenario
 * judged against it, so that both see the machine at about the same speed.
 */
export class WriteCeilingMeter {
  readonly rows: WriteCeilingRow[] = [];

  private constructor(
    private readonly options: CeilingOptions,
    private readonly clients: pg.Client[],
    private readonly fileDir: string,
    private readonly columns: string[],
    readonly server: string,
  ) {}

  static async open(options: CeilingOptions): Promise<WriteCeilingMeter> {
    const clients = [new pg.Client({ connectionString: options.storeUrl }), new pg.Client({ connectionString: options.storeUrl })];
    // The server reads the COPY files as its own user (as root: postgres): a directory it may enter.
    const fileDir = await mkdtemp(join(tmpdir(), 'tracking-bench-ceiling-'));
    try {
      await chmod(fileDir, 0o755);
      for (const client of clients) {
        await client.connect();
        await client.query('SET synchronous_commit = on');
      }
      const db = clients[0] as pg.Client;
      const settingsOf = await db.query<{ name: string; setting: string }>(
        "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync', 'wal_sync_method', 'full_page_writes', 'shared_buffers') ORDER BY name",
      );
      const server = settingsOf.rows.map((r) => `${r.name}=${r.setting}${r.name === 'shared_buffers' ? 'x8kB' : ''}`).join(', ');
      return new WriteCeilingMeter(options, clients, fileDir, await writableColumns(db), server);
    } catch (error) {
      for (const client of clients) await client.end().catch(() => undefined);
      await rm(fileDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Both methods for `kind`'s rows; the copy and its dirty pages are gone when it returns. */
  async measure(kind: BulkKind): Promise<void> {
    setPhase(`ceilings: ${kind} rows`);
    const { options, clients } = this;
    const db = clients[0] as pg.Client;
    await settled(db);
    const template = await templateOf(kind, db, options.serviceUrl, options.account, this.columns);
    for (const method of ['INSERT', 'COPY'] as const) {
      // A fresh copy of the table each time, and the dirty pages of whatever ran before flushed first.
      await createScratchTable(db);
      await db.query('CHECKPOINT');
      say(`ceilings: ${kind} rows by ${method}, 2 connections, ${options.rowsPerStatement.toLocaleString('en-US')}-row statements (${options.seconds} s)`);
      const pgBefore = options.pgPid === null ? null : await treeCpuSeconds(options.pgPid);
      const benchBefore = process.cpuUsage();
      const machineBefore = await machineBusySeconds();
      const result = await writeFor(new CeilingRows(method, template), clients, this.fileDir, options.seconds, options.rowsPerStatement);
      const pgAfter = options.pgPid === null ? null : await treeCpuSeconds(options.pgPid);
      const bench = process.cpuUsage(benchBefore);
      const machineAfter = await machineBusySeconds();
      const cores = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : (b - a) / result.seconds);
      const postgres = cores(pgBefore, pgAfter);
      const benchCores = (bench.user + bench.system) / 1e6 / result.seconds;
      const machine = cores(machineBefore, machineAfter);
      this.rows.push({
        kind,
        method,
        rows: result.rows,
        seconds: result.seconds,
        rowsPerSec: result.rows / result.seconds,
        bytesPerRow: result.bytes / result.rows,
        cpuCores: { postgres, bench: benchCores, other: machine === null || postgres === null ? null : Math.max(0, machine - postgres - benchCores) },
      });
    }
    await dropScratch(db);
    // What the ceiling wrote is not left for the next scenario to flush.
    await db.query('CHECKPOINT');
  }

  /** The ceilings of every kind (all measured by now). */
  result(): WriteCeilings {
    const bestOf = (kind: BulkKind): { rowsPerSec: number; method: WriteMethod } => {
      const measured = this.rows.filter((r) => r.kind === kind);
      if (measured.length === 0) throw new Error(`ceilings: ${kind} rows not measured`);
      const better = measured.reduce((a, b) => (b.rowsPerSec > a.rowsPerSec ? b : a));
      return { rowsPerSec: better.rowsPerSec, method: better.method };
    };
    const best = { users: bestOf('users'), events: bestOf('events'), products: bestOf('products'), productsevents: bestOf('productsevents') };
    return { rows: this.rows, best, server: this.server };
  }

  async close(): Promise<void> {
    await dropScratch(this.clients[0] as pg.Client).catch(() => undefined);
    for (const client of this.clients) await client.end().catch(() => undefined);
    await rm(this.fileDir, { recursive: true, force: true });
  }
}

const whole = (value: number): string => Math.round(value).toLocaleString('en-US');
const fixed = (value: number | null, digits: number): string => (value === null ? '-' : value.toFixed(digits));

export function printWriteCeilings(ceilings: WriteCeilings, rowsPerStatement: number): void {
  console.log(`\nraw write ceiling: PostgreSQL alone, 2 connections, ${whole(rowsPerStatement)}-row statements each committed durably, into a copy of \`events\` (LIKE events INCLUDING ALL)`);
  console.log(`server: ${ceilings.server}`);
  const header = ['rows of', 'method', 'rows', 'seconds', 'rows/s', 'bytes/row', 'CPU pg', 'CPU bench', 'CPU other', 'ceiling'];
  const lines = ceilings.rows.map((r) => [
    r.kind,
    r.method,
    whole(r.rows),
    r.seconds.toFixed(1),
    whole(r.rowsPerSec),
    whole(r.bytesPerRow),
    fixed(r.cpuCores.postgres, 2),
    fixed(r.cpuCores.bench, 2),
    fixed(r.cpuCores.other, 2),
    ceilings.best[r.kind].method === r.method ? '<- better' : '',
  ]);
  console.log(table(header, lines));
  console.log('(rows of a kind: those one bulk request of the service stored, repeated with fresh event ids and stream names; INSERT: multi-row');
  console.log(' INSERT ... VALUES sent by the bench; COPY: COPY FROM a file the server reads; CPU bench: building the statements and files)');
}
