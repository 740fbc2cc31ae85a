import { expect } from 'chai';
import { personStream, schemaVersion, type AttributeType, type EventMetadata, type EventOf } from '../src/eventstore/events.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import { LeadBook, leadKeysOf, type LeadMerge, type LeadRow } from '../projections/leads/fold.js';
import { testRefs } from './support/ingest-doubles.js';

/**
 * The leads fold on hand-built events. `project` plays the part of projections/leads/projection.ts: for each
 * batch it loads the rows and merges the batch may touch (by leadKeysOf, plus the known rows of
 * merges already stored), folds the batch in a LeadBook and writes back what changed, passing
 * every row through JSON as the database does.
 */

const accountA = '11111111-1111-4111-8111-111111111111';
const accountB = '22222222-2222-4222-8222-222222222222';

let position = 0;

/** receivedAt of the event at a global position: one second apart, from a fixed start. */
const receivedAt = (globalPosition: number): string => new Date(Date.UTC(2024, 0, 1, 0, 0, globalPosition)).toISOString();

/** An event of a person as the store returns it, at the next global position. */
function recorded<E extends EventOf<'UserUpserted' | 'ProfilesMerged' | 'EventTracked'>>(event: E, accountId = accountA): RecordedEvent<E> {
  position += 1;
  const id = `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
  const metadata: EventMetadata = { trackId: id, accountId, receivedAt: receivedAt(position), schemaVersion };
  return {
    ...event,
    id,
    stream: personStream(testRefs(accountId), event.data),
    streamPosition: 0,
    globalPosition: position,
    metadata,
    recordedAt: receivedAt(position),
  };
}

interface Sent {
  profile?: Record<string, string | number | boolean>;
  attributes?: Record<string, string | number | boolean>;
  attributeTypes?: Record<string, AttributeType>;
  instants?: Record<string, string>;
  accountId?: string;
}

const typeOf = (value: string | number | boolean): AttributeType => (typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'boolean');

/** A UserUpserted as the ingest side stores it (docs/events.md). */
function upserted(ids: { userId?: string; anonymousId?: string }, sent: Sent = {}): RecordedEvent {
  const attributes = sent.attributes ?? {};
  const attributeTypes =
    sent.attributeTypes ?? Object.fromEntries(Object.entries(attributes).map(([key, value]): [string, AttributeType] => [key, typeOf(value)]));
  return recorded(
    { type: 'UserUpserted', data: { ...ids, profile: sent.profile ?? {}, attributes, attributeTypes, instants: sent.instants ?? {} } },
    sent.accountId,
  );
}

const merged = (userId: string, anonymousId: string, accountId = accountA): RecordedEvent =>
  recorded({ type: 'ProfilesMerged', data: { userId, anonymousId } }, accountId);

/** The stored read model: rows by (account, kind, id) and merges, as JSON (like jsonb). */
class Store {
  readonly rows = new Map<string, LeadRow>();
  readonly merges: LeadMerge[] = [];

  apply(events: RecordedEvent[]): void {
    const keys = leadKeysOf(events);
    const merges = this.merges.filter((m) => keys.anonymous.some(([account, anonymous]) => account === m.account_id && anonymous === m.anonymous_id));
    const wanted = [...keys.rows.map((k) => k.join('/')), ...merges.map((m) => [m.account_id, 'user', m.user_id].join('/'))];
    const loaded = wanted.flatMap((key) => {
      const row = this.rows.get(key);
      return row ? [JSON.parse(JSON.stringify(row)) as LeadRow] : [];
    });
    const book = new LeadBook(loaded, JSON.parse(JSON.stringify(merges)) as LeadMerge[]);
    for (const event of events) book.apply(event);
    for (const row of book.changedRows()) {
      this.rows.set([row.account_id, row.profile_kind, row.profile_id].join('/'), JSON.parse(JSON.stringify(row)) as LeadRow);
    }
    for (const merge of book.addedMerges()) {
      if (!this.merges.some((m) => m.account_id === merge.account_id && m.anonymous_id === merge.anonymous_id)) this.merges.push({ ...merge });
    }
  }

  user(id: string, accountId = accountA): LeadRow {
    const row = this.rows.get([accountId, 'user', id].join('/'));
    expect(row, `row of user ${id}`).to.not.equal(undefined);
    return row as LeadRow;
  }

  anonymous(id: string, accountId = accountA): LeadRow | undefined {
    return this.rows.get([accountId, 'anonymous', id].join('/'));
  }
}

/** Folds `events` in batches of the given sizes (the rest in a last batch); by default in one batch. */
function project(events: RecordedEvent[], sizes: number[] = []): Store {
  const store = new Store();
  let at = 0;
  for (const size of sizes) {
    store.apply(events.slice(at, at + size));
    at += size;
  }
  if (at < events.length) store.apply(events.slice(at));
  return store;
}

/** Every way to cut `count` events into consecutive non-empty batches, as batch sizes. */
function splits(count: number): number[][] {
  const all: number[][] = [];
  for (let mask = 0; mask < 1 << (count - 1); mask += 1) {
    const sizes: number[] = [];
    let size = 1;
    for (let i = 0; i < count - 1; i += 1) {
      if (mask & (1 << i)) {
        sizes.push(size);
        size = 1;
      } else size += 1;
    }
    sizes.push(size);
    all.push(sizes);
  }
  return all;
}

/** The values a reader sees on a known row, leaving out when and in which event it changed. */
function values(row: LeadRow): Record<string, unknown> {
  const { version, created_position, created_at, changed_at, date_identified, own_keys, ...rest } = row;
  void [version, created_position, created_at, changed_at, date_identified];
  return { ...rest, own_keys: [...own_keys].sort() };
}

/** The rows of a store, sorted, for whole-store comparisons. */
const snapshot = (store: Store): [string, LeadRow][] => [...store.rows.entries()].sort(([a], [b]) => a.localeCompare(b));

describe('lead fold: LeadBook (unit)', () => {
  beforeEach(() => {
    position = 0;
  });

  describe('a new profile', () => {
    it('gets the defaults of docs/spec.md 2.2, with date_identified and created_at the receipt of its creating event', () => {
      const first = upserted({ userId: 'u-1' });
      const row = project([first]).user('u-1');
      expect(row).to.include({
        account_id: accountA,
        profile_kind: 'user',
        profile_id: 'u-1',
        user_id: 'u-1',
        anonymous_id: null,
        opt_in_sms: true,
        opt_in_email: true,
        points: 0,
        date_identified: first.metadata.receivedAt,
        created_at: first.metadata.receivedAt,
        changed_at: first.metadata.receivedAt,
        created_position: first.globalPosition,
        merged_into: null,
        version: 1,
      });
      expect(row.attributes).to.deep.equal({});
      expect(row.attribute_types).to.deep.equal({});
      expect(row.anonymous_ids).to.deep.equal([]);
      expect(row.own_keys, 'defaults are not values sent to the profile').to.deep.equal([]);
      expect(row.email ?? null).to.equal(null);
    });

    it('keeps an anonymous profile apart from a known one of the same id, and accounts apart', () => {
      const store = project([
        upserted({ anonymousId: 'x' }, { profile: { city: 'Anon City' } }),
        upserted({ userId: 'x' }, { profile: { city: 'Known City' } }),
        upserted({ userId: 'x' }, { profile: { city: 'Other Account' }, accountId: accountB }),
      ]);
      expect(store.anonymous('x')).to.include({ profile_kind: 'anonymous', anonymous_id: 'x', user_id: null, city: 'Anon City' });
      expect(store.user('x')).to.include({ city: 'Known City', version: 1 });
      expect(store.user('x', accountB)).to.include({ city: 'Other Account', account_id: accountB, version: 1 });
    });

    it('takes explicit values over the defaults', () => {
      const row = project([upserted({ userId: 'u-1' }, { profile: { opt_in_sms: false, opt_in_email: false, points: 7 } })]).user('u-1');
      expect(row).to.include({ opt_in_sms: false, opt_in_email: false, points: 7 });
    });
  });

  describe('upserts', () => {
    it('change only the keys they carry, and version counts the events applied', () => {
      const events = [
        upserted({ userId: 'u-1' }, { profile: { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', city: 'Berlin' }, attributes: { plan: 'gold', visits: 1 } }),
        upserted({ userId: 'u-1' }, { profile: { email: 'ann@example.org' }, attributes: { visits: 2 } }),
        upserted({ userId: 'u-1' }),
      ];
      const row = project(events).user('u-1');
      expect(row).to.include({ first_name: 'Ann', last_name: 'Lee', email: 'ann@example.org', city: 'Berlin', version: 3 });
      expect(row.attributes).to.deep.equal({ plan: 'gold', visits: 2 });
      expect(row.attribute_types).to.deep.equal({ plan: 'string', visits: 'number' });
      expect(row.created_at).to.equal(events[0]?.metadata.receivedAt);
      expect(row.date_identified, 'date_identified stays at creation').to.equal(events[0]?.metadata.receivedAt);
      expect(row.changed_at).to.equal(events[2]?.metadata.receivedAt);
      expect([...row.own_keys].sort()).to.deep.equal(['attributes.plan', 'attributes.visits', 'city', 'email', 'first_name', 'last_name']);
    });

    it('store date-times as their UTC instant, with the datetime type for custom attributes', () => {
      const row = project([
        upserted(
          { userId: 'u-1' },
          {
            profile: { birth_date: '1990-05-01T00:00:00+0200' },
            attributes: { last_login: '2024-01-01T12:00:00+0200', plan: 'gold', vip: true, visits: 3 },
            attributeTypes: { last_login: 'datetime', plan: 'string', vip: 'boolean', visits: 'number' },
            instants: { birth_date: '1990-04-30T22:00:00.000Z', 'attributes.last_login': '2024-01-01T10:00:00.000Z' },
          },
        ),
      ]).user('u-1');
      expect(row.birth_date).to.equal('1990-04-30T22:00:00.000Z');
      expect(row.attributes).to.deep.equal({ last_login: '2024-01-01T10:00:00.000000Z', plan: 'gold', vip: true, visits: 3 });
      expect(row.attribute_types).to.deep.equal({ last_login: 'datetime', plan: 'string', vip: 'boolean', visits: 'number' });
    });

    it('ignore event types the fold does not handle', () => {
      const book = new LeadBook([], []);
      book.apply(recorded({ type: 'EventTracked', data: { userId: 'u-1', eventName: 'x', eventTime: null, eventTimeUtc: receivedAt(1), eventData: {} } }));
      expect(book.changedRows()).to.deep.equal([]);
      expect(book.addedMerges()).to.deep.equal([]);
    });
  });

  /** An anonymous visitor and a known user with overlapping values; `order` says which comes first. */
  function mergeStory(order: 'anonymous first' | 'merge first'): RecordedEvent[] {
    const anonymous = () => [
      upserted(
        { anonymousId: 'a-1' },
        { profile: { firstName: 'Anon', email: 'anon@example.com', city: 'Paris', opt_in_sms: false }, attributes: { plan: 'free', source: 'ad' } },
      ),
      upserted({ anonymousId: 'a-1' }, { profile: { country: 'FR' } }),
    ];
    const known = () => [
      upserted({ userId: 'u-1' }, { profile: { email: 'known@example.com', lastName: 'Known', opt_in_email: true }, attributes: { plan: 'pro' } }),
    ];
    const merge = () => [upserted({ userId: 'u-1', anonymousId: 'a-1' }), merged('u-1', 'a-1')];
    return order === 'anonymous first' ? [...anonymous(), ...known(), ...merge()] : [...known(), ...merge(), ...anonymous()];
  }

  const expectedKnown = {
    first_name: 'Anon',
    last_name: 'Known',
    email: 'known@example.com',
    city: 'Paris',
    country: 'FR',
    opt_in_sms: false,
    opt_in_email: true,
    merged_into: null,
  };

  describe('merging an anonymous profile into a known one', () => {
    for (const order of ['anonymous first', 'merge first'] as const) {
      it(`${order}: the known profile keeps its own values and takes the anonymous values for the others`, () => {
        const store = project(mergeStory(order));
        const known = store.user('u-1');
        expect(known).to.include(expectedKnown);
        expect(known.attributes).to.deep.equal({ plan: 'pro', source: 'ad' });
        expect(known.attribute_types).to.deep.equal({ plan: 'string', source: 'string' });
        expect(known.anonymous_ids).to.deep.equal(['a-1']);
        expect([...known.own_keys].sort(), 'filled values do not become own values').to.deep.equal([
          'attributes.plan',
          'email',
          'last_name',
          'opt_in_email',
        ]);
        expect(store.anonymous('a-1')).to.include({ merged_into: 'u-1', first_name: 'Anon', email: 'anon@example.com' });
        expect(store.merges).to.deep.equal([{ account_id: accountA, anonymous_id: 'a-1', user_id: 'u-1' }]);
      });
    }

    it('gives the same known row values in both orders', () => {
      const anonymousFirst = project(mergeStory('anonymous first'));
      position = 0;
      const mergeFirst = project(mergeStory('merge first'));
      expect(values(mergeFirst.user('u-1'))).to.deep.equal(values(anonymousFirst.user('u-1')));
      const anonymousValues = (row: LeadRow | undefined) => (row ? values(row) : row);
      expect(anonymousValues(mergeFirst.anonymous('a-1'))).to.deep.equal(anonymousValues(anonymousFirst.anonymous('a-1')));
    });

    it('merge first: later anonymous upserts fill gaps (latest value) but never overwrite values sent to the known profile', () => {
      const store = project([
        upserted({ userId: 'u-1', anonymousId: 'a-1' }, { profile: { email: 'known@example.com' } }),
        merged('u-1', 'a-1'),
        upserted({ anonymousId: 'a-1' }, { profile: { email: 'anon@example.com', firstName: 'Anon' } }),
        upserted({ anonymousId: 'a-1' }, { profile: { firstName: 'Anna' } }),
        upserted({ userId: 'u-1' }, { profile: { phone: '+49' } }),
        upserted({ anonymousId: 'a-1' }, { profile: { phone: '+33', city: 'Lyon' } }),
      ]);
      expect(store.user('u-1')).to.include({ email: 'known@example.com', first_name: 'Anna', phone: '+49', city: 'Lyon' });
      expect(store.anonymous('a-1')).to.include({ merged_into: 'u-1', email: 'anon@example.com', first_name: 'Anna', phone: '+33', version: 3 });
      expect(store.anonymous('a-1')?.created_position, 'created by its own first upsert').to.equal(3);
    });

    it('merge first, anonymous never upserted: the known profile lists the id and no anonymous row is made', () => {
      const store = project([upserted({ userId: 'u-1', anonymousId: 'a-9' }), merged('u-1', 'a-9')]);
      expect(store.user('u-1')).to.include({ version: 2 });
      expect(store.user('u-1').anonymous_ids).to.deep.equal(['a-9']);
      expect(store.anonymous('a-9')).to.equal(undefined);
    });

    it('a repeated merge changes nothing: no row, version or merge changes', () => {
      const events = mergeStory('anonymous first');
      const before = project(events);
      const repeat = merged('u-1', 'a-1');
      const after = project([...events, repeat]);
      expect(snapshot(after)).to.deep.equal(snapshot(before));
      expect(after.merges).to.have.length(1);

      const book = new LeadBook(
        [...before.rows.values()].map((row) => JSON.parse(JSON.stringify(row)) as LeadRow),
        before.merges,
      );
      book.apply(repeat);
      expect(book.changedRows(), 'rows touched by the repeat').to.deep.equal([]);
      expect(book.addedMerges()).to.deep.equal([]);
    });

    it('merges several anonymous profiles into one user, listing them in merge order', () => {
      const store = project([
        upserted({ anonymousId: 'a-1' }, { profile: { city: 'Paris' } }),
        upserted({ anonymousId: 'a-2' }, { profile: { country: 'FR' }, attributes: { source: 'ad' } }),
        upserted({ userId: 'u-1', anonymousId: 'a-2' }),
        merged('u-1', 'a-2'),
        upserted({ userId: 'u-1', anonymousId: 'a-1' }),
        merged('u-1', 'a-1'),
        upserted({ userId: 'u-1', anonymousId: 'a-3' }),
        merged('u-1', 'a-3'),
        upserted({ anonymousId: 'a-3' }, { profile: { phone: '+33' } }),
      ]);
      const known = store.user('u-1');
      expect(known.anonymous_ids).to.deep.equal(['a-2', 'a-1', 'a-3']);
      expect(known).to.include({ city: 'Paris', country: 'FR', phone: '+33' });
      expect(known.attributes).to.deep.equal({ source: 'ad' });
      for (const id of ['a-1', 'a-2', 'a-3']) expect(store.anonymous(id)?.merged_into, id).to.equal('u-1');
    });

    it('the anonymous profile passes on its custom attribute types, datetime included', () => {
      const store = project([
        upserted(
          { anonymousId: 'a-1' },
          {
            attributes: { last_seen: '2024-02-01T00:00:00-0100', score: 5, vip: false },
            attributeTypes: { last_seen: 'datetime', score: 'number', vip: 'boolean' },
            instants: { 'attributes.last_seen': '2024-02-01T01:00:00.000Z' },
          },
        ),
        upserted({ userId: 'u-1', anonymousId: 'a-1' }),
        merged('u-1', 'a-1'),
      ]);
      expect(store.user('u-1').attributes).to.deep.equal({ last_seen: '2024-02-01T01:00:00.000000Z', score: 5, vip: false });
      expect(store.user('u-1').attribute_types).to.deep.equal({ last_seen: 'datetime', score: 'number', vip: 'boolean' });
    });

    it("does not take a default for a sent value: the anonymous profile's default opt_in_sms never overrides", () => {
      const store = project([
        upserted({ userId: 'u-1' }, { profile: { opt_in_sms: false } }),
        upserted({ anonymousId: 'a-1' }, { profile: { city: 'Rome' } }),
        upserted({ userId: 'u-1', anonymousId: 'a-1' }),
        merged('u-1', 'a-1'),
      ]);
      expect(store.user('u-1')).to.include({ opt_in_sms: false, opt_in_email: true, points: 0, city: 'Rome' });
    });
  });

  describe('batch split independence', () => {
    const stories: [string, () => RecordedEvent[]][] = [
      ['anonymous first', () => mergeStory('anonymous first')],
      ['merge first', () => mergeStory('merge first')],
      [
        'two anonymous profiles, one merged before and one after its upserts',
        () => [
          upserted({ anonymousId: 'a-1' }, { profile: { city: 'Paris' } }),
          upserted({ userId: 'u-1', anonymousId: 'a-2' }, { profile: { email: 'k@example.com' } }),
          merged('u-1', 'a-2'),
          upserted({ anonymousId: 'a-2' }, { profile: { email: 'a2@example.com', phone: '+1' } }),
          upserted({ userId: 'u-1', anonymousId: 'a-1' }),
          merged('u-1', 'a-1'),
          upserted({ anonymousId: 'a-1' }, { profile: { phone: '+2' } }),
        ],
      ],
    ];
    for (const [name, story] of stories) {
      it(`${name}: every split into batches gives the rows and merges of one batch`, () => {
        position = 0;
        const events = story();
        const whole = project(events);
        for (const sizes of splits(events.length)) {
          const split = project(events, sizes);
          expect(snapshot(split), `batches of ${sizes.join('+')}`).to.deep.equal(snapshot(whole));
          expect(split.merges, `batches of ${sizes.join('+')}`).to.deep.equal(whole.merges);
        }
      });
    }
  });
});
