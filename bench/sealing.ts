import { allQueued, eventsBulkOverPool, knownPersonEventBody, knownPersonsBulkBodies, newPersonEventBody, queued } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { measure, type Scenario, type Target } from './load.js';
import type { Row } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, postAll, startService, stopService } from './service.js';
import { say, settings } from './settings.js';

/*
 * What sealing costs the ingest paths: the service with PROJECTIONS=off and rate limits off (as the
 * ingest group's PROJECTIONS=off rows), on one data directory, started afresh for each run with
 * SEALING on or off. BENCH_SEALING_ROUNDS (3) rounds of one run each way, the order flipped every
 * round (on, off, off, on, on, off), so that what drifts over the group (the store growing, the
 * machine) weighs on both alike. Each run has an account of its own, into which the known persons
 * are first posted in bulk (not measured: their keys exist, and the warm-up has them cached), then
 * measures, each for BENCH_WARMUP then BENCH_DURATION seconds on BENCH_CONNECTIONS connections:
 *  - single events each naming a person never seen before: a key made and stored per request, the worst case;
 *  - single events over 1,000 known persons;
 *  - bulk requests of 100 events, each naming 100 persons, over 10,000 known persons (100 bodies).
 * Each scenario's rate with sealing is judged against its rate without: the medians over the rounds.
 */

const knownPersons = 1_000;
/** Bulk bodies the bulk scenario cycles through, each naming bulkSize persons of its own. */
const bulkPool = 100;
const seedConcurrency = 4;

export interface SealingRun {
  round: number;
  sealing: boolean;
  rows: Row[];
}

export interface SealingSummary {
  scenario: string;
  /** Medians over the runs with sealing and without. */
  withReqPerSec: number;
  withoutReqPerSec: number;
  withItemsPerSec: number;
  withoutItemsPerSec: number;
  /** With over without, of the medians. */
  ratio: number;
  withP99Ms: number;
  withoutP99Ms: number;
  /** With over without within each round: how much the ratio swings. */
  roundRatios: number[];
}

export interface SealingResult {
  rounds: number;
  runs: SealingRun[];
  summary: SealingSummary[];
}

export const sealingScenarioNames = {
  newPerson: 'events single, a new person each',
  known: `events single, ${knownPersons.toLocaleString('en-US')} known persons`,
  bulk: `events bulk x${settings.bulkSize}, ${settings.bulkSize} persons each (${(bulkPool * settings.bulkSize).toLocaleString('en-US')} known)`,
};

export const sealingLabel = (sealing: boolean): string => `PROJECTIONS=off, SEALING=${sealing ? 'on' : 'off'}`;

function scenarios(license: string, config: string, tag: string): Scenario[] {
  const base = `/v1/accounts/${license}/events`;
  return [
    { name: sealingScenarioNames.newPerson, config, path: base, items: 1, bulkKind: null, body: newPersonEventBody(`${tag}-new`), verify: queued },
    { name: sealingScenarioNames.known, config, path: base, items: 1, bulkKind: null, body: knownPersonEventBody('sealing', knownPersons), verify: queued },
    { name: sealingScenarioNames.bulk, config, path: `${base}/bulk`, items: settings.bulkSize, bulkKind: 'events', body: eventsBulkOverPool(settings.bulkSize, bulkPool), verify: allQueued },
  ];
}

/** The median; the mean of the middle two for an even count. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function summarise(runs: readonly SealingRun[]): SealingSummary[] {
  return Object.values(sealingScenarioNames).map((scenario) => {
    const of = (sealing: boolean): Row[] => runs.filter((run) => run.sealing === sealing).flatMap((run) => run.rows.filter((row) => row.scenario === scenario));
    const [withRows, withoutRows] = [of(true), of(false)];
    const withReqPerSec = median(withRows.map((r) => r.reqPerSec));
    const withoutReqPerSec = median(withoutRows.map((r) => r.reqPerSec));
    const rounds = [...new Set(runs.map((run) => run.round))];
    const roundRatios = rounds.flatMap((round) => {
      const rate = (sealing: boolean): number | undefined =>
        runs.find((run) => run.round === round && run.sealing === sealing)?.rows.find((row) => row.scenario === scenario)?.reqPerSec;
      const [on, off] = [rate(true), rate(false)];
      return on === undefined || off === undefined || off === 0 ? [] : [on / off];
    });
    return {
      scenario,
      withReqPerSec,
      withoutReqPerSec,
      withItemsPerSec: median(withRows.map((r) => r.itemsPerSec)),
      withoutItemsPerSec: median(withoutRows.map((r) => r.itemsPerSec)),
      ratio: withReqPerSec / withoutReqPerSec,
      withP99Ms: median(withRows.map((r) => r.p99Ms)),
      withoutP99Ms: median(withoutRows.map((r) => r.p99Ms)),
      roundRatios,
    };
  });
}

async function measureRun(dataDir: string, adminToken: string, children: Child[], round: number, sealing: boolean): Promise<SealingRun> {
  const config = sealingLabel(sealing);
  setPhase(`sealing: start (${config})`);
  const service = await startService(`service (${config})`, dataDir, adminToken, children, { projections: false, sealing });
  try {
    const account = await createAccount(service.url, adminToken, `Sealing ${round} ${sealing ? 'on' : 'off'}`);
    const bulkUrl = `${service.url}/v1/accounts/${account.licenseCode}/events/bulk`;
    setPhase(`sealing: known persons (${config})`);
    say(`sealing round ${round} (${config}): posting the known persons`);
    await postAll(bulkUrl, account.accessToken, knownPersonsBulkBodies('sealing', knownPersons, settings.bulkSize), seedConcurrency);
    const bulk = eventsBulkOverPool(settings.bulkSize, bulkPool);
    await postAll(bulkUrl, account.accessToken, Array.from({ length: bulkPool }, (_, n) => bulk(n)), seedConcurrency);
    const target: Target = {
      url: service.url,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.accessToken}` },
      child: service.child,
      worker: null,
      pgPid: await postmasterPid(dataDir),
      store: null,
    };
    const rows: Row[] = [];
    for (const scenario of scenarios(account.licenseCode, config, `s${round}${sealing ? 'on' : 'off'}`)) {
      interrupted.throwIfAborted();
      rows.push(await measure(scenario, target));
    }
    return { round, sealing, rows };
  } finally {
    await stopService(service);
  }
}

export async function sealingGroup(dataDir: string, adminToken: string, children: Child[]): Promise<SealingResult> {
  const runs: SealingRun[] = [];
  for (let round = 1; round <= settings.sealingRounds; round++) {
    const order = round % 2 === 1 ? [true, false] : [false, true];
    for (const sealing of order) runs.push(await measureRun(dataDir, adminToken, children, round, sealing));
  }
  return { rounds: settings.sealingRounds, runs, summary: summarise(runs) };
}
