import { BatchFailedError, ItemRejectedError, type TrackingError } from './errors.js';
import { bodyOf, type Batch } from './queue.js';
import type { RetryPolicy } from './retry.js';
import type { AttemptOutcome, Transport } from './transport.js';
import type { ItemKind, ItemResult } from './types.js';

export interface Counters {
  sent: number;
  failed: number;
  retried: number;
}

export interface DeliveryContext {
  transport: Transport;
  policy: RetryPolicy;
  urlOf(kind: ItemKind): string;
  /** The batch's Idempotency-Key; throws when the `idempotencyKey` option fails or gives an unusable key. */
  keyOf(batch: Batch): string;
  report(error: TrackingError): void;
  /** Called once per batch, as it ends and before its items settle: it is then no longer held. */
  finish(batch: Batch): void;
  counters: Counters;
}

/** How an attempt ends: results per item, a refusal for good, or a reason to try again. */
type Verdict =
  | { type: 'results'; results: ItemResult[] }
  | { type: 'refused'; status: number; message: string }
  | { type: 'retry'; status: number | null; message: string; retryAfterMs: number | null };

/** Statuses worth another attempt: 408 Request Timeout, 429 Too Many Requests, every 5xx. */
function retriable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The error text of a reply: form A `{ error }`, form B `{ response: { message } }`, or nothing readable. */
function errorText(body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const { error, response } = body as { error?: unknown; response?: unknown };
    if (typeof error === 'string') return error;
    const message = typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : undefined;
    if (typeof message === 'string') return message;
  }
  return 'no error text in the reply';
}

function itemResult(value: unknown): ItemResult | null {
  if (typeof value !== 'object' || value === null) return null;
  const { status, trackID, message } = value as { status?: unknown; trackID?: unknown; message?: unknown };
  if (status === 'queued' && typeof trackID === 'string') return { status, trackID };
  if (status === 'error' && typeof message === 'string') return { status, message };
  return null;
}

/** The results of a 200 bulk reply: one per item, in order; null when the reply is not that. */
function bulkResults(body: unknown, items: number): ItemResult[] | null {
  const response = typeof body === 'object' && body !== null ? (body as { response?: unknown }).response : undefined;
  if (!Array.isArray(response) || response.length !== items) return null;
  const results: ItemResult[] = [];
  for (const value of response) {
    const result = itemResult(value);
    if (!result) return null;
    results.push(result);
  }
  return results;
}

function verdictOf(outcome: AttemptOutcome, items: number): Verdict {
  if (outcome.kind === 'no-reply') return { type: 'retry', status: null, message: outcome.message, retryAfterMs: null };
  const { status } = outcome;
  if (status === 200) {
    const results = bulkResults(outcome.body, items);
    // A 200 that is not a bulk reply came from something in between: the retry, under the same
    // key, gets the service's reply.
    if (results) return { type: 'results', results };
    return { type: 'retry', status, message: 'HTTP 200 that is not a bulk reply', retryAfterMs: outcome.retryAfterMs };
  }
  const message = `HTTP ${status}: ${errorText(outcome.body)}`;
  if (retriable(status)) return { type: 'retry', status, message, retryAfterMs: outcome.retryAfterMs };
  return { type: 'refused', status, message };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends one batch until it has results or fails for good, and settles its items: an error element
 * settles its item with the error at once; a refusal or a spent time budget settles every item
 * with the error. Never throws; calls `ctx.finish(batch)` once.
 */
export async function deliver(batch: Batch, ctx: DeliveryContext): Promise<void> {
  const { kind, entries } = batch;
  const fail = (status: number | null, attempts: number, message: string): void => {
    ctx.finish(batch);
    for (const entry of entries) entry.settle({ status: 'error', message });
    ctx.counters.failed += entries.length;
    ctx.report(new BatchFailedError(kind, entries.length, status, attempts, message));
  };
  let attempts = 0;
  try {
    const key = ctx.keyOf(batch);
    const body = await ctx.transport.encode(bodyOf(batch));
    const url = ctx.urlOf(kind);
    const firstAttemptAt = Date.now();
    for (;;) {
      attempts += 1;
      const verdict = verdictOf(await ctx.transport.post(url, body, key), entries.length);
      if (verdict.type === 'results') {
        ctx.finish(batch);
        for (const [index, result] of verdict.results.entries()) {
          (entries[index] as (typeof entries)[number]).settle(result);
          if (result.status === 'queued') ctx.counters.sent += 1;
          else {
            ctx.counters.failed += 1;
            ctx.report(new ItemRejectedError(kind, result.message));
          }
        }
        return;
      }
      if (verdict.type === 'refused') return fail(verdict.status, attempts, `${kind} batch refused by the service: ${verdict.message}`);
      const elapsedMs = Date.now() - firstAttemptAt;
      const delayMs = ctx.policy.delayMs(attempts - 1, elapsedMs, verdict.retryAfterMs);
      if (delayMs === null) {
        // Stopped before the budget was spent: the server asked for a wait past it.
        const waited = elapsedMs < ctx.policy.retryForMs ? ` (Retry-After ${Math.ceil((verdict.retryAfterMs ?? 0) / 1000)} s is past the budget)` : '';
        const message = `${kind} batch not delivered within retryForMs after ${attempts} attempts over ${Math.round(elapsedMs / 1000)} s${waited}: ${verdict.message}`;
        return fail(verdict.status, attempts, message);
      }
      ctx.counters.retried += 1;
      await sleep(delayMs);
    }
  } catch (error) {
    fail(null, attempts, `${kind} batch not sent: ${error instanceof Error ? error.message : String(error)}`);
  }
}
