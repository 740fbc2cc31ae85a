import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { mixedCeiling, printWriteCeilings } from './ceilings.js';
import { interrupted, stopChild, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { hostileGroup, largeReplies, printHostile, wideJson, type HostileRow } from './hostile.js';
import { freshnessGroup, type FreshnessRow } from './freshness.js';
import { printImport } from './import.js';
import { erasureGroup, type ErasureResult } from './erasure.js';
import { exportGroup, printExport, type ExportResult } from './export.js';
import { backlogGroup, printBacklog, type BacklogResult } from './backlog.js';
import { printErasure, printSealing } from './erasure-report.js';
import { ingestGroups } from './ingest.js';
import { leadsGroup, printLeads, type LeadsRow } from './leads.js';
import { projectionGroups, type Projected } from './projection-group.js';
import { printIngest, printMemory, printProblems, printProjections, printServers, printVisibility } from './report.js';
import { sdkGroup, printSdk, type SdkMemory, type SdkRow } from './sdk.js';
import { sealingGroup, type SealingResult } from './sealing.js';
import { browserGroup, printBrowser, type BrowserResult } from './browser.js';
import { printSegment, segmentGroup, type SegmentResult } from './segment.js';
import { root, selected, settings, type ScenarioGroup } from './settings.js';
import { printFreshness, printWorkers } from './sharing-report.js';
import { applyCeilings, printTargets, targetLines } from './targets.js';
import { workersGroup, type WorkersResult } from './workers.js';

/*
 * `npm run bench`: the service (embedded PostgreSQL, fresh data directory) and the machine's own
 * ceilings, measured in the same run, each scenario printed as a ratio to its ceiling
 * (docs/performance.md). Groups, picked with BENCH_SCENARIOS (comma-separated, default all; the
 * hello-world baseline always runs):
 *  - ceilings: the raw write ceiling, PostgreSQL alone storing the service's rows (ceilings.ts);
 *  - ingest: autocannon on the ingest endpoints, the service as `npm start` runs it, beside a
 *    worker process, and with PROJECTIONS=off (ingest.ts);
 *  - import: 50,000 profiles in bulk until all are in the leads read model (import.ts);
 *    these three on one data directory, then on a second:
 *  - apply, rebuild: the projections on a store filled in SQL, and the raw read ceiling (the
 *    catch-up query alone); visibility: POST to lead visible under steady ingest (projection-group.ts);
 *  - freshness: POST to lead visible for one account while another imports, as npm start runs it
 *    (freshness.ts), on a data directory of its own;
 *  - workers: catch-up by one worker process and by two, alternately, on a store of many accounts,
 *    and how they share the parts (workers.ts), on another;
 *  - leads: the leads list on an account of a million leads (leads.ts), on a third;
 *  - sdk: the SDK's throughput and memory (sdk.ts), on a fourth;
 *  - hostile: the heap and a bystander's latency while two accounts send bodies that parse into
 *    millions of objects, or read back large stored events (hostile.ts), on a fifth;
 *  - sealing: single events of new persons and of known ones, and bulk events, with PROJECTIONS=off
 *    and SEALING on and off in turn, a fresh service each run (sealing.ts), on a sixth;
 *  - erasure: the erasure of a person of 10,000 events, as npm start runs it, while another account
 *    posts single events: its time, the other's req/s and p99 before and during, the memory (erasure.ts), on a seventh;
 *  - browser: single and bulk events sent with a browser key (?key=, Origin, text/plain) and with an
 *    access token, in turn, PROJECTIONS=off (browser.ts), on an eighth;
 *  - segment: Segment's /v1/batch (track, a mix with identify, 500 a batch) against events/bulk and
 *    users/bulk per item, in turn, PROJECTIONS=off (segment.ts), on a ninth;
 *  - export: the export of an account of a million events against PostgreSQL reading its rows and
 *    the store's read with fields opened, and the service's memory (export.ts), on a tenth;
 *  - backlog: an account's backlog of 12,000 sealed events of 8 KB drained after a restart, against
 *    the same kind of events applied as they arrive (backlog.ts), on an eleventh.
 * Throughout, the resident memory of every process started is sampled (rss.ts). The end: a table
 * of the targets. Other settings: bench/settings.ts. BENCH_JSON (a path): also write the results
 * there. Exits 1 if any response was not a success, a lead never showed, the read models
 * disagree with the store after a projection scenario or an erasure did not finish.
 */

function machine(): Record<string, string | number> {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${process.platform} ${release()}`,
    // Other work on the machine skews every number; a high value here means a noisy run.
    loadAvg1mAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

const groupsOf = (...names: ScenarioGroup[]): boolean => names.some((name) => selected.has(name));

async function main(): Promise<void> {
  const info = machine();
  const started = performance.now();
  const dirs = {
    ingest: await mkdtemp(join(tmpdir(), 'tracking-bench-')),
    projections: await mkdtemp(join(tmpdir(), 'tracking-bench-projections-')),
    spare: await mkdtemp(join(tmpdir(), 'tracking-bench-visibility-')),
    leads: await mkdtemp(join(tmpdir(), 'tracking-bench-leads-')),
    sdk: await mkdtemp(join(tmpdir(), 'tracking-bench-sdk-')),
    hostile: await mkdtemp(join(tmpdir(), 'tracking-bench-hostile-')),
    freshness: await mkdtemp(join(tmpdir(), 'tracking-bench-freshness-')),
    workers: await mkdtemp(join(tmpdir(), 'tracking-bench-workers-')),
    sealing: await mkdtemp(join(tmpdir(), 'tracking-bench-sealing-')),
    erasure: await mkdtemp(join(tmpdir(), 'tracking-bench-erasure-')),
    browser: await mkdtemp(join(tmpdir(), 'tracking-bench-browser-')),
    segment: await mkdtemp(join(tmpdir(), 'tracking-bench-segment-')),
    export: await mkdtemp(join(tmpdir(), 'tracking-bench-export-')),
    backlog: await mkdtemp(join(tmpdir(), 'tracking-bench-backlog-')),
  };
  const adminToken = randomBytes(24).toString('base64url');
  const children: Child[] = [];
  let failed = false;
  try {
    const ingested = await ingestGroups(dirs.ingest, adminToken, children);
    const projected: Projected = groupsOf('apply', 'rebuild', 'visibility')
      ? await projectionGroups(dirs.projections, dirs.spare, adminToken, children)
      : { projections: [], readModelProblems: [], visibility: null, storeMix: new Map() };
    const freshness: FreshnessRow | null = selected.has('freshness') ? await freshnessGroup(dirs.freshness, adminToken, children) : null;
    const workers: WorkersResult | null = selected.has('workers') ? await workersGroup(dirs.workers, adminToken, children) : null;
    const leads: LeadsRow[] = selected.has('leads') ? await leadsGroup(dirs.leads, adminToken, children, settings.leads, settings.leadsRequests) : [];
    const sdk: { rows: SdkRow[]; memory: SdkMemory } | null = selected.has('sdk') ? await sdkGroup(root, dirs.sdk, adminToken, children, settings.sdkEvents) : null;

    const hostile: HostileRow[] = selected.has('hostile') ? await hostileGroup(dirs.hostile, adminToken, children, { 'wide JSON': wideJson, 'large replies': largeReplies() }) : [];

    const sealing: SealingResult | null = selected.has('sealing') ? await sealingGroup(dirs.sealing, adminToken, children) : null;
    const erasure: ErasureResult | null = selected.has('erasure') ? await erasureGroup(dirs.erasure, adminToken, children) : null;

    const browser: BrowserResult | null = selected.has('browser') ? await browserGroup(dirs.browser, adminToken, children) : null;
    const segment: SegmentResult | null = selected.has('segment') ? await segmentGroup(dirs.segment, adminToken, children) : null;

    const exported: ExportResult | null = selected.has('export') ? await exportGroup(dirs.export, adminToken, children) : null;
    const backlog: BacklogResult | null = selected.has('backlog') ? await backlogGroup(dirs.backlog, adminToken, children) : null;

    const results = { ...ingested, projected, freshness, workers, sealing, erasure, browser, segment, children };
    applyCeilings(results);
    const loadAtEnd = Math.round((loadavg()[0] ?? 0) * 100) / 100;
    printIngest({ ...info, loadAvg1mAtEnd: loadAtEnd, minutes: ((performance.now() - started) / 60_000).toFixed(1) }, settings, ingested.rows);
    if (ingested.ceilings) printWriteCeilings(ingested.ceilings, settings.ceilingRowsPerStatement);
    printServers(ingested.servers);
    if (ingested.imported && printImport(ingested.imported)) failed = true;
    const baselineRate = ingested.rows.find((r) => r.config === 'baseline')?.reqPerSec ?? null;
    if (projected.projections.length) printProjections(projected.projections, baselineRate);
    if (projected.visibility && printVisibility(projected.visibility)) failed = true;
    if (freshness && printFreshness(freshness)) failed = true;
    if (workers) printWorkers(workers, ingested.ceilings && workers.storeMix.size > 0 ? mixedCeiling(ingested.ceilings, workers.storeMix) : null);
    if (leads.length) printLeads(leads, settings.leads, settings.leadsRequests);
    if (sdk && printSdk(sdk.rows, sdk.memory)) failed = true;
    if (hostile.length && printHostile(hostile)) failed = true;
    if (sealing && printSealing(sealing)) failed = true;
    if (erasure && printErasure(erasure)) failed = true;
    if (browser && printBrowser(browser)) failed = true;
    if (segment && printSegment(segment)) failed = true;
    if (exported && printExport(exported)) failed = true;
    if (backlog && printBacklog(backlog)) failed = true;
    printMemory(children);
    const targets = targetLines(results);
    printTargets(targets);
    if (printProblems(ingested.rows, children, [...projected.readModelProblems, ...(workers?.problems ?? [])])) failed = true;
    if (process.env.BENCH_JSON) {
      const logs = Object.fromEntries(children.map((c) => [c.name, { problemLines: c.problemCount, first: c.problems, maxRssBytes: c.rss.maxBytes, maxRssDuring: c.rss.during }]));
      const output = { machine: { ...info, loadAvg1mAtEnd: loadAtEnd }, settings, ...ingested, ...projected, storeMix: Object.fromEntries(projected.storeMix), freshness, workers: workers && { ...workers, storeMix: Object.fromEntries(workers.storeMix) }, leads, sdk, hostile, sealing, erasure, browser, segment, export: exported, backlog, targets, logs };
      await writeFile(process.env.BENCH_JSON, `${JSON.stringify(output, null, 2)}\n`);
      console.log(`results written to ${process.env.BENCH_JSON}`);
    }
  } finally {
    try {
      for (const child of children.reverse()) {
        const outcome = await stopChild(child, 60_000);
        if (!outcome.startsWith('already exited')) console.log(`${child.name} stopped (SIGTERM): ${outcome}`);
      }
    } finally {
      // A service killed for hanging may have left its PostgreSQL running: stop those first.
      for (const dir of Object.values(dirs)) {
        const pid = await postmasterPid(dir);
        try {
          if (pid !== null) process.kill(pid, 'SIGINT');
        } catch {
          // Gone already.
        }
      }
      for (const dir of Object.values(dirs)) await rm(dir, { recursive: true, force: true });
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  if (interrupted.aborted) console.error(`bench interrupted (${String(interrupted.reason)}); children stopped, data removed`);
  else console.error('bench failed:', error);
  process.exitCode = 1;
});
