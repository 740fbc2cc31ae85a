import { expect } from 'chai';
import type { Lead, LeadEventPage } from '../../projections/leads/queries.js';
import type { TimelinePage } from '../../projections/leads/timeline.js';
import { servedApp, type Credentials, type Reply, type StoredEvent, type TestApp } from '../support/app.js';
import { bulkResults, queued, uuidPattern } from '../support/replies.js';

/**
 * Segment's tracking API stores each message once by its messageId (docs/segment.md, Exactly
 * once), on either event store: a batch posted again after a lost reply, a message twice in one
 * batch, a message re-sent as a single call. Sent as raw HTTP, as any Segment-compatible client
 * does, with the access token as the user name of HTTP Basic authorization.
 */

interface TrackLookup {
  trackID: string;
  events: { eventId: string; type: string }[];
}

const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

/** A batch of one person's day: a sign-up merging the visitor, a page from a campaign, an order of two products. */
const dayBatch = {
  batch: [
    { type: 'identify', messageId: 'm-identify', userId: 'u-1', anonymousId: 'a-1', traits: { email: 'one@example.com', plan: 'pro' } },
    { type: 'track', messageId: 'm-signup', userId: 'u-1', event: 'Signed Up', properties: { plan: 'pro' } },
    { type: 'page', messageId: 'm-page', userId: 'u-1', name: 'Pricing', properties: { path: '/pricing' }, context: { campaign: { source: 'ads', medium: 'cpc' } } },
    {
      type: 'track',
      messageId: 'm-order',
      userId: 'u-1',
      event: 'Order Completed',
      properties: { order_id: 'o-1', products: [{ product_id: 'p-1', quantity: 1 }, { product_id: 'p-2', quantity: 3 }] },
    },
  ],
};

/** The events each message of dayBatch stores. */
const dayEvents: Record<string, string[]> = {
  'm-identify': ['UserUpserted', 'ProfilesMerged'],
  'm-signup': ['EventTracked'],
  'm-page': ['EventTracked', 'UserUpserted'],
  'm-order': ['EventTracked', 'ProductEventTracked', 'ProductEventTracked'],
};

describe('Segment messages stored exactly once (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  const basic = (): string => `Basic ${Buffer.from(`${account.accessToken}:`).toString('base64')}`;
  const post = (path: string, body: unknown): Promise<Reply> => app.request('POST', path, body, { authorization: basic() });
  /** The trackIDs of a batch's reply, every message queued. */
  const batchTrackIds = async (body: unknown): Promise<string[]> => {
    const results = bulkResults(await post('/v1/batch', body));
    for (const result of results) expect(result.status, JSON.stringify(results)).to.equal('queued');
    return results.map((result) => String(result.trackID));
  };

  async function read<T>(rest: string): Promise<T> {
    const reply = await app.get<T>(`/admin/v1/accounts/${account.licenseCode}${rest}`, `Bearer ${account.accessToken}`);
    expect(reply.status, show(reply)).to.equal(200);
    return reply.body;
  }

  const messageIdOf = (event: StoredEvent): string | undefined => (event.metadata.source as { messageId?: string } | undefined)?.messageId;
  /** Stored event types by messageId (metadata.source), after checking that no event id is stored twice. */
  async function storedByMessage(): Promise<Record<string, string[]>> {
    const events = await app.events();
    const repeated = events.filter((e, i) => events.findIndex((f) => f.event_id === e.event_id) !== i).map((e) => `${e.event_type} of ${messageIdOf(e) ?? 'no messageId'}`);
    expect(repeated, 'events stored again under an id already stored').to.deep.equal([]);
    const byMessage: Record<string, string[]> = {};
    for (const event of events) (byMessage[messageIdOf(event) ?? '(none)'] ??= []).push(event.event_type);
    return byMessage;
  }
  /** Stored event types by metadata.trackId. */
  async function storedByTrackId(): Promise<Record<string, string[]>> {
    const byTrackId: Record<string, string[]> = {};
    for (const event of await app.events()) (byTrackId[String(event.metadata.trackId)] ??= []).push(event.event_type);
    return byTrackId;
  }
  const timeline = async (id: string): Promise<TimelinePage['entries']> => (await read<TimelinePage>(`/leads/${id}/timeline?limit=500`)).entries;
  const productEvents = async (): Promise<[string, string][]> =>
    (await app.pool.query<{ product_id: string; event_name: string }>('SELECT product_id, event_name FROM product_events ORDER BY product_id')).rows.map((r) => [r.product_id, r.event_name]);

  it('a batch posted again after its reply was lost answers the same trackIDs and stores nothing more', async () => {
    const first = await batchTrackIds(dayBatch);
    const second = await batchTrackIds(dayBatch);
    expect(second, 'trackIDs of the second post').to.deep.equal(first);
    expect(new Set(first).size, 'one trackID per message').to.equal(4);
    for (const trackId of first) expect(trackId).to.match(uuidPattern);

    expect(await storedByMessage()).to.deep.equal(dayEvents);
    const [identify, signup, page, order] = first as [string, string, string, string];
    expect(await storedByTrackId()).to.deep.equal({
      [identify]: dayEvents['m-identify'],
      [signup]: dayEvents['m-signup'],
      [page]: dayEvents['m-page'],
      [order]: dayEvents['m-order'],
    });

    await app.projected();
    const entries = await timeline('u-1');
    expect(entries.filter((e) => e.kind === 'event').map((e) => [e.eventName, e.trackID])).to.have.deep.members([
      ['Signed Up', signup],
      ['Page Viewed', page],
      ['Order Completed', order],
    ]);
    expect(entries.filter((e) => e.kind === 'profile').map((e) => (e.kind === 'profile' ? [e.eventType, e.trackID] : []))).to.have.deep.members([
      ['UserUpserted', identify],
      ['ProfilesMerged', identify],
      ['UserUpserted', page],
    ]);
    const lead = await read<Lead>('/leads/u-1');
    // Its version counts the profile events applied: two upserts and the merge.
    expect(lead).to.include({ email: 'one@example.com', utm_source: 'ads', version: 3 });
    expect(lead.anonymousIds).to.deep.equal(['a-1']);
    expect(await productEvents()).to.deep.equal([
      ['p-1', 'Order Completed'],
      ['p-2', 'Order Completed'],
    ]);
    const lookup = await read<TrackLookup>(`/track/${order}`);
    expect(lookup.events.map((e) => e.type)).to.have.members(dayEvents['m-order'] as string[]);
  });

  it('a message twice in one batch is stored once, both copies answered with its trackID', async () => {
    const [identify, signup, order] = dayBatch.batch.filter((m) => m.messageId !== 'm-page');
    const trackIds = await batchTrackIds({ batch: [identify, signup, order, signup, identify, order] });
    expect(trackIds.slice(3), 'trackIDs of the repeated copies').to.deep.equal([trackIds[1], trackIds[0], trackIds[2]]);
    expect(new Set(trackIds).size).to.equal(3);

    expect(await storedByMessage()).to.deep.equal({ 'm-identify': dayEvents['m-identify'], 'm-signup': dayEvents['m-signup'], 'm-order': dayEvents['m-order'] });
    await app.projected();
    const entries = await timeline('u-1');
    expect(entries.map((e) => (e.kind === 'event' ? e.eventName : e.eventType))).to.have.members(['UserUpserted', 'ProfilesMerged', 'Signed Up', 'Order Completed']);
    expect((await read<Lead>('/leads/u-1')).version, 'the upsert and the merge, once each').to.equal(2);
    expect(await productEvents()).to.deep.equal([
      ['p-1', 'Order Completed'],
      ['p-2', 'Order Completed'],
    ]);
  });

  it('a message of a batch re-sent as a single call (/v1/track, /v1/t) gets the same trackID and is stored once', async () => {
    const [identify, signup, , order] = dayBatch.batch;
    const [, signupTrackId, orderTrackId] = await batchTrackIds({ batch: [identify, signup, order] });
    // A single call's body is the message; its type is the path's.
    const signupAlone = Object.fromEntries(Object.entries(signup as Record<string, unknown>).filter(([key]) => key !== 'type'));
    expect(queued(await post('/v1/track', signupAlone))).to.equal(signupTrackId);
    expect(queued(await post('/v1/t', signupAlone))).to.equal(signupTrackId);
    expect(queued(await post('/v1/track', order))).to.equal(orderTrackId);

    expect(await storedByMessage()).to.deep.equal({ 'm-identify': dayEvents['m-identify'], 'm-signup': dayEvents['m-signup'], 'm-order': dayEvents['m-order'] });
    await app.projected();
    const events = (await read<LeadEventPage>('/leads/u-1/events?limit=500')).events;
    expect(events.map((e) => [e.eventName, e.trackID])).to.have.deep.members([
      ['Signed Up', signupTrackId],
      ['Order Completed', orderTrackId],
    ]);
    expect(await productEvents()).to.have.length(2);
  });

  it('a message without a messageId posted twice is stored twice, with a fresh trackID each time', async () => {
    const batch = {
      batch: [
        { type: 'identify', userId: 'u-2', traits: { email: 'two@example.com' } },
        { type: 'track', userId: 'u-2', event: 'Clicked', properties: { button: 'buy' } },
      ],
    };
    const first = await batchTrackIds(batch);
    const second = await batchTrackIds(batch);
    expect(new Set([...first, ...second]).size, 'distinct trackIDs').to.equal(4);

    expect(await storedByMessage()).to.deep.equal({ '(none)': ['UserUpserted', 'EventTracked', 'UserUpserted', 'EventTracked'] });
    await app.projected();
    const events = (await read<LeadEventPage>('/leads/u-2/events?limit=500')).events;
    expect(events.map((e) => [e.eventName, e.trackID])).to.have.deep.members([
      ['Clicked', first[1]],
      ['Clicked', second[1]],
    ]);
    expect((await read<Lead>('/leads/u-2')).version).to.equal(2);
  });
});
