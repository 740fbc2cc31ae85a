import type { Projection } from '../../projections/runner/projection.js';
import { rebuildAccountAndWait } from '../../projections/runner/rebuild.js';
import { accountArgument, type CliContext } from './context.js';

const pollMs = 200;

/**
 * `tracking projections rebuild <name|all> --account <license|id>`: the account's rows go, and the
 * workers replay its events while every other account goes on. With no worker alive, one started
 * here does it (and stops at the end), as a whole rebuild does.
 */
export async function rebuildOneAccount({ pool, store, log }: CliContext, selected: readonly Projection[], given: string, json: boolean): Promise<void> {
  const account = await accountArgument(pool, given);
  const started = Date.now();
  const { ranHere } = await rebuildAccountAndWait(pool, store, log, selected, account.id, { pollMs });
  const seconds = (Date.now() - started) / 1000;
  const names = selected.map((p) => p.name);
  const by = ranHere ? 'in this process' : 'by the workers';
  if (json) console.log(JSON.stringify({ accountId: account.id, licenseCode: account.licenseCode, projections: names, ranHere, seconds }));
  else console.log(`account ${account.licenseCode} (${account.name}): ${names.join(', ')} rebuilt ${by} in ${seconds.toFixed(1)} s`);
}
