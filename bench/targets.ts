import { mixedCeiling, type WriteCeilings } from './ceilings.js';
import type { Child } from './children.js';
import type { FreshnessRow } from './freshness.js';
import { erasureTargetLines, sealingTargetLines } from './erasure-report.js';
import type { ErasureResult } from './erasure.js';
import type { ImportRow } from './import.js';
import type { Projected } from './projection-group.js';
import { table, type Row, type TargetLine } from './report.js';
import type { SealingResult } from './sealing.js';
import { browserTargetLines, type BrowserResult } from './browser.js';
import { segmentTargetLines, type SegmentResult } from './segment.js';
import { settings } from './settings.js';
import { evenSplit, twoOverOne, type WorkersResult } from './workers.js';

/**
 * Every scenario as a ratio to its ceiling measured in the same run, and the performance targets
 * (docs/performance.md) judged on them: a run's figures swing with the machine, its ratios much less.
 */

export interface Results {
  rows: Row[];
  ceilings: WriteCeilings | null;
  imported: ImportRow | null;
  projected: Projected;
  freshness: FreshnessRow | null;
  workers: WorkersResult | null;
  sealing: SealingResult | null;
  browser: BrowserResult | null;
  segment: SegmentResult | null;
  erasure: ErasureResult | null;
  children: Child[];
}

/** The config of the naive peer's rows (ingest.ts). */
const peerConfig = 'naive peer';

const goals = {
  singleVsHelloWorld: 0.5,
  singleVsPeer: 1,
  bulkVsWrite: 0.7,
  importVsWrite: 0.4,
  projectionsVsWrite: 0.5,
  visibilityP99Ms: 250,
  idleVisibilityP99Ms: 50,
  // Two worker processes catch up no slower than one.
  twoWorkersVsOne: 1,
  serviceRssBytes: 300e6,
};

/** Sets each scenario's ratio: single items to the hello-world, bulk, import and projections to the write ceiling. */
export function applyCeilings(results: Results): void {
  // A single-item row's ceiling: the hello-world measured last before it (the first, for rows before any).
  let baseline = results.rows.find((r) => r.config === 'baseline');
  let peer: Row | null = null;
  const { ceilings } = results;
  for (const row of results.rows) {
    if (row.config === 'baseline') {
      baseline = row;
      continue;
    }
    if (row.config === peerConfig) {
      peer = row;
      continue;
    }
    if (row.bulkKind === null && baseline) {
      row.ceiling = { ceiling: 'hello-world', ceilingPerSec: baseline.reqPerSec, ratio: row.reqPerSec / baseline.reqPerSec };
      if (peer && peer.scenario === `naive peer ${row.scenario}`) row.peer = { ceiling: 'naive peer', ceilingPerSec: peer.reqPerSec, ratio: row.reqPerSec / peer.reqPerSec };
    } else if (row.bulkKind !== null && ceilings) {
      const write = ceilings.best[row.bulkKind].rowsPerSec;
      row.ceiling = { ceiling: `write: ${row.bulkKind} rows`, ceilingPerSec: write, ratio: row.itemsPerSec / write };
    }
  }
  if (results.imported && ceilings) {
    const write = ceilings.best.users.rowsPerSec;
    results.imported.ceiling = { ceiling: 'write: users rows', ceilingPerSec: write, ratio: results.imported.profilesPerSec / write };
  }
  if (ceilings && results.projected.storeMix.size > 0) {
    const write = mixedCeiling(ceilings, results.projected.storeMix);
    for (const row of results.projected.projections) {
      if (!row.scenario.startsWith(' ')) row.vsWrite = row.eventsPerSec / write;
    }
  }
}

const whole = (value: number): string => Math.round(value).toLocaleString('en-US');
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;

export function targetLines(results: Results): TargetLine[] {
  const lines: TargetLine[] = [];
  const off = results.rows.filter((r) => r.config === 'PROJECTIONS=off');
  for (const r of off.filter((row) => row.bulkKind === null)) {
    const ratio = r.ceiling?.ratio ?? null;
    const ceiling = r.ceiling ? `hello-world ${whole(r.ceiling.ceilingPerSec)} req/s` : '-';
    lines.push({ target: `${r.scenario}, PROJECTIONS=off`, measured: `${whole(r.reqPerSec)} req/s`, ceiling, ratio, goal: `>= ${goals.singleVsHelloWorld}`, met: ratio === null ? null : ratio >= goals.singleVsHelloWorld, otherCores: r.cpuCores.other });
    if (r.peer) {
      const vsPeer = r.peer.ratio;
      lines.push({ target: `${r.scenario} against the naive peer, PROJECTIONS=off`, measured: `${whole(r.reqPerSec)} req/s`, ceiling: `naive peer ${whole(r.peer.ceilingPerSec)} req/s`, ratio: vsPeer, goal: `>= ${goals.singleVsPeer}`, met: vsPeer >= goals.singleVsPeer, otherCores: r.cpuCores.other });
    }
  }
  for (const r of off.filter((row) => row.bulkKind !== null)) {
    const ratio = r.ceiling?.ratio ?? null;
    const ceiling = r.ceiling ? `write ${whole(r.ceiling.ceilingPerSec)} rows/s` : '-';
    lines.push({ target: `${r.scenario}, PROJECTIONS=off`, measured: `${whole(r.itemsPerSec)} items/s`, ceiling, ratio, goal: `>= ${goals.bulkVsWrite}`, met: ratio === null ? null : ratio >= goals.bulkVsWrite, otherCores: r.cpuCores.other });
  }
  const imported = results.imported;
  if (imported) {
    const ratio = imported.ceiling?.ratio ?? null;
    const all = imported.visible >= imported.profiles;
    lines.push({
      target: `import ${whole(imported.profiles)} profiles to visible, npm start`,
      measured: `${whole(imported.profilesPerSec)} profiles/s${all ? '' : ' (NOT all visible)'}`,
      ceiling: imported.ceiling ? `write ${whole(imported.ceiling.ceilingPerSec)} rows/s` : '-',
      ratio,
      goal: `>= ${goals.importVsWrite}`,
      met: ratio === null ? null : all && ratio >= goals.importVsWrite,
      otherCores: imported.cpuCores.other,
    });
  }
  const write = results.ceilings && results.projected.storeMix.size > 0 ? mixedCeiling(results.ceilings, results.projected.storeMix) : null;
  for (const r of results.projected.projections) {
    const isCatchUp = r.scenario.startsWith('catch-up:');
    if (!isCatchUp && !r.scenario.startsWith('rebuild:')) continue;
    const finished = r.finished === 'yes';
    const rebuild = results.children.find((c) => c.name === 'rebuild');
    const memory = !isCatchUp && rebuild?.rss.maxBytes ? `, max RSS ${mb(rebuild.rss.maxBytes)}` : '';
    // Stopped at the limit, the row holds what was applied; its finished text says of how many.
    const total = finished ? whole(r.events) : (/of ([\d,]+)/.exec(r.finished)?.[1] ?? '?');
    lines.push({
      target: isCatchUp ? `catch-up of all four read models (${total} events)` : `rebuild of ${total} events`,
      measured: `${whole(r.eventsPerSec)} events/s${finished ? '' : ' (stopped at the limit)'}${memory}`,
      ceiling: write === null ? '-' : `write ${whole(write)} rows/s (store mix)`,
      ratio: r.vsWrite,
      goal: `>= ${goals.projectionsVsWrite}`,
      met: r.vsWrite === null ? null : finished && r.vsWrite >= goals.projectionsVsWrite,
      otherCores: r.cpuCores?.other ?? null,
    });
  }
  const visibility = results.projected.visibility;
  if (visibility) {
    const allVisible = visibility.notVisible === 0;
    lines.push({
      target: `POST to lead visible, p99, under ${whole(visibility.ingestReqPerSec)} of ${whole(settings.visibilityRate)} req/s asked, store of ${whole(visibility.storeEvents)} events`,
      measured: `${visibility.p99Ms.toFixed(0)} ms${allVisible ? '' : ` (${visibility.notVisible} never visible)`}`,
      ceiling: '-',
      ratio: null,
      goal: `< ${goals.visibilityP99Ms} ms`,
      met: allVisible && visibility.p99Ms < goals.visibilityP99Ms,
      otherCores: visibility.cpuCores.other,
    });
  }
  lines.push(...sharingLines(results));
  if (results.sealing) lines.push(...sealingTargetLines(results.sealing));
  if (results.browser) lines.push(...browserTargetLines(results.browser));
  if (results.segment) lines.push(...segmentTargetLines(results.segment));
  if (results.erasure) lines.push(...erasureTargetLines(results.erasure));
  const services = results.children.filter((c) => c.name.startsWith('service') || c.name === 'worker');
  const peaks = services.filter((c) => c.rss.maxBytes !== null);
  if (peaks.length) {
    const top = peaks.reduce((a, b) => ((b.rss.maxBytes ?? 0) > (a.rss.maxBytes ?? 0) ? b : a));
    const max = top.rss.maxBytes ?? 0;
    lines.push({
      target: 'service RSS through the whole bench (max)',
      measured: `${mb(max)} (${top.name}, ${top.rss.during})`,
      ceiling: '-',
      ratio: null,
      goal: `< ${mb(goals.serviceRssBytes)}`,
      met: max < goals.serviceRssBytes,
      otherCores: null,
    });
  }
  return lines;
}

/** The freshness of one account under another's import, and two workers against one. */
function sharingLines(results: Results): TargetLine[] {
  const lines: TargetLine[] = [];
  const freshness = results.freshness;
  const idle = freshness?.idle;
  if (idle) {
    lines.push({
      target: 'POST to lead visible, p99, of an idle service (one probe at a time), npm start',
      measured: `${idle.p99Ms.toFixed(0)} ms (p50 ${idle.p50Ms.toFixed(0)}, ${idle.probes} probes)`,
      ceiling: '-',
      ratio: null,
      goal: `< ${goals.idleVisibilityP99Ms} ms`,
      met: idle.notVisible === 0 && idle.p99Ms < goals.idleVisibilityP99Ms,
      otherCores: null,
    });
  }
  if (freshness) {
    const probe = freshness.underImport;
    const allVisible = probe.notVisible === 0 && freshness.visible >= freshness.profiles;
    lines.push({
      target: `POST to lead visible, p99, of one account while another imports ${whole(freshness.profiles)} profiles, npm start`,
      measured: `${probe.p99Ms.toFixed(0)} ms (p50 ${probe.p50Ms.toFixed(0)}); import all visible after ${freshness.visibleSeconds.toFixed(1)} s${allVisible ? '' : ' (NOT all visible)'}`,
      ceiling: '-',
      ratio: null,
      goal: `< ${goals.visibilityP99Ms} ms`,
      met: allVisible && probe.p99Ms < goals.visibilityP99Ms,
      otherCores: freshness.cpuCores.other,
    });
  }
  const workers = results.workers;
  if (workers && workers.runs.length) {
    const ceiling = results.ceilings && workers.storeMix.size > 0 ? mixedCeiling(results.ceilings, workers.storeMix) : null;
    const finished = workers.runs.every((r) => r.caughtUp);
    for (const count of [1, 2]) {
      const runs = workers.runs.filter((r) => r.workers === count);
      if (!runs.length) continue;
      const rate = runs.reduce((sum, r) => sum + r.row.eventsPerSec, 0) / runs.length;
      const ratio = ceiling ? rate / ceiling : null;
      const other = runs.map((r) => r.row.cpuCores?.other ?? 0).reduce((a, b) => Math.max(a, b), 0);
      lines.push({
        target: `catch-up by ${count} worker process${count === 1 ? '' : 'es'} (${whole(workers.storeEvents)} events, ${workers.accounts} accounts)`,
        measured: `${whole(rate)} events/s (mean of ${runs.length})${runs.every((r) => r.caughtUp) ? '' : ' (stopped at the limit)'}`,
        ceiling: ceiling === null ? '-' : `write ${whole(ceiling)} rows/s (store mix)`,
        ratio,
        goal: `>= ${goals.projectionsVsWrite}`,
        met: ratio === null ? null : runs.every((r) => r.caughtUp) && ratio >= goals.projectionsVsWrite,
        otherCores: other,
      });
    }
    const { one, two, ratio } = twoOverOne(workers);
    if (!Number.isNaN(ratio)) {
      lines.push({
        target: 'catch-up, two worker processes against one',
        measured: `${whole(two)} against ${whole(one)} events/s`,
        ceiling: 'one worker process',
        ratio,
        goal: `>= ${goals.twoWorkersVsOne}`,
        met: finished && ratio >= goals.twoWorkersVsOne,
        otherCores: null,
      });
      const twos = workers.runs.filter((r) => r.workers === 2);
      lines.push({
        target: 'parts split evenly between two worker processes',
        measured: twos.map((r) => r.shares.map((s) => s.partsAtEnd.length).join('/')).join(', '),
        ceiling: '-',
        ratio: null,
        goal: '8/8',
        met: evenSplit(workers),
        otherCores: null,
      });
    }
  }
  return lines;
}

export function printTargets(lines: TargetLine[]): void {
  console.log('\ntargets (each judged on the ratio to its ceiling measured in this run; the issue judges medians of 3 runs)');
  const rows = lines.map((l) => [
    l.target,
    l.measured,
    l.ceiling,
    l.ratio === null ? '-' : l.ratio.toFixed(2),
    l.goal,
    l.met === null ? '-' : l.met ? 'met' : 'NOT met',
    l.otherCores === null ? '-' : l.otherCores.toFixed(2),
  ]);
  console.log(table(['target', 'measured', 'ceiling', 'ratio', 'goal', 'met', 'CPU other'], rows));
  console.log('(CPU other: cores busy with other work on the machine while it was measured; well above 0.1, the figure is noisy)');
}
