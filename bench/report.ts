import type { Child } from './children.js';

export interface Row {
  scenario: string;
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
  vsBaseline: number | null;
  eventsPerCommit: number | null;
  commitsPerSec: number | null;
  /** CPU used during the measured window, in cores: target Node process, PostgreSQL, this process. */
  cpuCores: { node: number | null; postgres: number | null; loadgen: number };
}

// The targets; printed next to the numbers so a run is judged the same way each time.
const singleTarget = { reqPerSec: 5_000, vsBaseline: 0.5 };
const bulkTarget = { itemsPerSec: 100_000 };

const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));
const whole = (value: number): string => Math.round(value).toLocaleString('en-US');

function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(format)].join('\n');
}

/** Prints machine, settings, results and target checks; returns true when any response was bad. */
export function printTable(machine: Record<string, string | number>, settings: Record<string, string | number>, rows: Row[], children: Child[]): boolean {
  console.log('\nmachine:', Object.entries(machine).map(([k, v]) => `${k}=${v}`).join(', '));
  console.log('settings:', Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(', '));
  console.log('load generator (autocannon), service, PostgreSQL and baseline share these cores\n');
  const header = ['scenario', 'req/s', 'items/s', 'p50 ms', 'p99 ms', 'non-2xx', 'not queued', 'errors', 'vs baseline', 'ev/commit', 'commits/s', 'CPU node', 'CPU pg', 'CPU loadgen'];
  const lines = rows.map((r) => [
    r.scenario,
    whole(r.reqPerSec),
    whole(r.itemsPerSec),
    fixed(r.p50Ms, 1),
    fixed(r.p99Ms, 1),
    String(r.non2xx),
    String(r.notQueued),
    String(r.errors),
    fixed(r.vsBaseline, 2),
    fixed(r.eventsPerCommit, 1),
    r.commitsPerSec === null ? '-' : whole(r.commitsPerSec),
    fixed(r.cpuCores.node, 2),
    fixed(r.cpuCores.postgres, 2),
    fixed(r.cpuCores.loadgen, 2),
  ]);
  console.log(table(header, lines));
  console.log('(req/s: mean of per-second samples; CPU in cores over the measured window; not queued includes non-2xx)\n');

  for (const r of rows.slice(1)) {
    const ok = (met: boolean): string => (met ? 'met' : 'NOT met');
    if (r.scenario.startsWith('users bulk')) {
      console.log(`target ${r.scenario}: >= ${whole(bulkTarget.itemsPerSec)} profiles/s -> ${ok(r.itemsPerSec >= bulkTarget.itemsPerSec)}`);
    } else {
      const met = r.reqPerSec >= singleTarget.reqPerSec && (r.vsBaseline ?? 0) >= singleTarget.vsBaseline;
      console.log(`target ${r.scenario}: >= ${whole(singleTarget.reqPerSec)} req/s and >= ${singleTarget.vsBaseline} x baseline -> ${ok(met)}`);
    }
  }

  const bad = rows.filter((r) => r.non2xx > 0 || r.notQueued > 0 || r.errors > 0);
  for (const r of bad) {
    console.log(`FAILED RESPONSES in ${r.scenario}: ${r.non2xx} non-2xx, ${r.notQueued} not queued, ${r.errors} errors (${r.timeouts} timeouts)`);
  }
  for (const child of children) {
    if (child.problemCount === 0) continue;
    console.log(`${child.name} logged ${child.problemCount} warning/error lines; first ones:\n  ${child.problems.join('\n  ')}`);
  }
  if (children.every((c) => c.problemCount === 0)) console.log('no warnings or errors in the service or baseline logs');
  return bad.length > 0;
}
