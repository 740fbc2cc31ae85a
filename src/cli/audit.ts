import type { RecordedEvent } from '../eventstore/port.js';
import { describeEvent, eventsOfTrackId } from '../../projections/track-index/queries.js';
import { CliError, withContext } from './context.js';

function printEvent(event: RecordedEvent, marked: boolean): void {
  const mark = marked ? '*' : ' ';
  console.log(`${mark} #${event.streamPosition}  ${event.type}  id ${event.id}  global ${event.globalPosition}  recorded ${event.recordedAt}`);
  console.log(`    metadata ${JSON.stringify(event.metadata)}`);
  console.log(`    data     ${JSON.stringify(event.data)}`);
}

/**
 * `tracking audit <trackID>`: the events stored for a trackID, then their stream from the start up
 * to and including them, in order; the trackID's own events are marked `*`.
 */
export async function auditCommand(args: string[], json: boolean): Promise<void> {
  const trackId = args[0];
  if (!trackId) throw new CliError('usage: tracking audit <trackID>', 2);
  const { events, streams } = await withContext(async ({ pool, store }) => {
    const found = await eventsOfTrackId(pool, store, trackId, null);
    const byStream = new Map<string, RecordedEvent[]>();
    for (const event of found) {
      if (byStream.has(event.stream)) continue;
      const last = Math.max(...found.filter((e) => e.stream === event.stream).map((e) => e.streamPosition));
      byStream.set(event.stream, await store.readStream(event.stream, 0, last + 1));
    }
    return { events: found, streams: byStream };
  });
  if (events.length === 0) {
    throw new CliError(`unknown trackID ${trackId} (an accepted item is indexed within about a second; is a projection worker running?)`);
  }
  if (json) {
    console.log(
      JSON.stringify({
        trackID: trackId.toLowerCase(),
        events: events.map(describeEvent),
        streams: Object.fromEntries([...streams].map(([name, list]) => [name, list.map(describeEvent)])),
      }),
    );
    return;
  }
  const ids = new Set(events.map((e) => e.id));
  console.log(`trackID ${trackId.toLowerCase()}: ${events.length} stored event(s)`);
  for (const event of events) printEvent(event, true);
  for (const [stream, list] of streams) {
    console.log(`\nstream ${stream}, positions 0 to ${list.at(-1)?.streamPosition ?? 0}:`);
    for (const event of list) printEvent(event, ids.has(event.id));
  }
}
