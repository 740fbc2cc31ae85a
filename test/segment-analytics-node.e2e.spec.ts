import { expect } from 'chai';
import { Analytics, type AnalyticsSettings } from '@segment/analytics-node';
import type { Lead, LeadEventPage } from '../projections/leads/queries.js';
import type { TimelinePage } from '../projections/leads/timeline.js';
import type { Warning } from '../src/activity/queries.js';
import { servedApp, type Credentials, type Reply, type StoredEvent, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { TestProxy } from './support/sdk-proxy.js';

/**
 * Segment's own Node library (@segment/analytics-node) pointed at the service (`host`), with an
 * account's access token as its write key: what a server that already sends to Segment gets from
 * the service, read back through the read API as a user sees it.
 */

/** A message as the library posts it in a batch (the fields these tests look at). */
interface SentMessage {
  type: string;
  messageId: string;
  userId?: string;
  context?: { library?: { name?: string; version?: string } };
}

interface SentBatch {
  batch: SentMessage[];
  writeKey?: string;
}

interface TrackLookup {
  trackID: string;
  events: { eventId: string; type: string }[];
}

interface ProductEventRow {
  product_id: string;
  user_id: string | null;
  event_name: string;
  event_data: Record<string, unknown>;
}

const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

/** An iPhone's Safari, as a mobile app's backend forwards it in context.userAgent. */
const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

describe('Segment analytics-node against the service (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  const bearer = (): string => `Bearer ${account.accessToken}`;
  const path = (rest: string): string => `/admin/v1/accounts/${account.licenseCode}${rest}`;
  async function read<T>(rest: string): Promise<T> {
    const reply = await app.get<T>(path(rest), bearer());
    expect(reply.status, show(reply)).to.equal(200);
    return reply.body;
  }
  const lead = (id: string): Promise<Lead> => read<Lead>(`/leads/${encodeURIComponent(id)}`);

  /** The library with the service as its host; every batch it posts and every delivery failure recorded. */
  function library(settings: Partial<AnalyticsSettings> = {}): { analytics: Analytics; sent: SentBatch[]; failures: unknown[] } {
    const analytics = new Analytics({ writeKey: account.accessToken, host: app.baseUrl, maxRetries: 0, ...settings });
    const sent: SentBatch[] = [];
    const failures: unknown[] = [];
    analytics.on('http_request', (request) => sent.push(JSON.parse(request.body) as SentBatch));
    analytics.on('error', (error) => failures.push(error));
    return { analytics, sent, failures };
  }

  /** Runs one call of the library: resolves once the library counts it delivered, fails when it gives it up. */
  const delivered = (call: (done: (error?: unknown) => void) => void): Promise<void> =>
    new Promise((resolve, reject) => call((error) => (error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error))))));

  const sourceOf = (event: StoredEvent): { api?: string; messageId?: string; library?: string } => (event.metadata.source ?? {}) as { api?: string; messageId?: string; library?: string };
  const eventsOfMessage = async (messageId: string): Promise<StoredEvent[]> => (await app.events()).filter((e) => sourceOf(e).messageId === messageId);

  it("a server's identify, alias, track, page and group calls become one lead with its profile, custom attributes, events and product events", async () => {
    // One batch, as a busy server sends: every call is queued, closeAndFlush posts them in call order.
    const { analytics, sent, failures } = library({ flushAt: 20, flushInterval: 60_000 });
    analytics.track({ anonymousId: 'anon-ada-app', event: 'Opened App', properties: { build: 412 } });
    analytics.identify({
      userId: 'u-ada',
      anonymousId: 'anon-ada-web',
      traits: {
        email: 'ada@example.com',
        firstName: 'Ada',
        last_name: 'Lovelace',
        phone: 4402079460000,
        birthday: '1990-12-10',
        gender: 'female',
        title: 'Countess',
        address: { street: '12 St James Square', city: 'London', postalCode: 'SW1Y 4JH', country: 'UK' },
        company: { name: 'Analytical Engines', employee_count: 12, industry: 'Computing' },
        favoriteColor: 'green',
        prefs: { newsletter: true, theme: { dark: true } },
        languages: ['en', 'fr'],
      },
      context: { campaign: { source: 'newsletter', medium: 'email', name: 'launch' }, userAgent: iphone },
    });
    analytics.alias({ userId: 'u-ada', previousId: 'anon-ada-app' });
    analytics.track({ userId: 'u-ada', event: 'Signed Up', properties: { plan: 'pro', trial: true } });
    analytics.track({ userId: 'u-ada', event: 'Product Viewed', properties: { product_id: 'p-engine', name: 'Difference Engine', price: 99.5 } });
    analytics.track({
      userId: 'u-ada',
      event: 'Order Completed',
      properties: {
        order_id: 'o-1',
        currency: 'GBP',
        total: 120.5,
        products: [
          { product_id: 'p-engine', quantity: 1, price: 99.5 },
          { product_id: 'p-cards', quantity: 20, price: 1.05 },
          { name: 'gift wrap', price: 0 },
        ],
      },
    });
    analytics.page({ userId: 'u-ada', category: 'Docs', name: 'Pricing', properties: { path: '/pricing', url: 'https://example.com/pricing' } });
    analytics.group({ userId: 'u-ada', groupId: 'g-engines', traits: { name: 'Engines Ltd', employees: 40, plan: 'enterprise' } });
    await analytics.closeAndFlush();

    expect(failures, 'delivery failures').to.deep.equal([]);
    expect(sent, 'the batches the library posted').to.have.length(1);
    const messages = (sent[0] as SentBatch).batch;
    expect(messages.map((m) => m.type), 'the batch in call order').to.deep.equal(['track', 'identify', 'alias', 'track', 'track', 'track', 'page', 'group']);
    // The library names itself in each message's context.library (its User-Agent, analytics-node-next/latest, carries no version).
    const libraries = new Set(messages.map((m) => JSON.stringify(m.context?.library)));
    expect([...libraries], 'context.library of the messages').to.deep.equal([JSON.stringify({ name: '@segment/analytics-node', version: analytics.VERSION })]);
    await app.projected();

    const ada = await lead('u-ada');
    expect(ada).to.include({
      userId: 'u-ada',
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      phone: '4402079460000',
      gender: 'female',
      title: 'Countess',
      address: '12 St James Square',
      city: 'London',
      zipcode: 'SW1Y 4JH',
      country: 'UK',
      // The group call came after the identify: its company is the lead's.
      company: 'Engines Ltd',
      number_of_employees: 40,
      utm_source: 'newsletter',
      device_type: 'mobile',
    });
    expect(Date.parse(String(ada.birth_date)), `birth_date ${String(ada.birth_date)}`).to.equal(Date.parse('1990-12-10T00:00:00Z'));
    expect(ada.anonymousIds).to.have.members(['anon-ada-web', 'anon-ada-app']);
    expect(ada.attributes).to.deep.equal({
      favorite_color: 'green',
      prefs_newsletter: true,
      prefs_theme_dark: true,
      languages: '["en","fr"]',
      company_industry: 'Computing',
      company_plan: 'enterprise',
      group_id: 'g-engines',
      utm_medium: 'email',
      utm_campaign: 'launch',
    });
    // Each anonymous id now leads to the known user.
    expect((await lead('anon-ada-app')).userId).to.equal('u-ada');
    expect((await lead('anon-ada-web')).userId).to.equal('u-ada');

    // The person's events, the anonymous app's one included; product views are the product's only.
    const events = (await read<LeadEventPage>('/leads/u-ada/events?limit=500')).events;
    const byName = new Map(events.map((e) => [e.eventName, e.eventData]));
    expect(events.map((e) => e.eventName)).to.have.members(['Opened App', 'Signed Up', 'Order Completed', 'Page Viewed']);
    expect(byName.get('Opened App')).to.deep.equal({ build: 412 });
    expect(byName.get('Signed Up')).to.deep.equal({ plan: 'pro', trial: true });
    expect(byName.get('Page Viewed')).to.deep.equal({ name: 'Pricing', category: 'Docs', path: '/pricing', url: 'https://example.com/pricing' });
    expect(byName.get('Order Completed')).to.deep.include({ order_id: 'o-1', currency: 'GBP', total: 120.5 });
    expect((byName.get('Order Completed')?.products as unknown[] | undefined) ?? []).to.have.length(3);

    const timeline = (await read<TimelinePage>('/leads/u-ada/timeline?limit=500')).entries;
    expect(timeline.filter((e) => e.kind === 'event').map((e) => e.eventName)).to.have.members(['Opened App', 'Signed Up', 'Order Completed', 'Page Viewed']);
    const profiles = timeline.flatMap((e) => (e.kind === 'profile' ? [e.eventType] : []));
    // identify (upsert and merge), alias (upsert and merge), group (upsert).
    expect(profiles.filter((t) => t === 'ProfilesMerged'), 'merges').to.have.length(2);
    expect(profiles.filter((t) => t === 'UserUpserted'), 'profile upserts').to.have.length(3);

    // The products read model: a view of p-engine, and one order line for each listed product with a product_id.
    const { rows: productEvents } = await app.pool.query<ProductEventRow>('SELECT product_id, user_id, event_name, event_data FROM product_events ORDER BY global_position');
    expect(productEvents).to.deep.equal([
      { product_id: 'p-engine', user_id: 'u-ada', event_name: 'Product Viewed', event_data: { product_id: 'p-engine', name: 'Difference Engine', price: 99.5 } },
      { product_id: 'p-engine', user_id: 'u-ada', event_name: 'Order Completed', event_data: { order_id: 'o-1', currency: 'GBP', product_id: 'p-engine', quantity: 1, price: 99.5 } },
      { product_id: 'p-cards', user_id: 'u-ada', event_name: 'Order Completed', event_data: { order_id: 'o-1', currency: 'GBP', product_id: 'p-cards', quantity: 20, price: 1.05 } },
    ]);

    // Every stored event names the message and the library it came from.
    const stored = await app.events();
    const libraryName = `@segment/analytics-node ${analytics.VERSION}`;
    expect([...new Set(stored.map((e) => sourceOf(e).library))], 'metadata.source.library of the stored events').to.deep.equal([libraryName]);
    const viewed = messages[4] as SentMessage;
    const [productView, ...others] = await eventsOfMessage(viewed.messageId);
    expect(others).to.deep.equal([]);
    expect(productView?.event_type).to.equal('ProductEventTracked');
    expect(productView?.metadata.source).to.deep.equal({ api: 'segment', messageId: viewed.messageId, library: libraryName });

    // The order's trackID (that of its first event) finds all it stored: the event and both order lines.
    const order = await eventsOfMessage((messages[5] as SentMessage).messageId);
    expect(order.map((e) => e.event_type)).to.deep.equal(['EventTracked', 'ProductEventTracked', 'ProductEventTracked']);
    const orderTrackId = String(order[0]?.metadata.trackId);
    expect(order.map((e) => e.metadata.trackId), "each event's metadata.trackId: the trackID answered for the message").to.deep.equal([orderTrackId, orderTrackId, orderTrackId]);
    const lookup = await read<TrackLookup>(`/track/${orderTrackId}`);
    expect(lookup.events.map((e) => e.type)).to.have.members(['EventTracked', 'ProductEventTracked', 'ProductEventTracked']);
  });

  it('a batch whose reply is lost on the way back is retried by the library and stored once', async () => {
    const proxy = await TestProxy.start(app.baseUrl);
    try {
      // The first POST reaches the service, which stores it; its reply is then cut off.
      proxy.plan = (_request, index) => (index === 0 ? { kind: 'lose-reply' } : { kind: 'forward' });
      const { analytics, failures } = library({ host: proxy.baseUrl, flushAt: 2, maxRetries: 3, httpRequestTimeout: 5_000 });
      await Promise.all([
        delivered((done) => analytics.identify({ userId: 'u-retry', traits: { email: 'retry@example.com' } }, done)),
        delivered((done) => analytics.track({ userId: 'u-retry', event: 'Checkout Started', properties: { cart_id: 'c-9' } }, done)),
      ]);
      await analytics.closeAndFlush();
      expect(failures, 'delivery failures').to.deep.equal([]);

      const posts = proxy.seen.map((request) => request.json as SentBatch);
      expect(posts.length, 'POSTs the proxy saw').to.be.at.least(2);
      const messageIds = posts.map((post) => post.batch.map((m) => m.messageId));
      const [identifyId, trackMessageId] = messageIds[0] as [string, string];
      expect(messageIds, 'every attempt carries the same two messages').to.deep.equal(posts.map(() => [identifyId, trackMessageId]));
      expect(proxy.seen[1]?.headers['x-retry-count'], "the retry's X-Retry-Count").to.equal('1');

      const [upsert, ...moreUpserts] = await eventsOfMessage(identifyId);
      const [tracked, ...moreTracked] = await eventsOfMessage(trackMessageId);
      expect([upsert?.event_type, moreUpserts], 'stored events of the identify').to.deep.equal(['UserUpserted', []]);
      expect([tracked?.event_type, moreTracked], 'stored events of the track').to.deep.equal(['EventTracked', []]);
      await app.projected();
      const timeline = (await read<TimelinePage>('/leads/u-retry/timeline')).entries;
      expect(timeline.map((e) => [e.kind, e.trackID])).to.have.deep.members([
        ['profile', upsert?.metadata.trackId],
        ['event', tracked?.metadata.trackId],
      ]);
      const events = (await read<LeadEventPage>('/leads/u-retry/events')).events;
      expect(events.map((e) => [e.eventName, e.trackID])).to.deep.equal([['Checkout Started', tracked?.metadata.trackId]]);
      expect((await lead('u-retry')).version, 'profile versions').to.equal(1);
    } finally {
      await proxy.stop();
    }
  });

  it('a trait whose type changes from number to text is refused, stored nowhere, and shown in Warnings with the library that sent it', async () => {
    const { analytics, sent, failures } = library({ flushAt: 1 });
    await delivered((done) => analytics.identify({ userId: 'u-lock', traits: { score: 5 } }, done));
    // Segment answers a batch 200 whatever its messages: the library counts this one delivered.
    await delivered((done) => analytics.identify({ userId: 'u-lock', traits: { score: 'high', nickname: 'Lo' } }, done));
    await analytics.closeAndFlush();
    expect(failures, 'delivery failures').to.deep.equal([]);

    const [accepted, refused] = sent.map((post) => post.batch[0]?.messageId ?? '');
    expect((await eventsOfMessage(accepted as string)).map((e) => e.event_type), 'stored events of the first identify').to.deep.equal(['UserUpserted']);
    expect(await eventsOfMessage(refused as string), 'stored events of the refused identify').to.deep.equal([]);
    expect(await app.events(), 'every stored event').to.have.length(1);
    await app.projected();
    const locked = await lead('u-lock');
    expect(locked.attributes).to.deep.equal({ score: 5 });
    expect(locked.attributeTypes).to.deep.equal({ score: 'number' });

    const warnings = await eventually(
      async () => {
        const recent = await read<{ warnings: Warning[] }>('/warnings/recent');
        return recent.warnings.length > 0 ? recent.warnings : undefined;
      },
      10_000,
      () => 'no warning recorded for the refused identify',
    );
    expect(warnings).to.have.length(1);
    const [warning] = warnings as [Warning];
    expect(warning).to.include({ endpoint: 'segment/batch', reason: 'attribute_type', field: 'attributes', status: 200, client: `@segment/analytics-node ${analytics.VERSION}` });
    expect(warning.message).to.contain('score');
    expect(warning.excerpt).to.contain('"high"');
  });
});
