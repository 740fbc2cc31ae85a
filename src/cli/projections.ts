import cliProgress from 'cli-progress';
import { projectionNamed, projections } from '../../projections/index.js';
import type { Projection } from '../../projections/runner/projection.js';
import { liveWorkers } from '../../projections/runner/claims-sql.js';
import { accountCaughtUp, rebuildAccount, rebuildProjections } from '../../projections/runner/rebuild.js';
import { retryParked } from '../../projections/runner/retry.js';
import { projectionStatus, type ProjectionStatus, type ProjectionsStatus } from '../../projections/runner/status.js';
import type { Pool } from '../db/pool.js';
import { CliError, withContext } from './context.js';

function describeProjection(s: ProjectionStatus): string {
  const lines = [
    `${s.projection}: ${s.eventsApplied} events applied, updated ${s.updatedAt ?? 'never'}`,
    `  lag: ${s.lagEventsAtLeast ? 'at least ' : ''}${s.lagEvents} events, ${s.lagSeconds.toFixed(1)} s, ${s.accountsBehind} account${s.accountsBehind === 1 ? '' : 's'} behind`,
  ];
  const r = s.rebuild;
  if (r?.state === 'requested') lines.push(`  rebuild requested at ${r.requestedAt}, waiting for a worker`);
  if (r?.state === 'running') lines.push(`  rebuilding since ${r.startedAt}: ${s.eventsApplied} of ${r.target ?? '?'} events replayed`);
  if (r?.state === 'finished') lines.push(`  last rebuilt ${r.startedAt} to ${r.finishedAt} (${r.target ?? '?'} events at its start)`);
  if (s.parked.events) {
    lines.push(`  parked: ${s.parked.events} event${s.parked.events === 1 ? '' : 's'} it could not apply (tracking projections retry ${s.projection}); latest:`);
    for (const p of s.parked.latest) {
      const account = p.accountId ? `, account ${p.accountId}` : '';
      lines.push(`    ${p.eventType} ${p.eventId} at ${p.globalPosition}${account}, parked ${p.parkedAt}, ${p.attempts} attempt(s): ${p.sqlstate ? `[${p.sqlstate}] ` : ''}${p.error}`);
    }
  }
  return lines.join('\n');
}

function describeStatus(status: ProjectionsStatus): string {
  const held = status.parts.filter((p) => p.owner).length;
  const sections = [
    `workers: ${status.workers.length ? status.workers.map((w) => `${w.worker} (parts ${w.parts.join(', ') || 'none'})`).join('; ') : 'none alive'}`,
    `parts: ${held} of ${status.parts.length} held`,
    ...status.parts.map((p) =>
      p.owner
        ? `  part ${p.part}: ${p.owner.worker}, epoch ${p.epoch}, lease to ${p.leaseExpiresAt ?? '?'}, ${p.accountsBehind ?? '?'} account(s) behind`
        : `  part ${p.part}: nobody (epoch ${p.epoch})`,
    ),
    '',
    ...status.projections.map(describeProjection),
  ];
  sections.push('', status.accountsBehind.length ? 'accounts furthest behind:' : 'no account behind');
  for (const a of status.accountsBehind) sections.push(`  ${a.accountId}: ${a.projection} ${a.lagEvents} events, ${a.lagSeconds.toFixed(1)} s (checkpoint ${a.checkpoint ?? 'start'})`);
  return sections.join('\n');
}

async function status(json: boolean): Promise<void> {
  const result = await withContext(({ pool, store }) => projectionStatus(pool, store));
  console.log(json ? JSON.stringify(result) : describeStatus(result));
}

async function rebuild(name: string | undefined, accountOption: string | undefined, json: boolean): Promise<void> {
  const selected = selectedProjections('rebuild', name);
  await withContext(async ({ pool, store, log }) => {
    if (accountOption !== undefined) return rebuildOneAccount(pool, selected, accountOption, json);
    const bars = json || !process.stdout.isTTY
      ? null
      : new cliProgress.MultiBar(
          { format: '{name} [{bar}] {percentage}% | {value}/{total} events | {duration}s', hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
    const width = Math.max(...selected.map((p) => p.name.length));
    const shown = new Map<string, cliProgress.SingleBar>();
    const results = await rebuildProjections(pool, store, selected, {
      log,
      onProgress: (projection, { applied, target }) => {
        if (!bars || target === null) return;
        let bar = shown.get(projection.name);
        if (!bar) {
          bar = bars.create(Math.max(target, 1), 0, { name: projection.name.padEnd(width) });
          shown.set(projection.name, bar);
        }
        bar.setTotal(Math.max(target, applied, 1));
        bar.update(applied, { name: projection.name.padEnd(width) });
      },
    });
    bars?.stop();
    for (const result of results) {
      if (json) console.log(JSON.stringify(result));
      else {
        const by = result.ranHere ? 'in this process' : 'by the workers';
        console.log(`${result.projection}: rebuilt ${by}, ${result.events} events replayed in ${result.seconds.toFixed(1)} s`);
      }
    }
  });
}

/** One account (by license code or id): its rows go, and the workers replay it while every other account goes on. */
async function rebuildOneAccount(pool: Pool, selected: Projection[], account: string, json: boolean): Promise<void> {
  const { rows } = await pool.query<{ id: string }>('SELECT id::text AS id FROM accounts WHERE license_code = $1 OR id::text = $1', [account]);
  const accountId = rows[0]?.id;
  if (!accountId) throw new CliError(`no account with the license code or id ${account}`, 1);
  const started = Date.now();
  await rebuildAccount(pool, selected, accountId);
  const live = (await pool.query<{ live: number }>(liveWorkers)).rows[0]?.live ?? 0;
  if (live === 0) throw new CliError(`account ${account}: read models emptied; no projection worker is alive to replay them (start one: npm run worker)`, 1);
  while (!(await accountCaughtUp(pool, selected, accountId))) await new Promise((resolve) => setTimeout(resolve, 200));
  const seconds = (Date.now() - started) / 1000;
  if (json) console.log(JSON.stringify({ accountId, projections: selected.map((p) => p.name), seconds }));
  else console.log(`account ${account}: ${selected.map((p) => p.name).join(', ')} rebuilt by the workers in ${seconds.toFixed(1)} s`);
}

function selectedProjections(action: string, name: string | undefined): Projection[] {
  const names = name === 'all' ? projections.map((p) => p.name) : name ? [name] : [];
  const selected = names.map((n) => projectionNamed(n));
  if (selected.length === 0 || selected.some((p) => !p)) {
    throw new CliError(`usage: tracking projections ${action} <${projections.map((p) => p.name).join('|')}|all>`, 2);
  }
  return selected.filter((p) => p !== undefined);
}

async function retry(name: string | undefined, json: boolean): Promise<void> {
  const selected = selectedProjections('retry', name);
  await withContext(async ({ pool, store, log }) => {
    for (const projection of selected) {
      const result = await retryParked(pool, store, projection, log);
      if (json) console.log(JSON.stringify(result));
      else console.log(`${result.projection}: ${result.retried} parked events retried, ${result.applied} applied, ${result.stillParked} still parked`);
    }
  });
}

export async function projectionsCommand(args: string[], json: boolean): Promise<void> {
  const [action, name, ...rest] = args;
  if (action === 'status') return status(json);
  if (action === 'rebuild') {
    const accountAt = rest.indexOf('--account');
    if (accountAt >= 0 && !rest[accountAt + 1]) throw new CliError('usage: tracking projections rebuild <name|all> [--account <license code|account id>]', 2);
    return rebuild(name, accountAt >= 0 ? rest[accountAt + 1] : undefined, json);
  }
  if (action === 'retry') return retry(name, json);
  throw new CliError('usage: tracking projections status | rebuild <name|all> [--account <license code|account id>] | retry <name|all>', 2);
}
