import cliProgress from 'cli-progress';
import { projectionNamed, projections } from '../../projections/index.js';
import type { Projection } from '../../projections/runner/projection.js';
import { rebuildProjection } from '../../projections/runner/rebuild.js';
import { retryParked } from '../../projections/runner/retry.js';
import { SharedCatchUp } from '../../projections/runner/shared-catch-up.js';
import { projectionStatus, type ProjectionStatus } from '../../projections/runner/status.js';
import { CliError, withContext } from './context.js';

function describeStatus(s: ProjectionStatus): string {
  const who = s.active ? `active on ${s.active.worker} since ${s.active.since}` : 'no active worker';
  const standby = s.standby.length ? `, ${s.standby.length} standing by (${s.standby.map((w) => w.worker).join(', ')})` : '';
  const lines = [
    `${s.projection}: ${who}${standby}`,
    `  checkpoint ${s.checkpoint ?? '(start)'}, ${s.eventsApplied} events applied, updated ${s.updatedAt ?? 'never'}`,
    `  lag: ${s.lagEventsAtLeast ? 'at least ' : ''}${s.lagEvents} events, ${s.lagSeconds.toFixed(1)} s`,
  ];
  const r = s.rebuild;
  if (r?.state === 'requested') lines.push(`  rebuild requested at ${r.requestedAt}, waiting for the active worker`);
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

async function status(json: boolean): Promise<void> {
  const list = await withContext(({ pool, store }) => projectionStatus(pool, store));
  console.log(json ? JSON.stringify(list) : list.map(describeStatus).join('\n\n'));
}

async function rebuild(name: string | undefined, json: boolean): Promise<void> {
  const selected = selectedProjections('rebuild', name);
  await withContext(async ({ pool, store, log }) => {
    // All at once: runners here then share their reads of the store. One alone reads only the
    // events of its types (and, for the track index, no payloads), which a shared read cannot.
    const source = selected.length > 1 ? new SharedCatchUp(store) : undefined;
    const bars = json || !process.stdout.isTTY
      ? null
      : new cliProgress.MultiBar(
          { format: '{name} [{bar}] {percentage}% | {value}/{total} events | {duration}s', hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
    const width = Math.max(...selected.map((p) => p.name.length));
    const results = await Promise.all(
      selected.map(async (projection) => {
        let bar: cliProgress.SingleBar | null = null;
        const result = await rebuildProjection(pool, store, projection, {
          log,
          source,
          onProgress: ({ applied, target }) => {
            if (!bars || target === null) return;
            bar ??= bars.create(Math.max(target, 1), 0, { name: projection.name.padEnd(width) });
            bar.setTotal(Math.max(target, applied, 1));
            bar.update(applied, { name: projection.name.padEnd(width) });
          },
        });
        return { projection: projection.name, ...result };
      }),
    );
    bars?.stop();
    for (const result of results) {
      if (json) console.log(JSON.stringify(result));
      else {
        const by = result.ranHere ? 'in this process' : 'by the active worker';
        console.log(`${result.projection}: rebuilt ${by}, ${result.events} events replayed in ${result.seconds.toFixed(1)} s`);
      }
    }
  });
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
  const [action, name] = args;
  if (action === 'status') return status(json);
  if (action === 'rebuild') return rebuild(name, json);
  if (action === 'retry') return retry(name, json);
  throw new CliError('usage: tracking projections status | rebuild <name|all> | retry <name|all>', 2);
}
