import type { FreshnessRow, ProbeWindow } from './freshness.js';
import { table } from './report.js';
import { settings } from './settings.js';
import { twoOverOne, type WorkersResult } from './workers.js';

/** The tables of the freshness and workers groups (freshness.ts, workers.ts). */

const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));
const whole = (value: number): string => Math.round(value).toLocaleString('en-US');

/** Prints the freshness rows; returns true when a request failed or a lead never showed. */
export function printFreshness(r: FreshnessRow): boolean {
  console.log(`\nfreshness of one account while another imports (service as npm start runs it; ${whole(r.profiles)} profiles in bulk of ${settings.bulkSize} on ${settings.freshnessConnections} connections; probe of another account every 90-110 ms)`);
  const header = ['probe window', 'probes', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'p99 from sent', 'POST p50', 'POST p99', 'GET p50', 'GET p99', 'not visible'];
  const line = (w: ProbeWindow): string[] => [w.label, String(w.probes), fixed(w.p50Ms, 1), fixed(w.p95Ms, 1), fixed(w.p99Ms, 1), fixed(w.maxMs, 1), fixed(w.p99FromSentMs, 1), fixed(w.postP50Ms, 1), fixed(w.postP99Ms, 1), fixed(w.getP50Ms, 1), fixed(w.getP99Ms, 1), String(w.notVisible)];
  console.log(table(header, [...(r.idle ? [line(r.idle)] : []), line(r.quiet), line(r.underImport)]));
  console.log('(ms from the probe\'s POST answered to the first GET leads/:id answering 200, polled every 5-10 ms; p99 from sent: from the POST sent)');
  const importHeader = ['importer', 'in leads', 'posted s', 'all visible s', 'profiles/s', 'POST p50 ms', 'POST p99 ms', 'failed', 'CPU node', 'CPU pg', 'CPU loadgen', 'CPU other'];
  console.log(
    table(importHeader, [
      [
        'import',
        whole(r.visible),
        r.postSeconds.toFixed(1),
        r.visibleSeconds.toFixed(1),
        whole(r.visible / r.visibleSeconds),
        fixed(r.importP50Ms, 1),
        fixed(r.importP99Ms, 1),
        String(r.failedResponses),
        fixed(r.cpuCores.node, 2),
        fixed(r.cpuCores.postgres, 2),
        fixed(r.cpuCores.loadgen, 2),
        fixed(r.cpuCores.other, 2),
      ],
    ]),
  );
  const windows = [...(r.idle ? [r.idle] : []), r.quiet, r.underImport];
  const failures = windows.flatMap((w) => w.failures);
  const notVisible = windows.reduce((sum, w) => sum + w.notVisible, 0);
  const bad = r.failedResponses > 0 || r.visible < r.profiles || notVisible > 0 || failures.length > 0;
  if (bad) {
    console.log(`FAILED in freshness: ${r.failedResponses} failed import responses, ${whole(r.profiles - r.visible)} profiles not in leads, ${notVisible} probes never visible`);
    for (const failure of failures) console.log(`  probe: ${failure}`);
  }
  return bad;
}

/** Prints the runs of the workers group. */
export function printWorkers(result: WorkersResult, writeCeiling: number | null): void {
  console.log(`\nworkers sharing the parts (catch-up from nothing projected, ${whole(result.storeEvents)} events over ${result.accounts} accounts; one and two worker processes alternately)`);
  const header = ['run', 'seconds', 'store events/s', 'vs write ceiling', 'parts at end', 'most parts', 'events of its parts', 'CPU each', 'CPU all workers', 'CPU pg', 'CPU other', 'claims', 'even after s', 'finished'];
  const lines = result.runs.map((run) => [
    `${run.workers} worker${run.workers === 1 ? '' : 's'}, round ${run.round}`,
    fixed(run.row.seconds, 1),
    whole(run.row.eventsPerSec),
    fixed(writeCeiling ? run.row.eventsPerSec / writeCeiling : null, 2),
    run.shares.map((s) => String(s.partsAtEnd.length)).join('/'),
    run.shares.map((s) => String(s.maxParts)).join('/'),
    run.shares.map((s) => whole(s.eventsApplied)).join('/'),
    run.shares.map((s) => fixed(s.cpuCores, 2)).join('/'),
    fixed(run.row.cpuCores?.node ?? null, 2),
    fixed(run.row.cpuCores?.postgres ?? null, 2),
    fixed(run.row.cpuCores?.other ?? null, 2),
    String(run.claims),
    fixed(run.evenAfterSeconds, 1),
    run.caughtUp ? 'yes' : 'no (limit)',
  ]);
  console.log(table(header, lines));
  const { one, two, ratio } = twoOverOne(result);
  console.log(`two workers over one: ${whole(two)} / ${whole(one)} store events/s = ${fixed(ratio, 2)} (means over the rounds)`);
  console.log('(parts at end: held by each worker when the last projection caught up, as the status shows them; events of its parts: applied in');
  console.log(' the accounts of those parts, over the four projections; claims: parts taken (free or from another worker); even after s: when');
  console.log(' the parts were first split 16 / workers each; CPU in cores over the run)');
}
