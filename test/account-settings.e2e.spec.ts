import { expect } from 'chai';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { capturedLog, type LogLine } from './support/log-lines.js';
import { queued, requestError } from './support/replies.js';

/**
 * An account's settings (GET and PATCH /admin/v1/accounts/:license/settings): what it keeps of a
 * visitor's address, in effect at once for Segment's messages, and who may read and change it.
 */

interface Settings {
  addressPolicy: string;
}

interface Lead {
  attributes: Record<string, unknown>;
}

const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

describe('account settings: the address policy (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let lines: LogLine[];

  beforeEach(async () => {
    const captured = capturedLog('info');
    lines = captured.lines;
    app = await TestApp.start({}, { projections: true, log: captured.log });
    account = await app.account('Acme');
  });
  afterEach(() => app.stop());

  const bearer = (): string => `Bearer ${account.accessToken}`;
  const settingsPath = (license = account.licenseCode): string => `/admin/v1/accounts/${license}/settings`;
  const getSettings = (authorization: string = bearer()): Promise<Reply<Settings>> => app.get<Settings>(settingsPath(), authorization);
  const patchSettings = (body: unknown, authorization: string | null = bearer()): Promise<Reply<Settings>> =>
    app.request<Settings>('PATCH', settingsPath(), body, { authorization });
  async function changed(addressPolicy: string): Promise<void> {
    const reply = await patchSettings({ addressPolicy });
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body).to.deep.equal({ addressPolicy });
  }

  /** A Segment identify from a server (the access token as HTTP Basic user name) with `ip` in its context. */
  const identify = (userId: string, ip: string, traits: Record<string, unknown> = {}): Promise<Reply> =>
    app.request('POST', '/v1/identify', { userId, traits, context: { ip } }, { authorization: `Basic ${Buffer.from(`${account.accessToken}:`).toString('base64')}` });
  async function ipOf(userId: string): Promise<unknown> {
    await app.projected();
    const reply = await app.get<Lead>(`/admin/v1/accounts/${account.licenseCode}/leads/${encodeURIComponent(userId)}`, bearer());
    expect(reply.status, show(reply)).to.equal(200);
    return reply.body.attributes.ip;
  }

  it('truncates addresses by default; keep, truncate and drop are in effect for the next message, an IPv6 address truncated to its /48', async () => {
    const initial = await getSettings();
    expect(initial.status, show(initial)).to.equal(200);
    expect(initial.body).to.deep.equal({ addressPolicy: 'truncate' });
    queued(await identify('u-default', '203.0.113.7'));
    expect(await ipOf('u-default')).to.equal('203.0.113.0');

    await changed('keep');
    expect((await getSettings()).body).to.deep.equal({ addressPolicy: 'keep' });
    queued(await identify('u-keep', '203.0.113.7'));
    expect(await ipOf('u-keep')).to.equal('203.0.113.7');

    await changed('truncate');
    queued(await identify('u-truncate', '203.0.113.7'));
    expect(await ipOf('u-truncate')).to.equal('203.0.113.0');
    queued(await identify('u-ipv6', '2001:db8:85a3:8d3:1319:8a2e:370:7348'));
    expect(await ipOf('u-ipv6')).to.equal('2001:db8:85a3::');

    await changed('drop');
    expect((await getSettings()).body).to.deep.equal({ addressPolicy: 'drop' });
    // A trait, so that the lead is stored with no address at all.
    queued(await identify('u-drop', '203.0.113.7', { plan: 'pro' }));
    expect(await ipOf('u-drop')).to.equal(undefined);
    // What was stored before stays as it was.
    expect(await ipOf('u-keep')).to.equal('203.0.113.7');

    const logged = lines.filter((line) => line.msg === 'address policy changed').map((line) => line.addressPolicy);
    expect(logged).to.deep.equal(['keep', 'truncate', 'drop']);
    const accountIds = new Set(lines.filter((line) => line.msg === 'address policy changed').map((line) => line.accountId));
    expect(accountIds.size).to.equal(1);
    expect([...accountIds][0]).to.be.a('string');
  });

  it('refuses a value not listed, another field and a body without the setting (400 naming it), leaving the setting as it was', async () => {
    expect(requestError(await patchSettings({ addressPolicy: 'hash' }), 400)).to.equal('addressPolicy must be one of keep, truncate, drop');
    expect(requestError(await patchSettings({ addressPolicy: null }), 400)).to.equal('addressPolicy must be one of keep, truncate, drop');
    expect(requestError(await patchSettings({ addressPolicy: 'keep', retention: 30 }), 400)).to.equal('unknown field "retention": the settings are addressPolicy');
    expect(requestError(await patchSettings({}), 400)).to.equal('body must set addressPolicy');
    expect(requestError(await patchSettings(['keep']), 400)).to.equal('body must be a JSON object');
    expect(requestError(await app.request('PATCH', settingsPath(), undefined, { authorization: bearer(), raw: '{"addressPolicy":', headers: { 'content-type': 'application/json' } }), 400)).to.match(/JSON/i);
    expect((await getSettings()).body).to.deep.equal({ addressPolicy: 'truncate' });
    expect(lines.filter((line) => line.msg === 'address policy changed')).to.deep.equal([]);
  });

  it('takes an ingest+read token, a session of the account and operator credentials; refuses no credentials (401), a token of scope ingest (403) and another account (401)', async () => {
    requestError(await app.get(settingsPath()), 401);
    requestError(await patchSettings({ addressPolicy: 'keep' }, null), 401);

    const made = await app.request<{ accessToken: string }>('POST', `/admin/v1/accounts/${account.licenseCode}/tokens`, { label: 'server', scope: 'ingest' }, { authorization: bearer() });
    expect(made.status, show(made)).to.equal(201);
    const ingestOnly = `Bearer ${made.body.accessToken}`;
    requestError(await getSettings(ingestOnly), 403);
    requestError(await patchSettings({ addressPolicy: 'keep' }, ingestOnly), 403);

    const other = await app.account('Other');
    requestError(await getSettings(`Bearer ${other.accessToken}`), 401);
    requestError(await patchSettings({ addressPolicy: 'keep' }, `Bearer ${other.accessToken}`), 401);
    requestError(await app.get(settingsPath('nosuchlicense'), `Bearer ${adminToken}`), 404);
    expect((await getSettings()).body).to.deep.equal({ addressPolicy: 'truncate' });

    // The dashboard's way: a session cookie (and its own Origin on a change).
    const signedIn = await app.request('POST', '/admin/v1/session', { licenseCode: account.licenseCode, accessToken: account.accessToken });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const withSession = (origin: string) => app.request<Settings>('PATCH', settingsPath(), { addressPolicy: 'keep' }, { headers: { cookie, origin } });
    requestError(await withSession('https://evil.example'), 403);
    expect((await withSession(app.baseUrl)).body).to.deep.equal({ addressPolicy: 'keep' });

    const operator = `Bearer ${adminToken}`;
    expect((await getSettings(operator)).body).to.deep.equal({ addressPolicy: 'keep' });
    expect((await patchSettings({ addressPolicy: 'drop' }, operator)).body).to.deep.equal({ addressPolicy: 'drop' });
    // Each account its own.
    expect((await app.get<Settings>(settingsPath(other.licenseCode), `Bearer ${other.accessToken}`)).body).to.deep.equal({ addressPolicy: 'truncate' });
  });
});
