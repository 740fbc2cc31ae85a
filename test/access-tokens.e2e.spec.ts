import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { expect } from 'chai';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import { withDatabase } from '../src/db/pool.js';
import { migrate } from '../src/db/migrate.js';
import { createLogger } from '../src/logger.js';
import { migrationsDir } from '../src/paths.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { instantText } from '../src/cli/instant-text.js';
import { tracking } from './support/cli.js';
import { asAdmin } from './support/database.js';
import { eventually } from './support/eventually.js';
import { queued, requestError, uuidPattern } from './support/replies.js';

/** Access tokens (docs/api.md, Access tokens and Accounts): several per account, scopes, revocation. */

interface TokenView {
  id: string;
  label: string;
  scope: string;
  createdAt: string;
  lastUsedAt: string | null;
}

const admin = `Bearer ${adminToken}`;
const bearer = (token: string): string => `Bearer ${token}`;
const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;
const tokensPath = (account: Credentials): string => `/admin/v1/accounts/${account.licenseCode}/tokens`;
const event = { userId: 'u-1', eventName: 'Viewed' };

describe('access tokens (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;

  beforeEach(async () => {
    app = await TestApp.start();
    account = await app.account('Acme');
    other = await app.account('Globex');
  });
  afterEach(() => app.stop());

  const create = (body: unknown, authorization = admin, target = account) => app.request('POST', tokensPath(target), body, { authorization });
  const list = async (authorization = admin, target = account): Promise<TokenView[]> => {
    const reply = await app.get<{ tokens: TokenView[] }>(tokensPath(target), authorization);
    expect(reply.status, show(reply)).to.equal(200);
    return reply.body.tokens;
  };
  const revoke = (id: string, authorization = admin, target = account) => app.request('DELETE', `${tokensPath(target)}/${id}`, undefined, { authorization });

  it('creates a token shown once, lists it, posts an item with it, and refuses it at ingest at once once revoked', async () => {
    const reply = await create({ label: 'web shop', scope: 'ingest+read' });
    expect(reply.status, show(reply)).to.equal(201);
    const created = reply.body as TokenView & { accessToken: string };
    expect(created).to.have.all.keys('id', 'label', 'scope', 'createdAt', 'lastUsedAt', 'accessToken');
    expect(created).to.include({ label: 'web shop', scope: 'ingest+read', lastUsedAt: null });
    expect(created.id).to.match(uuidPattern);
    expect(created.accessToken).to.match(/^trk_[A-Za-z0-9_-]{43}$/);

    const tokens = await list();
    expect(tokens.map((t) => [t.label, t.scope])).to.deep.equal([['initial', 'ingest+read'], ['web shop', 'ingest+read']]);
    expect(JSON.stringify(tokens)).not.to.contain(created.accessToken);
    const { rows } = await app.pool.query<{ token_hash: Buffer }>('SELECT token_hash FROM access_tokens WHERE id = $1', [created.id]);
    expect(rows[0]?.token_hash.equals(createHash('sha256').update(created.accessToken).digest())).to.equal(true);

    const withNew = { ...account, accessToken: created.accessToken };
    queued(await app.ingest(withNew, 'events', event));
    expect((await app.get(`/admin/v1/accounts/${account.licenseCode}/leads`, bearer(created.accessToken))).status).to.equal(200);
    // The account's own ingest+read token manages its tokens too.
    expect((await revoke(created.id, bearer(account.accessToken))).status).to.equal(204);
    requestError(await app.ingest(withNew, 'events', event), 401);
    queued(await app.ingest(account, 'events', event));
    expect((await list()).map((t) => t.label)).to.deep.equal(['initial']);
    requestError(await revoke(created.id), 404);
  });

  it('lets a token of scope ingest post items but not read (403 naming the scope) or manage tokens', async () => {
    const created = (await create({ label: 'tracker', scope: 'ingest' })).body as { accessToken: string };
    const ingestOnly = { ...account, accessToken: created.accessToken };
    queued(await app.ingest(ingestOnly, 'users', { userId: 'u-9', attributes: {} }));
    expect(requestError(await app.get(`/admin/v1/accounts/${account.licenseCode}/leads`, bearer(created.accessToken)), 403)).to.contain('scope ingest');
    requestError(await app.get(`/admin/v1/accounts/${account.licenseCode}/leads/u-9`, bearer(created.accessToken)), 403);
    requestError(await app.get(tokensPath(account), bearer(created.accessToken)), 403);
    requestError(await create({ label: 'more', scope: 'ingest+read' }, bearer(created.accessToken)), 403);
    requestError(await app.get('/admin/v1/accounts', bearer(created.accessToken)), 403);
  });

  it("refuses to revoke the last active token (409), and answers 404 for another account's token id, an unknown id and a malformed one", async () => {
    const [initial] = await list();
    expect(requestError(await revoke(initial?.id as string), 409)).to.contain('last active');
    const [othersToken] = await list(admin, other);
    await create({ label: 'second', scope: 'ingest' });
    requestError(await revoke(othersToken?.id as string), 404);
    requestError(await revoke('00000000-0000-4000-8000-000000000000'), 404);
    requestError(await revoke('not-a-uuid'), 404);
    queued(await app.ingest(other, 'events', event));
    // Another account's token cannot manage this account's tokens: it does not match (401).
    requestError(await revoke(initial?.id as string, bearer(other.accessToken)), 401);
    requestError(await app.get(tokensPath(account), bearer(other.accessToken)), 401);
    expect((await revoke(initial?.id as string)).status).to.equal(204);
    requestError(await app.ingest(account, 'events', event), 401);
  });

  it('validates label and scope, naming the field, and holds at most 20 active tokens', async () => {
    for (const [body, field] of [
      [{ scope: 'ingest' }, 'label'],
      [{ label: '', scope: 'ingest' }, 'label'],
      [{ label: '   ', scope: 'ingest' }, 'label'],
      [{ label: 'x'.repeat(101), scope: 'ingest' }, 'label'],
      [{ label: 'tab\there', scope: 'ingest' }, 'label'],
      [{ label: 7, scope: 'ingest' }, 'label'],
      [{ label: 'ok' }, 'scope'],
      [{ label: 'ok', scope: 'read' }, 'scope'],
      [{ label: 'ok', scope: ['ingest'] }, 'scope'],
      [[], 'body'],
    ] as const) {
      expect(requestError(await create(body), 400), JSON.stringify(body)).to.contain(field);
    }
    // 100 characters, counted as characters: 100 emoji are 200 UTF-16 units.
    expect((await create({ label: '🙂'.repeat(100), scope: 'ingest' })).status).to.equal(201);
    for (let i = 3; i <= 20; i += 1) expect((await create({ label: `t${i}`, scope: 'ingest' })).status).to.equal(201);
    expect(requestError(await create({ label: 't21', scope: 'ingest' }), 409)).to.contain('20');
    expect(await list()).to.have.length(20);
    requestError(await app.request('POST', tokensPath(account), undefined, { authorization: admin, raw: JSON.stringify({ label: 'x'.repeat(5000), scope: 'ingest' }) }), 413);
  });

  it('records when a token was last used, to the minute, and the command shows it so', async () => {
    const created = (await create({ label: 'tracker', scope: 'ingest' })).body as { id: string; accessToken: string };
    expect((await list()).find((t) => t.id === created.id)?.lastUsedAt).to.equal(null);
    queued(await app.ingest({ ...account, accessToken: created.accessToken }, 'events', event));
    // Written off the request path: it appears shortly after the reply.
    const lastUsedAt = await eventually(
      async () => (await list()).find((t) => t.id === created.id)?.lastUsedAt || undefined,
      5_000,
      () => 'lastUsedAt still null after a use',
    );
    expect(lastUsedAt, 'lastUsedAt after a use').to.be.a('string');
    const at = new Date(lastUsedAt as string);
    expect(at.getUTCSeconds()).to.equal(0);
    expect(at.getUTCMilliseconds()).to.equal(0);
    expect(Date.now() - at.getTime()).to.be.within(0, 120_000);
    // The other tokens were not marked.
    const initial = (await list()).find((t) => t.label === 'initial');
    expect(initial?.lastUsedAt).to.equal(null);
    const text = await tracking(app, 'accounts', 'tokens', account.licenseCode);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.contain(`created ${instantText(initial?.createdAt)}  last used never  initial`);
    expect(text.stdout).to.match(new RegExp(`created \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  last used ${instantText(lastUsedAt, { precision: 'minute' })}  tracker\n`));
  });

  it('lists accounts to operators only, oldest first, and creates one with an initial ingest+read token', async () => {
    const reply = await app.get<{ accounts: { licenseCode: string; name: string; createdAt: string }[] }>('/admin/v1/accounts', admin);
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body.accounts.map((a) => [a.licenseCode, a.name])).to.deep.equal([
      [account.licenseCode, 'Acme'],
      [other.licenseCode, 'Globex'],
    ]);
    expect(reply.body.accounts[0]).to.have.all.keys('licenseCode', 'name', 'createdAt');
    requestError(await app.get('/admin/v1/accounts'), 401);
    requestError(await app.get('/admin/v1/accounts', 'Bearer wrong'), 401);
    expect(requestError(await app.get('/admin/v1/accounts', bearer(account.accessToken)), 403)).to.contain('admin token');

    const made = await app.request('POST', '/admin/v1/accounts', { name: 'Initech' }, { authorization: admin });
    const initech = made.body as Credentials;
    expect((await list(admin, initech)).map((t) => [t.label, t.scope])).to.deep.equal([['initial', 'ingest+read']]);
  });

  it('refuses account names as token labels are refused: blank, too long, control characters, unpaired surrogates (400 naming name)', async () => {
    const create = (name: unknown) => app.request('POST', '/admin/v1/accounts', { name }, { authorization: admin });
    for (const [name, message] of [
      [undefined, 'name is required and must be a string'],
      ['  ', 'name must be 1 to 200 characters'],
      ['x'.repeat(201), 'name must be 1 to 200 characters'],
      ['Evil\u0007Corp', 'name must not contain control characters'],
      ['line\nbreak', 'name must not contain control characters'],
      ['half \ud83d', 'name contains a NUL character or an unpaired surrogate, which cannot be stored'],
    ] as const) {
      expect(requestError(await create(name), 400), JSON.stringify(name)).to.equal(message);
    }
    expect((await app.pool.query('SELECT 1 FROM accounts')).rowCount).to.equal(2);
    // Counted in characters, as labels are.
    expect((await create('🙂'.repeat(200))).status).to.equal(201);
  });
});

describe('access tokens: the migration from one token per account (e2e)', () => {
  it("moves an account's token into access_tokens (label initial, ingest+read), where it keeps working", async function () {
    this.timeout(60_000);
    const name = `tracking_tokens_migration_${process.pid}`;
    const serverUrl = (await asAdmin(async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${name}`);
      await client.query(`CREATE DATABASE ${name}`);
      return `postgres://${client.user}:${encodeURIComponent(String(client.password ?? ''))}@${client.host}:${client.port}/postgres`;
    })) as string;
    const url = withDatabase(serverUrl, name);
    const silent = createLogger('silent');
    const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    const token = 'trk_an-existing-token-of-the-old-layout-0000000000';
    const accountId = '11111111-1111-4111-8111-111111111111';
    try {
      // The four migrations before this one.
      await runner({ databaseUrl: url, dir: migrationsDir, direction: 'up', count: 4, migrationsTable: 'pgmigrations', logger: quiet });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('INSERT INTO accounts (id, name, license_code, token_hash) VALUES ($1, $2, $3, $4)', [
          accountId,
          'Old',
          'aaaaaaaaaaaaaaaaaaaaaaaa',
          createHash('sha256').update(token).digest(),
        ]);
      } finally {
        await client.end();
      }
      await migrate(url, silent);
      const app = await TestApp.start({}, { database: { name, url, drop: async () => undefined } });
      try {
        const old = { licenseCode: 'aaaaaaaaaaaaaaaaaaaaaaaa', accessToken: token };
        queued(await app.ingest(old, 'events', event));
        const tokens = (await app.get<{ tokens: TokenView[] }>(tokensPath(old), bearer(token))).body.tokens;
        expect(tokens.map((t) => [t.label, t.scope])).to.deep.equal([['initial', 'ingest+read']]);
        const { rows } = await app.pool.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'accounts' AND column_name = 'token_hash'");
        expect(rows).to.have.length(0);
      } finally {
        await app.stop();
      }
      // Down again, through the migrations after it too: the account gets its newest active token
      // back in accounts.token_hash.
      const names = readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).sort();
      const downToIt = names.length - names.findIndex((f) => f.includes('_access-tokens-sessions'));
      await runner({ databaseUrl: url, dir: migrationsDir, direction: 'down', count: downToIt, migrationsTable: 'pgmigrations', logger: quiet });
      const check = new pg.Client({ connectionString: url });
      await check.connect();
      try {
        const { rows } = await check.query<{ token_hash: Buffer }>('SELECT token_hash FROM accounts WHERE id = $1', [accountId]);
        expect(rows[0]?.token_hash.equals(createHash('sha256').update(token).digest())).to.equal(true);
      } finally {
        await check.end();
      }
    } finally {
      await asAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  });
});

describe('access tokens: the tracking command (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;

  before(async () => {
    app = await TestApp.start();
    account = await app.account('Acme');
  });
  after(() => app.stop());

  it('adds a token (shown once), lists tokens, revokes one, refuses the last one, and rotates to a single new token', async () => {
    const added = await tracking(app, 'accounts', 'add-token', account.licenseCode, '--label', 'batch job', '--scope', 'ingest', '--json');
    expect(added.code, added.stderr).to.equal(0);
    const token = JSON.parse(added.stdout) as TokenView & { accessToken: string };
    expect(token).to.include({ label: 'batch job', scope: 'ingest' });
    queued(await app.ingest({ ...account, accessToken: token.accessToken }, 'events', event));

    const text = await tracking(app, 'accounts', 'tokens', account.licenseCode);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.contain(token.id).and.contain('batch job').and.contain('initial').and.contain('ingest+read');
    expect(text.stdout).not.to.contain(token.accessToken);
    const listed = JSON.parse((await tracking(app, 'accounts', 'tokens', account.licenseCode, '--json')).stdout) as TokenView[];
    expect(listed.map((t) => t.label)).to.deep.equal(['initial', 'batch job']);

    const revoked = await tracking(app, 'accounts', 'revoke-token', account.licenseCode, token.id);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.stdout).to.contain('revoked');
    const last = await tracking(app, 'accounts', 'revoke-token', account.licenseCode, listed[0]?.id as string);
    expect(last.code).to.equal(1);
    expect(last.stderr).to.contain('last active');
    const unknown = await tracking(app, 'accounts', 'revoke-token', account.licenseCode, token.id);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('no active access token');

    const badScope = await tracking(app, 'accounts', 'add-token', account.licenseCode, '--label', 'x', '--scope', 'read');
    expect(badScope.code).to.equal(2);
    expect(badScope.stderr).to.contain('scope must be one of ingest, ingest+read');
    const noLabel = await tracking(app, 'accounts', 'add-token', account.licenseCode, '--scope', 'ingest');
    expect(noLabel.code).to.equal(2);
    expect(noLabel.stderr).to.contain('label');
    const controlLabel = await tracking(app, 'accounts', 'add-token', account.licenseCode, '--label', 'a\u001bb', '--scope', 'ingest');
    expect(controlLabel.code).to.equal(2);
    expect(controlLabel.stderr).to.contain('label must not contain control characters');
    const controlName = await tracking(app, 'accounts', 'create', 'Evil\u0007Corp');
    expect(controlName.code).to.equal(2);
    expect(controlName.stderr).to.contain('name must not contain control characters');
    expect((await app.pool.query("SELECT 1 FROM accounts WHERE name LIKE 'Evil%'")).rowCount).to.equal(0);
    const noAccount = await tracking(app, 'accounts', 'tokens', 'ffffffffffffffffffffffff');
    expect(noAccount.code).to.equal(1);

    await tracking(app, 'accounts', 'add-token', account.licenseCode, '--label', 'another', '--scope', 'ingest+read');
    const rotated = await tracking(app, 'accounts', 'rotate-token', account.licenseCode, '--json');
    expect(rotated.code, rotated.stderr).to.equal(0);
    const { accessToken } = JSON.parse(rotated.stdout) as { accessToken: string };
    const after = JSON.parse((await tracking(app, 'accounts', 'tokens', account.licenseCode, '--json')).stdout) as TokenView[];
    expect(after.map((t) => [t.label, t.scope])).to.deep.equal([['rotated', 'ingest+read']]);
    const fresh = await TestApp.start({}, { database: app.database });
    try {
      requestError(await fresh.ingest(account, 'events', event), 401);
      queued(await fresh.ingest({ ...account, accessToken }, 'events', event));
    } finally {
      await fresh.stop();
    }

    const help = await tracking(app, '--help');
    expect(help.stdout).to.contain('accounts add-token <license> --label <label> --scope ingest|ingest+read').and.contain('accounts revoke-token <license> <id>').and.contain('accounts tokens <license>');
  });
});
