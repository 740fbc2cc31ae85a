import type { Pool } from '../../src/db/pool.js';
import { inTransaction } from '../../src/db/transaction.js';
import { countLeadsSql, estimateLeadsSql, type ListShape } from './queries-sql.js';

/**
 * The total of the leads list (its filters, every page): counted exactly when that is cheap, else
 * the planner's estimate, marked as one (docs/api.md, Leads).
 */
export interface LeadTotal {
  count: number;
  /** False: `count` is PostgreSQL's estimate, to show as "about". */
  exact: boolean;
}

/** Leads counted one by one at most: above it, the total is an estimate. */
export const exactCountCap = 10_000;

/** PostgreSQL's code of a statement cancelled by statement_timeout. */
const queryCanceled = '57014';

type CountShape = Omit<ListShape, 'walk' | 'cursor'>;

/** The rows the planner expects of the plan's top node. */
function planRows(plan: unknown): number {
  const top = (plan as [{ Plan?: { 'Plan Rows'?: unknown } }] | undefined)?.[0]?.Plan?.['Plan Rows'];
  return typeof top === 'number' && Number.isFinite(top) ? Math.round(top) : 0;
}

/**
 * `filters`: the parameters of the list's filters after the account ($1), in listLeadsSql's order
 * (kind, pattern, attribute candidates). `exactCountMs`: how long the exact count may take before the
 * estimate answers instead (a rare short `q` reads many rows); LEADS_EXACT_COUNT_MS, 50 by default.
 */
export async function countLeads(pool: Pool, shape: CountShape, accountId: string, filters: unknown[], exactCountMs: number): Promise<LeadTotal> {
  let counted: number | null = null;
  try {
    counted = await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${exactCountMs}`);
      const { rows } = await client.query<{ leads: number }>(countLeadsSql(shape), [accountId, exactCountCap + 1, ...filters]);
      return rows[0]?.leads ?? 0;
    });
  } catch (error) {
    if ((error as { code?: unknown }).code !== queryCanceled) throw error;
  }
  if (counted !== null && counted <= exactCountCap) return { count: counted, exact: true };
  const { rows } = await pool.query<{ 'QUERY PLAN': unknown }>(estimateLeadsSql(shape), [accountId, ...filters]);
  const estimate = planRows(rows[0]?.['QUERY PLAN']);
  // Past the cap, the count is known to be above it, whatever the planner thinks.
  return { count: counted === null ? estimate : Math.max(estimate, exactCountCap + 1), exact: false };
}
