import type { ErasureResult, LoadWindow } from './erasure.js';
import { table, type TargetLine } from './report.js';
import { sealingScenarioNames, type SealingResult, type SealingSummary } from './sealing.js';
import { settings } from './settings.js';

/** The tables and target lines of the sealing and erasure groups (sealing.ts, erasure.ts). */

const goals = {
  // Sealing costs known persons' and bulk ingest at most a fifth of their rate.
  sealedVsUnsealed: 0.8,
  erasureSeconds: 30,
  // Another account's ingest keeps at least this share of its rate while an erasure runs.
  bystanderDuringVsBefore: 0.8,
};

const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));
const whole = (value: number): string => (Number.isNaN(value) ? '-' : Math.round(value).toLocaleString('en-US'));
const erasedLabel = (r: ErasureResult): string => `userId, ${whole(r.events)} events and a profile`;
const mb = (bytes: number | null): string => (bytes === null ? '-' : `${(bytes / 1e6).toFixed(0)} MB`);

/** Prints every run, then the medians with and without; returns true when a response failed. */
export function printSealing(result: SealingResult): boolean {
  console.log(`\nsealing: the ingest paths with SEALING on and off (PROJECTIONS=off, rate limits off; ${result.rounds} round${result.rounds === 1 ? '' : 's'}, the service started afresh for each run, one data directory)`);
  const header = ['scenario', 'round', 'service runs', 'req/s', 'items/s', 'p50 ms', 'p99 ms', 'failed', 'ev/commit', 'CPU node', 'CPU pg', 'CPU loadgen', 'CPU other'];
  // Each scenario's runs together, in the order they ran.
  const byScenario = result.summary.flatMap((s) => result.runs.flatMap((run) => run.rows.filter((r) => r.scenario === s.scenario).map((r) => ({ run, r }))));
  const lines = byScenario.map(({ run, r }) => [
    r.scenario,
    String(run.round),
    r.config,
    whole(r.reqPerSec),
    whole(r.itemsPerSec),
    fixed(r.p50Ms, 1),
    fixed(r.p99Ms, 1),
    String(r.notQueued + r.errors),
    fixed(r.eventsPerCommit, 1),
    fixed(r.cpuCores.node, 2),
    fixed(r.cpuCores.postgres, 2),
    fixed(r.cpuCores.loadgen, 2),
    fixed(r.cpuCores.other, 2),
  ]);
  console.log(table(header, lines));
  const summary = ['scenario', 'req/s sealed', 'req/s unsealed', 'items/s sealed', 'items/s unsealed', 'sealed / unsealed', 'each round', 'p99 ms sealed', 'p99 ms unsealed'];
  const summaryLine = (s: SealingSummary): string[] => [
    s.scenario,
    whole(s.withReqPerSec),
    whole(s.withoutReqPerSec),
    whole(s.withItemsPerSec),
    whole(s.withoutItemsPerSec),
    fixed(s.ratio, 2),
    s.roundRatios.map((r) => r.toFixed(2)).join(' '),
    fixed(s.withP99Ms, 1),
    fixed(s.withoutP99Ms, 1),
  ];
  console.log(table(summary, result.summary.map(summaryLine)));
  console.log('(medians over the rounds; sealed / unsealed: of the medians; each round: that round\'s pair; failed: not queued (non-2xx included) and connection errors;');
  console.log(' a new person each: a key made and stored per request; known persons: their keys made before, read again every 5 s)');
  const bad = result.runs.flatMap((run) => run.rows).filter((r) => r.notQueued > 0 || r.errors > 0);
  for (const r of bad) console.log(`FAILED RESPONSES in ${r.scenario} (${r.config}): ${r.non2xx} non-2xx, ${r.notQueued} not queued, ${r.errors} errors`);
  return bad.length > 0;
}

/** True when the erasure did not finish, did not erase what it should have, or a bystander request failed. */
export function erasureFailed(r: ErasureResult): boolean {
  return r.state !== 'done' || (r.counts?.events ?? 0) < r.events || r.leadBefore !== 200 || r.leadAfter !== 404 || r.failedResponses > 0;
}

/** Prints the erasure and the bystander's windows; returns true when it failed (erasureFailed). */
export function printErasure(r: ErasureResult): boolean {
  const counts = r.counts ? Object.entries(r.counts).map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`).join(', ') : '-';
  console.log(`\nerasure of one person of ${whole(r.events)} events while another account posts single events (service as npm start runs it; ${settings.erasureConnections} connections)`);
  console.log(
    table(
      ['erasure', 'state', 'POST to done s', 'service s', 'counts', 'lead before / after', 'posted s', 'projected s', 'max RSS before', 'max RSS during'],
      [[erasedLabel(r), r.state, fixed(r.seconds, 1), fixed(r.serviceSeconds, 1), counts, `${r.leadBefore} / ${r.leadAfter}`, fixed(r.postSeconds, 1), fixed(r.projectedSeconds, 1), mb(r.rssBeforeBytes), mb(r.rssDuringBytes)]],
    ),
  );
  const line = (w: LoadWindow, cpu: ErasureResult['cpuBefore'] | null): string[] => [
    w.label,
    fixed(w.seconds, 1),
    whole(w.responses),
    whole(w.reqPerSec),
    fixed(r.before.reqPerSec > 0 ? w.reqPerSec / r.before.reqPerSec : null, 2),
    whole(w.lowestSecond),
    fixed(w.p50Ms, 1),
    fixed(w.p99Ms, 1),
    String(w.failed),
    fixed(cpu?.node ?? null, 2),
    fixed(cpu?.postgres ?? null, 2),
    fixed(cpu?.other ?? null, 2),
  ];
  console.log(
    table(
      ['bystander window', 'seconds', 'responses', 'req/s', 'vs before', 'slowest 1 s', 'p50 ms', 'p99 ms', 'failed', 'CPU node', 'CPU pg', 'CPU other'],
      [line(r.before, r.cpuBefore), line(r.during, r.cpuDuring), line(r.afterWait, null)],
    ),
  );
  console.log('(POST to done: from the POST sent to the GET that answered done, polled every 100 ms; service s: its doneAt - requestedAt; slowest 1 s:');
  console.log(' responses in the window\'s slowest whole second; after the wait: the rebuild of the account\'s read models and VACUUM; CPU in cores)');
  const bad = erasureFailed(r);
  if (bad) console.log(`FAILED in erasure: state ${r.state}${r.error ? ` (${r.error})` : ''}, counts ${counts}, lead ${r.leadBefore} before and ${r.leadAfter} after, ${r.failedResponses} bystander requests failed`);
  return bad;
}

export function sealingTargetLines(result: SealingResult): TargetLine[] {
  return result.summary.map((s) => {
    const judged = s.scenario !== sealingScenarioNames.newPerson;
    const others = result.runs.flatMap((run) => run.rows.filter((row) => row.scenario === s.scenario).map((row) => row.cpuCores.other ?? 0));
    return {
      target: `${s.scenario}, sealed against unsealed, PROJECTIONS=off`,
      measured: `${whole(s.withReqPerSec)} req/s${s.withItemsPerSec === s.withReqPerSec ? '' : `, ${whole(s.withItemsPerSec)} items/s`} (median of ${result.rounds})`,
      ceiling: `SEALING=off ${whole(s.withoutReqPerSec)} req/s`,
      ratio: s.ratio,
      goal: judged ? `>= ${goals.sealedVsUnsealed}` : '- (reported)',
      met: judged ? s.ratio >= goals.sealedVsUnsealed : null,
      otherCores: others.length ? Math.max(...others) : null,
    };
  });
}

export function erasureTargetLines(r: ErasureResult): TargetLine[] {
  const ratio = r.before.reqPerSec > 0 ? r.during.reqPerSec / r.before.reqPerSec : null;
  return [
    {
      target: `erasure of a person of ${whole(r.events)} events, POST to done, under another account's ingest`,
      measured: `${fixed(r.seconds, 1)} s${r.state === 'done' ? '' : ` (${r.state})`}, ${whole(r.counts?.events ?? 0)} events erased`,
      ceiling: '-',
      ratio: null,
      goal: `<= ${goals.erasureSeconds} s`,
      met: !erasureFailed(r) && r.seconds <= goals.erasureSeconds,
      otherCores: r.cpuDuring.other,
    },
    {
      target: `another account's single events during an erasure (${settings.erasureConnections} connections)`,
      measured: `${whole(r.during.reqPerSec)} req/s, p99 ${fixed(r.during.p99Ms, 0)} ms (after the wait ${whole(r.afterWait.reqPerSec)})`,
      ceiling: `before ${whole(r.before.reqPerSec)} req/s, p99 ${fixed(r.before.p99Ms, 0)} ms`,
      ratio,
      goal: `>= ${goals.bystanderDuringVsBefore}`,
      met: ratio === null ? null : r.failedResponses === 0 && ratio >= goals.bystanderDuringVsBefore,
      otherCores: r.cpuDuring.other,
    },
  ];
}
