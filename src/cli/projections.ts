import cliProgress from 'cli-progress';
import { projectionNamed, projections } from '../../projections/index.js';
import type { Projection } from '../../projections/runner/projection.js';
import { rebuildProjections } from '../../projections/runner/rebuild.js';
import { retryParked } from '../../projections/runner/retry.js';
import { projectionStatus } from '../../projections/runner/status.js';
import { CliError, withContext } from './context.js';
import { statusText } from './projections-text.js';
import { rebuildOneAccount } from './rebuild-account.js';

async function status(json: boolean): Promise<void> {
  const result = await withContext(({ pool, store }) => projectionStatus(pool, store));
  console.log(json ? JSON.stringify(result) : statusText(result));
}

async function rebuild(name: string | undefined, accountOption: string | undefined, json: boolean): Promise<void> {
  const selected = selectedProjections('rebuild', name);
  await withContext(async (context) => {
    if (accountOption !== undefined) return rebuildOneAccount(context, selected, accountOption, json);
    const { pool, store, log } = context;
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

function selectedProjections(action: string, name: string | undefined): Projection[] {
  const names = name === 'all' ? projections.map((p) => p.name) : name ? [name] : [];
  const selected = names.map((n) => projectionNamed(n));
  if (selected.length === 0 || selected.some((p) => !p)) {
    throw new CliError(`usage: tracking projections ${action} <${projections.map((p) => p.name).join('|')}|all>${action === 'rebuild' ? ' [--account <license code|account id>]' : ''}`, 2);
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

const usage = 'usage: tracking projections status | rebuild <name|all> [--account <license code|account id>] | retry <name|all>';

export interface ProjectionsOptions {
  json: boolean;
  /** `--account`: a license code or account id (rebuild only). */
  account?: string;
}

export async function projectionsCommand(args: string[], { json, account }: ProjectionsOptions): Promise<void> {
  const [action, name, ...rest] = args;
  if (rest.length > 0) throw new CliError(`unexpected ${rest.join(' ')}\n${usage}`, 2);
  if (account !== undefined && action !== 'rebuild') throw new CliError(`--account is for rebuild only\n${usage}`, 2);
  if (account !== undefined && account.trim() === '') throw new CliError(`--account needs a license code or account id\n${usage}`, 2);
  if (action === 'status') return status(json);
  if (action === 'rebuild') return rebuild(name, account, json);
  if (action === 'retry') return retry(name, json);
  throw new CliError(usage, 2);
}
