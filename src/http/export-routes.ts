import { Router, type Request, type Response } from 'express';
import { AppError, badRequest } from '../errors.js';
import type { EventStore } from '../eventstore/port.js';
import { readFeed, type FeedWaits } from '../export/feed.js';
import { afterOf, exportParamsOf } from '../export/params.js';
import { ReaderSlots } from '../export/slots.js';
import { streamSink, writeExport, type ExportFormat } from '../export/write.js';
import type { Logger } from '../logger.js';
import { replyBudgetBytes } from '../../projections/reply-bytes.js';
import { accountOf, accountReadAuth, type Credentials } from './auth.js';
import { storeUnavailable } from './errors.js';
import { stringQuery } from './params.js';

export interface ExportRouteParts {
  credentials: Credentials;
  store: EventStore;
  log: Logger;
  /** Ends the feed's long polls at each append of their account in this process. */
  feedWaits: FeedWaits;
  /** True once the process is stopping: an export in progress is cut (its client resumes), a long poll answers. */
  isShuttingDown: () => boolean;
}

/** Exports of one account at once, and of all (a store read, its pages and a socket each). */
const exportSlots = { perAccount: 2, total: 16 };
/** Long polls of one account at once, and of all. */
const pollSlots = { perAccount: 8, total: 256 };
/** A client that takes none of the export for this long is cut off: its resources go back. */
const stalledWriteMs = 60_000;

const busy = (what: string, perAccount: number, retryAfter: number): AppError =>
  new AppError(429, `too many ${what} at once (at most ${perAccount} of an account); retry after ${retryAfter} s`, 'request', 'rate_limited', { 'Retry-After': String(retryAfter) });

const defaultFeedLimit = 100;
const maxFeedLimit = 1000;
/** The longest long poll: well under the idle timeouts of proxies. */
const maxWaitSeconds = 20;

function integerQuery(req: Request, name: string, { fallback, min, max }: { fallback: number; min: number; max: number }): number {
  const text = stringQuery(req, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw badRequest(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

const contentTypes: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8', parquet: 'application/vnd.apache.parquet' };

/**
 * An account's events out of the store (docs/export.md): the export, streamed whatever its size,
 * and the feed, a page at a time with a long poll. Same credentials as the read API.
 */
export function exportRoutes({ credentials, store, log, feedWaits, isShuttingDown }: ExportRouteParts): Router {
  const router = Router({ mergeParams: true });
  // On the two routes only: the routers mounted after this one on the same path have their own.
  const auth = accountReadAuth(credentials);
  const exports = new ReaderSlots(exportSlots.perAccount, exportSlots.total);
  const polls = new ReaderSlots(pollSlots.perAccount, pollSlots.total);

  router.get('/export', auth, async (req: Request, res: Response) => {
    const { format, filter, after, header } = exportParamsOf((name) => stringQuery(req, name), store);
    const accountId = accountOf(res).id;
    const release = exports.take(accountId);
    if (!release) throw busy('exports', exportSlots.perAccount, 5);
    res.on('close', release);
    const fileName = format === 'ndjson' ? 'events.ndjson' : `events-${filter.kind}.${format}`;
    // Trailers need a chunked reply (HTTP/1.1); an HTTP/1.0 client gets the events without one.
    const chunked = req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1);
    res.set({
      'Content-Type': contentTypes[format],
      'Content-Disposition': `attachment; filename="${fileName}"`,
      'Cache-Control': 'no-store',
      // Where a later export continues, past every event read (also those the filters left out).
      ...(chunked && { Trailer: 'Export-Cursor' }),
    });
    res.status(200);
    // A client that reads nothing for this long is let go (it continues from its last cursor).
    res.setTimeout(stalledWriteMs, () => res.destroy());
    try {
      const done = await writeExport(store, streamSink(res), { accountId, after, filter, format, header }, () => {
        if (isShuttingDown()) throw storeUnavailable('the service is stopping: continue from the last cursor received');
      });
      if (done.cursor !== null && chunked) res.addTrailers({ 'Export-Cursor': done.cursor });
      res.end();
    } catch (error) {
      if (!res.headersSent) {
        for (const name of ['Content-Disposition', 'Trailer', 'Content-Type']) res.removeHeader(name);
        throw error;
      }
      // Cut, never ended: the client sees an incomplete reply, and continues from the last cursor it has.
      log.warn({ err: error, accountId }, 'an export was cut off');
      res.destroy();
    }
  });

  router.get('/feed', auth, async (req: Request, res: Response) => {
    const after = afterOf((name) => stringQuery(req, name), store);
    const limit = integerQuery(req, 'limit', { fallback: defaultFeedLimit, min: 1, max: maxFeedLimit });
    const waitMs = integerQuery(req, 'wait', { fallback: 0, min: 0, max: maxWaitSeconds }) * 1000;
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const release = waitMs > 0 ? polls.take(accountOf(res).id) : () => undefined;
    if (!release) throw busy('long polls of the feed', pollSlots.perAccount, 1);
    res.on('close', release);
    const page = await readFeed(store, feedWaits, { accountId: accountOf(res).id, after, limit, maxBytes: replyBudgetBytes, waitMs }, gone.signal);
    res.set('Cache-Control', 'no-store').json(page);
  });
  return router;
}
