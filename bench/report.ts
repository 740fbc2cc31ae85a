import type { BulkKind } from './bodies.js';
import type { ServerResult } from './servers.js';
import type { Child } from './children.js';

/** A rate over the ceiling it is judged against, measured in the same run. */
export interface VsCeiling {
  /** What the ceiling is: 'hello-world', 'write: users rows', ... */
  ceiling: string;
  ceilingPerSec: number;
  ratio: number;
}

export interface Row {
  scenario: string;
  /** How the service ran: 'PROJECTIONS=off', 'PROJECTIONS=off + worker', 'npm start'; 'baseline' for the hello-world. */
  config: string;
  bulkKind: BulkKind | null;
  /** Responses received in the measured window. */
  responses: number;
  reqPerSec: number;
  itemsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Replies whose body was not the expected one (not every item queued); includes non-2xx. */
  notQueued: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  /** Single items: req/s over the hello-world's; bulk: items/s over the write ceiling of the kind's rows. */
  ceiling: VsCeiling | null;
  /** Single items of the service: req/s over the naive peer's of the same kind, measured last before. */
  peer: VsCeiling | null;
  eventsPerCommit: number | null;
  commitsPerSec: number | null;
  /** CPU used during the measured window, in cores: target Node process, its worker process, PostgreSQL, this process, the rest of the machine. */
  cpuCores: { node: number | null; worker: number | null; postgres: number | null; loadgen: number; other: number | null };
  /**
   * How long the service's projection workers took, once the load stopped, to apply what it had
   * stored (drained false: still behind at the limit); null for the baseline.
   */
  projectionsDrain: { seconds: number; drained: boolean } | null;
}

/** A line of the targets table (targets.ts): what was measured against its goal. */
export interface TargetLine {
  target: string;
  measured: string;
  ceiling: string;
  ratio: number | null;
  goal: string;
  met: boolean | null;
  /** Cores busy with other work on the machine meanwhile: a high value means a noisy figure. */
  otherCores: number | null;
}

/** A projection measurement: one projection, or all four together (the first row of a group). */
export interface ProjectionRow {
  scenario: string;
  events: number;
  seconds: number;
  eventsPerSec: number;
  /** events/s over the catch-up read alone (store.readAll, nothing applied), measured in the same run. */
  vsRead: number | null;
  /** events/s over the raw write ceiling of the store's mix of rows (ceilings.ts), measured in the same run. */
  vsWrite: number | null;
  /** 'yes', or why not (stopped at the time limit). */
  finished: string;
  /**
   * CPU over the group's window, in cores: the Node process running the projections, PostgreSQL,
   * and everything else on the machine (the bench process included); null on the parts of a group.
   */
  cpuCores: { node: number | null; postgres: number | null; other: number | null } | null;
}

/** Time from a POST users answered to GET leads/:id answering 200, under steady ingest. */
export interface VisibilityRow {
  scenario: string;
  /** Events in the store when the scenario started. */
  storeEvents: number;
  probes: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Probes whose lead was not served within the give-up time. */
  notVisible: number;
  probeFailures: string[];
  getsPerProbe: number;
  /** Round trip of one GET leads/:id: the resolution of the samples, with the 5-10 ms poll gap. */
  getP50Ms: number;
  postP50Ms: number;
  ingestReqPerSec: number;
  ingestP50Ms: number;
  ingestP99Ms: number;
  non2xx: number;
  notQueued: number;
  errors: number;
  cpuCores: { node: number | null; postgres: number | null; loadgen: number; other: number | null };
}

const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));
const whole = (value: number): string => Math.round(value).toLocaleString('en-US');

export function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(format)].join('\n');
}

/** Prints machine, settings and the ingest results. */
export function printIngest(machine: Record<string, string | number>, settings: Record<string, string | number>, rows: Row[]): void {
  console.log('\nmachine:', Object.entries(machine).map(([k, v]) => `${k}=${v}`).join(', '));
  console.log('settings:', Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(', '));
  console.log('load generator (autocannon), service, PostgreSQL and baseline share these cores\n');
  const header = ['scenario', 'service runs', 'req/s', 'items/s', 'p50 ms', 'p99 ms', 'non-2xx', 'not queued', 'errors', 'vs ceiling', 'ceiling', 'vs peer', 'ev/commit', 'commits/s', 'CPU node', 'CPU worker', 'CPU pg', 'CPU loadgen', 'CPU other', 'proj. lag s'];
  const lines = rows.map((r) => [
    r.scenario,
    r.config,
    whole(r.reqPerSec),
    whole(r.itemsPerSec),
    fixed(r.p50Ms, 1),
    fixed(r.p99Ms, 1),
    String(r.non2xx),
    String(r.notQueued),
    String(r.errors),
    fixed(r.ceiling?.ratio ?? null, 2),
    r.ceiling?.ceiling ?? '-',
    fixed(r.peer?.ratio ?? null, 2),
    fixed(r.eventsPerCommit, 1),
    r.commitsPerSec === null ? '-' : whole(r.commitsPerSec),
    fixed(r.cpuCores.node, 2),
    fixed(r.cpuCores.worker, 2),
    fixed(r.cpuCores.postgres, 2),
    fixed(r.cpuCores.loadgen, 2),
    fixed(r.cpuCores.other, 2),
    r.projectionsDrain === null ? '-' : `${r.projectionsDrain.drained ? '' : '>'}${r.projectionsDrain.seconds.toFixed(1)}`,
  ]);
  console.log(table(header, lines));
  console.log('(req/s: mean of per-second samples; vs ceiling: single items req/s over the hello-world\'s measured last before, bulk items/s over the raw write');
  console.log(' ceiling of the same kind of rows; vs peer: single items req/s over the naive peer\'s (Express + pg, one INSERT per request) measured last before; CPU in cores over the measured window; not queued includes non-2xx; CPU other: the rest');
  console.log(' of the machine\'s busy time meanwhile: kernel threads (network, io_uring, writeback) and other processes; proj. lag s: how long');
  console.log(' the projections (in the service, or in the worker) took after the load to apply what it stored; the bench waits for them)');
}

/** Failed responses, read model mismatches and log problems; returns true when any response or read model was wrong. */
export function printProblems(rows: Row[], children: Child[], readModelProblems: string[]): boolean {
  for (const problem of readModelProblems) console.log(`READ MODELS WRONG after ${problem}`);
  const bad = rows.filter((r) => r.non2xx > 0 || r.notQueued > 0 || r.errors > 0);
  for (const r of bad) {
    console.log(`FAILED RESPONSES in ${r.scenario} (${r.config}): ${r.non2xx} non-2xx, ${r.notQueued} not queued, ${r.errors} errors (${r.timeouts} timeouts)`);
  }
  for (const child of children) {
    if (child.problemCount === 0) continue;
    console.log(`${child.name} logged ${child.problemCount} warning/error lines; first ones:\n  ${child.problems.join('\n  ')}`);
  }
  if (children.every((c) => c.problemCount === 0)) console.log(`no warnings or errors in the logs of ${[...new Set(children.map((c) => c.name))].join(', ')}`);
  return bad.length > 0 || readModelProblems.length > 0;
}

export function printProjections(rows: ProjectionRow[], baselineRate: number | null): void {
  console.log('\nprojections (all four at once in one Node process; indented rows are the parts of the row above them)');
  const header = ['projection scenario', 'events', 'seconds', 'events/s', 'vs write ceiling', 'vs read ceiling', 'vs baseline', 'CPU node', 'CPU pg', 'CPU other', 'finished'];
  const lines = rows.map((r) => [
    r.scenario,
    whole(r.events),
    fixed(r.seconds, 1),
    whole(r.eventsPerSec),
    fixed(r.vsWrite, 2),
    fixed(r.vsRead, 2),
    fixed(baselineRate ? r.eventsPerSec / baselineRate : null, 2),
    fixed(r.cpuCores?.node ?? null, 2),
    fixed(r.cpuCores?.postgres ?? null, 2),
    fixed(r.cpuCores?.other ?? null, 2),
    r.finished,
  ]);
  console.log(table(header, lines));
  console.log('(store events: events of the store all four have applied, so events/s there is the rate of the whole; events of a projection:');
  console.log(' those of its types; vs write ceiling: store events/s over the raw write ceiling of the store\'s mix of rows; vs read ceiling:');
  console.log(' events/s over the catch-up query alone; vs baseline: events/s over the hello-world req/s of this run)');
}

/** Returns true when a request failed or a lead never became visible. */
export function printVisibility(r: VisibilityRow): boolean {
  console.log(`\nvisibility (service as npm start runs it: API and projection worker in one process, the worker in a thread; ${whole(r.storeEvents)} events stored at the start)`);
  const header = ['scenario', 'probes', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'not visible', 'GETs/probe', 'GET p50 ms', 'ingest req/s', 'ingest p50', 'ingest p99', 'non-2xx', 'errors', 'CPU node', 'CPU pg', 'CPU loadgen', 'CPU other'];
  const line = [
    r.scenario,
    String(r.probes),
    fixed(r.p50Ms, 1),
    fixed(r.p90Ms, 1),
    fixed(r.p99Ms, 1),
    fixed(r.maxMs, 1),
    String(r.notVisible),
    fixed(r.getsPerProbe, 1),
    fixed(r.getP50Ms, 1),
    whole(r.ingestReqPerSec),
    fixed(r.ingestP50Ms, 1),
    fixed(r.ingestP99Ms, 1),
    String(r.non2xx),
    String(r.errors),
    fixed(r.cpuCores.node, 2),
    fixed(r.cpuCores.postgres, 2),
    fixed(r.cpuCores.loadgen, 2),
    fixed(r.cpuCores.other, 2),
  ];
  console.log(table(header, [line]));
  console.log('(p50..max: ms from the POST answered to the first GET leads/:id answering 200, polled every 5-10 ms; CPU loadgen includes the probe)');
  const bad = r.non2xx > 0 || r.notQueued > 0 || r.errors > 0 || r.notVisible > 0 || r.probeFailures.length > 0;
  if (bad) {
    console.log(`FAILED in ${r.scenario}: ${r.non2xx} non-2xx, ${r.notQueued} not queued, ${r.errors} errors, ${r.notVisible} leads not visible`);
    for (const failure of r.probeFailures) console.log(`  probe: ${failure}`);
  }
  return bad;
}

const mb = (bytes: number | null): string => (bytes === null ? '-' : (bytes / 1e6).toFixed(0));

/** The highest resident memory of each process the bench started, sampled every 200 ms. */
export function printMemory(children: Child[]): void {
  console.log('\nmemory: highest resident set size of each process the bench started (sampled every 200 ms through its life)');
  console.log(table(['process', 'max RSS MB', 'samples', 'during'], children.map((c) => [c.name, mb(c.rss.maxBytes), String(c.rss.samples), c.rss.during])));
}

/** The ingest on the embedded server and the external one (servers.ts): each service row over its peer or its ceiling. */
export function printServers(servers: ServerResult[]): void {
  if (servers.length === 0) return;
  console.log('\ningest on the embedded and an external PostgreSQL (BENCH_DATABASE_URL), PROJECTIONS=off, each service row right after its naive peer');
  for (const s of servers) {
    console.log(`${s.server}: ${s.settings}`);
    console.log(`  durable single-row commits: ${s.commits.map((c) => `${c.connections} connection(s) ${whole(c.commitsPerSec)}/s (${c.meanMs.toFixed(2)} ms each)`).join(', ')}`);
  }
  const header = ['server', 'scenario', 'req/s', 'items/s', 'p50 ms', 'p99 ms', 'not queued', 'vs', 'ratio', 'ev/commit', 'CPU node', 'CPU pg', 'CPU loadgen', 'CPU other'];
  const lines: string[][] = [];
  for (const s of servers) {
    let peer: Row | null = null;
    for (const r of s.rows) {
      if (r.config === 'naive peer') peer = r;
      const against = r.config === 'naive peer' ? null : r.ceiling ? [r.ceiling.ceiling, r.ceiling.ratio] : peer ? ['naive peer', r.reqPerSec / peer.reqPerSec] : null;
      lines.push([
        s.server,
        r.scenario,
        whole(r.reqPerSec),
        whole(r.itemsPerSec),
        fixed(r.p50Ms, 1),
        fixed(r.p99Ms, 1),
        String(r.notQueued + r.errors),
        against ? String(against[0]) : '-',
        against ? fixed(Number(against[1]), 2) : '-',
        fixed(r.eventsPerCommit, 1),
        fixed(r.cpuCores.node, 2),
        fixed(r.cpuCores.postgres, 2),
        fixed(r.cpuCores.loadgen, 2),
        fixed(r.cpuCores.other, 2),
      ]);
    }
  }
  console.log(table(header, lines));
  console.log('(ratio: the service\'s req/s over the naive peer\'s measured just before on the same server, users bulk items/s over that server\'s users');
  console.log(' write ceiling; CPU pg: the server\'s processes, other databases of an external server included; not queued includes errors)');
}
