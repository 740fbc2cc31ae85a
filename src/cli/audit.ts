import { describeTrackLookup, lookUpTrackId, streamEventsBefore, type AuditedEvent, type StoredAt } from '../../projections/track-index/queries.js';
import { CliError, withContext } from './context.js';

const place = (at: StoredAt): string => `${at.stream} #${at.streamPosition} (global ${at.globalPosition}, recorded ${at.recordedAt})`;

function printEvent(event: AuditedEvent, marked: boolean): void {
  const mark = marked ? '*' : ' ';
  console.log(`${mark} #${event.streamPosition}  ${event.type}  id ${event.id}  global ${event.globalPosition}  recorded ${event.recordedAt}`);
  if (event.repeatOf) console.log(`    repeat of the copy at ${place(event.repeatOf)}: the same event id stored again`);
  for (const copy of event.alsoStoredAt ?? []) console.log(`    also stored at ${place(copy)}: a later copy of the same event id`);
  console.log(`    metadata ${JSON.stringify(event.metadata)}`);
  console.log(`    data     ${JSON.stringify(event.data)}`);
}

/**
 * `tracking audit <trackID>`: the events stored for a trackID, then their stream up to and
 * including them (from at most 100 before them), in order; the trackID's own events are marked `*`.
 * An event id stored more than once is listed once, with where its later copies are stored.
 */
export async function auditCommand(args: string[], json: boolean): Promise<void> {
  const trackId = args[0];
  if (!trackId) throw new CliError('usage: tracking audit <trackID>', 2);
  const lookup = await withContext(({ pool, store }) => lookUpTrackId(pool, store, trackId, null));
  if (!lookup) {
    throw new CliError(`unknown trackID ${trackId} (an accepted item is indexed within about a second; is a projection worker running?)`);
  }
  if (json) {
    console.log(JSON.stringify(describeTrackLookup(lookup)));
    return;
  }
  const ids = new Set(lookup.events.map((e) => e.id));
  console.log(`trackID ${lookup.trackID}: ${lookup.events.length} stored event(s)`);
  for (const event of lookup.events) printEvent(event, true);
  for (const [stream, list] of lookup.streams) {
    const first = list[0]?.streamPosition ?? 0;
    const earlier = first > 0 ? ` (the ${streamEventsBefore} before the trackID's; earlier ones not shown)` : '';
    console.log(`\nstream ${stream}, positions ${first} to ${list.at(-1)?.streamPosition ?? 0}${earlier}:`);
    for (const event of list) printEvent(event, ids.has(event.id));
  }
}
