import type { Account } from '../accounts/account.js';
import { checkErasureRequest, findErasure, listErasures, requestErasure, type Erasure, type ErasureCounts } from '../erasure/requests.js';
import { ErasureRunner } from '../erasure/runner.js';
import { Pseudonyms } from '../eventstore/pseudonyms.js';
import { Validator } from '../ingest/validation.js';
import { accountArgument, CliError, withContext, type CliContext } from './context.js';
import { instantText } from './instant-text.js';
import { table } from './projections-text.js';

const pollMs = 200;
const defaultLimit = 50;
const maxLimit = 10_000;

export const eraseUsage = 'usage: tracking erase --account <license|id> (--user <userId> | --anonymous <anonymousId> | both) [--suppress] [--no-wait] [--json]';
export const erasuresUsage = 'usage: tracking erasures --account <license|id> [--limit N] [--json]';

export interface EraseOptions {
  account?: string;
  user?: string;
  anonymous?: string;
  suppress: boolean;
  wait: boolean;
  json: boolean;
}

export interface ErasuresOptions {
  account?: string;
  limit?: string;
  json: boolean;
}

const counted = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** `2 keys, 6 events, 2 leads, 1 refused item, 0 replies`. */
export function countsText(counts: ErasureCounts): string {
  return [
    counted(counts.keys, 'key', 'keys'),
    counted(counts.events, 'event', 'events'),
    counted(counts.leads, 'lead', 'leads'),
    counted(counts.rejectedItems, 'refused item', 'refused items'),
    counted(counts.idempotencyReplies, 'reply', 'replies'),
  ].join(', ');
}

/** Who an erasure names: `user u-1`, `anonymous a-1`, or both. */
const whoText = (erasure: Erasure): string =>
  [idText('user', erasure.userId, erasure.userRef), idText('anonymous', erasure.anonymousId, erasure.anonymousRef)].filter((part) => part !== null).join(' + ');

/** An id as an erasure shows it: the id until it is done, then its pseudonym. */
const idText = (kind: string, id: string | null, ref: string | null): string | null => (id !== null ? `${kind} ${id}` : ref !== null ? `${kind} (pseudonym ${ref})` : null);

/**
 * Waits until the erasure is done or failed. A runner of this process takes part meanwhile (the
 * account's erasures only), so that it completes also when no service process runs: claims are
 * leased, so it and the service's runners never run one erasure twice.
 */
async function untilFinished({ pool, store, log }: CliContext, account: Account, id: string): Promise<Erasure> {
  const runner = new ErasureRunner({ pool, store, log: log.child({ component: 'erasure' }), accountId: account.id }).start();
  try {
    for (;;) {
      const erasure = await findErasure(pool, account.id, id);
      if (!erasure) throw new Error(`erasure ${id} is gone`);
      if (erasure.state !== 'pending') return erasure;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } finally {
    await runner.stop();
  }
}

/**
 * `tracking erase`: records an erasure request (requested by `cli`) and, unless --no-wait, waits
 * until it is carried out (docs/decisions.md, Erasure). A failed erasure exits 1 with its error.
 */
export async function eraseCommand(args: string[], options: EraseOptions): Promise<void> {
  const { account: given, user, anonymous, suppress, wait, json } = options;
  if (args.length > 0 || !given || (user === undefined && anonymous === undefined)) throw new CliError(eraseUsage, 2);
  // Checked as the HTTP API checks a request, before any database is opened.
  const checked = checkErasureRequest(new Validator(), {
    ...(user !== undefined && { userId: user }),
    ...(anonymous !== undefined && { anonymousId: anonymous }),
    ...(suppress && { suppress: true }),
  });
  if (!checked.ok) throw new CliError(checked.message);
  const erasure = await withContext(async (ctx) => {
    const account = await accountArgument(ctx.pool, given);
    const requested = await requestErasure(ctx.pool, await new Pseudonyms(ctx.pool).of(account.id), checked.request, 'cli');
    return wait ? untilFinished(ctx, account, requested.id) : requested;
  });
  if (json) console.log(JSON.stringify(erasure));
  if (erasure.state === 'failed') throw new CliError(`erasure ${erasure.id} failed: ${erasure.error ?? 'no error recorded'}`);
  if (json) return;
  if (erasure.state === 'pending') {
    console.log(`erasure ${erasure.id} pending: \`tracking erasures --account ${given}\` shows when it is done`);
    return;
  }
  const seconds = (Date.parse(erasure.doneAt ?? erasure.requestedAt) - Date.parse(erasure.requestedAt)) / 1000;
  const counts = erasure.counts ? countsText(erasure.counts) : 'nothing counted';
  console.log(`erasure ${erasure.id} done in ${seconds.toFixed(1)} s: ${counts} erased`);
}

/** `tracking erasures`: the account's erasures, the latest first. */
export async function erasuresCommand(args: string[], options: ErasuresOptions): Promise<void> {
  const { account: given, json } = options;
  if (args.length > 0 || !given) throw new CliError(erasuresUsage, 2);
  const limit = options.limit === undefined ? defaultLimit : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw new CliError(`--limit must be an integer from 1 to ${maxLimit}\n${erasuresUsage}`, 2);
  const page = await withContext(async ({ pool }) => listErasures(pool, (await accountArgument(pool, given)).id, limit));
  if (json) {
    console.log(JSON.stringify(page.erasures));
    return;
  }
  if (page.erasures.length === 0) {
    console.log('no erasures');
    return;
  }
  const lines = table(
    ['id', 'state', 'who', 'requested', 'done', 'erased'],
    page.erasures.map((e) => [
      e.id,
      e.state,
      `${whoText(e)}${e.suppress ? ' (suppressed)' : ''}`,
      instantText(e.requestedAt),
      instantText(e.doneAt),
      e.counts ? countsText(e.counts) : (e.error ?? '—'),
    ]),
  );
  for (const line of lines) console.log(line);
  if (page.nextCursor) console.log(`(the latest ${limit}; --limit for more)`);
}
