import { projections } from '../../projections/index.js';
import { liveWorkers } from '../../projections/runner/claims-sql.js';
import type { Projection } from '../../projections/runner/projection.js';
import { accountCaughtUp, rebuildAccount } from '../../projections/runner/rebuild.js';
import { ProjectionWorker } from '../../projections/runner/worker.js';
import { findAccount } from '../accounts/accounts.js';
import { CliError, type CliContext } from './context.js';

const pollMs = 200;

/**
 * `tracking projections rebuild <name|all> --account <license|id>`: the account's rows go, and the
 * workers replay its events while every other account goes on. With no worker alive, one started
 * here does it (and stops at the end), as a whole rebuild does.
 */
export async function rebuildOneAccount({ pool, store, log }: CliContext, selected: readonly Projection[], given: string, json: boolean): Promise<void> {
  const account = await findAccount(pool, given, { orId: true });
  if (!account) throw new CliError(`no account with the license code or id ${given}`, 1);
  const started = Date.now();
  const live = (await pool.query<{ live: number }>(liveWorkers)).rows[0]?.live ?? 0;
  // Started before the rows go, so that a failure to start leaves the read models as they were.
  const worker = live === 0 ? new ProjectionWorker({ pool, store, log, projections, lanes: 2 }).start() : null;
  try {
    await rebuildAccount(pool, selected, account.id);
    while (!(await accountCaughtUp(pool, selected, account.id))) await new Promise((resolve) => setTimeout(resolve, pollMs));
  } finally {
    await worker?.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  const names = selected.map((p) => p.name);
  const by = worker ? 'in this process' : 'by the workers';
  if (json) console.log(JSON.stringify({ accountId: account.id, licenseCode: account.licenseCode, projections: names, ranHere: worker !== null, seconds }));
  else console.log(`account ${account.licenseCode} (${account.name}): ${names.join(', ')} rebuilt ${by} in ${seconds.toFixed(1)} s`);
}
