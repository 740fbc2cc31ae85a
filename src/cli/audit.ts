import {
  describeEvent,
  planTrackLookup,
  readLookupPage,
  streamEventsBefore,
  type AuditedEvent,
  type LookupPage,
  type LookupPlan,
  type StoredAt,
} from '../../projections/track-index/queries.js';
import { CliError, withContext } from './context.js';
import { instantText } from './instant-text.js';

/**
 * Bytes of events (as JSON) the audit holds at once: it prints a lookup page by page, so that a
 * trackID of many large events is never in memory whole.
 */
const auditPageBytes = 8 * 1024 * 1024;

const place = (at: StoredAt): string => `${at.stream} #${at.streamPosition} (global ${at.globalPosition}, recorded ${instantText(at.recordedAt)})`;

function printEvent(event: AuditedEvent, marked: boolean): void {
  const mark = marked ? '*' : ' ';
  console.log(`${mark} #${event.streamPosition}  ${event.type}  id ${event.id}  global ${event.globalPosition}  recorded ${instantText(event.recordedAt)}`);
  if (event.repeatOf) console.log(`    repeat of the copy at ${place(event.repeatOf)}: the same event id stored again`);
  for (const copy of event.alsoStoredAt ?? []) console.log(`    also stored at ${place(copy)}: a later copy of the same event id`);
  if (event.erased) {
    const at = event.erased.erasedAt === null ? 'at an unknown time' : `at ${instantText(event.erased.erasedAt)}`;
    console.log(`    erased by erasure ${event.erased.erasureId ?? '(unknown)'} ${at}: its personal fields are gone`);
  }
  console.log(`    metadata ${JSON.stringify(event.metadata)}`);
  console.log(`    data     ${JSON.stringify(event.data)}`);
}

/** What the audit prints as it goes: each event once it is read, each stream's heading before its first. */
interface AuditOutput {
  start(plan: LookupPlan): void;
  event(event: AuditedEvent): void;
  stream(name: string, from: number, to: number): void;
  streamEvent(event: AuditedEvent): void;
  end(): void;
}

function textOutput(plan: LookupPlan): AuditOutput {
  const ids = new Set(plan.events.map((e) => e.eventId));
  return {
    start: () => console.log(`trackID ${plan.trackID}: ${plan.events.length} stored event(s)`),
    event: (event) => printEvent(event, true),
    stream: (name, from, to) => {
      const earlier = from > 0 ? ` (the ${streamEventsBefore} before the trackID's; earlier ones not shown)` : '';
      console.log(`\nstream ${name}, positions ${from} to ${to}${earlier}:`);
    },
    streamEvent: (event) => printEvent(event, ids.has(event.id)),
    end: () => undefined,
  };
}

/** The same JSON as the read API's lookup (`streams` an object), written a piece at a time. */
function jsonOutput(): AuditOutput {
  const write = (text: string): boolean => process.stdout.write(text);
  let first = true;
  let inStreams = false;
  const item = (event: AuditedEvent): void => {
    write(`${first ? '' : ','}${JSON.stringify(describeEvent(event))}`);
    first = false;
  };
  return {
    start: (plan) => {
      write(`{"trackID":${JSON.stringify(plan.trackID)},"events":[`);
    },
    event: item,
    stream: (name) => {
      write(`${inStreams ? '],' : '],"streams":{'}${JSON.stringify(name)}:[`);
      inStreams = true;
      first = true;
    },
    streamEvent: item,
    end: () => {
      write(inStreams ? ']}}\n' : '],"streams":{}}\n');
    },
  };
}

/**
 * `tracking audit <trackID>`: the events stored for a trackID, then their stream up to and
 * including them (from at most 100 before them), in order; the trackID's own events are marked `*`.
 * An event id stored more than once is listed once, with where its later copies are stored. Events
 * are printed in full, read and printed a page (auditPageBytes) at a time.
 */
export async function auditCommand(args: string[], json: boolean): Promise<void> {
  const trackId = args[0];
  if (!trackId) throw new CliError('usage: tracking audit <trackID>', 2);
  await withContext(async ({ pool, store }) => {
    const plan = await planTrackLookup(pool, trackId, null);
    if (!plan) {
      throw new CliError(`unknown trackID ${trackId} (an accepted item is indexed within about a second; is a projection worker running?)`);
    }
    const output = json ? jsonOutput() : textOutput(plan);
    output.start(plan);
    const headed = new Set<string>();
    for (let offset: number | null = 0; offset !== null; ) {
      const page: LookupPage<AuditedEvent> = await readLookupPage(pool, store, plan, { offset, budget: auditPageBytes, show: (event) => event });
      for (const event of page.events) output.event(event);
      for (const [name, events] of page.streams) {
        if (!headed.has(name)) {
          const part = plan.streams.find((s) => s.stream === name);
          output.stream(name, events[0]?.streamPosition ?? 0, (part?.from ?? 0) + (part?.count ?? 1) - 1);
          headed.add(name);
        }
        for (const event of events) output.streamEvent(event);
      }
      offset = page.next;
    }
    output.end();
  });
}
