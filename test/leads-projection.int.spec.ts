import { expect } from 'chai';
import { personStream, schemaVersion, streams, type AttributeType, type EventOf } from '../src/eventstore/events.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import { leadsProjection } from '../projections/leads/projection.js';
import { testRefs } from './support/ingest-doubles.js';
import { projectionSpec } from './support/projection-spec.js';

/** The leads rows the list, its search and its kind filter read: search_text, kind, merges, attribute types. */

const account = '44444444-4444-4444-8444-444444444444';
let position = 0;

function recorded(event: EventOf<'UserUpserted'> | EventOf<'ProfilesMerged'>, stream: string): RecordedEvent {
  position += 1;
  const id = `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
  const receivedAt = new Date(Date.UTC(2024, 0, 1, 0, 0, position)).toISOString();
  return { ...event, id, stream, streamPosition: 0, globalPosition: position, metadata: { trackId: id, accountId: account, receivedAt, schemaVersion }, recordedAt: receivedAt };
}

function upserted(ids: { userId?: string; anonymousId?: string }, profile: Record<string, string>, attributes: Record<string, string | number> = {}): RecordedEvent {
  const attributeTypes: Record<string, AttributeType> = Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, typeof v === 'number' ? 'number' : 'string']));
  return recorded({ type: 'UserUpserted', data: { ...ids, profile, attributes, attributeTypes, instants: {} } }, personStream(testRefs(account), ids));
}

const merged = (userId: string, anonymousId: string): RecordedEvent =>
  recorded({ type: 'ProfilesMerged', data: { userId, anonymousId } }, streams.user(account, testRefs(account).user(userId)));

interface Row {
  profile_kind: string;
  profile_id: string;
  merged_into: string | null;
  search_text: string;
  attributes: Record<string, unknown>;
  attribute_types: Record<string, string>;
}

const rowsSql = 'SELECT profile_kind, profile_id, merged_into, search_text, attributes, attribute_types FROM leads ORDER BY profile_kind, profile_id';

describe('leads projection: what the list and search read (given/when/then, int)', () => {
  it('a merge puts the anonymous id and the values it fills into the known lead\'s search text, and types every attribute', async () => {
    await projectionSpec(leadsProjection)
      .given(upserted({ anonymousId: 'Anon-7' }, { email: 'Visitor@Mail.Test' }, { referrer: 'ad' }))
      .when(upserted({ userId: 'U-7' }, { firstName: 'Zoë', lastName: 'Ávila' }, { seats: 2 }))
      .when(merged('U-7', 'Anon-7'))
      .then(async (read) => {
        expect(await read<Row>(rowsSql)).to.deep.equal([
          {
            profile_kind: 'anonymous',
            profile_id: 'Anon-7',
            merged_into: 'U-7',
            search_text: 'anon-7\nvisitor@mail.test',
            attributes: { referrer: 'ad' },
            attribute_types: { referrer: 'string' },
          },
          {
            profile_kind: 'user',
            profile_id: 'U-7',
            merged_into: null,
            search_text: 'u-7\nvisitor@mail.test\nzoë\návila\nzoë ávila\nanon-7',
            attributes: { seats: 2, referrer: 'ad' },
            attribute_types: { seats: 'number', referrer: 'string' },
          },
        ]);
      });
  });

  it('an anonymous profile updated after its merge fills the known lead, attribute types included', async () => {
    await projectionSpec(leadsProjection)
      .given(upserted({ userId: 'u-8' }, {}), merged('u-8', 'a-8'))
      .when(upserted({ anonymousId: 'a-8' }, { email: 'late@mail.test' }, { campaign: 'spring', visits: 3 }))
      .then(async (read) => {
        const known = (await read<Row>(rowsSql)).find((r) => r.profile_kind === 'user');
        expect(known?.search_text).to.equal('u-8\nlate@mail.test\na-8');
        expect(known?.attributes).to.deep.equal({ campaign: 'spring', visits: 3 });
        expect(known?.attribute_types).to.deep.equal({ campaign: 'string', visits: 'number' });
      });
  });
});
