import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { EventType, TrackingEvent } from '../src/eventstore/events.js';
import { eventTypes } from '../src/eventstore/events.js';
import { IdRefs } from '../src/eventstore/pseudonyms.js';
import { isSealedBox, newKey, open, personOf, refsOf, sealedFields, seal, unsealedData, type SealedBox } from '../src/eventstore/sealing.js';

/**
 * Crypto-shredding's sealing (src/eventstore/sealing.ts): what a box holds and what stays
 * readable beside it (the ids' pseudonyms, never the ids), what a box opens for, and what an
 * erased event reads as.
 */

type SealableEvent = TrackingEvent & { id: string; metadata: { accountId: string } };

const accountId = randomUUID();
const key = { id: 42, key: newKey() };
const refs = new IdRefs(accountId, newKey());

/** The ids the events name: sealed, never readable in the stored data. */
const userId = 'u-sealed-id-8086';
const anonymousId = 'a-sealed-id-6502';

/** Values that only the person sent: none may show in the stored data once sealed. */
const personal = {
  firstName: 'Philippa-Sealed',
  email: 'philippa.sealed@example.com',
  attribute: 'vermilion-sealed-77',
  instant: '1984-02-29T12:00:00.000Z',
  eventName: 'sealed-event-name-91',
  eventTime: '2024-05-06T07:08:09+02:00',
  eventData: 'sealed-note-5150',
  property: 'sealed-property-3141',
  productEventName: 'sealed-product-event-27',
};

/** One event of each type, as ingest builds it, with personal values in every field that is sealed. */
const events: { [T in EventType]: SealableEvent } = {
  UserUpserted: {
    id: randomUUID(),
    metadata: { accountId },
    type: 'UserUpserted',
    data: {
      userId,
      anonymousId,
      profile: { firstName: personal.firstName, email: personal.email, birth_date: '1984-02-29' },
      attributes: { colour: personal.attribute, visits: 3 },
      attributeTypes: { colour: 'string', visits: 'number' },
      instants: { birth_date: personal.instant },
    },
  },
  ProfilesMerged: { id: randomUUID(), metadata: { accountId }, type: 'ProfilesMerged', data: { userId, anonymousId } },
  EventTracked: {
    id: randomUUID(),
    metadata: { accountId },
    type: 'EventTracked',
    data: { anonymousId, eventName: personal.eventName, eventTime: personal.eventTime, eventTimeUtc: '2024-05-06T05:08:09.000Z', eventData: { note: personal.eventData } },
  },
  ProductSubmitted: { id: randomUUID(), metadata: { accountId }, type: 'ProductSubmitted', data: { productId: 'p-seal', userId, properties: { name: personal.property } } },
  ProductEventTracked: {
    id: randomUUID(),
    metadata: { accountId },
    type: 'ProductEventTracked',
    data: {
      productId: 'p-seal',
      userId,
      eventName: personal.productEventName,
      eventTime: null,
      eventTimeUtc: '2024-05-06T05:08:10.000Z',
      eventData: { note: personal.eventData },
    },
  },
};

const ids: readonly string[] = ['userId', 'anonymousId'];

/** The pseudonyms of an event's ids, under the names they are stored by. */
function refsOfEvent(event: SealableEvent): Record<string, string> {
  const data: { userId?: string | null; anonymousId?: string } = event.data;
  return {
    ...(typeof data.userId === 'string' && { userRef: refs.user(data.userId) }),
    ...(typeof data.anonymousId === 'string' && { anonymousRef: refs.anonymous(data.anonymousId) }),
  };
}

/** The fields of an event's data that stay readable: every field that is neither sealed nor an id, and the ids' pseudonyms. */
function readableFields(event: SealableEvent): Record<string, unknown> {
  const sealed: readonly string[] = sealedFields[event.type];
  return { ...Object.fromEntries(Object.entries(event.data).filter(([field]) => !sealed.includes(field) && !ids.includes(field))), ...refsOfEvent(event) };
}

/** What the box holds: the sealed fields and the ids. */
function sealedFieldsOf(event: SealableEvent): Record<string, unknown> {
  const sealed: readonly string[] = sealedFields[event.type];
  return Object.fromEntries(Object.entries(event.data).filter(([field]) => sealed.includes(field) || ids.includes(field)));
}

function boxOf(data: Record<string, unknown>): SealedBox {
  const box = data.sealed;
  if (!isSealedBox(box)) throw new Error(`no sealed box in ${JSON.stringify(data)}`);
  return box;
}

/** A TrackingEvent with a big eventData: `bytes` of JSON text or so, of a value repeated. */
function bigEvent(bytes: number): SealableEvent {
  const row = { page: '/catalogue/lamps?colour=red', referrer: 'https://search.example.com/?q=lamp', ms: 1234 };
  const rows = Math.ceil(bytes / JSON.stringify(row).length);
  return {
    id: randomUUID(),
    metadata: { accountId },
    type: 'EventTracked',
    data: { userId: 'u-big', eventName: 'scrolled', eventTime: null, eventTimeUtc: '2024-05-06T05:08:09.000Z', eventData: { rows: Array.from({ length: rows }, () => row) } },
  };
}

describe('sealing of personal fields (unit)', () => {
  it('names sealed fields for every event type, all of them fields of the type, and never an id or a time the auditor needs', () => {
    expect(Object.keys(sealedFields).toSorted()).to.deep.equal([...eventTypes].toSorted());
    for (const type of eventTypes) {
      const sealed: readonly string[] = sealedFields[type];
      for (const kept of ['userId', 'anonymousId', 'productId', 'eventTimeUtc']) expect(sealed, `${type} seals ${kept}`).not.to.include(kept);
    }
  });

  for (const type of eventTypes) {
    it(`${type}: seals its personal fields into a box that opens with the key, for this event, to exactly those fields`, () => {
      const event = events[type];
      const stored = seal(event, key, refs);
      const text = JSON.stringify(stored);
      for (const [name, value] of Object.entries(personal)) expect(text, `${name} in the stored data`).not.to.contain(value);
      for (const field of sealedFields[type]) expect(stored, `${type}.${field} stored beside the box`).not.to.have.property(field);
      // No id in clear: neither the fields nor any value of the stored data.
      for (const field of ids) expect(stored, `${type}.${field} stored beside the box`).not.to.have.property(field);
      expect(text, 'the userId in the stored data').not.to.contain(userId);
      expect(text, 'the anonymousId in the stored data').not.to.contain(anonymousId);
      // What the auditor needs stays readable: the ids' pseudonyms, eventTimeUtc, productId.
      expect(Object.fromEntries(Object.entries(stored).filter(([field]) => field !== 'sealed'))).to.deep.equal(readableFields(event));
      expect(refsOf(stored)).to.deep.equal(refsOfEvent(event));
      const box = boxOf(stored);
      expect(box.k).to.equal(key.id);
      expect(box.z, 'a small box is not deflated').to.equal(undefined);

      const { fields: opened, bytes } = open(box, key.key, accountId, event.id);
      expect(opened).to.deep.equal(sealedFieldsOf(event));
      // What the opened fields weigh: a page of events is bounded by it.
      expect(bytes).to.equal(Buffer.byteLength(JSON.stringify(sealedFieldsOf(event))));
      // Opened, the event reads as sent: its ids exactly, and their pseudonyms gone.
      const read = unsealedData(type, stored, opened);
      expect(read).to.deep.equal(event.data);
      for (const field of ids) expect(read[field], `${type}.${field}`).to.equal((event.data as Record<string, unknown>)[field]);
      expect(read).not.to.have.property('userRef');
      expect(read).not.to.have.property('anonymousRef');
    });
  }

  it('stores the pseudonyms of the account: the same id in another account (another key) reads as another pseudonym', () => {
    const event = events.UserUpserted;
    const other = new IdRefs(randomUUID(), newKey());
    const here = seal(event, key, refs);
    const there = seal(event, key, other);
    expect(here).to.include({ userRef: refs.user(userId), anonymousRef: refs.anonymous(anonymousId) });
    expect(there).to.include({ userRef: other.user(userId), anonymousRef: other.anonymous(anonymousId) });
    expect(there.userRef).not.to.equal(here.userRef);
    expect(there.anonymousRef).not.to.equal(here.anonymousRef);
    // 128 bits, base64url: 22 characters.
    for (const ref of [here.userRef, here.anonymousRef]) expect(ref).to.match(/^[A-Za-z0-9_-]{22}$/);
  });

  it('computes the pseudonyms under the key given: the same account and id under another key read as another pseudonym', () => {
    // An account's key never changes in one database, but a process may meet the same account id
    // under another key (a test database made anew, test doubles beside the real keys).
    const other = new IdRefs(accountId, newKey());
    expect(refs.user(userId)).to.equal(refs.user(userId));
    expect(other.user(userId)).not.to.equal(refs.user(userId));
    expect(other.anonymous(anonymousId)).not.to.equal(refs.anonymous(anonymousId));
  });

  it('keeps a product event without a user (userId null) without a userRef, and opens it to userId null', () => {
    const event: SealableEvent = {
      id: randomUUID(),
      metadata: { accountId },
      type: 'ProductEventTracked',
      data: { productId: 'p-1', userId: null, eventName: 'viewed', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} },
    };
    const stored = seal(event, key, refs);
    expect(stored).not.to.have.property('userRef');
    expect(stored).not.to.have.property('userId');
    expect(unsealedData('ProductEventTracked', stored, open(boxOf(stored), key.key, accountId, event.id).fields)).to.deep.equal(event.data);
  });

  it('reads an event stored before ids were sealed (its ids readable beside their pseudonyms, its box without them) as sent, and erased without its ids', () => {
    const event = events.UserUpserted;
    // The box as sealed then: the sealed fields only.
    const withoutIds = Object.fromEntries(Object.entries(event.data).filter(([field]) => !ids.includes(field)));
    const box = boxOf(seal({ ...event, data: withoutIds } as SealableEvent, key, refs));
    expect(open(box, key.key, accountId, event.id).fields).to.deep.equal(withoutIds);
    const stored = { userId, anonymousId, userRef: refs.user(userId), anonymousRef: refs.anonymous(anonymousId), sealed: box };
    expect(unsealedData('UserUpserted', stored, open(box, key.key, accountId, event.id).fields)).to.deep.equal(event.data);
    expect(unsealedData('UserUpserted', stored, null)).to.deep.equal({
      userRef: refs.user(userId),
      anonymousRef: refs.anonymous(anonymousId),
      profile: {},
      attributes: {},
      attributeTypes: {},
      instants: {},
    });
  });

  it('seals the same event into another box each time (a new iv), both opening to the same fields', () => {
    const event = events.EventTracked;
    const first = boxOf(seal(event, key, refs));
    const second = boxOf(seal(event, key, refs));
    expect(first.b).not.to.equal(second.b);
    expect(open(first, key.key, accountId, event.id).fields).to.deep.equal(open(second, key.key, accountId, event.id).fields);
  });

  it('does not open a box moved to another event, to another account, with another key, or altered', () => {
    const event = events.UserUpserted;
    const box = boxOf(seal(event, key, refs));
    expect(open(box, key.key, accountId, event.id).fields).to.have.property('profile');
    expect(() => open(box, key.key, accountId, events.EventTracked.id), 'another event id').to.throw();
    expect(() => open(box, key.key, randomUUID(), event.id), 'another account').to.throw();
    expect(() => open(box, newKey(), accountId, event.id), 'another key').to.throw();
    const bytes = Buffer.from(box.b, 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    expect(() => open({ ...box, b: bytes.toString('base64') }, key.key, accountId, event.id), 'a ciphertext altered').to.throw();
    const tag = Buffer.from(box.b, 'base64');
    tag[12] = (tag[12] as number) ^ 1;
    expect(() => open({ ...box, b: tag.toString('base64') }, key.key, accountId, event.id), 'a tag altered').to.throw();
  });

  it('deflates the fields from 512 bytes of JSON on, and opens them the same', () => {
    // eventData's note padded so that the JSON of the sealed fields (the userId with them) is 511, then 512 bytes.
    const sized = (bytes: number): SealableEvent => {
      const base = { userId: 'u-1', eventName: 'n', eventTime: null, eventData: { note: '' } };
      const note = 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify(base)));
      return { id: randomUUID(), metadata: { accountId }, type: 'EventTracked', data: { userId: 'u-1', eventName: 'n', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: { note } } };
    };
    for (const [bytes, deflated] of [
      [511, false],
      [512, true],
    ] as const) {
      const event = sized(bytes);
      expect(Buffer.byteLength(JSON.stringify(sealedFieldsOf(event))), 'the size of the fields').to.equal(bytes);
      const stored = seal(event, key, refs);
      const box = boxOf(stored);
      expect(box.z === 1, `${bytes} bytes deflated`).to.equal(deflated);
      expect(unsealedData('EventTracked', stored, open(box, key.key, accountId, event.id).fields)).to.deep.equal(event.data);
    }
  });

  it('seals about 1 MiB of repetitive JSON into less than its own size, and opens it whole', () => {
    const event = bigEvent(1024 * 1024);
    const plainBytes = Buffer.byteLength(JSON.stringify(event.data));
    expect(plainBytes).to.be.within(1024 * 1024, 1100 * 1024);
    const stored = seal(event, key, refs);
    const storedBytes = Buffer.byteLength(JSON.stringify(stored));
    expect(boxOf(stored).z).to.equal(1);
    expect(storedBytes, `${storedBytes} bytes stored for ${plainBytes}`).to.be.below(plainBytes / 4);
    expect(unsealedData('EventTracked', stored, open(boxOf(stored), key.key, accountId, event.id).fields)).to.deep.equal(event.data);
  });

  it('reads an erased event (fields null) with empty values of each sealed field’s shape, its ids’ pseudonyms and times kept, its ids and the box gone', () => {
    const userRef = refs.user(userId);
    const anonymousRef = refs.anonymous(anonymousId);
    const expected: { [T in EventType]: Record<string, unknown> } = {
      UserUpserted: { userRef, anonymousRef, profile: {}, attributes: {}, attributeTypes: {}, instants: {} },
      ProfilesMerged: { userRef, anonymousRef },
      EventTracked: { anonymousRef, eventName: '', eventTime: null, eventTimeUtc: '2024-05-06T05:08:09.000Z', eventData: {} },
      ProductSubmitted: { productId: 'p-seal', userRef, properties: {} },
      ProductEventTracked: { productId: 'p-seal', userRef, eventName: '', eventTime: null, eventTimeUtc: '2024-05-06T05:08:10.000Z', eventData: {} },
    };
    const refNames: Record<string, string> = { userId: 'userRef', anonymousId: 'anonymousRef' };
    for (const type of eventTypes) {
      const erased = unsealedData(type, seal(events[type], key, refs), null);
      expect(erased, type).to.deep.equal(expected[type]);
      expect(JSON.stringify(erased), `${type}: an id in the erased event`).not.to.contain(userId).and.not.to.contain(anonymousId);
      expect(refsOf(erased), `${type}: the pseudonyms an erased event keeps`).to.deep.equal(refsOfEvent(events[type]));
      // Of the shape the projections expect: the same fields as the event sent, each id as its pseudonym, with the same JSON types.
      expect(Object.keys(erased).toSorted(), `${type}: fields`).to.deep.equal(Object.keys(events[type].data).map((field) => refNames[field] ?? field).toSorted());
      for (const [field, value] of Object.entries(events[type].data)) {
        const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
        const read = erased[refNames[field] ?? field];
        if (value !== null && read !== null) expect(kind(read), `${type}.${field}`).to.equal(kind(value));
      }
    }
  });

  describe('personOf', () => {
    const meta = { id: randomUUID(), metadata: { accountId } };
    it('is the user, by the pseudonym of the userId, when there is a userId, even with an anonymousId beside it', () => {
      const user = `u:${refs.user(userId)}`;
      expect(personOf(events.UserUpserted, refs)).to.equal(user);
      expect(personOf(events.ProfilesMerged, refs)).to.equal(user);
      expect(personOf(events.ProductSubmitted, refs)).to.equal(user);
      expect(personOf(events.ProductEventTracked, refs)).to.equal(user);
      expect(user).not.to.contain(userId);
      expect(
        personOf({ ...meta, type: 'EventTracked', data: { userId: 'u-2', anonymousId: 'a-2', eventName: 'e', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} } }, refs),
      ).to.equal(`u:${refs.user('u-2')}`);
    });

    it('is the anonymous id, by its pseudonym, when there is no userId', () => {
      expect(personOf(events.EventTracked, refs)).to.equal(`a:${refs.anonymous(anonymousId)}`);
      expect(personOf({ ...meta, type: 'UserUpserted', data: { anonymousId: 'a-3', profile: {}, attributes: {}, attributeTypes: {}, instants: {} } }, refs)).to.equal(
        `a:${refs.anonymous('a-3')}`,
      );
    });

    it('is null for a product, or a product event, without a user', () => {
      expect(personOf({ ...meta, type: 'ProductSubmitted', data: { productId: 'p-1', properties: { name: 'Lamp' } } }, refs)).to.equal(null);
      expect(
        personOf(
          { ...meta, type: 'ProductEventTracked', data: { productId: 'p-1', userId: null, eventName: 'viewed', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} } },
          refs,
        ),
      ).to.equal(null);
    });

    it('keeps ids that look alike apart: the user "x" and the anonymous "x" are two persons', () => {
      const asUser = personOf({ ...meta, type: 'EventTracked', data: { userId: 'x', eventName: 'e', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} } }, refs);
      const asAnonymous = personOf({ ...meta, type: 'EventTracked', data: { anonymousId: 'x', eventName: 'e', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} } }, refs);
      expect(asUser).not.to.equal(asAnonymous);
    });

    it('is another person for the same id in another account (another key)', () => {
      const other = new IdRefs(randomUUID(), newKey());
      expect(personOf(events.UserUpserted, other)).not.to.equal(personOf(events.UserUpserted, refs));
      expect(personOf(events.EventTracked, other)).not.to.equal(personOf(events.EventTracked, refs));
    });
  });
});
