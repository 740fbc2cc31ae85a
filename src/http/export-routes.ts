import { Router, type Request, type Response } from 'express';
import { badRequest } from '../errors.js';
import type { EventStore } from '../eventstore/port.js';
import { readFeed, type FeedWaits } from '../export/feed.js';
import { afterOf, exportParamsOf } from '../export/params.js';
import { streamSink, writeExport, type ExportFormat } from '../export/write.js';
import type { Logger } from '../logger.js';
import { replyBudgetBytes } from '../../projections/reply-bytes.js';
import { accountOf, accountReadAuth, type Credentials } from './auth.js';
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

const contentTypes: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8' };

/**
 * An account's events out of the store (docs/export.md): the export, streamed whatever its size,
 * and the feed, a page at a time with a long poll. Same credentials as the read API.
 */
export function exportRoutes({ credentials, store, log, feedWaits, isShuttingDown }: ExportRouteParts): Router {
  const router = Router({ mergeParams: true });
  // On the two routes only: the routers mounted after this one on the same path have their own.
  const auth = accountReadAuth(credentials);

  router.get('/export', auth, async (req: Request, res: Response) => {
    const { format, filter, after, header } = exportParamsOf((name) => stringQuery(req, name), store);
    const accountId = accountOf(res).id;
    const fileName = format === 'csv' ? `events-${filter.kind}.csv` : 'events.ndjson';
    res.set({
      'Content-Type': contentTypes[format],
      'Content-Disposition': `attachment; filename="${fileName}"`,
      'Cache-Control': 'no-store',
      // Where a later export continues, past every event read (also those the filters left out).
      Trailer: 'Export-Cursor',
    });
    res.status(200);
    try {
      const done = await writeExport(store, streamSink(res), { accountId, after, filter, format, header }, () => {
        if (isShuttingDown()) throw new Error('the service is stopping');
      });
      if (done.cursor !== null) res.addTrailers({ 'Export-Cursor': done.cursor });
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
    const page = await readFeed(store, feedWaits, { accountId: accountOf(res).id, after, limit, maxBytes: replyBudgetBytes, waitMs }, gone.signal);
    res.set('Cache-Control', 'no-store').json(page);
  });
  return router;
}
