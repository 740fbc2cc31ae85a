import type { Request } from 'express';
import type { IngestActivity } from '../activity/recorder.js';
import { excerptOfText, excerptOfValue } from '../ingest/excerpt.js';
import type { IngestContext } from '../ingest/request.js';
import type { ItemResult } from '../ingest/results.js';
import type { Metrics } from '../metrics.js';
import { bodyExcerpt } from './body.js';

/** Who sent each item, where the request says (a Segment message's context.library). */
export type ClientOf = (index: number) => string | undefined;

/**
 * Counts each item's result, and remembers it in the account's ingest activity: an element of a
 * bulk request with its own JSON as excerpt, a single item with the body as sent.
 */
export function itemCounter(metrics: Metrics, activity: IngestActivity) {
  return (req: Request, ctx: IngestContext, results: ItemResult[], items?: unknown[], clientOf?: ClientOf): void => {
    const { endpoint, accountId } = ctx;
    let accepted = 0;
    for (let index = 0; index < results.length; index += 1) {
      const result = results[index] as ItemResult;
      if (result.status === 'queued') {
        accepted += 1;
        continue;
      }
      metrics.rejectedItems.inc({ endpoint, reason: result.reason });
      const client = clientOf?.(index);
      activity.rejected(accountId, {
        endpoint,
        reason: result.reason,
        field: result.field,
        status: items ? 200 : 400,
        message: excerptOfText(result.message).text,
        excerpt: items ? excerptOfValue(items[index]) : (bodyExcerpt(req) ?? excerptOfValue(req.body)),
        ...(client !== undefined && { client }),
      });
    }
    if (accepted === 0) return;
    // Once per request: counting each item apart cost a label lookup per item.
    metrics.acceptedItems.inc({ endpoint }, accepted);
    activity.accepted(accountId, endpoint, accepted);
  };
}
