import cliProgress from 'cli-progress';
import { projectionNamed, projections } from '../../projections/index.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { projectionStatus, type ProjectionStatus } from '../../projections/status.js';
import { CliError, withContext } from './context.js';

function describeStatus(s: ProjectionStatus): string {
  const who = s.active ? `active on ${s.active.worker} since ${s.active.since}` : 'no active worker';
  const standby = s.standby.length ? `, ${s.standby.length} standing by (${s.standby.map((w) => w.worker).join(', ')})` : '';
  const lines = [
    `${s.projection}: ${who}${standby}`,
    `  checkpoint ${s.checkpoint ?? '(start)'}, ${s.eventsApplied} events applied, updated ${s.updatedAt ?? 'never'}`,
    `  lag: ${s.lagEvents} events, ${s.lagSeconds.toFixed(1)} s`,
  ];
  const r = s.rebuild;
  if (r?.state === 'requested') lines.push(`  rebuild requested at ${r.requestedAt}, waiting for the active worker`);
  if (r?.state === 'running') lines.push(`  rebuilding since ${r.startedAt}: ${s.eventsApplied} of ${r.target ?? '?'} events replayed`);
  if (r?.state === 'finished') lines.push(`  last rebuilt ${r.startedAt} to ${r.finishedAt} (${r.target ?? '?'} events at its start)`);
  return lines.join('\n');
}

async function status(json: boolean): Promise<void> {
  const list = await withContext(({ pool, store }) => projectionStatus(pool, store));
  console.log(json ? JSON.stringify(list) : list.map(describeStatus).join('\n\n'));
}

async function rebuild(name: string | undefined, json: boolean): Promise<void> {
  const names = name === 'all' ? projections.map((p) => p.name) : name ? [name] : [];
  const selected = names.map((n) => projectionNamed(n));
  if (selected.length === 0 || selected.some((p) => !p)) {
    throw new CliError(`usage: tracking projections rebuild <${projections.map((p) => p.name).join('|')}|all>`, 2);
  }
  await withContext(async ({ pool, store, log }) => {
    for (const projection of selected) {
      if (!projection) continue;
      const bar = json || !process.stdout.isTTY
        ? null
        : new cliProgress.SingleBar(
            { format: `${projection.name} [{bar}] {percentage}% | {value}/{total} events | {duration}s`, hideCursor: true },
            cliProgress.Presets.shades_classic,
          );
      let started = false;
      const result = await rebuildProjection(pool, store, projection, {
        log,
        onProgress: ({ applied, target }) => {
          if (!bar || target === null) return;
          if (!started) bar.start(Math.max(target, 1), 0);
          started = true;
          bar.setTotal(Math.max(target, applied, 1));
          bar.update(applied);
        },
      });
      bar?.stop();
      const summary = { projection: projection.name, events: result.events, seconds: result.seconds, ranHere: result.ranHere };
      if (json) console.log(JSON.stringify(summary));
      else {
        const by = result.ranHere ? 'in this process' : 'by the active worker';
        console.log(`${projection.name}: rebuilt ${by}, ${result.events} events replayed in ${result.seconds.toFixed(1)} s`);
      }
    }
  });
}

export async function projectionsCommand(args: string[], json: boolean): Promise<void> {
  const [action, name] = args;
  if (action === 'status') return status(json);
  if (action === 'rebuild') return rebuild(name, json);
  throw new CliError('usage: tracking projections status | rebuild <name|all>', 2);
}
